/* Bottleneck classification: thresholds, precedence and retune candidates;
 * the straggler, the skipped axes' reasons, and the profile stage's
 * evidence read from a study (analysis/diagnose_profile.h). */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/diagnose.h"
#include "analysis/diagnose_internal.h"
#include "analysis/diagnose_profile.h"
#include "unit.h"

static json_t *run(double peak_mib, const char *recompute)
{
    return json_pack("{s:s,s:f,s:{s:s}}", "name", "c1", "peak_max_allocated_mib", peak_mib,
                     "in_effect", "recompute_granularity", recompute);
}

/* window 1000 ns of GPU time, 100 kernels. */
static json_t *overlap(long exposed, long idle, long short_kernels)
{
    return json_pack("{s:{s:I,s:I,s:I,s:I,s:I,s:f}}", "total", "window_ns", (json_int_t)1000,
                     "exposed_ns", (json_int_t)exposed, "idle_ns", (json_int_t)idle, "kernels",
                     (json_int_t)100, "short_kernels", (json_int_t)short_kernels, "hidden_pct",
                     40.0);
}

static enum moe_bottleneck classify(json_t *r, json_t *o, double capacity_gib)
{
    struct moe_diagnosis d;
    struct moe_error e;

    assert_int_equal(moe_diagnose(r, o, capacity_gib * 1073741824.0, &d, &e), 0);
    json_decref(r);
    json_decref(o);
    return d.bottleneck;
}

/* 130000 MiB of 141 GiB (144384 MiB) is 90.04%: near capacity. 120000 MiB
 * (83%) is not.  Full recompute means memory whatever the peak. */
static void memory_bottleneck(void **state)
{
    (void)state;
    assert_int_equal(classify(run(130000, "None"), NULL, 141), MOE_BOTTLENECK_MEMORY);
    assert_int_equal(classify(run(120000, "None"), NULL, 141), MOE_BOTTLENECK_COMPUTE);
    assert_int_equal(classify(run(1000, "full"), NULL, 141), MOE_BOTTLENECK_MEMORY);
    assert_int_equal(classify(run(1000, "selective"), NULL, 141), MOE_BOTTLENECK_COMPUTE);
    /* Memory outranks exposed communication. */
    assert_int_equal(classify(run(130000, "None"), overlap(500, 0, 0), 141),
                     MOE_BOTTLENECK_MEMORY);
    /* Unknown capacity: the peak alone proves nothing. */
    assert_int_equal(classify(run(130000, "None"), NULL, 0), MOE_BOTTLENECK_COMPUTE);
}

/* Exposed communication at 10% of GPU time and above is the bottleneck;
 * 9.9% is not.  Against idle time past its own threshold, the larger share
 * wins (a tie goes to communication); mostly short kernels with little
 * idle time do not outrank it. */
static void communication_bottleneck(void **state)
{
    (void)state;
    assert_int_equal(classify(run(1000, "None"), overlap(100, 0, 0), 141),
                     MOE_BOTTLENECK_COMMUNICATION);
    assert_int_equal(classify(run(1000, "None"), overlap(300, 200, 90), 141),
                     MOE_BOTTLENECK_COMMUNICATION);
    assert_int_equal(classify(run(1000, "None"), overlap(200, 200, 0), 141),
                     MOE_BOTTLENECK_COMMUNICATION);
    assert_int_equal(classify(run(1000, "None"), overlap(200, 50, 90), 141),
                     MOE_BOTTLENECK_COMMUNICATION);
    assert_int_equal(classify(run(1000, "None"), overlap(200, 300, 90), 141), MOE_BOTTLENECK_HOST);
    assert_int_equal(classify(run(1000, "None"), overlap(99, 0, 0), 141), MOE_BOTTLENECK_COMPUTE);
}

/* Idle GPUs (>= 10%) or mostly short kernels (>= 50%) point at the host. */
static void host_bottleneck(void **state)
{
    (void)state;
    assert_int_equal(classify(run(1000, "None"), overlap(0, 150, 0), 141), MOE_BOTTLENECK_HOST);
    assert_int_equal(classify(run(1000, "None"), overlap(0, 0, 50), 141), MOE_BOTTLENECK_HOST);
    assert_int_equal(classify(run(1000, "None"), overlap(0, 99, 49), 141), MOE_BOTTLENECK_COMPUTE);
}

/* The candidates are the retune catalogue's entries (core/retune.h) that
 * target each bottleneck, in its order; every axis targets one; names
 * round-trip. */
