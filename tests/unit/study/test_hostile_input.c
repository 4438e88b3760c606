/* Hostile input, part A (issue 21): the one rule for text (no control
 * characters in any string of a study, nor in a value a template renders),
 * sbatch's own quoting of #SBATCH lines, the one numeric check, the one
 * model check, and the readers that took impossible numbers (Bridge step
 * times, skipped-iteration counts, trace device ids). */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "analysis/megatron_log.h"
#include "analysis/megatron_log_internal.h"
#include "analysis/trace.h"
#include "core/number.h"
#include "core/shquote.h"
#include "core/text.h"
#include "study/model_check.h"
#include "study/model_json.h"
#include "study/presets.h"
#include "study/study.h"
#include "study/study_internal.h"
#include "study/study_schema.h"
#include "study/template.h"
#include "study/template_internal.h"
#include "unit.h"
#include "../fuzz/gen_check.h" /* the oracle of sbatch's reading, shared with fuzz_gen */

static char srcdir[4096];

/* ---- the one rule for text ---- */

/* Every C0 byte, DEL and the C1 range (two bytes in UTF-8) are found at
 * their offset; printable ASCII and other UTF-8 are not. */
static void text_control_found(void **state)
{
    char s[8];

    (void)state;
    for (int c = 0; c < 0x20; c++) {
        snprintf(s, sizeof(s), "ab%c", c ? c : 'x');
        if (c == 0)
            s[2] = '\0';
        assert_int_equal(moe_text_control_at(s, 3), 2);
    }
    assert_int_equal(moe_text_control_at("ab\x7f", 3), 2);
    assert_int_equal(moe_text_control_at("a\xc2\x85", 3), 1);  /* U+0085 NEL */
    assert_int_equal(moe_text_control_at("a\xc2\x9b", 3), 1);  /* U+009B CSI */
    assert_int_equal(moe_text_control_at("a\xc2\xa0", 3), -1); /* U+00A0 NBSP */
    assert_int_equal(moe_text_control_at("caf\xc3\xa9 \xe2\x82\xac ~", 9), -1);
    assert_int_equal(moe_text_control_at(" !~'\"\\$`#", 9), -1);
}

/* ---- sbatch's reading of #SBATCH lines ---- */

static void sbatch_round_trip(const char *value)
{
    char *q, line[4200], arg[4200], want[4200];
    struct moe_error e;

    snprintf(want, sizeof(want), "--moe-study=%s", value);
    moe_error_clear(&e);
    q = moe_sbatch_quote(want, &e);
    if (!q)
        fail_msg("'%s' refused: %s", value, e.text);
    snprintf(line, sizeof(line), "#SBATCH %s", q);
    if (gen_check_sbatch_args(line, arg, sizeof(arg)) != 1 || strcmp(arg, want) != 0)
        fail_msg("'%s' as %s reads back as '%s'", value, line, arg);
    assert_null(strchr(line, '\n'));
    free(q);
}

/* Every printable ASCII byte, in adversarial places, and UTF-8: sbatch
 * (tests/fuzz/gen_check.c's transcription of its parser) reads back
 * exactly the value, as one argument.  Shell quoting did not:
 * 'a\'b' is two quoted words to sbatch. */
static void sbatch_quote_round_trips(void **state)
{
    static const char *const values[] = {
        "/tmp/plain", "/home/u/my study", "/x/it's", "/x/a\\'b", "/x/\\", "/x/\"q\"",
        "/x/#not a comment", "/x/ --wrap=id", "/x/' --export=ALL,LD_PRELOAD=/x.so '",
        "/x/$(id)`id`", "/x/caf\xc3\xa9", "\\\\\\", "'", "\"", "#", " ",
    };
    char all[100];
    int n = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        sbatch_round_trip(values[i]);
    for (int c = 0x20; c < 0x7f; c++)
        all[n++] = (char)c;
    all[n] = '\0';
    sbatch_round_trip(all);
    srand(21);
    for (int k = 0; k < 2000; k++) {
        char v[32];
        int len = rand() % 31;

        for (int i = 0; i < len; i++)
            v[i] = (char)(0x20 + rand() % 95);
        v[len] = '\0';
        if (!strcasestr(v, "hetjob") && !strcasestr(v, "packjob"))
            sbatch_round_trip(v);
    }
}

/* What no quoting carries is refused: a control character, and the
 * heterogeneous-job separators sbatch finds anywhere in the line. */
