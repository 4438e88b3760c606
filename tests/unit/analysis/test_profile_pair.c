/* Matched A/B profiles (analysis/profile_pair.h) on real traces: the
 * 2xH200 all-to-all + GEMM traces of tests/data/traces (GEMMs run beside an
 * asynchronous all-to-all, then alone), whose contention figures were
 * computed independently in Python from the same JSON (the expected numbers
 * below: interval union of the NCCL kernels clipped to the ProfilerStep#1..3
 * GPU markers, each GEMM concurrent when it overlaps that union), and the
 * GPU lane's Megatron traces (core 0.19, steps 4..5), where nothing overlaps.
 * The same kernels as an nsys export, read by three threads, must keep
 * every compute kernel's name. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "analysis/profile_pair.h"
#include "analysis/profile_pair_internal.h"
#include "analysis/trace.h"
#include "analysis/trace_internal.h"
#include "unit.h"

/* A fresh builder for each side or pair: a failure gives NULL, on which
 * the test's first lookup fails. */
static struct moe_jb *jb(void)
{
    static struct moe_jb b;
    static struct moe_error e;

    moe_error_clear(&e);
    moe_jb_init(&b, &e);
    return &b;
}

#define A2A_RANK0 "tests/data/traces/real-a2a-gemm-2xh200-rank0.json.gz"
#define A2A_RANK1 "tests/data/traces/real-a2a-gemm-2xh200-rank1.json.gz"
#define GEMM "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"

static const char *srcpath(const char *rel)
{
    static char buf[2][4096];
    static int next;
    const char *dir = getenv("MOEFLOW_SRCDIR");
    char *b = buf[next++ % 2];

    snprintf(b, sizeof(buf[0]), "%s/%s", dir ? dir : ".", rel);
    return b;
}

/* One side from one trace file over steps first..last. */
static void side_of(struct moe_profile_side *s, const char *path, long first, long last)
{
    struct moe_window w = { .kind = MOE_WINDOW_STEPS, .first = first, .last = last };
    struct moe_trace t;
    struct moe_error e;

    moe_error_clear(&e);
    moe_trace_init(&t, path, NULL, NULL);
    t.compute_names = 1;
    if (moe_trace_load(&t, path, &e) < 0 || moe_profile_side_add_trace(s, &t, &w, &e) < 0)
        fail_msg("%s: %s", path, e.text);
    moe_trace_free(&t);
    assert_int_equal(moe_overlap_finish(&s->overlap, 10, &e), 0);
}

static const struct moe_kernel_timing *timing(const struct moe_profile_side *s, const char *name)
{
    for (size_t i = 0; i < s->nkernels; i++)
        if (strcmp(s->kernels[i].name, name) == 0)
            return &s->kernels[i];
    fail_msg("no kernel %s", name);
    return NULL;
}

/* Python's figures for rank 0, steps 1..3: 24 GEMMs, 9 beside the
 * all-to-all (1927718 ns) and 15 alone (2593797 ns): 23.87% slower when
 * concurrent, 371440 ns more than alone would take. */
static void contention_on_real_gemms(void **state)
{
    struct moe_profile_side s;
    const struct moe_kernel_timing *k;
    json_t *j, *c;

    (void)state;
    moe_profile_side_init(&s);
    side_of(&s, srcpath(A2A_RANK0), 1, 3);
    assert_int_equal(s.nkernels, 1);
    k = timing(&s, GEMM);
    assert_int_equal(k->alone, 15);
    assert_int_equal(k->alone_ns, 2593797);
    assert_int_equal(k->concurrent, 9);
    assert_int_equal(k->concurrent_ns, 1927718);
    assert_int_equal(s.kernel_ns, 6241680);
    assert_int_equal(s.compute_kernel_ns, 4521515);
    /* the figure moeflow run hands to gen --contention */
    assert_true(fabs(moe_profile_side_contention_pct(&s) - 23.8672011) < 1e-6);
    j = moe_profile_side_json(jb(), &s, 3, 10);
    c = json_object_get(j, "contention");
    assert_string_equal(json_string_value(json_object_get(j, "source")), "measured");
    assert_true(fabs(json_real_value(json_object_get(c, "slowdown_pct")) - 23.8672011) < 1e-6);
    /* 371440 ns over 1 GPU and 3 steps */
    assert_true(fabs(json_real_value(json_object_get(c, "extra_ms_per_gpu_step")) -
                     0.371440 / 3) < 1e-9);
    /* the overlap figures are overlap.c's (moeflow overlap --window steps=1-3
     * gives 69.18% hidden, 0.530 ms exposed) */
    assert_true(fabs(json_real_value(json_object_get(j, "hidden_comm_pct")) - 69.18) < 0.01);
    assert_true(fabs(json_real_value(json_object_get(j, "exposed_comm_ms_per_gpu_step")) -
                     0.530 / 3) < 0.001);
    json_decref(j);
    moe_profile_side_free(&s);
}

