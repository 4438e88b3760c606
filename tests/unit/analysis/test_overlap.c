/* Trace readers and the overlap analysis, on synthetic traces whose answers
 * are worked out by hand (see the comments), on both input formats, and on
 * the real 2xH200 traces against their independent Python figures. */
#include "config.h"

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>
#include <zlib.h>

#include "analysis/overlap.h"
#include "analysis/trace.h"
#include "unit.h"

#define US 1000 /* ns */

static const char *srcpath(const char *rel)
{
    static char buf[4096];
    const char *dir = getenv("MOEFLOW_SRCDIR");

    snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : ".", rel);
    return buf;
}

static char *tmpname(const char *suffix)
{
    static int seq;
    char *p = malloc(256);
    const char *dir = getenv("TMPDIR");

    snprintf(p, 256, "%s/moeflow-test-overlap-%ld-%d%s", dir ? dir : "/tmp", (long)getpid(), seq++,
             suffix);
    return p;
}

/* Loads one trace and analyses it over window; asserts success. */
static void analyse(struct moe_overlap *o, const char *path, const char *window)
{
    struct moe_trace t;
    struct moe_window w;
    struct moe_error e;

    moe_error_clear(&e);
    assert_int_equal(moe_window_parse(window, &w, &e), 0);
    moe_overlap_init(o);
    moe_trace_init(&t, path, NULL, NULL);
    if (moe_trace_load(&t, path, &e) < 0 || moe_overlap_add_trace(o, &t, &w, &e) < 0)
        fail_msg("%s: %s", path, e.text);
    moe_trace_free(&t);
    assert_int_equal(moe_overlap_finish(o, 10, &e), 0);
}

/* Fails to analyse; returns the error text in a static buffer. */
static const char *analyse_error(const char *path, const char *window)
{
    static struct moe_error e;
    struct moe_overlap o;
    struct moe_trace t;
    struct moe_window w;
    int rc;

    moe_error_clear(&e);
    assert_int_equal(moe_window_parse(window, &w, &e), 0);
    moe_overlap_init(&o);
    moe_trace_init(&t, path, NULL, NULL);
    rc = moe_trace_load(&t, path, &e);
    if (rc == 0)
        rc = moe_overlap_add_trace(&o, &t, &w, &e);
    moe_trace_free(&t);
    moe_overlap_free(&o);
    assert_int_equal(rc, -1);
    return e.text;
}

/* synthetic-2gpu.json over its whole span.  GPU 0: compute A [0,10) B [10,20)
 * touch, C [30,40) holds nested D [32,35): P = [0,20) [30,40) = 30 us.
 * Comm: all-to-all [5,15) and [18,32), DeepEP dispatch [22,26) nested in
 * it, all-reduce [45,50): C = [5,15) [18,32) [45,50) = 29 us.  Hidden:
 * 10 + 2 + 2 = 14 us; exposed [20,30) [45,50) = 15 us; busy [0,40) [45,50) =
 * 45 us over the span [0,50): one 5 us gap.  The memcpy is not a kernel.
 * GPU 1: compute [100,110) [120,130) touching all-reduce [110,120): nothing
 * hidden, 10 us exposed, busy 30 us, no gap. */