static void candidates_and_names(void **state)
{
    const struct moe_retune_entry *c[MOE_RETUNE_COUNT];
    size_t total = 0;

    (void)state;
    assert_int_equal(moe_diagnose_candidates(MOE_BOTTLENECK_HOST, c, MOE_RETUNE_COUNT), 3);
    assert_string_equal(c[0]->variable, "cuda_graph_modules");
    assert_string_equal(c[1]->variable, "manual_gc");
    assert_string_equal(c[2]->variable, "mbs");
    assert_int_equal(moe_diagnose_candidates(MOE_BOTTLENECK_MEMORY, c, 1), 1);
    assert_string_equal(c[0]->variable, "recompute_modules");
    assert_string_equal(c[0]->axis, "recompute");
    assert_int_equal(moe_diagnose_candidates(MOE_BOTTLENECK_COMMUNICATION, c, 2), 6);
    assert_string_equal(c[1]->variable, "ep_overlap");
    /* low precision, then the dispatcher's SM count (the seed's "dispatcher
     * kernel tuning", issue 41) */
    assert_int_equal(moe_diagnose_candidates(MOE_BOTTLENECK_COMPUTE, c, 2), 2);
    assert_string_equal(c[0]->variable, "precision");
    assert_string_equal(c[1]->variable, "dispatcher_sms");
    for (int b = 0; b < MOE_BOTTLENECK_COUNT; b++) {
        assert_int_equal(moe_bottleneck_parse(moe_bottleneck_name((enum moe_bottleneck)b)), b);
        total += moe_diagnose_candidates((enum moe_bottleneck)b, c, 0);
    }
    assert_int_equal(total, MOE_RETUNE_COUNT);
    assert_int_equal(moe_bottleneck_parse("Memory"), MOE_BOTTLENECK_COUNT);
    assert_int_equal(moe_bottleneck_parse(NULL), MOE_BOTTLENECK_COUNT);
    assert_null(moe_retune_entry((enum moe_retune_axis)MOE_RETUNE_COUNT));
}

/* An overlap document without totals is refused, not guessed at. */
static void bad_overlap_refused(void **state)
{
    struct moe_diagnosis d;
    struct moe_error e;
    json_t *r = run(1000, "None"), *o = json_pack("{s:[]}", "gpus");

    (void)state;
    moe_error_clear(&e);
    assert_int_equal(moe_diagnose(r, o, 0, &d, &e), -1);
    assert_non_null(strstr(e.text, "moeflow overlap --json"));
    json_decref(r);
    json_decref(o);
}

/* The busy share: busy_ns over the window, else window less idle; the
 * host reason carries it. */
static void busy_share(void **state)
{
    struct moe_diagnosis d;
    struct moe_error e;
    json_t *r = run(1000, "None"), *o = overlap(0, 824, 0);

    (void)state;
    assert_int_equal(moe_diagnose(r, o, 0, &d, &e), 0);
    assert_true(fabs(d.busy_fraction - 0.176) < 1e-9);
    assert_int_equal(d.bottleneck, MOE_BOTTLENECK_HOST);
    assert_non_null(strstr(d.reason, "busy 17.6%"));
    json_object_set_new(json_object_get(o, "total"), "busy_ns", json_integer(150));
    assert_int_equal(moe_diagnose(r, o, 0, &d, &e), 0);
    assert_true(fabs(d.busy_fraction - 0.15) < 1e-9);
    assert_true(fabs(d.window_ms - 0.001) < 1e-12);
    /* Unknown memory is not called "fits". */
    assert_int_equal(moe_diagnose(r, overlap(0, 0, 0), 0, &d, &e), 0);
    assert_non_null(strstr(d.reason, "memory pressure unknown"));
    json_decref(r);
    json_decref(o);
}

static json_t *gpu_row(const char *trace, long window, long exposed)
{
    return json_pack("{s:s,s:i,s:I,s:I}", "trace", trace, "device", 0, "window_ns",
                     (json_int_t)window, "exposed_ns", (json_int_t)exposed);
}

/* The straggler has the most own work (window less exposed communication),
 * named by the rank in its file name, measured against the median. */
