/* Bottleneck classification: thresholds, precedence and retune candidates. */
#include "config.h"

#include <string.h>

#include <jansson.h>

#include "analysis/diagnose.h"
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

/* Exposed communication at 10% of GPU time and above is the bottleneck
 * (ahead of idle time); 9.9% is not. */
static void communication_bottleneck(void **state)
{
    (void)state;
    assert_int_equal(classify(run(1000, "None"), overlap(100, 0, 0), 141),
                     MOE_BOTTLENECK_COMMUNICATION);
    assert_int_equal(classify(run(1000, "None"), overlap(200, 300, 90), 141),
                     MOE_BOTTLENECK_COMMUNICATION);
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
    assert_int_equal(moe_diagnose_candidates(MOE_BOTTLENECK_HOST, c, MOE_RETUNE_COUNT), 2);
    assert_string_equal(c[0]->variable, "cuda_graph_modules");
    assert_string_equal(c[1]->variable, "manual_gc");
    assert_int_equal(moe_diagnose_candidates(MOE_BOTTLENECK_MEMORY, c, 1), 1);
    assert_string_equal(c[0]->variable, "recompute_modules");
    assert_string_equal(c[0]->axis, "recompute");
    assert_int_equal(moe_diagnose_candidates(MOE_BOTTLENECK_COMMUNICATION, c, 2), 6);
    assert_string_equal(c[1]->variable, "ep_overlap");
    assert_int_equal(moe_diagnose_candidates(MOE_BOTTLENECK_COMPUTE, c, 1), 2);
    assert_string_equal(c[0]->variable, "precision");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(memory_bottleneck),    cmocka_unit_test(communication_bottleneck),
        cmocka_unit_test(host_bottleneck),      cmocka_unit_test(candidates_and_names),
        cmocka_unit_test(bad_overlap_refused),
    };

    return MOE_RUN_TESTS(tests);
}