static void synthetic_whole_trace(struct moe_overlap *o)
{
    const struct moe_overlap_gpu *g0 = &o->gpus[0], *g1 = &o->gpus[1], *t = &o->total;

    assert_int_equal(o->ngpus, 2);
    assert_int_equal(g0->device, 0);
    assert_int_equal(g0->kernels, 8);
    assert_int_equal(g0->comm_kernels, 4);
    assert_int_equal(g0->short_kernels, 3); /* D 3 us, dispatch 4 us, all-reduce 5 us */
    assert_int_equal(g0->comm, 29 * US);
    assert_int_equal(g0->compute, 30 * US);
    assert_int_equal(g0->hidden, 14 * US);
    assert_int_equal(g0->exposed, 15 * US);
    assert_int_equal(g0->busy, 45 * US);
    assert_int_equal(g0->lo, 0);
    assert_int_equal(g0->hi, 50 * US);
    assert_int_equal(g0->idle, 5 * US);
    assert_int_equal(g0->gaps, 1);
    assert_int_equal(g0->max_gap, 5 * US);
    assert_true(fabs(moe_overlap_hidden_pct(g0) - 100.0 * 14 / 29) < 1e-9);

    assert_int_equal(g1->device, 1);
    assert_int_equal(g1->kernels, 3);
    assert_int_equal(g1->comm, 10 * US);
    assert_int_equal(g1->compute, 20 * US);
    assert_int_equal(g1->hidden, 0);
    assert_int_equal(g1->exposed, 10 * US);
    assert_int_equal(g1->busy, 30 * US);
    assert_int_equal(g1->idle, 0);
    assert_int_equal(g1->gaps, 0);

    assert_int_equal(t->comm, 39 * US);
    assert_int_equal(t->hidden, 14 * US);
    assert_int_equal(t->exposed, 25 * US);
    assert_int_equal(t->hi, 80 * US); /* GPU-time of both spans: 50 + 30 */

    /* Ranking: all-to-all 10 us exposed (only [20,30) of its second run),
     * send/recv 10 us, all-reduce 5 us, dispatch 4 us ([22,26) lies in the
     * exposed [20,30)).  Ties go to the longer run time, then the name. */
    assert_int_equal(o->nkernels, 4);
    assert_string_equal(o->kernels[0].name,
                        "ncclDevKernel_AllToAll(ncclDevKernelArgsStorage<4096ul>)");
    assert_int_equal(o->kernels[0].exposed, 10 * US);
    assert_int_equal(o->kernels[0].time, 24 * US);
    assert_int_equal(o->kernels[0].count, 2);
    assert_int_equal(o->kernels[1].exposed, 10 * US);
    assert_int_equal(o->kernels[2].exposed, 5 * US);
    assert_string_equal(o->kernels[3].name, "void deep_ep::intranode::dispatch<4>(int*)");
    assert_int_equal(o->kernels[3].exposed, 4 * US);
}

/* Kineto JSON: the hand-worked answers above. */
static void kineto_whole_trace(void **state)
{
    struct moe_overlap o;

    (void)state;
    analyse(&o, srcpath("tests/data/traces/synthetic-2gpu.json"), "all");
    synthetic_whole_trace(&o);
    moe_overlap_free(&o);
}

/* Step window: ProfilerStep#2 is [25,60).  GPU 0 keeps C [30,40), D, the
 * all-to-all cut to [25,32), dispatch cut to [25,26) and the all-reduce:
 * comm 7 + 5 = 12 us, compute 10, hidden [30,32) = 2, exposed 10, busy
 * [25,40) [45,50) = 20 of 35 us, gaps [40,45) [50,60).  GPU 1 has nothing in
 * the window: 35 us idle in one gap. */
static void kineto_step_window(void **state)
{
    struct moe_overlap o;

    (void)state;
    analyse(&o, srcpath("tests/data/traces/synthetic-2gpu.json"), "steps=2");
    assert_int_equal(o.gpus[0].lo, 25 * US);
    assert_int_equal(o.gpus[0].hi, 60 * US);
    assert_int_equal(o.gpus[0].kernels, 5);
    assert_int_equal(o.gpus[0].comm, 12 * US);
    assert_int_equal(o.gpus[0].compute, 10 * US);
    assert_int_equal(o.gpus[0].hidden, 2 * US);
    assert_int_equal(o.gpus[0].exposed, 10 * US);
    assert_int_equal(o.gpus[0].busy, 20 * US);
    assert_int_equal(o.gpus[0].idle, 15 * US);
    assert_int_equal(o.gpus[0].gaps, 2);
    assert_int_equal(o.gpus[0].max_gap, 10 * US);
    assert_int_equal(o.gpus[1].kernels, 0);
    assert_int_equal(o.gpus[1].idle, 35 * US);
    assert_int_equal(o.gpus[1].gaps, 1);
    assert_true(moe_overlap_hidden_pct(&o.gpus[1]) < 0);
    moe_overlap_free(&o);

    /* steps=1-2 spans [0,60): GPU 0 as in the whole trace plus a 10 us tail gap. */
    analyse(&o, srcpath("tests/data/traces/synthetic-2gpu.json"), "steps=1-2");
    assert_int_equal(o.gpus[0].hidden, 14 * US);
    assert_int_equal(o.gpus[0].idle, 15 * US);
    assert_int_equal(o.gpus[0].gaps, 2);
    moe_overlap_free(&o);
}