static void sbatch_quote_refuses(void **state)
{
    static const char *const bad[] = { "--x=a\nb", "--x=a\rb", "--x=\x1b[31m", "--x=a\x7f",
                                       "--x=\xc2\x85", "--job-name=my-hetjob",
                                       "--x=/PackJob/y", "--x=HETJOB" };
    struct moe_error e;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        moe_error_clear(&e);
        assert_null(moe_sbatch_quote(bad[i], &e));
        assert_true(e.text[0] != '\0');
    }
    assert_non_null(strstr(e.text, "hetjob"));
}

/* ---- the one numeric check ---- */

static void numbers_checked(void **state)
{
    struct moe_error e;
    long l;
    double d;

    (void)state;
    moe_error_clear(&e);
    assert_int_equal(moe_number_parse_long("4096", 1, 4096, &l, &e), 0);
    assert_int_equal(l, 4096);
    assert_int_equal(moe_number_parse_long("4294967296", 1, 4096, &l, &e), -1);
    assert_string_equal(e.text, "4294967296 is out of range 1..4096");
    assert_int_equal(moe_number_parse_long("99999999999999999999", 0, 9, &l, &e), -1);
    assert_int_equal(moe_number_parse_long(" 1", 0, 9, &l, &e), -1);
    assert_int_equal(moe_number_parse_long("1x", 0, 9, &l, &e), -1);
    assert_string_equal(e.text, "expected an integer, not '1x'");
    assert_int_equal(moe_number_parse_double("nan", -1e9, 1e9, &d, &e), -1);
    assert_string_equal(e.text, "NaN is not a finite number");
    assert_int_equal(moe_number_parse_double("-inf", -1e9, 1e9, &d, &e), -1);
    assert_string_equal(e.text, "infinity is not a finite number");
    assert_int_equal(moe_number_parse_double("1e400", -1e9, HUGE_VAL, &d, &e), -1);
    /* a subnormal is no measured quantity; hexadecimal is no decimal (D17) */
    assert_int_equal(moe_number_parse_double("5e-324", 0, 1, &d, &e), -1);
    assert_non_null(strstr(e.text, "too small to be a measured quantity"));
    assert_int_equal(moe_number_check(-1e-310, -1, false, 1, &e), -1);
    assert_int_equal(moe_number_parse_double("0x1p10", 0, 1e9, &d, &e), -1);
    assert_string_equal(e.text, "expected a decimal number, not '0x1p10'");
    assert_int_equal(moe_number_parse_double("0X10", 0, 1e9, &d, &e), -1);
    assert_int_equal(moe_number_parse_double("1e", 0, 1e9, &d, &e), -1);
    assert_int_equal(moe_number_parse_double(".5e-3", 0, 1, &d, &e), 0);
    assert_int_equal(moe_number_parse_double("-2.", -9, 1, &d, &e), 0);
    assert_int_equal(moe_number_parse_double("1e-400", 0, 1, &d, &e), 0);   /* 0 */
    assert_int_equal(moe_number_check(0, 0, true, 1, &e), -1);
    assert_string_equal(e.text, "0 is not above 0");
    assert_int_equal(moe_number_check(0, 0, false, 1, &e), 0);
}

/* ---- the study: every string, one rule ---- */

/* A valid study with one field set to value (YAML text); the sections the
 * path does not name keep their base keys. */
static void study_with(char *out, size_t len, const char *path, const char *value)
{
    static const char *const base[][2] = { { "model", "preset: qwen3-30b-a3b" },
                                           { "cluster", "nodes: 2" },
                                           { "workload", "gbs: 512" },
                                           { "software", "megatron: core-0.16" } };
    const char *dot = strchr(path, '.');
    size_t off = (size_t)snprintf(out, len, "name: %s\n", dot ? "t" : value);
    bool placed = !dot;

    for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
        bool here = dot && strlen(base[i][0]) == (size_t)(dot - path) &&
                    strncmp(path, base[i][0], (size_t)(dot - path)) == 0;
        const char *rest = dot ? dot + 1 : "", *sub = strchr(rest, '.');

        bool replace = here && !sub && strncmp(base[i][1], rest, strlen(rest)) == 0 &&
                       base[i][1][strlen(rest)] == ':';

        off += (size_t)snprintf(out + off, len - off, "%s: {%s", base[i][0],
                                replace ? "" : base[i][1]);
        if (replace)
            off += (size_t)snprintf(out + off, len - off, "%s: %s", rest, value);
        else if (here && sub)
            off += (size_t)snprintf(out + off, len - off, ", %.*s: {%s: %s}", (int)(sub - rest),
                                    rest, sub + 1, value);
        else if (here)
            off += (size_t)snprintf(out + off, len - off, ", %s: %s", rest, value);
        /* a study states its TE, unless the field tried is that one */
        if (strcmp(base[i][0], "software") == 0 && !(here && strcmp(rest, "transformer_engine") == 0))
            off += (size_t)snprintf(out + off, len - off, ", transformer_engine: none");
        off += (size_t)snprintf(out + off, len - off, "}\n");
        placed |= here;
    }
    if (!placed) /* a section the base lacks */
        snprintf(out + off, len - off, "%.*s: {%s: %s}\n", (int)(dot - path), path, dot + 1,
                 value);
}