/* Megatron's own trace (core 0.19 on 2 GPUs, a model too small to hide
 * anything): no compute kernel runs beside communication, so there is no
 * contention to measure, and it says so (null, not 0). */
static void no_overlap_no_contention(void **state)
{
    struct moe_profile_side s;
    json_t *j, *c;
    size_t concurrent = 0;

    (void)state;
    moe_profile_side_init(&s);
    side_of(&s, srcpath("tests/data/gpu/traces/core-0.19/rank-0.json.gz"), 4, 5);
    side_of(&s, srcpath("tests/data/gpu/traces/core-0.19/rank-1.json.gz"), 4, 5);
    for (size_t i = 0; i < s.nkernels; i++)
        concurrent += s.kernels[i].concurrent;
    assert_int_equal(concurrent, 0);
    assert_true(s.nkernels > 10);
    /* Python: 651119070 ns of kernels, 70111856 ns of them compute */
    assert_int_equal(s.kernel_ns, 651119070);
    assert_int_equal(s.compute_kernel_ns, 70111856);
    assert_true(isnan(moe_profile_side_contention_pct(&s)));
    j = moe_profile_side_json(jb(), &s, 2, 5);
    c = json_object_get(j, "contention");
    assert_true(json_is_null(json_object_get(c, "slowdown_pct")));
    assert_true(json_is_null(json_object_get(c, "extra_ms_per_gpu_step")));
    assert_int_equal(json_integer_value(json_object_get(c, "kernel_names_both_ways")), 0);
    assert_int_equal(json_array_size(json_object_get(c, "kernels")), 5);
    assert_int_equal(json_integer_value(json_object_get(j, "gpus")), 2);
    json_decref(j);
    moe_profile_side_free(&s);
}

/* Rank 0 as the baseline, rank 1 as the winner (same job, same steps):
 * the pair holds both sides, their differences and the shared GEMM. */
static void pair_side_by_side(void **state)
{
    struct moe_profile_side b, w;
    json_t *p, *d, *k;
    double bh, wh;

    (void)state;
    moe_profile_side_init(&b);
    moe_profile_side_init(&w);
    side_of(&b, srcpath(A2A_RANK0), 1, 3);
    side_of(&w, srcpath(A2A_RANK1), 1, 3);
    p = moe_profile_pair_json(jb(), &b, &w, 3, 10);
    bh = json_real_value(json_object_get(json_object_get(p, "baseline"), "hidden_comm_pct"));
    wh = json_real_value(json_object_get(json_object_get(p, "winner"), "hidden_comm_pct"));
    assert_true(fabs(bh - 69.18) < 0.01);  /* moeflow overlap --window steps=1-3 */
    assert_true(fabs(wh - 66.61) < 0.01);
    d = json_object_get(p, "winner_minus_baseline");
    assert_true(fabs(json_real_value(json_object_get(d, "hidden_comm_pct")) - (wh - bh)) < 1e-9);
    assert_true(json_is_real(json_object_get(d, "exposed_comm_ms_per_gpu_step")));
    k = json_object_get(p, "kernels");
    assert_int_equal(json_array_size(k), 1);
    k = json_array_get(k, 0);
    assert_string_equal(json_string_value(json_object_get(k, "name")), GEMM);
    assert_int_equal(json_integer_value(json_object_get(k, "baseline_runs")), 24);
    assert_true(fabs(json_real_value(json_object_get(k, "baseline_mean_us")) -
                     (2593797.0 + 1927718.0) / 24 / 1e3) < 1e-9);
    json_decref(p);
    moe_profile_side_free(&b);
    moe_profile_side_free(&w);
}

static void exec_sql(sqlite3 *db, const char *sql)
{
    char *msg = NULL;

    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
}

static void insert_kernel(sqlite3_stmt *st, int64_t start, int64_t end, int dev, uint32_t name)
{
    sqlite3_bind_int64(st, 1, start);
    sqlite3_bind_int64(st, 2, end);
    sqlite3_bind_int(st, 3, dev);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)name + 1);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
}

/* t (read with names) as an nsys export: its kernels, names and GPU step
 * markers as NVTX ranges. */
