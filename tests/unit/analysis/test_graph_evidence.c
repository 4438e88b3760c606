/* CUDA-graph evidence on real Megatron output: excerpts of the H200
 * recordings of issue 41 (tests/data/graphs, README.md there says what was
 * cut from where), the level report gives each run, the mismatches it
 * flags, and the Megatron source lines each rule cites, found in the
 * committed excerpts (tests/data/megatron/graph-excerpts).
 *
 *   test_graph_evidence --citations   prints TREE, PATH, LINE, RULE per
 *                                     citation, for excerpts.py */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "analysis/graph_evidence_internal.h"
#include "analysis/megatron_log.h"
#include "analysis/megatron_log_internal.h"
#include "analysis/report.h"
#include "analysis/report_internal.h"
#include "analysis/trace.h"
#include "core/readfile.h"
#include "unit.h"

static const char *srcpath(const char *rel)
{
    static char buf[4096];
    const char *dir = getenv("MOEFLOW_SRCDIR");

    snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : ".", rel);
    return buf;
}

static void read_log(struct moe_log *log, const char *name)
{
    char rel[256];
    struct moe_error e;

    snprintf(rel, sizeof(rel), "tests/data/graphs/%s", name);
    moe_log_init(log);
    if (moe_log_read_file(log, srcpath(rel), &e) < 0)
        fail_msg("%s: %s", rel, e.text);
}

static size_t trace_launches(const char *name)
{
    char rel[256];
    struct moe_trace t;
    struct moe_error e;
    size_t n;

    snprintf(rel, sizeof(rel), "tests/data/graphs/%s", name);
    moe_trace_init(&t, srcpath(rel), NULL, NULL);
    if (moe_trace_load(&t, srcpath(rel), &e) < 0)
        fail_msg("%s: %s", rel, e.text);
    n = t.graph_launches;
    moe_trace_free(&t);
    return n;
}

/* Iterations 5-8 (1 is the first logged one, and local graphs slow steps 1
 * and 2): every excerpt has them. */
static void run_of(struct moe_report_run *r, const struct moe_log *log)
{
    struct moe_error e;

    if (moe_report_run_init(r, "run", log, 5, 8, NULL, 0, &e) < 0)
        fail_msg("%s", e.text);
}

static const char *level_of(const struct moe_report_run *r)
{
    return json_string_value(json_object_get(r->in_effect, "graph_evidence"));
}

/* The mismatch of r that holds text, or NULL. */
static const char *mismatch(const struct moe_report_run *r, const char *text)
{
    for (size_t i = 0; i < json_array_size(r->mismatches); i++) {
        const char *m = json_string_value(json_array_get(r->mismatches, i));

        if (strstr(m, text))
            return m;
    }
    return NULL;
}

static void add_trace(struct moe_report_run *r, const char *name)
{
    char rel[256];
    struct moe_trace t;
    struct moe_error e;

    snprintf(rel, sizeof(rel), "tests/data/graphs/%s", name);
    moe_trace_init(&t, srcpath(rel), NULL, NULL);
    if (moe_trace_load(&t, srcpath(rel), &e) < 0 || moe_report_run_profile(r, &t, &e) < 0)
        fail_msg("%s: %s", rel, e.text);
    moe_trace_free(&t);
}

/* Local per-layer graphs, both dialects: "Creating 8 CUDA graphs" and
 * "> built 8 cuda graph(s) in ..." inside step 1; captured, no mismatch. */
static void local_layer_graphs_are_captured(void **state)
{
    static const char *const logs[] = { "core-0.19-droppad-local-layer.log",
                                         "bridge-pin-droppad-local-layer.log" };
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        struct moe_report_run r;
        struct moe_log log;

        read_log(&log, logs[i]);
        assert_int_equal(log.graphs.started, 1);
        assert_int_equal(log.graphs.built, 1);
        assert_int_equal(log.graphs.graphs, 8);
        assert_int_equal(log.graphs.errors, 0);
        assert_non_null(strstr(log.graphs.built_example, "> built 8 cuda graph(s) in 0."));
        run_of(&r, &log);
        assert_string_equal(level_of(&r), "captured");
        assert_int_equal(json_array_size(r.mismatches), 0);
        moe_report_run_free(&r);
        moe_log_free(&log);
    }
}

/* The full-iteration graph, both dialects: "Capture CUDA graph for
 * training!!!" and "CUDA graph capture done for training!!!" after
 * iteration 3; captured, no mismatch. */
