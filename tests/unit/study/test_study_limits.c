/* Rules 1 and 7 (lib/README.md) explored over the study schema: every
 * string field is kept byte for byte or refused with its field and limit
 * named, never cut; every step-time setting has a physical range, its
 * bounds taken and one step past them refused; a time limit means what
 * Slurm's own parser says it means. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/study.h"
#include "study/study_internal.h"
#include "study/study_schema.h"
#include "study/study_schema_internal.h"
#include "study/time_limit.h"
#include "study/time_limit_internal.h"
#include "fit/steptime.h"
#include "unit.h"

#ifdef HAVE_SLURM_TIME_STR2MINS
extern int slurm_time_str2mins(const char *string);
#endif

/* Every string of the study in one file; one of them is replaced. */
static const char base[] =
    "name: @name@\n"
    "model:\n  preset: @preset@\n"
    "cluster:\n  nodes: 2\n  partition: @partition@\n  account: @account@\n"
    "  time_limit: \"@time_limit@\"\n"
    "  qos: @qos@\n  reservation: @reservation@\n  constraint: \"@constraint@\"\n"
    "  stage_time_limit:\n    contract: \"@tl_contract@\"\n    fit: \"@tl_fit@\"\n"
    "    scale: \"@tl_scale@\"\n    profile: \"@tl_profile@\"\n"
    "    retune: \"@tl_retune@\"\n    validate: \"@tl_validate@\"\n"
    "  container:\n    image: \"@image@\"\n    mounts: \"@mounts@\"\n"
    "    workdir: \"@workdir@\"\n"
    "  launcher:\n    command: \"@command@\"\n"
    "workload:\n  gbs: 512\n  data: \"@data@\"\n  tokenizer: \"@tokenizer@\"\n"
    "software:\n  megatron: core-0.16\n  transformer_engine: \"@te@\"\n"
    "baseline:\n  pipeline_layout: \"@layout@\"\n";

/* What each string field of the schema holds, how a value of n bytes is
 * made, and its documented limit in bytes. */
struct field {
    const char *path, *tag, *plain;
    const char *prefix, *suffix;
    char fill;
    size_t limit;
    bool content;   /* the value names something: a long one is refused for it */
};

static const struct field fields[] = {
    { "name", "@name@", "t", "", "", 't', 63, false },
    { "model.preset", "@preset@", "qwen3-30b-a3b", "", "", 'q', 0, true },
    { "cluster.partition", "@partition@", "gpu", "", "", 'p', MOE_STUDY_STR_MAX, false },
    { "cluster.account", "@account@", "acct", "", "", 'a', MOE_STUDY_STR_MAX, false },
    { "cluster.time_limit", "@time_limit@", "10", "", "1", '0', MOE_STUDY_STR_MAX, false },
    { "cluster.qos", "@qos@", "normal", "", "", 'q', MOE_STUDY_STR_MAX, false },
    { "cluster.reservation", "@reservation@", "res", "", "", 'r', MOE_STUDY_STR_MAX, false },
    { "cluster.constraint", "@constraint@", "h100&ib", "", "", 'c', MOE_STUDY_STR_MAX, false },
    { "cluster.stage_time_limit.contract", "@tl_contract@", "10", "", "1", '0', MOE_STUDY_STR_MAX, false },
    { "cluster.stage_time_limit.fit", "@tl_fit@", "10", "", "1", '0', MOE_STUDY_STR_MAX, false },
    { "cluster.stage_time_limit.scale", "@tl_scale@", "10", "", "1", '0', MOE_STUDY_STR_MAX, false },
    { "cluster.stage_time_limit.profile", "@tl_profile@", "10", "", "1", '0', MOE_STUDY_STR_MAX, false },
    { "cluster.stage_time_limit.retune", "@tl_retune@", "10", "", "1", '0', MOE_STUDY_STR_MAX, false },
    { "cluster.stage_time_limit.validate", "@tl_validate@", "10", "", "1", '0', MOE_STUDY_STR_MAX, false },
    { "cluster.container.image", "@image@", "img", "", "", 'i', MOE_STUDY_STR_MAX, false },
    { "cluster.container.mounts", "@mounts@", "/m:/m", "/", "", 'm', MOE_STUDY_STR_MAX, false },
    { "cluster.container.workdir", "@workdir@", "/w", "/", "", 'w', MOE_STUDY_STR_MAX, false },
    { "cluster.launcher.command", "@command@", "python p.py", "python ", ".py", 'p',
      MOE_STUDY_STR_MAX, false },
    { "workload.data", "@data@", "/d_text_document", "/", "", 'd', MOE_STUDY_STR_MAX, false },
    { "workload.tokenizer", "@tokenizer@", "org/tok", "", "", 'k', MOE_STUDY_STR_MAX, false },
    { "software.transformer_engine", "@te@", "2.9", "2.", "", '9', MOE_STUDY_STR_MAX, false },
    { "baseline.pipeline_layout", "@layout@", "", "E", "L", 't', 0, true },
};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

