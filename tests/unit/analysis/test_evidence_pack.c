/* The evidence pack (analysis/evidence_pack.h: evidence_pack.c,
 * evidence_pack_runs.c, evidence_pack_md.c, evidence_pack_write.c,
 * evidence_pack_plots.c, evidence_pack_svg.c) of a
 * study directory from a real run: the GPU lane's core-0.19 study (tests/data/gpu, one H200,
 * every stage run, the validate baseline's real Megatron log).  The pack's
 * numbers are the log's, its label follows the contract (mock data: the
 * lane's manifest predates that and says training-equivalent), stages and
 * findings that are missing say so, the folder appears whole or not at
 * all, and strings reach README.md as data. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/decision_text.h"
#include "analysis/evidence_pack.h"
#include "analysis/evidence_pack_internal.h"
#include "analysis/report_runs.h"
#include "core/manifest.h"
#include "core/readfile.h"
#include "unit.h"

static const struct moe_report_opts opts = { MOE_REPORT_ALPHA, MOE_REPORT_MIN_EFFECT };

/* Writes the pack, failing the test with the library's message. */
static void write_ok(const char *study, const char *dir)
{
    struct moe_error e;

    moe_error_clear(&e);
    if (moe_evidence_pack_write(study, dir, &opts, NULL, &e) != 0)
        fail_msg("%s: %s", e.source, e.text);
}

/* A fresh copy of the lane's study under the scratch folder, as name. */
static const char *lane_study(const char *name)
{
    static char study[256];
    char cmd[1024];
    const char *src = getenv("MOEFLOW_SRCDIR");

    snprintf(study, sizeof(study), "%s/%s/lane-core-0.19", moe_unit_dir, name);
    /* quoted: the tree may be cloned under a path with a blank */
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s' && tar -xJf '%s/tests/data/gpu/lane-core-0.19.tar.xz' "
             "-C '%s/%s'", moe_unit_dir, name, src ? src : "..", moe_unit_dir, name);
    assert_int_equal(system(cmd), 0);
    return study;
}