/* Time window [20,30) us: B ends and C starts exactly on its edges, so no
 * compute is inside; the comm union fills it, all exposed. */
static void kineto_time_window_edges(void **state)
{
    struct moe_overlap o;

    (void)state;
    analyse(&o, srcpath("tests/data/traces/synthetic-2gpu.json"), "time=20us-30us");
    assert_int_equal(o.gpus[0].compute, 0);
    assert_int_equal(o.gpus[0].comm, 10 * US);
    assert_int_equal(o.gpus[0].exposed, 10 * US);
    assert_int_equal(o.gpus[0].busy, 10 * US);
    assert_int_equal(o.gpus[0].idle, 0);
    assert_int_equal(o.gpus[0].gaps, 0);
    assert_int_equal(o.gpus[0].kernels, 2); /* all-to-all and dispatch */
    moe_overlap_free(&o);
}

/* The same trace gzipped reads the same. */
static void kineto_gzip(void **state)
{
    char *gzpath = tmpname(".json.gz");
    FILE *in = fopen(srcpath("tests/data/traces/synthetic-2gpu.json"), "rb");
    gzFile out = gzopen(gzpath, "wb9");
    struct moe_overlap o;
    char buf[4096];
    size_t n;

    (void)state;
    assert_non_null(in);
    assert_non_null(out);
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        assert_int_equal(gzwrite(out, buf, (unsigned)n), (int)n);
    fclose(in);
    assert_int_equal(gzclose(out), Z_OK);
    analyse(&o, gzpath, "all");
    synthetic_whole_trace(&o);
    moe_overlap_free(&o);
    unlink(gzpath);
    free(gzpath);
}

static void exec_sql(sqlite3 *db, const char *sql)
{
    char *msg = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
}

/* The synthetic trace as an nsys export: ns, names through StringIds, the
 * nsys column set, NVTX step ranges (one by text, one by textId). */
static char *write_nsys(int with_kernels)
{
    char *path = tmpname(".sqlite");
    sqlite3 *db;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    exec_sql(db, "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
                 "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
                 "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType "
                 "INTEGER NOT NULL, text TEXT, globalTid INTEGER, textId INTEGER);");
    if (!with_kernels) {
        sqlite3_close(db);
        return path;
    }
    exec_sql(db,
             "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT "
             "NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT "
             "NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, "
             "shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER);"
             "INSERT INTO StringIds VALUES (1, 'sm90_xmma_gemm_bf16bf16'), "
             "(2, 'ncclDevKernel_AllToAll(ncclDevKernelArgsStorage<4096ul>)'), "
             "(3, 'void deep_ep::intranode::dispatch<4>(int*)'), (4, 'dispatch'), "
             "(5, 'elementwise_kernel'), (6, 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL'), "
             "(7, 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'), "
             "(8, 'ProfilerStep#2');"
             /* Compute and communication rows out of start order, as several
             * streams' records can be. */
             "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
             "demangledName, shortName) VALUES "
             "(30000, 40000, 0, 1, 7, 1, 1), (0, 10000, 0, 1, 7, 1, 1), "
             "(10000, 20000, 0, 1, 7, 1, 1), (45000, 50000, 0, 1, 20, 6, 6), "
             "(5000, 15000, 0, 1, 20, 2, 2), (22000, 26000, 0, 1, 21, 3, 4), "
             "(18000, 32000, 0, 1, 20, 2, 2), (32000, 35000, 0, 1, 8, 5, 5), "
             "(100000, 110000, 1, 2, 7, 1, 1), (110000, 120000, 1, 2, 20, 7, 7), "
             "(120000, 130000, 1, 2, 7, 1, 1);"
             "INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId) VALUES "
             "(0, 25000, 59, 'ProfilerStep#1', NULL), (25000, 60000, 59, NULL, 8), "
             "(1000, NULL, 34, 'instant', NULL);");
    sqlite3_close(db);
    return path;
}