static void expect_refused(const char *path, const char *value, const char *why)
{
    char text[2048], msg[1024];
    struct moe_study s;
    struct moe_error e;

    study_with(text, sizeof(text), path, value);
    moe_error_clear(&e);
    if (moe_study_load_string(&s, "s.yaml", text, &e) == 0)
        fail_msg("%s = %s was accepted:\n%s", path, value, text);
    moe_error_format(&e, msg, sizeof(msg));
    if (!strstr(msg, path) || !strstr(msg, why))
        fail_msg("%s = %s: the message names neither the field nor '%s': %s", path, value, why,
                 msg);
    moe_study_free(&s);
}

/* Visits every field of the schema, with its dotted path. */
static void each_field(const struct moe_field *keys, const char *prefix,
                       void (*fn)(const struct moe_field *f, const char *path))
{
    for (const struct moe_field *f = keys; f->key; f++) {
        char path[256];

        snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", f->key);
        if (f->type == MOE_F_MAP)
            each_field(f->sub, path, fn);
        else
            fn(f, path);
    }
}

static int strings_seen;

/* Every string-valued field (free text, names, list items) refuses every
 * kind of control character, naming itself. */
static void control_refused_in(const struct moe_field *f, const char *path)
{
    static const char *const controls[] = { "\\n", "\\r", "\\0", "\\e", "\\t", "\\x01",
                                            "\\x1f", "\\x7f", "\\u0085", "\\u009b" };
    char value[64];

    if (f->type != MOE_F_STR && f->type != MOE_F_ENUM && f->type != MOE_F_STRLIST)
        return;
    strings_seen++;
    for (size_t i = 0; i < sizeof(controls) / sizeof(controls[0]); i++) {
        snprintf(value, sizeof(value), f->type == MOE_F_STRLIST ? "[\"a%sb\"]" : "\"a%sb\"",
                 controls[i]);
        expect_refused(path, value, "no control characters are allowed");
    }
}

static void study_strings_refuse_control(void **state)
{
    (void)state;
    strings_seen = 0;
    each_field(moe_study_schema, "", control_refused_in);
    assert_true(strings_seen >= 20);
}

/* Keys too: no message ever echoes a control character. */
static void study_keys_refuse_control(void **state)
{
    struct moe_study s;
    struct moe_error e;

    (void)state;
    moe_error_clear(&e);
    /* a study otherwise whole: the key's is its one error */
    assert_int_equal(moe_study_load_string(&s, "s.yaml", "name: t\nmodel: {preset: qwen3-30b-a3b}\n"
                                           "cluster: {\"x\\ey\": 1}\nworkload: {gbs: 512}\n"
                                           "software: {megatron: core-0.16, transformer_engine: none}\n",
                                           &e), -1);
    assert_string_equal(e.text, "cluster: holds an escape (U+001B) at byte 2: no control "
                                "characters are allowed");
    moe_study_free(&s);
}

/* The strings that land in #SBATCH lines take what Slurm takes there;
 * what would break the line or add a directive is refused at load time. */