static void full_iteration_graph_is_captured(void **state)
{
    static const char *const logs[] = { "core-0.19-droppad-full.log",
                                         "bridge-pin-droppad-full.log" };
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        struct moe_report_run r;
        struct moe_log log;

        read_log(&log, logs[i]);
        assert_int_equal(log.graphs.started, 1);
        assert_int_equal(log.graphs.built, 1);
        assert_int_equal(log.graphs.graphs, 0); /* the line names no count */
        run_of(&r, &log);
        assert_string_equal(level_of(&r), "captured");
        assert_int_equal(json_array_size(r.mismatches), 0);
        moe_report_run_free(&r);
        moe_log_free(&log);
    }
}

/* The old rule wanted a line naming a CUDA graph and "replay", not a
 * warning: no real log has one (the only "replayed" is in the warning that
 * TE is missing), so it flagged every real graphed run. */
static void real_logs_have_no_replay_line(void **state)
{
    static const char *const logs[] = {
        "core-0.19-droppad-local-layer.log", "bridge-pin-droppad-local-layer.log",
        "core-0.19-droppad-full.log", "bridge-pin-droppad-full.log",
        "core-0.19-nograph.log", "core-0.19-local-layer-failed.log",
    };
    size_t mentions = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
        char rel[256], *text, *save = NULL;
        struct moe_error e;

        snprintf(rel, sizeof(rel), "tests/data/graphs/%s", logs[i]);
        assert_non_null(text = moe_read_file(srcpath(rel), "log", NULL, &e));
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (!strcasestr(line, "replay"))
                continue;
            mentions++;
            if (!strcasestr(line, "warning"))
                fail_msg("%s: a replay line: %s", rel, line);
        }
        free(text);
    }
    assert_int_equal(mentions, 3); /* the TE warning in the three local-graph logs */
}

/* The recorded traces: 128 cudaGraphLaunch calls with layer graphs (2 steps
 * x 8 micro-batches x 4 layers x forward and backward), 2 with the full
 * iteration (one per step), 0 without graphs; each proves its run. */
static void traces_prove_the_replays(void **state)
{
    struct moe_report_run r;
    struct moe_log log;

    (void)state;
    assert_int_equal(trace_launches("core-0.19-droppad-local-layer-prof.json.gz"), 128);
    assert_int_equal(trace_launches("core-0.19-droppad-full-prof.json.gz"), 2);
    assert_int_equal(trace_launches("core-0.19-nograph-prof.json.gz"), 0);

    read_log(&log, "core-0.19-droppad-local-layer.log");
    run_of(&r, &log);
    add_trace(&r, "core-0.19-droppad-local-layer-prof.json.gz");
    assert_string_equal(level_of(&r), "proven-by-trace");
    assert_int_equal(json_integer_value(json_object_get(r.in_effect, "graph_launches")), 128);
    assert_int_equal(json_integer_value(json_object_get(r.profile, "graph_launches")), 128);
    assert_null(mismatch(&r, "CUDA graph"));
    moe_report_run_free(&r);
    moe_log_free(&log);

    read_log(&log, "core-0.19-droppad-full.log");
    run_of(&r, &log);
    add_trace(&r, "core-0.19-droppad-full-prof.json.gz");
    assert_string_equal(level_of(&r), "proven-by-trace");
    assert_int_equal(json_integer_value(json_object_get(r.in_effect, "graph_launches")), 2);
    moe_report_run_free(&r);
    moe_log_free(&log);
}

/* Captured, but the run's trace launched no graph: a contradiction. */
static void a_trace_without_launches_contradicts_a_capture(void **state)
{
    struct moe_report_run r;
    struct moe_log log;

    (void)state;
    read_log(&log, "core-0.19-droppad-local-layer.log");
    run_of(&r, &log);
    add_trace(&r, "core-0.19-nograph-prof.json.gz");
    assert_string_equal(level_of(&r), "captured-not-launched");
    assert_non_null(mismatch(&r, "have no cudaGraphLaunch: no graph ran in the profiled steps"));
    /* a second trace that launches them settles it: one mismatch less */
    add_trace(&r, "core-0.19-droppad-local-layer-prof.json.gz");
    assert_string_equal(level_of(&r), "proven-by-trace");
    assert_null(mismatch(&r, "CUDA graph"));
    moe_report_run_free(&r);
    moe_log_free(&log);
}