static void straggler(void **state)
{
    struct moe_straggler s;
    json_t *o = json_pack("{s:[o,o,o]}", "gpus", gpu_row("a/rank-0.json.gz", 1000000, 800000),
                          gpu_row("a/profile-7-rank12.sqlite", 1000000, 100000),
                          gpu_row("a/rank-2.json.gz", 1000000, 700000));

    (void)state;
    moe_diagnose_straggler(o, &s);
    assert_int_equal(s.ranks, 3);
    assert_int_equal(s.rank, 12);
    assert_string_equal(s.trace, "profile-7-rank12.sqlite:0");
    assert_true(fabs(s.work_ms - 0.9) < 1e-9 && fabs(s.median_ms - 0.3) < 1e-9);
    assert_true(fabs(s.behind_fraction - 2.0) < 1e-9);
    /* No rank in the name: the row's index. */
    json_array_set_new(json_object_get(o, "gpus"), 1, gpu_row("host_1.2.pt.trace.json", 1000000, 0));
    moe_diagnose_straggler(o, &s);
    assert_int_equal(s.rank, 1);
    /* One row compares nothing; a row without figures is not guessed at. */
    json_array_remove(json_object_get(o, "gpus"), 2);
    json_array_remove(json_object_get(o, "gpus"), 1);
    moe_diagnose_straggler(o, &s);
    assert_int_equal(s.ranks, 1);
    assert_int_equal(s.rank, -1);
    json_array_append_new(json_object_get(o, "gpus"), json_pack("{s:s}", "trace", "x"));
    moe_diagnose_straggler(o, &s);
    assert_int_equal(s.ranks, 0);
    json_decref(o);
}

static const char *skip_of(json_t *r, json_t *o, double cap_gib, enum moe_retune_axis a)
{
    static char buf[512];
    struct moe_diagnosis d;
    struct moe_error e;

    assert_int_equal(moe_diagnose(r, o, cap_gib * 1073741824.0, &d, &e), 0);
    json_decref(r);
    json_decref(o);
    return moe_diagnose_skip_reason(&d, moe_retune_entry(a), buf, sizeof(buf));
}

/* Every axis that does not target the bottleneck says why, with the
 * measure that rules its target out. */
static void skip_reasons(void **state)
{
    (void)state;
    assert_null(skip_of(run(1000, "None"), overlap(0, 500, 0), 141, MOE_RETUNE_CUDA_GRAPH));
    assert_string_equal(skip_of(run(1000, "None"), overlap(12, 500, 0), 141, MOE_RETUNE_EP_OVERLAP),
                        "targets communication; the profile shows exposed communication 1.2% "
                        "of GPU time, under the 10% threshold");
    assert_non_null(strstr(skip_of(run(1000, "None"), overlap(200, 500, 0), 141,
                                   MOE_RETUNE_DISPATCHER), "less than the 50.0% the GPUs sit idle"));
    assert_non_null(strstr(skip_of(run(1000, "None"), NULL, 141, MOE_RETUNE_DISPATCHER),
                           "without a profile"));
    assert_non_null(strstr(skip_of(run(1000, "None"), overlap(300, 0, 0), 141,
                                   MOE_RETUNE_MANUAL_GC), "GPUs idle 0.0% of GPU time (under"));
    assert_non_null(strstr(skip_of(run(1000, "None"), overlap(300, 200, 0), 141,
                                   MOE_RETUNE_MANUAL_GC), "is less than the 30.0% of exposed"));
    assert_non_null(strstr(skip_of(run(1000, "None"), NULL, 141, MOE_RETUNE_MANUAL_GC),
                           "idle time is not measured"));
    assert_non_null(strstr(skip_of(run(1000, "None"), overlap(0, 500, 0), 141,
                                   MOE_RETUNE_RECOMPUTE), "0.7% of capacity, under the 90%"));
    assert_non_null(strstr(skip_of(run(1000, "None"), overlap(0, 500, 0), 0, MOE_RETUNE_RECOMPUTE),
                           "memory headroom unknown"));
    /* a larger micro-batch is Megatron's remedy for host overhead too */
    assert_null(skip_of(run(1000, "None"), overlap(0, 500, 0), 141, MOE_RETUNE_MBS));
    assert_non_null(strstr(skip_of(run(1000, "None"), overlap(0, 500, 0), 141,
                                   MOE_RETUNE_PRECISION), "here host is"));
    assert_non_null(strstr(skip_of(run(1000, "full"), overlap(0, 500, 0), 141, MOE_RETUNE_MBS),
                           "memory comes first: full recompute"));
}

#define PROFILE_ID "1111111111111111111111111111111111111111111111111111111111111111"
#define FIT_ID "2222222222222222222222222222222222222222222222222222222222222222"

static const char *srcpath(const char *rel)
{
    static char buf[4096];
    const char *dir = getenv("MOEFLOW_SRCDIR");

    snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : ".", rel);
    return buf;
}

/* The paths are single-quoted in each command: a checkout's path may hold
 * a blank. */
static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    assert_int_equal(system(cmd), 0);
}

/* A study of a profile baseline and a fit run of the same layout and
 * recompute, as gen writes their manifest entries (the fields read). */
