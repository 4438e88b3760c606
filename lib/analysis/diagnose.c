#include "config.h"

#include <stdio.h>
#include <string.h>

#include "analysis/diagnose.h"

/* The catalogue's axes that target b: what `moeflow gen --stage retune
 * --for B` keeps (tests/cli/gen-for.sh checks that the two agree). */
size_t moe_diagnose_candidates(enum moe_bottleneck b, const struct moe_retune_entry **out,
                               size_t max)
{
    size_t n = 0;

    for (int a = 0; a < MOE_RETUNE_COUNT; a++) {
        const struct moe_retune_entry *e = moe_retune_entry((enum moe_retune_axis)a);

        if (e->bottleneck != b)
            continue;
        if (n < max)
            out[n] = e;
        n++;
    }
    return n;
}

static double number(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    return json_is_number(v) ? json_number_value(v) : -1.0;
}

/* total.KEY is a number in [0, max]: a measure that is missing or out of
 * its bounds is not moeflow overlap's, and a diagnosis from it would claim
 * what nothing measured ("communication is hidden"). */
static int measure_ok(const json_t *t, const char *key, double max, struct moe_error *err)
{
    const json_t *v = json_object_get(t, key);

    if (!json_is_number(v)) {
        moe_error_set(err, "overlap: total.%s: %s (expected the output of moeflow overlap --json)",
                      key, v ? "not a number" : "missing");
        return -1;
    }
    if (json_number_value(v) < 0 || json_number_value(v) > max) {
        moe_error_set(err, "overlap: total.%s: %g is out of range 0..%g (expected the output of "
                      "moeflow overlap --json)", key, json_number_value(v), max);
        return -1;
    }
    return 0;
}

/* Fractions of GPU time from the overlap analysis's total. */
static int overlap_fractions(const json_t *overlap, struct moe_diagnosis *d, struct moe_error *err)
{
    const json_t *t = json_object_get(overlap, "total");
    double window = number(t, "window_ns"), kernels = number(t, "kernels");

    if (!json_is_object(t) || window <= 0) {
        moe_error_set(err, "overlap: no \"total\" with a positive window_ns (expected the output "
                           "of moeflow overlap --json)");
        return -1;
    }
    if (measure_ok(t, "exposed_ns", window, err) != 0 || measure_ok(t, "idle_ns", window, err) != 0 ||
        measure_ok(t, "kernels", 1e18, err) != 0 ||
        measure_ok(t, "short_kernels", kernels, err) != 0 ||
        (!json_is_null(json_object_get(t, "hidden_pct")) &&
         measure_ok(t, "hidden_pct", 100, err) != 0))
        return -1;
    d->exposed_fraction = number(t, "exposed_ns") / window;
    d->idle_fraction = number(t, "idle_ns") / window;
    d->short_fraction = kernels > 0 ? number(t, "short_kernels") / kernels : -1.0;
    d->hidden_pct = number(t, "hidden_pct");
    return 0;
}

int moe_diagnose(const json_t *run, const json_t *overlap, double capacity_bytes,
                 struct moe_diagnosis *d, struct moe_error *err)
{
    const char *rg = json_string_value(json_object_get(json_object_get(run, "in_effect"),
                                                       "recompute_granularity"));
    double peak = number(run, "peak_max_allocated_mib");

    memset(d, 0, sizeof(*d));
    d->memory_fraction = d->exposed_fraction = d->idle_fraction = d->short_fraction = -1.0;
    d->hidden_pct = -1.0;
    if (!json_is_object(run)) {
        moe_error_set(err, "report: expected a run object from report.json");
        return -1;
    }
    if (peak >= 0 && capacity_bytes > 0)
        d->memory_fraction = peak * 1048576.0 / capacity_bytes;
    d->full_recompute = rg && strcmp(rg, "full") == 0;
    if (overlap && overlap_fractions(overlap, d, err) < 0)
        return -1;

    /* In the workflow's order: a run that barely fits cannot be tuned for
     * speed first; exposed communication outranks host overhead. */
    if (d->memory_fraction >= MOE_DIAG_MEMORY_NEAR || d->full_recompute) {
        d->bottleneck = MOE_BOTTLENECK_MEMORY;
        if (d->full_recompute)
            snprintf(d->reason, sizeof(d->reason), "full recompute is needed to fit");
        else
            snprintf(d->reason, sizeof(d->reason),
                     "peak allocated memory is %.1f%% of capacity (>= %.0f%%)",
                     100 * d->memory_fraction, 100 * MOE_DIAG_MEMORY_NEAR);
    } else if (d->exposed_fraction >= MOE_DIAG_EXPOSED_COMM) {
        d->bottleneck = MOE_BOTTLENECK_COMMUNICATION;
        snprintf(d->reason, sizeof(d->reason),
                 "exposed communication is %.1f%% of GPU time (>= %.0f%%); %.2f%% of "
                 "communication is hidden", 100 * d->exposed_fraction,
                 100 * MOE_DIAG_EXPOSED_COMM, d->hidden_pct);
    } else if (d->idle_fraction >= MOE_DIAG_IDLE || d->short_fraction >= MOE_DIAG_SHORT_KERNELS) {
        d->bottleneck = MOE_BOTTLENECK_HOST;
        if (d->idle_fraction >= MOE_DIAG_IDLE)
            snprintf(d->reason, sizeof(d->reason),
                     "GPUs are idle %.1f%% of the window (>= %.0f%%): host or launch overhead",
                     100 * d->idle_fraction, 100 * MOE_DIAG_IDLE);
        else
            snprintf(d->reason, sizeof(d->reason),
                     "%.1f%% of kernels run under 10 us (>= %.0f%%): launch-bound",
                     100 * d->short_fraction, 100 * MOE_DIAG_SHORT_KERNELS);
    } else {
        d->bottleneck = MOE_BOTTLENECK_COMPUTE;
        snprintf(d->reason, sizeof(d->reason), "%s",
                 overlap ? "memory fits, communication is hidden and GPUs stay busy"
                         : "no memory pressure; without a profile, communication and host "
                           "overhead cannot be judged");
    }
    return 0;
}