static void put(const char *study, const char *rel, const char *text)
{
    char path[512], cmd[600];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", study, rel);
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    assert_non_null(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
}

static const json_t *at(const json_t *o, const char *a, const char *b)
{
    const json_t *v = json_object_get(o, a);

    return b ? json_object_get(v, b) : v;
}

static const char *s_at(const json_t *o, const char *a, const char *b)
{
    const char *s = json_string_value(at(o, a, b));

    return s ? s : "(none)";
}

/* The entries of dir whose name starts with prefix. */
static int count_named(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* How many entries of dir a pack may not hold. */
static int only_pack_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        n += e->d_name[0] != '.' && !moe_evidence_pack_file_name(e->d_name);
    closedir(d);
    return n;
}

/* What the pack says of the lane's run, against the same log read as
 * `moeflow report` reads it. */
static void pack_of_a_real_run(void **state)
{
    const char *study = lane_study("real");
    struct moe_report_run direct;
    struct moe_report_reader rd = { .first = 41, .last = 50 };
    struct moe_error e;
    char log[600];
    json_t *pack, *runs, *base;

    (void)state;
    assert_non_null(pack = moe_evidence_pack(study, &opts, NULL, &e));
    assert_string_equal(s_at(pack, "study", NULL), "tiny-moe-2gpu");
    assert_string_equal(s_at(pack, "semantics", "label"), "benchmark-only");
    /* the run took Megatron's defaults for what its study could not state
     * then (issue 41): its contract has none, and the text says so */
    assert_string_equal(s_at(pack, "semantics", "text"),
                        "benchmark-only: mock data, " MOE_REASON_NO_LR_SCHEDULE ", "
                        MOE_REASON_NO_AUX_LOSS ", " MOE_REASON_NULL_TOKENIZER);
    assert_string_equal(s_at(pack, "semantics", "manifest_label"), "training-equivalent");
    assert_string_equal(s_at(pack, "semantics", "contract_class"), "training-equivalent");
    assert_string_equal(s_at(at(pack, "environment", "declared"), "status", NULL), "declared");
    assert_string_equal(s_at(at(pack, "environment", "measured"), "status", NULL), "not run");
    assert_string_equal(s_at(pack, "validate", "status"), "ran");
    assert_string_equal(s_at(pack, "checkpoint", "status"), "not requested");
    assert_string_equal(s_at(pack, "profile_pairs", "status"), "not requested");
    runs = (json_t *)at(pack, "validate", "runs");
    assert_int_equal(json_array_size(runs), 1);
    base = json_array_get(runs, 0);
    assert_string_equal(s_at(base, "role", NULL), "baseline");
    assert_int_equal(json_array_size(at(base, "config_diff", NULL)), 0);
    assert_non_null(strstr(s_at(base, "command", "shell"), "--micro-batch-size 1"));
    assert_string_equal(s_at(base, "measured", "status"), "measured");
    assert_false(json_is_true(at(base, "measured", "profiled")));
    assert_string_equal(s_at(base, "proof", "verdict"), "ran as requested");

    snprintf(log, sizeof(log), "%s/results/validate/%s.log", study, s_at(base, "id", NULL));
    assert_int_equal(moe_report_load_run(log, "baseline", &rd, &direct, &e), 0);
    assert_true(direct.step_median > 0);
    assert_true(json_real_value(at(base, "measured", "step_ms_median")) == direct.step_median);
    assert_true(json_real_value(at(base, "measured", "tflops_per_gpu_median")) ==
                direct.tflops_median);
    assert_int_equal(json_integer_value(at(base, "measured", "nan_iterations")), direct.nan_iters);
    moe_report_run_free(&direct);
    json_decref(pack);
}

/* The checkpoint verdict and the matched profiles come from the validate
 * report when it has them; requested but absent is "no evidence". */
static void findings_from_the_validate_report(void **state)
{
    const char *study = lane_study("findings");
    struct moe_error e;
    json_t *pack, *study_json;
    char path[512], *text;

    (void)state;
    put(study, "results/validate/report/report.json",
        "{\"runs\": [], \"checkpoint\": {\"verdict\": \"resumed bit-exact\"},"
        " \"profile_pairs\": [{\"a\": \"baseline\", \"b\": \"ep_overlap=true\"}]}\n");
    assert_non_null(pack = moe_evidence_pack(study, &opts, NULL, &e));
    assert_string_equal(s_at(pack, "checkpoint", "status"), "reported");
    assert_string_equal(s_at(at(pack, "checkpoint", "value"), "verdict", NULL), "resumed bit-exact");
    assert_int_equal(json_array_size(at(pack, "profile_pairs", "value")), 1);
    json_decref(pack);

    /* asked for, and the report does not say */
    put(study, "results/validate/report/report.json", "{\"runs\": []}\n");
    snprintf(path, sizeof(path), "%s/study.json", study);
    assert_non_null(study_json = moe_read_json(path, "study", &e));
    json_object_set_new(study_json, "validation", json_pack("{s:b}", "checkpoint", 1));
    text = json_dumps(study_json, 0);
    put(study, "study.json", text);
    free(text);
    json_decref(study_json);
    assert_non_null(pack = moe_evidence_pack(study, &opts, NULL, &e));
    assert_string_equal(s_at(pack, "checkpoint", "status"), "no evidence");
    assert_string_equal(s_at(pack, "profile_pairs", "status"), "not requested");
    json_decref(pack);
}

/* A stage that did not run: its section says so, and the pack writes. */
static void stage_not_run(void **state)
{
    const char *study = lane_study("notrun");
    struct moe_error e;
    char cmd[600];
    json_t *pack;

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s/results/validate'", study);
    assert_int_equal(system(cmd), 0);
    assert_non_null(pack = moe_evidence_pack(study, &opts, NULL, &e));
    assert_string_equal(s_at(pack, "validate", "status"), "not run");
    assert_non_null(strstr(s_at(pack, "validate", "why"), "no log of the validate baseline"));
    json_decref(pack);
    write_ok(study, NULL);
}

/* README.md and pack.json appear together, pack.json is the document, and
 * a second write replaces the first. */
static void writes_the_folder_whole(void **state)
{
    const char *study = lane_study("whole");
    struct moe_error e;
    char dir[512], path[600], *md;
    json_t *pack, *written;
    static const char *const headings[] = {
        "# Evidence pack: tiny-moe-2gpu", "## Label: routing and data semantics",
        "## Environment: commit, container, hardware, topology",
        "### Commands and config diffs", "### What ran",
        "### Step time and throughput (measured, unprofiled window 41-50)",
        "### Loss, skipped and NaN iterations, peak memory (measured)",
        "## Checkpoint verdict", "## Matched A/B profiles", NULL,
    };

    (void)state;
    write_ok(study, NULL);
    write_ok(study, NULL);
    snprintf(dir, sizeof(dir), "%s/evidence-pack", study);
    snprintf(path, sizeof(path), "%s/pack.json", dir);
    assert_non_null(written = moe_read_json(path, "pack", &e));
    assert_non_null(pack = moe_evidence_pack(study, &opts, NULL, &e));
    assert_true(json_equal(written, pack));
    snprintf(path, sizeof(path), "%s/README.md", dir);
    assert_non_null(md = moe_read_file(path, "README", NULL, &e));
    for (const char *const *h = headings; *h; h++)
        if (!strstr(md, *h))
            fail_msg("README.md lacks \"%s\"", *h);
    assert_int_equal(count_named(dir, "index.html"), 1);
    assert_int_equal(count_named(dir, "step-time.svg"), 1);
    assert_int_equal(only_pack_files(dir), 0);
    assert_int_equal(count_named(study, "evidence-pack."), 0);
    free(md);
    json_decref(pack);
    json_decref(written);
}

/* An input that is there but cannot be read stops the pack, naming it:
 * no pack folder, no temporary sibling, and a previous pack untouched. */
static void unreadable_input_leaves_nothing(void **state)
{
    const char *study = lane_study("atomic");
    struct moe_error e;
    char dir[512], path[600], *before, *after;
    struct stat st;

    (void)state;
    put(study, "contract/measured.json", "{\"host\": \"h200\", \"host\": \"twice\"}\n");
    moe_error_clear(&e);
    assert_int_equal(moe_evidence_pack_write(study, NULL, &opts, NULL, &e), -1);
    print_message("# %s: %s\n", e.source, e.text);
    assert_non_null(strstr(e.source[0] ? e.source : e.text, "contract/measured.json"));
    snprintf(dir, sizeof(dir), "%s/evidence-pack", study);
    assert_int_equal(stat(dir, &st), -1);
    assert_int_equal(count_named(study, "evidence-pack"), 0);

    /* a good pack, then the input breaks: the good one stays as it was */
    snprintf(path, sizeof(path), "%s/contract/measured.json", study);
    assert_int_equal(unlink(path), 0);
    write_ok(study, NULL);
    snprintf(path, sizeof(path), "%s/README.md", dir);
    assert_non_null(before = moe_read_file(path, "README", NULL, &e));
    put(study, "contracts/baseline.json", "{not json\n");
    moe_error_clear(&e);
    assert_int_equal(moe_evidence_pack_write(study, NULL, &opts, NULL, &e), -1);
    assert_non_null(strstr(e.source[0] ? e.source : e.text, "contracts/baseline.json"));
    assert_non_null(after = moe_read_file(path, "README", NULL, &e));
    assert_string_equal(before, after);
    assert_int_equal(count_named(study, "evidence-pack"), 1);
    free(before);
    free(after);
}

/* A folder that holds anything but a pack is never replaced. */
static void foreign_folder_is_kept(void **state)
{
    const char *study = lane_study("foreign");
    struct moe_error e;
    char dir[512];

    (void)state;
    snprintf(dir, sizeof(dir), "%s/mine", study);
    put(study, "mine/notes.txt", "my notes\n");
    moe_error_clear(&e);
    assert_int_equal(moe_evidence_pack_write(study, dir, &opts, NULL, &e), -1);
    assert_non_null(strstr(e.text, "is not an evidence pack"));
    assert_int_equal(count_named(dir, "notes.txt"), 1);
    assert_int_equal(count_named(dir, "README.md"), 0);
    assert_int_equal(count_named(study, "mine."), 0);
}

/* Strings from the study reach README.md as data: no line of them starts
 * a heading, closes a table cell, opens code or writes HTML. */
static void markdown_takes_strings_as_data(void **state)
{
    json_t *pack = json_pack("{s:s, s:{s:s, s:s}, s:{s:s, s:s}}", "study",
                             "evil|name`x\n# Forged heading", "semantics", "label",
                             "benchmark-only", "text", "<script>x</script>", "validate",
                             "status", "not run", "why", "a\nb | c");
    char *md = moe_evidence_pack_markdown(pack);

    (void)state;
    assert_non_null(md);
    assert_non_null(strstr(md, "# Evidence pack: evil\\|name\\`x\\\\x0a\\# Forged heading"));
    assert_null(strstr(md, "\n# Forged"));
    assert_null(strstr(md, "<script>"));
    assert_non_null(strstr(md, "**not run**: a\\\\x0ab \\| c"));
    free(md);
    json_decref(pack);
}

/* A trail entry as the contract store hands it (moe_contract_load_trail). */
static json_t *trail_entry(const char *file, const char *decision)
{
    json_t *d = json_loads(decision, 0, NULL);

    assert_non_null(d);
    return json_pack("{s:s, s:s, s:o}", "file", file, "digest",
                     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                     "decision", d);
}

/* The plots: each scale round of the trail the store accepted gets a
 * chart, a decision whose ranking is not the documented shape is refused
 * by name (a warning in README.md, no chart, no failure), and strings from
 * the trail reach the SVG and index.html as data. */
static void plots_from_the_decision_trail(void **state)
{
    const char *study = lane_study("decisions");
    json_t *decisions = json_array(), *pack, *plots;
    struct moe_pack_trail trail = { decisions, NULL };
    struct moe_pack_file *files;
    struct moe_error e;
    size_t n;
    char dir[512], path[600], *md, *svg;

    (void)state;
    json_array_append_new(decisions, trail_entry("decisions/01-scale.json",
        "{\"stage\": \"scale\", \"round\": 1, \"ranking\": ["
        "{\"candidate\": \"a\", \"layout\": \"tp1.cp1.pp1.vpp1.ep2.etp1\", \"predicted_ms\": 90,"
        " \"measured_ms\": 120},"
        "{\"candidate\": \"<b>&'\\\"\", \"layout\": \"</text><script>x</script>\","
        " \"predicted_ms\": 80, \"measured_ms\": null}]}"));
    json_array_append_new(decisions, trail_entry("decisions/02-fit.json",
                                                 "{\"stage\": \"fit\", \"round\": 1}"));
    json_array_append_new(decisions, trail_entry("decisions/03-scale.json",
        "{\"stage\": \"scale\", \"round\": 2, \"ranking\": [{\"candidate\": 1}]}"));
    assert_non_null(pack = moe_evidence_pack(study, &opts, &trail, &e));
    plots = (json_t *)at(pack, "plots", NULL);
    assert_int_equal(json_array_size(at(plots, "refused_decisions", NULL)), 1);
    assert_string_equal(s_at(json_array_get(at(plots, "refused_decisions", NULL), 0), "file", NULL),
                        "decisions/03-scale.json");
    /* the decisions of the right shape are the pack's trail, with digests */
    assert_int_equal(json_array_size(at(plots, "trail", NULL)), 2);
    assert_string_equal(s_at(json_array_get(at(plots, "trail", NULL), 1), "file", NULL),
                        "decisions/02-fit.json");
    assert_int_equal(strlen(s_at(json_array_get(at(plots, "trail", NULL), 1), "sha256", NULL)),
                     64);
    assert_int_equal(moe_evidence_pack_render(pack, &files, &n), 0);
    svg = NULL;
    for (size_t i = 0; i < n; i++) {
        assert_true(moe_evidence_pack_file_name(files[i].name));
        assert_null(strstr(files[i].text, "<script>"));
        if (strstr(files[i].text, "Scale round 1") && strstr(files[i].text, "decisions/"))
            svg = files[i].text;
    }
    assert_non_null(svg);
    assert_non_null(strstr(svg, "&lt;/text&gt;&lt;script&gt;x&lt;/script&gt;"));
    assert_non_null(strstr(svg, "predicted best"));
    assert_non_null(strstr(svg, "measured best"));
    assert_string_equal(files[n - 1].name, "index.html");
    moe_pack_files_free(files, n);
    json_decref(pack);

    assert_int_equal(moe_evidence_pack_write(study, NULL, &opts, &trail, &e), 0);
    json_decref(decisions);
    snprintf(dir, sizeof(dir), "%s/evidence-pack", study);
    snprintf(path, sizeof(path), "%s/README.md", dir);
    assert_non_null(md = moe_read_file(path, "README", NULL, &e));
    assert_non_null(strstr(md, "### Decisions (moeflow run's trail, each sealed)"));
    assert_non_null(strstr(md, "- decisions/02-fit.json: fit round 1: nothing: ?"));
    assert_non_null(strstr(md, "**warning**: refused decisions/03-scale.json: ranking\\[0\\]"));
    assert_int_equal(count_named(dir, "scale-decision-"), 1);
    assert_int_equal(only_pack_files(dir), 0);
    free(md);
}

/* A trail the store refused (an edited decision, a foreign owner) is no
 * trail: listed as refused with the store's reason, nothing charted. */
static void refused_trail_is_listed(void **state)
{
    const char *study = lane_study("refused-trail");
    struct moe_pack_trail trail = {
        NULL, "decisions/02-scale.json does not match its .sha256: it was edited after it was "
              "recorded"
    };
    struct moe_error e;
    json_t *pack, *plots;

    (void)state;
    assert_non_null(pack = moe_evidence_pack(study, &opts, &trail, &e));
    plots = (json_t *)at(pack, "plots", NULL);
    assert_int_equal(json_array_size(at(plots, "trail", NULL)), 0);
    assert_int_equal(json_array_size(at(plots, "refused_decisions", NULL)), 1);
    assert_string_equal(s_at(json_array_get(at(plots, "refused_decisions", NULL), 0), "file", NULL),
                        "decisions/");
    assert_non_null(strstr(s_at(json_array_get(at(plots, "refused_decisions", NULL), 0), "why",
                                NULL), "edited after it was recorded"));
    json_decref(pack);
}

/* A decision in a few words, as report and pack list the trail. */
static void decision_in_words(void **state)
{
    static const char *const cases[][2] = {
        { "{\"stage\": \"fit\", \"chose\": {\"recompute\": \"none\"}}", "recompute none" },
        { "{\"stage\": \"scale\", \"chose\": {\"layout\": \"tp1\"}}", "layout tp1" },
        { "{\"stage\": \"profile\", \"chose\": {\"bottleneck\": \"host\"}}", "retune for host" },
        { "{\"stage\": \"retune\", \"chose\": [{}, {}]}", "2 winners" },
        { "{\"stage\": \"fit\", \"chose\": {\"why\": \"no rung fits\"}}", "nothing: no rung fits" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *d = json_loads(cases[i][0], 0, NULL), *said = moe_decision_said(d);

        assert_string_equal(json_string_value(said), cases[i][1]);
        json_decref(said);
        json_decref(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decision_in_words),
        cmocka_unit_test(pack_of_a_real_run),
        cmocka_unit_test(findings_from_the_validate_report),
        cmocka_unit_test(stage_not_run),
        cmocka_unit_test(writes_the_folder_whole),
        cmocka_unit_test(unreadable_input_leaves_nothing),
        cmocka_unit_test(foreign_folder_is_kept),
        cmocka_unit_test(markdown_takes_strings_as_data),
        cmocka_unit_test(plots_from_the_decision_trail),
        cmocka_unit_test(refused_trail_is_listed),
    };

    return MOE_RUN_GROUP(tests, moe_unit_make_dir, moe_unit_remove_dir);
}