/* nsys SQLite gives the same answers; the demangled name (deep_ep::...)
 * classifies the dispatch kernel that the short name "dispatch" would not. */
static void nsys_export(void **state)
{
    char *path = write_nsys(1);
    struct moe_overlap o;

    (void)state;
    analyse(&o, path, "all");
    synthetic_whole_trace(&o);
    moe_overlap_free(&o);
    analyse(&o, path, "steps=2");
    assert_int_equal(o.gpus[0].comm, 12 * US);
    assert_int_equal(o.gpus[0].hidden, 2 * US);
    assert_int_equal(o.gpus[0].idle, 15 * US);
    moe_overlap_free(&o);
    unlink(path);
    free(path);
}

/* Read by three threads over rowid ranges, the export gives the same
 * answers: the chunks join in order and their name tables merge by text. */
static void nsys_export_threads(void **state)
{
    char *path = write_nsys(1);
    struct moe_overlap o;
    struct moe_trace t;
    struct moe_window w = { 0 };
    struct moe_error e;

    (void)state;
    moe_overlap_init(&o);
    moe_trace_init(&t, path, NULL, NULL);
    t.threads = 3;
    assert_int_equal(moe_trace_load(&t, path, &e), 0);
    /* Six distinct kernel names (StringIds 1-3 and 5-7), once each, whichever
     * chunk saw them. */
    assert_int_equal(t.nnames, 6);
    assert_int_equal(moe_overlap_add_trace(&o, &t, &w, &e), 0);
    moe_trace_free(&t);
    assert_int_equal(moe_overlap_finish(&o, 10, &e), 0);
    synthetic_whole_trace(&o);
    moe_overlap_free(&o);
    unlink(path);
    free(path);
}

/* An export without the kernel table says what is missing and why. */
static void nsys_without_kernels(void **state)
{
    char *path = write_nsys(0);

    (void)state;
    assert_non_null(strstr(analyse_error(path, "all"), "no CUPTI_ACTIVITY_KIND_KERNEL table"));
    unlink(path);
    free(path);
}