static void write_nsys(const struct moe_trace *t, const char *path)
{
    sqlite3 *db;
    sqlite3_stmt *st;

    unlink(path);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    exec_sql(db, "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
                 "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
                 "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType "
                 "INTEGER NOT NULL, text TEXT, globalTid INTEGER, textId INTEGER);"
                 "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER "
                 "NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId "
                 "INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName "
                 "INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, gridX "
                 "INTEGER);");
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO StringIds VALUES (?, ?)", -1, &st, NULL),
                     SQLITE_OK);
    for (size_t i = 0; i < t->nnames; i++) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
        sqlite3_bind_text(st, 2, t->names[i].text, -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, "
                                            "deviceId, contextId, streamId, demangledName, "
                                            "shortName) VALUES (?1, ?2, ?3, 1, 7, ?4, ?4)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    for (size_t d = 0; d < t->ndevices; d++) {
        const struct moe_trace_device *dv = &t->devices[d];

        for (size_t k = 0; k < dv->ncompute; k++)
            insert_kernel(st, dv->compute[k].start, dv->compute[k].end, dv->id,
                          dv->compute_names[k]);
        for (size_t k = 0; k < dv->ncomm; k++)
            insert_kernel(st, dv->comm[k].start, dv->comm[k].end, dv->id, dv->comm[k].name);
    }
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO NVTX_EVENTS (start, end, eventType, "
                                            "text) VALUES (?, ?, 59, ?)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    for (size_t i = 0; i < t->nsteps; i++) {
        char name[64];

        if (!t->steps[i].gpu)
            continue;
        snprintf(name, sizeof(name), "ProfilerStep#%ld", t->steps[i].step);
        sqlite3_bind_int64(st, 1, t->steps[i].start);
        sqlite3_bind_int64(st, 2, t->steps[i].end);
        sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The nsys reader joins its threads' kernels (moe_trace_absorb): every
 * compute kernel keeps its name, so the contention is the Kineto trace's. */
static void nsys_threads_keep_names(void **state)
{
    struct moe_window w = { .kind = MOE_WINDOW_STEPS, .first = 1, .last = 3 };
    struct moe_profile_side s;
    struct moe_trace k, n;
    struct moe_error e;
    const struct moe_kernel_timing *g;
    const char *path = moe_unit_path("a2a.sqlite");

    (void)state;
    moe_error_clear(&e);
    moe_trace_init(&k, "kineto", NULL, NULL);
    k.compute_names = 1;
    assert_int_equal(moe_trace_load(&k, srcpath(A2A_RANK0), &e), 0);
    write_nsys(&k, path);
    moe_trace_free(&k);
    moe_trace_init(&n, path, NULL, NULL);
    n.compute_names = 1;
    n.threads = 3;
    if (moe_trace_load(&n, path, &e) < 0)
        fail_msg("%s", e.text);
    moe_profile_side_init(&s);
    if (moe_profile_side_add_trace(&s, &n, &w, &e) < 0)
        fail_msg("%s", e.text);
    moe_trace_free(&n);
    g = timing(&s, GEMM);
    assert_int_equal(g->alone, 15);
    assert_int_equal(g->alone_ns, 2593797);
    assert_int_equal(g->concurrent, 9);
    assert_int_equal(g->concurrent_ns, 1927718);
    moe_profile_side_free(&s);
}

/* A side needs the names: a trace read without them is refused, not
 * analysed as if every kernel were one. */
static void names_required(void **state)
{
    struct moe_window w = { 0 };
    struct moe_profile_side s;
    struct moe_trace t;
    struct moe_error e;

    (void)state;
    moe_error_clear(&e);
    moe_trace_init(&t, "x", NULL, NULL);
    assert_int_equal(moe_trace_load(&t, srcpath(A2A_RANK0), &e), 0);
    moe_profile_side_init(&s);
    assert_int_equal(moe_profile_side_add_trace(&s, &t, &w, &e), -1);
    assert_non_null(strstr(e.text, "names"));
    moe_trace_free(&t);
    moe_profile_side_free(&s);
}

/* A twin's folder: the traces in torch_profile/ are found; an empty or
 * missing folder is "no trace yet" (1), not an error. */
static void side_from_folder(void **state)
{
    struct moe_profile_side s;
    struct moe_error e;
    char cmd[8192];

    (void)state;
    moe_error_clear(&e);
    moe_profile_side_init(&s);
    assert_int_equal(moe_profile_side_load(&s, moe_unit_path("nothing"), 1, 3, &e), 1);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/torch_profile' && cp '%s' '%s' '%s/torch_profile/'",
             moe_unit_path("twin"), srcpath(A2A_RANK0), srcpath(A2A_RANK1),
             moe_unit_path("twin"));
    assert_int_equal(system(cmd), 0);
    if (moe_profile_side_load(&s, moe_unit_path("twin"), 1, 3, &e) != 0)
        fail_msg("%s", e.text);
    assert_int_equal(s.traces, 2);
    assert_int_equal(s.overlap.ngpus, 2);
    assert_int_equal(timing(&s, GEMM)->concurrent + timing(&s, GEMM)->alone, 48);
    moe_profile_side_free(&s);
    moe_profile_side_init(&s);
    assert_int_equal(moe_profile_side_load(&s, moe_unit_path("twin"), 40, 50, &e), -1);
    assert_non_null(strstr(e.text, "only has steps 1-3"));
    moe_profile_side_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(contention_on_real_gemms),
        cmocka_unit_test(no_overlap_no_contention),
        cmocka_unit_test(pair_side_by_side),
        cmocka_unit_test(nsys_threads_keep_names),
        cmocka_unit_test(names_required),
        cmocka_unit_test(side_from_folder),
    };

    return MOE_RUN_GROUP(tests, moe_unit_make_dir, moe_unit_remove_dir);
}