static char *replace(char *text, const char *tag, const char *value)
{
    char *at = strstr(text, tag), *out;
    size_t len;

    assert_non_null(at);
    len = strlen(text) - strlen(tag) + strlen(value);
    assert_non_null(out = malloc(len + 1));
    snprintf(out, len + 1, "%.*s%s%s", (int)(at - text), text, value, at + strlen(tag));
    free(text);
    return out;
}

/* The study with field f at value and every other field plain. */
static char *study_text(const struct field *f, const char *value)
{
    char *text = strdup(base);

    assert_non_null(text);
    for (size_t i = 0; i < N_FIELDS; i++)
        text = replace(text, fields[i].tag, &fields[i] == f ? value : fields[i].plain);
    return text;
}

static char *make_value(const struct field *f, size_t n)
{
    size_t pre = strlen(f->prefix), suf = strlen(f->suffix);
    char *v;

    assert_true(n >= pre + suf + 1);
    assert_non_null(v = malloc(n + 1));
    memcpy(v, f->prefix, pre);
    memset(v + pre, f->fill, n - pre - suf);
    memcpy(v + n - suf, f->suffix, suf + 1);
    return v;
}

/* Where the study's canonical JSON holds the field's value. */
static const char *resolved(const struct moe_study *s, const char *path)
{
    const json_t *v = s->json;
    char p[128], *key, *save = NULL;

    snprintf(p, sizeof(p), "%s", strcmp(path, "model.preset") == 0 ? "model.name" : path);
    for (key = strtok_r(p, ".", &save); key; key = strtok_r(NULL, ".", &save))
        v = json_object_get(v, key);
    return json_string_value(v);
}

static void check_one(const struct field *f, size_t n)
{
    char *value = make_value(f, n), *text = study_text(f, value), limit[32];
    struct moe_study s;
    struct moe_error e;
    int rc;

    moe_error_clear(&e);
    rc = moe_study_load_string(&s, "limits.yaml", text, &e);
    snprintf(limit, sizeof(limit), "%zu", f->limit);
    if (f->content) {
        /* named in the message by field; never a cut value that passes */
        if (rc == 0)
            assert_string_equal(resolved(&s, f->path), value);
        else if (!strstr(e.text, f->path))
            fail_msg("%s at %zu bytes: '%.200s' does not name the field", f->path, n, e.text);
    } else if (n <= f->limit) {
        if (rc != 0)
            fail_msg("%s at %zu bytes (limit %zu) refused: %.300s", f->path, n, f->limit, e.text);
        if (!resolved(&s, f->path) || strcmp(resolved(&s, f->path), value) != 0)
            fail_msg("%s at %zu bytes is not kept byte for byte", f->path, n);
    } else if (rc == 0 || !strstr(e.text, f->path) ||
               (!strstr(e.text, limit) && !strstr(e.text, "1 to 63") &&
                !strstr(e.text, "over the limit of 131072"))) {
        fail_msg("%s at %zu bytes (limit %zu): %s", f->path, n, f->limit,
                 rc == 0 ? "accepted" : e.text);
    }
    moe_study_free(&s);
    free(text);
    free(value);
}

/* For every string field of the schema: at its limit, one past it, very
 * long (64 KiB and over the 128 KiB limit), and lengths drawn at random. */
static void strings_kept_whole_or_refused(void **state)
{
    unsigned seed = 38;

    (void)state;
    for (size_t i = 0; i < N_FIELDS; i++) {
        const struct field *f = &fields[i];
        size_t lens[] = { f->limit ? f->limit : 63, (f->limit ? f->limit : 63) + 1, 300,
                          65536, MOE_STUDY_STR_MAX + 1 };

        for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
            check_one(f, lens[k]);
        for (int k = 0; k < 8; k++)
            check_one(f, 8 + (size_t)rand_r(&seed) % (MOE_STUDY_STR_MAX + 64));
    }
}

/* The table above covers every string field the schema has: a new one
 * must say how it is kept. */
static void every_string_field_is_explored(void **state)
{
    int n = 0;

    (void)state;
    for (size_t i = 0; i < N_FIELDS; i++) {
        const struct moe_field *f = moe_study_field(fields[i].path);
        assert_non_null(f);
        assert_int_equal(f->type, MOE_F_STR);
    }
    for (const struct moe_field *s = moe_study_schema; s->key; s++) {
        if (s->type == MOE_F_STR)
            n++;
        for (const struct moe_field *t = s->type == MOE_F_MAP ? s->sub : NULL; t && t->key; t++) {
            n += t->type == MOE_F_STR;
            for (const struct moe_field *u = t->type == MOE_F_MAP ? t->sub : NULL; u && u->key;
                 u++)
                n += u->type == MOE_F_STR;
        }
    }
    assert_int_equal(n, (int)N_FIELDS);
}