/* A step the trace never reached is an error naming the steps it has. */
static void missing_step_is_an_error(void **state)
{
    const char *msg;

    (void)state;
    msg = analyse_error(srcpath("tests/data/traces/synthetic-2gpu.json"), "steps=41-50");
    assert_non_null(strstr(msg, "only has steps 1-2"));
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* GPU-side step annotations win over the CPU-side ones, which run ahead;
 * a kernel without args.device takes its device from pid. */
static void gpu_step_markers_preferred(void **state)
{
    char *path = tmpname(".json");
    struct moe_overlap o;

    (void)state;
    write_text(path,
               "[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"ts\":0,"
               "\"dur\":20},\n{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":"
               "\"ProfilerStep#1\",\"ts\":10,\"dur\":20,\"args\":{\"device\":0}},\n"
               "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"ts\":0,\"dur\":40,"
               "\"args\":{\"device\":0,\"stream\":7}},\n"
               /* Older Kineto: no args.device, the device index is the pid. */
               "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":1,\"ts\":0,"
               "\"dur\":40,\"args\":{\"stream\":7}}]");
    analyse(&o, path, "steps=1");
    assert_int_equal(o.gpus[0].lo, 10 * US);
    assert_int_equal(o.gpus[0].compute, 20 * US);
    assert_int_equal(o.ngpus, 2);
    assert_int_equal(o.gpus[1].device, 1);
    assert_int_equal(o.gpus[1].compute, 20 * US);
    moe_overlap_free(&o);
    unlink(path);
    free(path);
}

/* Malformed JSON is reported with its byte offset; non-traces are refused. */
static void malformed_json(void **state)
{
    char *path = tmpname(".json");
    const char *msg;

    (void)state;
    write_text(path, "{\"traceEvents\": [{\"ph\": \"X\",, }]}");
    msg = analyse_error(path, "all");
    assert_non_null(strstr(msg, "byte "));
    write_text(path, "{\"schemaVersion\": 1}");
    assert_non_null(strstr(analyse_error(path, "all"), "no traceEvents array"));
    write_text(path, "hello");
    assert_non_null(strstr(analyse_error(path, "all"), "not a Kineto JSON trace"));
    unlink(path);
    free(path);
}

/* A trace larger than the reader's window, gzipped, with a 1.5 MB string
 * member before the events: values that straddle refills must decode whole.
 * N pairs: compute [20i+.125, +10) us, comm [20i+6.125, +10) us, so each pair
 * has 4 us hidden and 6 us exposed, and 4 us idle between pairs. */
static void streaming_large_trace(void **state)
{
    enum { PAIRS = 30000 };
    char *path = tmpname(".json.gz");
    gzFile out = gzopen(path, "wb1");
    struct moe_overlap o;

    (void)state;
    assert_non_null(out);
    gzputs(out, "{\"traceName\": \"");
    for (int i = 0; i < 1500 * 1000; i++)
        gzputc(out, 'x');
    gzputs(out, "\",\n\"traceEvents\": [\n");
    for (int i = 0; i < PAIRS; i++)
        gzprintf(out,
                 "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_%d\", \"ts\": %d.125, "
                 "\"dur\": 10, \"args\": {\"device\": 3, \"stream\": 7}},\n"
                 "  {\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllToAll\","
                 "\"ts\":%d.125,\"dur\":10.000,\"args\":{\"device\":3,\"stream\":20}}",
                 i ? ",\n" : "", i % 7, 20 * i, 20 * i + 6);
    gzputs(out, "\n], \"deviceProperties\": [{\"id\": 3}]}\n");
    assert_int_equal(gzclose(out), Z_OK);
    analyse(&o, path, "all");
    assert_int_equal(o.ngpus, 1);
    assert_int_equal(o.gpus[0].device, 3);
    assert_int_equal(o.gpus[0].kernels, 2 * PAIRS);
    assert_int_equal(o.gpus[0].comm, (int64_t)PAIRS * 10 * US);
    assert_int_equal(o.gpus[0].hidden, (int64_t)PAIRS * 4 * US);
    assert_int_equal(o.gpus[0].exposed, (int64_t)PAIRS * 6 * US);
    assert_int_equal(o.gpus[0].busy, (int64_t)PAIRS * 16 * US);
    assert_int_equal(o.gpus[0].gaps, PAIRS - 1);
    assert_int_equal(o.gpus[0].idle, (int64_t)(PAIRS - 1) * 4 * US);
    moe_overlap_free(&o);
    unlink(path);
    free(path);
}

/* Window syntax: accepted forms and refusals. */
static void window_syntax(void **state)
{
    struct moe_window w;
    struct moe_error e;

    (void)state;
    assert_int_equal(moe_window_parse("steps=41-50", &w, &e), 0);
    assert_int_equal(w.kind, MOE_WINDOW_STEPS);
    assert_int_equal(w.first, 41);
    assert_int_equal(w.last, 50);
    assert_int_equal(moe_window_parse("steps=7", &w, &e), 0);
    assert_int_equal(w.first, 7);
    assert_int_equal(w.last, 7);
    assert_int_equal(moe_window_parse("time=1.5s-2s", &w, &e), 0);
    assert_int_equal(w.lo, 1500000000);
    assert_int_equal(w.hi, 2000000000);
    assert_int_equal(moe_window_parse("time=250us-3ms", &w, &e), 0);
    assert_int_equal(w.lo, 250000);
    assert_int_equal(w.hi, 3000000);
    assert_int_equal(moe_window_parse("steps=50-41", &w, &e), -1);
    assert_int_equal(moe_window_parse("time=1-2", &w, &e), -1);
    assert_int_equal(moe_window_parse("time=2s-1s", &w, &e), -1);
    assert_int_equal(moe_window_parse("41-50", &w, &e), -1);
    assert_non_null(strstr(e.text, "steps=A-B"));
}

/* Real GPU traces, tests/data/traces/real-*.json.gz (the 2xH200 PyTorch-
 * profiler recording of NCCL all-to-all beside GEMMs): each matches the
 * figures its recording script computed independently in Python, stored
 * next to it as real-*.expected.json. */
static void real_traces_cross_check(void **state)
{
    glob_t g;
    size_t checked = 0;

    (void)state;
    if (glob(srcpath("tests/data/traces/real-*.json.gz"), 0, NULL, &g) != 0)
        MOE_SKIP("no tests/data/traces/real-*.json.gz");
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char exp_path[4096];
        json_error_t je;
        json_t *exp;
        struct moe_overlap o;
        const struct moe_overlap_gpu *gpu;
        size_t len = strlen(g.gl_pathv[i]) - strlen(".json.gz");

        snprintf(exp_path, sizeof(exp_path), "%.*s.expected.json", (int)len, g.gl_pathv[i]);
        exp = json_load_file(exp_path, 0, &je);
        if (!exp)
            fail_msg("%s: %s", exp_path, je.text);
        /* The script counts names starting with "nccl" as communication: the
         * defaults agree on these traces. */
        analyse(&o, g.gl_pathv[i], "all");
        assert_int_equal(o.ngpus, 1);
        gpu = &o.gpus[0];
        assert_int_equal(gpu->kernels, json_integer_value(json_object_get(exp, "kernels")));
        /* Python works in float microseconds: allow 40 ns over the sums. */
#define NEAR(field, key) \
    assert_true(fabs((double)(field) / 1e3 - json_number_value(json_object_get(exp, key))) < 0.04)
        NEAR(gpu->comm, "comm_us");
        NEAR(gpu->compute, "compute_us");
        NEAR(gpu->hidden, "hidden_us");
        NEAR(gpu->exposed, "exposed_us");
        NEAR(gpu->busy, "busy_us");
#undef NEAR
        assert_true(fabs(moe_overlap_hidden_pct(gpu) -
                         json_number_value(json_object_get(exp, "hidden_pct"))) < 0.01);
        json_decref(exp);
        moe_overlap_free(&o);
        checked++;
    }
    globfree(&g);
    assert_true(checked > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kineto_whole_trace),
        cmocka_unit_test(kineto_step_window),
        cmocka_unit_test(kineto_time_window_edges),
        cmocka_unit_test(kineto_gzip),
        cmocka_unit_test(nsys_export),
        cmocka_unit_test(nsys_export_threads),
        cmocka_unit_test(nsys_without_kernels),
        cmocka_unit_test(missing_step_is_an_error),
        cmocka_unit_test(gpu_step_markers_preferred),
        cmocka_unit_test(malformed_json),
        cmocka_unit_test(streaming_large_trace),
        cmocka_unit_test(window_syntax),
        cmocka_unit_test(real_traces_cross_check),
    };

    return MOE_RUN_TESTS(tests);
}