static void study_sbatch_values(void **state)
{
    static const char *const bad[][3] = {
        { "name", "\"my study\"", "it names the Slurm jobs" },
        { "name", "\"x --wrap=id\"", "it names the Slurm jobs" },
        { "name", "my-hetjob", "heterogeneous-job separator" },
        { "cluster.partition", "\"a' --wrap=id '\"", "Slurm partition names" },
        { "cluster.partition", "\"gpu,hetjob\"", "heterogeneous-job separator" },
        { "cluster.partition", "\"gpu batch\"", "Slurm partition names" },
        { "cluster.account", "\"a\\\\b\"", "Slurm account name" },
        { "cluster.time_limit", "\"1:00 #\"", "Slurm time limit" },
        { "cluster.time_limit", "\"$(id)\"", "Slurm time limit" },
    };
    static const char *const good[][2] = {
        { "name", "qwen3-30b_A3B.v2+x" }, { "cluster.partition", "\"gpu,batch_2.x\"" },
        { "cluster.account", "moe-perf" }, { "cluster.time_limit", "2-12:30:00" },
        { "cluster.time_limit", "UNLIMITED" }, { "cluster.time_limit", "90" },
    };
    char text[2048], msg[1024];
    struct moe_study s;
    struct moe_error e;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_refused(bad[i][0], bad[i][1], bad[i][2]);
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        study_with(text, sizeof(text), good[i][0], good[i][1]);
        moe_error_clear(&e);
        if (moe_study_load_string(&s, "s.yaml", text, &e) < 0)
            fail_msg("%s", moe_error_format(&e, msg, sizeof(msg)));
        moe_study_free(&s);
    }
}

/* The documented TE defaults of the host times can be written: 0. */
static void study_host_times_zero(void **state)
{
    char text[2048], msg[1024];
    struct moe_study s;
    struct moe_error e;

    (void)state;
    study_with(text, sizeof(text), "cluster.host_expert_us", "0");
    moe_error_clear(&e);
    if (moe_study_load_string(&s, "s.yaml", text, &e) < 0)
        fail_msg("%s", moe_error_format(&e, msg, sizeof(msg)));
    assert_true(s.cluster.host_expert_us == 0.0);
    assert_true(s.cluster.host_etp_us < 0); /* unset: the GPU type's default */
    moe_study_free(&s);
}

/* An unreadable study still leaves a study moe_study_free() takes. */
static void study_unreadable_is_freeable(void **state)
{
    struct moe_study s;
    struct moe_error e;

    (void)state;
    memset(&s, 0xab, sizeof(s));
    moe_error_clear(&e);
    assert_int_equal(moe_study_load(&s, "/nonexistent/study.yaml", &e), -1);
    assert_null(s.json);
    moe_study_free(&s);
}

/* ---- the renderer ---- */

static void template_refuses_control_values(void **state)
{
    json_t *ok = json_pack("{s:s}", "v", "a b 'c' $(d)"), *bad = json_pack("{s:s}", "v", "a\nb");
    struct moe_error e;
    char *out;

    (void)state;
    moe_error_clear(&e);
    assert_non_null(out = moe_template_render("t", "# {{v}}\n", ok, &e));
    assert_string_equal(out, "# a b 'c' $(d)\n");
    free(out);
    assert_null(moe_template_render("t", "# {{v}}\n", bad, &e));
    assert_non_null(strstr(e.text, "'v' holds a newline"));
    json_decref(bad);
    /* a control character first, at byte 0, too */
    bad = json_pack("{s:s}", "v", "\nid");
    moe_error_clear(&e);
    assert_null(moe_template_render("t", "# {{v}}\n", bad, &e));
    assert_non_null(strstr(e.text, "'v' holds a newline"));
    json_decref(ok);
    json_decref(bad);
}

/* ---- the one model check ---- */

static void model_check_one_place(void **state)
{
    struct moe_model m;
    struct moe_error e;
    const char *key;
    char path[4200];

    (void)state;
    for (const char *const *p = moe_preset_names(); *p; p++) {
        moe_error_clear(&e);
        if (moe_model_check(moe_preset_find(*p), &key, &e) < 0)
            fail_msg("preset %s: %s: %s", *p, key, e.text);
    }
    m = *moe_preset_find("qwen3-30b-a3b");
    m.topk = m.num_experts + 1;
    assert_int_equal(moe_model_check(&m, &key, &e), -1);
    assert_string_equal(key, "topk");
    assert_string_equal(e.text, "129 is more than num_experts 128");
    snprintf(path, sizeof(path), "%s/tests/data/hardening/hostile-input/topk0.json", srcdir);
    assert_int_equal(moe_model_from_json_file(path, &m, &e), 0);
    assert_int_equal(moe_model_check(&m, &key, &e), -1);
    assert_string_equal(key, "topk");
    assert_string_equal(e.text, "0 is out of range 1..1024");
    snprintf(path, sizeof(path), "%s/tests/data/hardening/hostile-input/h0.json", srcdir);
    assert_int_equal(moe_model_from_json_file(path, &m, &e), 0);
    assert_int_equal(moe_model_check(&m, &key, &e), -1);
    assert_string_equal(key, "hidden");
}