/* ---- rule 7: the step-time settings ---- */

static int load_rate(const char *key, const char *value, struct moe_error *e)
{
    char text[2048];
    struct moe_study s;
    int rc;

    snprintf(text, sizeof(text),
             "name: t\nmodel:\n  preset: qwen3-30b-a3b\ncluster:\n  nodes: 2\n  %s: %s\n"
             "workload:\n  gbs: 512\nsoftware:\n  megatron: core-0.16\n  transformer_engine: none\n",
             strchr(key, '.') + 1, value);
    moe_error_clear(e);
    rc = moe_study_load_string(&s, "rate.yaml", text, e);
    moe_study_free(&s);
    return rc;
}

/* Each bound taken, a step past it refused naming the range and unit, and
 * what is never a quantity refused everywhere: a subnormal, hexadecimal,
 * infinity, NaN. */
static void rates_in_physical_ranges(void **state)
{
    static const char *const never[] = { "1e-320", "5e-324", "0x1p10", "1e309", "nan", "inf",
                                         "-inf", NULL };
    struct moe_error e;
    char v[64];

    (void)state;
    for (const struct moe_study_rate *r = moe_study_rates; r->key; r++) {
        assert_true(r->min >= 0 && r->min < r->max && r->unit);
        snprintf(v, sizeof(v), "%.17g", r->min);
        assert_int_equal(load_rate(r->key, v, &e), 0);
        snprintf(v, sizeof(v), "%.17g", r->max);
        assert_int_equal(load_rate(r->key, v, &e), 0);
        snprintf(v, sizeof(v), "%.17g", r->max * (1 + 1e-9));
        assert_int_equal(load_rate(r->key, v, &e), -1);
        assert_non_null(strstr(e.text, r->key));
        assert_non_null(strstr(e.text, r->unit));
        snprintf(v, sizeof(v), "%.17g", r->min > 0 ? r->min * (1 - 1e-9) : -1e-9);
        assert_int_equal(load_rate(r->key, v, &e), -1);
        assert_non_null(strstr(e.text, "out of range"));
        for (int i = 0; never[i]; i++) {
            if (load_rate(r->key, never[i], &e) != -1)
                fail_msg("%s: %s accepted", r->key, never[i]);
            assert_non_null(strstr(e.text, r->key));
        }
    }
}

/* Every GPU type's defaults, both implementations, lie inside the ranges a
 * study may set: the ranges refuse nothing the model itself uses. */
static void defaults_inside_the_ranges(void **state)
{
    (void)state;
    for (int g = 0; g < MOE_GPU_COUNT; g++)
        for (int impl = 0; impl < 2; impl++) {
            struct moe_perf p;
            double v[8];

            assert_int_equal(moe_perf_defaults((enum moe_gpu)g, impl ? MOE_IMPL_LOCAL
                                                                       : MOE_IMPL_TE, &p), 0);
            v[0] = p.tflops_bf16, v[1] = p.tflops_fp8, v[2] = p.nvlink_gbps;
            v[3] = p.internode_gbps, v[4] = p.host_us, v[5] = p.host_expert_us;
            v[6] = p.host_etp_us, v[7] = p.route_ns;
            for (int i = 0; i < 8; i++)
                if (v[i] < moe_study_rates[i].min || v[i] > moe_study_rates[i].max)
                    fail_msg("%s: %s's default %g is outside %g..%g", moe_study_rates[i].key,
                             moe_gpu_name((enum moe_gpu)g), v[i], moe_study_rates[i].min,
                             moe_study_rates[i].max);
        }
}

/* ---- cluster.time_limit as Slurm reads it ---- */