static void write_study(const char *dir)
{
    json_t *c = json_pack("{s:{s:i,s:i},s:{s:{s:s,s:[]}},s:{s:i},s:{s:s,s:[i,i]}}", "parallel",
                          "tp", 1, "ep", 2, "tuning", "recompute", "granularity", "none",
                          "modules", "hardware", "gpu_memory_gib", 80, "profiling", "profiler",
                          "pytorch", "steps", 4, 5);
    json_t *m = json_pack("{s:s,s:[{s:s,s:[{s:s,s:s,s:s,s:O}]},{s:s,s:[{s:s,s:s,s:s,s:O,s:f,"
                          "s:i,s:i}]}]}", "study", "t", "stages", "stage", "profile", "candidates",
                          "id", PROFILE_ID, "variable", "baseline", "value", "baseline",
                          "contract", c, "stage", "fit", "candidates", "id", FIT_ID, "variable",
                          "recompute", "value", "none", "contract", c, "predicted_mib", 1250.0,
                          "rank", 0, "world_size", 2);
    char path[4096];

    snprintf(path, sizeof(path), "%s/manifest.json", dir);
    assert_int_equal(json_dump_file(m, path, JSON_INDENT(1)), 0);
    json_decref(m);
    json_decref(c);
}

/* The profile stage's traces over its steps, the fit run's measured peak
 * and the contract's declared capacity; a missing trace and an
 * unexported .nsys-rep are refused with what to do. */
static void profile_evidence(void **state)
{
    const char *dir = moe_unit_path("study");
    struct moe_profile_evidence pe;
    struct moe_error e;

    (void)state;
    sh("mkdir -p '%s/results/profile/torch_profile' '%s/results/fit'", dir, dir);
    write_study(dir);
    moe_error_clear(&e);
    assert_int_equal(moe_profile_evidence_load(dir, &pe, &e), -1);
    assert_non_null(strstr(e.text, "has the profile stage run?"));
    sh("touch '%s/results/profile/profile-3-rank0.nsys-rep'", dir);
    assert_int_equal(moe_profile_evidence_load(dir, &pe, &e), -1);
    assert_non_null(strstr(e.text, "1 Nsight Systems report without the SQLite export"));
    assert_non_null(strstr(e.text, "nsys export --type sqlite --output "));
    assert_non_null(strstr(e.text, "profile-3-rank0.sqlite "));
    sh("rm '%s/results/profile/profile-3-rank0.nsys-rep'", dir);
    sh("cp '%s' '%s/results/profile/torch_profile/'",
       srcpath("tests/data/gpu/traces/core-0.19/rank-0.json.gz"), dir);
    assert_int_equal(moe_profile_evidence_load(dir, &pe, &e), 0);
    assert_int_equal(pe.first, 4);
    assert_int_equal(pe.last, 5);
    assert_string_equal(json_string_value(json_array_get(pe.sources, 0)),
                        "results/profile/torch_profile/rank-0.json.gz");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(pe.overlap, "total"),
                                                        "busy_ns")), 159750352);
    assert_true(pe.capacity_mib == 81920);
    assert_string_equal(pe.fit_id, FIT_ID);
    assert_true(isnan(pe.fit_measured_mib)); /* not run */
    assert_true(pe.fit_predicted_mib == 1250.0);
    assert_string_equal(json_string_value(json_object_get(pe.run, "name")),
                        "profile baseline 111111111111");
    moe_profile_evidence_free(&pe);
    sh("echo '[Rank 0] (after 1 iterations) memory (MB) | allocated: 1.0 | max allocated: "
       "1300.50 | reserved: 2.0 | max reserved: 2.0' > '%s/results/fit/%s.log'", dir, FIT_ID);
    sh("echo 0 > '%s/results/fit/%s.rc'", dir, FIT_ID);
    assert_int_equal(moe_profile_evidence_load(dir, &pe, &e), 0);
    assert_true(pe.fit_measured_mib == 1300.5);
    assert_true(json_number_value(json_object_get(pe.run, "peak_max_allocated_mib")) == 1300.5);
    moe_profile_evidence_free(&pe);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory_bottleneck),    cmocka_unit_test(communication_bottleneck),
        cmocka_unit_test(host_bottleneck),      cmocka_unit_test(candidates_and_names),
        cmocka_unit_test(bad_overlap_refused), cmocka_unit_test(busy_share),
        cmocka_unit_test(straggler),            cmocka_unit_test(skip_reasons),
        cmocka_unit_test_setup_teardown(profile_evidence, moe_unit_make_dir, moe_unit_remove_dir),
    };

    return MOE_RUN_TESTS(tests);
}