/* The no-graph run's log as if its dump said cuda_graph_impl local: no
 * capture line and no launch is the mismatch; the requested run it was
 * (the real dump says none) is not flagged. */
static void requested_but_no_capture_is_flagged(void **state)
{
    struct moe_report_run r;
    struct moe_log log;
    struct moe_error e;
    char *text, *save = NULL;
    int n = 0;

    (void)state;
    read_log(&log, "core-0.19-nograph.log");
    run_of(&r, &log);
    assert_string_equal(level_of(&r), "none");
    assert_int_equal(json_array_size(r.mismatches), 0);
    moe_report_run_free(&r);
    moe_log_free(&log);

    assert_non_null(text = moe_read_file(srcpath("tests/data/graphs/core-0.19-nograph.log"),
                                         "log", NULL, &e));
    moe_log_init(&log);
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char edited[4096];

        if (strncmp(line, "  cuda_graph_impl ", 18) == 0) {
            assert_non_null(strstr(line, " none"));
            snprintf(edited, sizeof(edited), "%.*s local", (int)(strstr(line, " none") - line),
                     line);
            line = edited;
        }
        assert_int_equal(moe_log_feed_line(&log, line, ++n), 0);
    }
    moe_log_finish(&log);
    free(text);
    run_of(&r, &log);
    assert_string_equal(level_of(&r), "none");
    assert_non_null(mismatch(&r, "CUDA graphs requested, but the log has no capture line"));
    add_trace(&r, "core-0.19-nograph-prof.json.gz");
    assert_non_null(mismatch(&r, "CUDA graphs requested, but the log has no capture line"));
    assert_int_equal(json_array_size(r.mismatches), 2); /* and the 1-GPU run's NCCL one */
    moe_report_run_free(&r);
    moe_log_free(&log);
}

/* Dropless MoE under local graphs: the capture fails in step 1 with CUDA's
 * stream-capture errors, and the run logs no iteration. */
static void a_failed_capture_is_seen(void **state)
{
    struct moe_log log;

    (void)state;
    read_log(&log, "core-0.19-local-layer-failed.log");
    assert_int_equal(log.niters, 0);
    assert_int_equal(log.graphs.started, 1);
    assert_int_equal(log.graphs.built, 0);
    assert_int_equal(log.graphs.errors, 2);
    assert_non_null(strstr(log.graphs.error_example, "cudaErrorCapturedEvent"));
    assert_int_equal(moe_graph_level(&log.graphs, -1), MOE_GRAPH_FAILED);
    moe_log_free(&log);
}

/* The TE path's lines (not recorded: no TE on the GPU) as the source
 * writes them, and the line shapes that are not evidence. */
static void te_lines_and_lookalikes(void **state)
{
    struct moe_graph_evidence ev = { 0 };

    (void)state;
    assert_true(moe_graph_evidence_parse(
        "INFO:megatron.core.transformer.cuda_graphs:Start CUDA Graphs capture...", &ev));
    assert_true(moe_graph_evidence_parse("INFO:megatron.core.transformer.cuda_graphs:Time spent "
                                         "in CUDA Graphs capture on rank 0: 1.5s", &ev));
    assert_int_equal(ev.started, 1);
    assert_int_equal(ev.built, 1);
    assert_int_equal(moe_graph_level(&ev, -1), MOE_GRAPH_CAPTURED);
    assert_int_equal(moe_graph_level(&ev, 0), MOE_GRAPH_NOT_LAUNCHED);
    assert_int_equal(moe_graph_level(&ev, 3), MOE_GRAPH_PROVEN);
    memset(&ev, 0, sizeof(ev));
    assert_false(moe_graph_evidence_parse("[Rank 0] iteration 5: CUDA graph replay of moe_router",
                                          &ev));
    assert_false(moe_graph_evidence_parse("> built cuda graph(s) in 0.2 sec", &ev));
    assert_false(moe_graph_evidence_parse("Creating 8 cuda graphs", &ev));
    assert_int_equal(moe_graph_level(&ev, -1), MOE_GRAPH_NONE);
}