/* ---- the readers ---- */

static void log_counts_and_bridge_times(void **state)
{
    struct moe_log log;
    struct moe_error e;
    char path[4200];

    (void)state;
    snprintf(path, sizeof(path), "%s/tests/data/hardening/hostile-input/skip5e18.log", srcdir);
    moe_log_init(&log);
    moe_error_clear(&e);
    assert_int_equal(moe_log_read_file(&log, path, &e), 0);
    for (size_t i = 0; i < log.niters; i++)
        assert_int_equal(log.iters[i].skipped, 0);
    assert_int_equal(log.warnings_total, 2);
    assert_non_null(strstr(log.warnings[0].text, "skipped iterations: 5e+18' is impossible"));
    moe_log_free(&log);

    moe_log_init(&log);
    assert_int_equal(moe_log_feed_line(&log, "iteration 1/ 10 | lm loss: 1.0 |", 1), 0);
    assert_int_equal(moe_log_feed_line(&log, "Step Time : -0.5s GPU utilization: -3MODEL", 2), 0);
    assert_int_equal(moe_log_feed_line(&log, "iteration 2/ 10 | lm loss: 1.0 |", 3), 0);
    assert_int_equal(moe_log_feed_line(&log, "Step Time : 0.25s GPU utilization: 45.2MODEL", 4),
                     0);
    assert_true(isnan(log.iters[0].step_ms) && isnan(log.iters[0].tflops));
    assert_true(log.iters[1].step_ms == 250.0 && log.iters[1].tflops == 45.2);
    assert_int_equal(log.warnings_total, 2);
    assert_non_null(strstr(log.warnings[0].text, "'Step Time : -0.5s' is impossible"));
    moe_log_free(&log);
}

static void expect_trace_refused(const char *path, const char *why)
{
    struct moe_trace t;
    struct moe_error e;

    moe_trace_init(&t, path, NULL, NULL);
    moe_error_clear(&e);
    assert_int_equal(moe_trace_load(&t, path, &e), -1);
    if (!strstr(e.text, why))
        fail_msg("%s: '%s' not in '%s'", path, why, e.text);
    moe_trace_free(&t);
}

/* A device id of 2^32 narrowed to int is device 0: refused in both formats. */
static void trace_device_ids(void **state)
{
    char kineto[] = "/tmp/mf-hostile-XXXXXX", nsys[] = "/tmp/mf-hostile-db-XXXXXX";
    const char *json = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\","
                       " \"ts\": 1, \"dur\": 1, \"args\": {\"device\": 4294967296}}]}";
    sqlite3 *db;
    int fd;

    (void)state;
    assert_true((fd = mkstemp(kineto)) >= 0);
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    expect_trace_refused(kineto, "kernel 'k': device 4294967296 is out of range 0..2147483647");
    unlink(kineto);
    assert_true((fd = mkstemp(nsys)) >= 0);
    close(fd);
    assert_int_equal(sqlite3_open(nsys, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
        " shortName INTEGER, demangledName INTEGER);"
        "INSERT INTO StringIds VALUES (1, 'gemm');"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 4294967296, 1, 1);",
        NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_trace_refused(nsys, "kernel 'gemm': device 4294967296 is out of range");
    unlink(nsys);
}

int main(void)
{
    const char *s = getenv("MOEFLOW_SRCDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_control_found),
        cmocka_unit_test(sbatch_quote_round_trips),
        cmocka_unit_test(sbatch_quote_refuses),
        cmocka_unit_test(numbers_checked),
        cmocka_unit_test(study_strings_refuse_control),
        cmocka_unit_test(study_keys_refuse_control),
        cmocka_unit_test(study_sbatch_values),
        cmocka_unit_test(study_host_times_zero),
        cmocka_unit_test(study_unreadable_is_freeable),
        cmocka_unit_test(template_refuses_control_values),
        cmocka_unit_test(model_check_one_place),
        cmocka_unit_test(log_counts_and_bridge_times),
        cmocka_unit_test(trace_device_ids),
    };

    snprintf(srcdir, sizeof(srcdir), "%s", s ? s : ".");
    return MOE_RUN_TESTS(tests);
}