static void time_limit_cases(void **state)
{
    static const struct { const char *text; long minutes; } ok[] = {
        { "90", 90 }, { "1:30", 2 }, { "1:00:00", 60 }, { "2-12", 3600 }, { "2-12:30", 3630 },
        { "2-12:30:01", 3631 }, { "00:99:99", 101 }, { "0", 0 }, { "UNLIMITED", -1 },
        { "infinite", -1 }, { "35791393", 35791393 }, { "24855-03:13:08", 35791394 },
    };
    static const char *const bad[] = { "99999999-00", "4294967296", "999999999999999999999:00",
                                       "35791394", "24855-03:13:09", "1::2", "1-", "-1", "1-2-3",
                                       "1:2:3:4", "", "1 ", "0x10", NULL };
    struct moe_error e;
    long m;

    (void)state;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        moe_error_clear(&e);
        if (moe_time_limit_minutes(ok[i].text, &m, &e) != 0)
            fail_msg("%s refused: %s", ok[i].text, e.text);
        assert_int_equal(m, ok[i].minutes);
    }
    for (int i = 0; bad[i]; i++)
        if (moe_time_limit_minutes(bad[i], &m, &e) != -1)
            fail_msg("'%s' accepted as %ld minutes", bad[i], m);
    assert_int_equal(moe_time_limit_parse("4294967296", &m, &e), -1);
    assert_non_null(strstr(e.text, "more than Slurm can read"));
}

/* Our parser against Slurm's on time limits drawn around every bound: what
 * ours takes, Slurm reads the same; what ours refuses as too long, Slurm
 * would wrap. */
static void time_limits_agree_with_slurm(void **state)
{
    /* how many numbers each form has, and the separator after each */
    static const char *const forms[] = { "", ":", "::", "-", "-:", "-::" };
    static const long scale[] = { 1, 59, 60, 999, 24855, 35791394, 2147483588L, 4294967296L };
    unsigned seed = 21;
    int taken = 0, refused = 0;

    (void)state;
    for (int i = 0; i < 20000; i++) {
        char text[128];
        long a[4], m;
        struct moe_error e;
        const char *f = forms[i % 6];
        size_t off = 0;

        for (int k = 0; k < 4; k++) {
            unsigned long r = (unsigned long)rand_r(&seed) << 31 | (unsigned long)rand_r(&seed);
            a[k] = (long)(r % (unsigned long)(scale[rand_r(&seed) % 8] + 1));
        }
        for (int k = 0; k <= (int)strlen(f); k++)
            off += (size_t)snprintf(text + off, sizeof(text) - off, "%ld%.1s", a[k], f + k);
        moe_error_clear(&e);
        if (moe_time_limit_parse(text, &m, &e) == 0) {
            taken++;
#ifdef HAVE_SLURM_TIME_STR2MINS
            if (slurm_time_str2mins(text) != m)
                fail_msg("%s: ours %ld minutes, Slurm's %d", text, m, slurm_time_str2mins(text));
#endif
        } else {
            refused++;
            assert_non_null(strstr(e.text, "more than Slurm can read"));
        }
    }
    print_message("# %d time limits taken, %d refused as past Slurm's int%s\n", taken, refused,
#ifdef HAVE_SLURM_TIME_STR2MINS
                  ", each taken one read alike by libslurm"
#else
                  " (no libslurm to compare with)"
#endif
    );
    assert_true(taken > 1000 && refused > 1000);
}

/* ---- D15: a study is UTF-8 ---- */

static void utf16_study_refused_by_name(void **state)
{
    static const char u16le[] = "\xff\xfen\0a\0m\0e\0";
    static const char u16be[] = "\xfe\xff\0n\0a\0m\0e";
    static const char u32le[] = "\xff\xfe\0\0n\0\0\0";
    struct moe_study s;
    struct moe_error e;

    (void)state;
    moe_error_clear(&e);
    assert_int_equal(moe_study_load_text(&s, "u.yaml", u16le, sizeof(u16le) - 1, &e), -1);
    assert_string_equal(e.text, "the study is UTF-16LE (its byte-order mark says so); a study is "
                                "UTF-8: iconv -f UTF-16LE -t UTF-8");
    assert_string_equal(e.source, "u.yaml");
    moe_study_free(&s);
    assert_int_equal(moe_study_load_text(&s, "u.yaml", u16be, sizeof(u16be) - 1, &e), -1);
    assert_non_null(strstr(e.text, "UTF-16BE"));
    moe_study_free(&s);
    assert_int_equal(moe_study_load_text(&s, "u.yaml", u32le, sizeof(u32le) - 1, &e), -1);
    assert_non_null(strstr(e.text, "UTF-32LE"));
    moe_study_free(&s);
    /* Latin-1 is no UTF-8 either: libyaml's reader says where */
    assert_int_equal(moe_study_load_string(&s, "l.yaml", "name: caf\xe9\n", &e), -1);
    moe_study_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_string_field_is_explored),
        cmocka_unit_test(strings_kept_whole_or_refused),
        cmocka_unit_test(rates_in_physical_ranges),
        cmocka_unit_test(defaults_inside_the_ranges),
        cmocka_unit_test(time_limit_cases),
        cmocka_unit_test(time_limits_agree_with_slurm),
        cmocka_unit_test(utf16_study_refused_by_name),
    };

    return MOE_RUN_TESTS(tests);
}