/* An nsys export counts cudaGraphLaunch_v10000 rows of the runtime table. */
static void nsys_counts_graph_launches(void **state)
{
    char path[] = "/tmp/moeflow-graphs-XXXXXX";
    struct moe_trace t;
    struct moe_error e;
    sqlite3 *db;
    int fd;

    (void)state;
    assert_true((fd = mkstemp(path)) >= 0);
    close(fd);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT "
        "NULL, deviceId INTEGER NOT NULL, demangledName INTEGER NOT NULL, shortName INTEGER "
        "NOT NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT "
        "NULL, correlationId INTEGER, nameId INTEGER NOT NULL);"
        "INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'cudaGraphLaunch_v10000'), "
        "(3, 'cudaLaunchKernel_v7000'), (4, 'cudaGraphLaunchXYZ');"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 10, 0, 1, 1);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (0, 1, 1, 2), (2, 3, 2, 2), "
        "(4, 5, 3, 3), (6, 7, 4, 4);", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    moe_trace_init(&t, path, NULL, NULL);
    assert_int_equal(moe_trace_load(&t, path, &e), 0);
    assert_int_equal(t.graph_launches, 2);
    moe_trace_free(&t);
    unlink(path);
}

/* tests/data/megatron/graph-excerpts/TREE.txt, line n of path, or NULL. */
static char *excerpt_line(const char *tree, const char *path, long n)
{
    char rel[256], head[300], key[32];
    const char *sec, *end, *p;
    struct moe_error e;
    char *text, *out = NULL;

    snprintf(rel, sizeof(rel), "tests/data/megatron/graph-excerpts/%s.txt", tree);
    if (!(text = moe_read_file(srcpath(rel), "excerpt", NULL, &e)))
        fail_msg("%s (write it with tests/data/megatron/excerpts.py)", e.text);
    snprintf(head, sizeof(head), "\n== %s\n", path);
    snprintf(key, sizeof(key), "\n%ld\t", n);
    if ((sec = strstr(text, head))) {
        sec += strlen(head) - 1;
        end = strstr(sec + 1, "\n== ");
        if ((p = strstr(sec, key)) && (!end || p < end)) {
            p += strlen(key);
            out = strndup(p, strcspn(p, "\n"));
        }
    }
    free(text);
    return out;
}

/* Every citation's line holds its text in the committed excerpt, and the
 * lines beside it do not: a citation one line off fails. */
static void citations_hold_their_text(void **state)
{
    size_t n;
    const struct moe_graph_cite *c = moe_graph_citations(&n);

    (void)state;
    assert_true(n >= 18);
    for (size_t i = 0; i < n; i++) {
        const char *colon = strrchr(c[i].where, ':');
        char path[256];
        long line = strtol(colon + 1, NULL, 10);

        snprintf(path, sizeof(path), "%.*s", (int)(colon - c[i].where), c[i].where);
        for (long off = -1; off <= 1; off++) {
            char *text = excerpt_line(c[i].tree, path, line + off);
            bool has = text && strstr(text, c[i].text);

            if (off == 0 && !has)
                fail_msg("%s: %s %s is not '%s': %s", c[i].rule, c[i].tree, c[i].where,
                         c[i].text, text ? text : "(not in the excerpt)");
            if (off != 0 && has)
                fail_msg("%s: %s %s one line off also holds '%s'", c[i].rule, c[i].tree,
                         c[i].where, c[i].text);
            free(text);
        }
    }
    print_message("# %zu citations, each at its line\n", n);
}

static int citations(void)
{
    size_t n;
    const struct moe_graph_cite *c = moe_graph_citations(&n);

    for (size_t i = 0; i < n; i++) {
        const char *colon = strrchr(c[i].where, ':');

        printf("%s\t%.*s\t%s\t%s\n", c[i].tree, (int)(colon - c[i].where), c[i].where,
               colon + 1, c[i].rule);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(local_layer_graphs_are_captured),
        cmocka_unit_test(full_iteration_graph_is_captured),
        cmocka_unit_test(real_logs_have_no_replay_line),
        cmocka_unit_test(traces_prove_the_replays),
        cmocka_unit_test(a_trace_without_launches_contradicts_a_capture),
        cmocka_unit_test(requested_but_no_capture_is_flagged),
        cmocka_unit_test(a_failed_capture_is_seen),
        cmocka_unit_test(te_lines_and_lookalikes),
        cmocka_unit_test(nsys_counts_graph_launches),
        cmocka_unit_test(citations_hold_their_text),
    };

    if (argc > 1 && strcmp(argv[1], "--citations") == 0)
        return citations();
    return MOE_RUN_TESTS(tests);
}
