/* The A/B statistic behind a report verdict: two samples of step times (the
 * baseline's and a candidate's, over the same window), compared by
 *   - the Mann-Whitney U (Wilcoxon rank-sum) test, two-sided: exact when
 *     neither sample has ties and both have at most MOE_ABTEST_EXACT_MAX
 *     values, else the normal approximation with tie and continuity
 *     corrections;
 *   - the effect: the difference of the medians, in % of the baseline's;
 *   - its 95% bootstrap percentile interval, from MOE_ABTEST_RESAMPLES
 *     resamples drawn by a PRNG with a fixed seed, so that the same logs
 *     always give the same interval.
 * Pure functions: no I/O. */
#ifndef MOEFLOW_ABTEST_H
#define MOEFLOW_ABTEST_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define MOE_ABTEST_EXACT_MAX 60
#define MOE_ABTEST_RESAMPLES 4000
#define MOE_ABTEST_SEED UINT64_C(0x6d6f65666c6f7721) /* "moeflow!" */

struct moe_abtest {
    size_t n_a, n_b;
    double median_a, median_b;
    double effect_pct;         /* (median_b - median_a) / median_a, in % */
    double ci_lo_pct, ci_hi_pct; /* 95% bootstrap interval of effect_pct */
    double u;                  /* U of sample b: pairs (a, b) with b > a, ties half */
    double z;                  /* normal score; NAN for the exact test */
    double p_value;            /* two-sided */
    int exact;
};

/* a: the baseline (median > 0), b: the candidate; each needs at least two
 * values.  -1 with err on bad input or out of memory. */
int moe_abtest_run(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
                   struct moe_abtest *t, struct moe_error *err);

/* Median of v, which it sorts in place; n > 0. */
double moe_median(double *v, size_t n);

#endif
