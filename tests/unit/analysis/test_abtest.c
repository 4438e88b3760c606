/* The A/B verdict's statistic: exact Mann-Whitney p-values against the
 * published table values, the normal approximation on a hand-worked case,
 * a reproducible bootstrap interval, and verdicts on the real 2xH200 log:
 * windows of the same run (noise only) are never a win or a loss, while a
 * real shift of the same steps is found even when the old CV rule hid it. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/abtest.h"
#include "analysis/abtest_internal.h"
#include "analysis/megatron_log.h"
#include "analysis/megatron_log_internal.h"
#include "analysis/report.h"
#include "analysis/report_internal.h"
#include "unit.h"

#define NEAR(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))

static const char *srcpath(const char *rel)
{
    static char buf[4096];
    const char *dir = getenv("MOEFLOW_SRCDIR");

    snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : ".", rel);
    return buf;
}

/* Exact two-sided p = 2 * P(U <= u), P from the Mann-Whitney table:
 * m = n = 3, U = 0: 2/20; m = n = 4, U = 0: 2/70, U = 1: 4/70;
 * m = n = 5: U = 0, 1, 2 occur in 1, 1, 2 of the 252 orderings, so
 * P(U <= 2) = 4/252. */
static void exact_p_table(void **state)
{
    (void)state;
    NEAR(moe_abtest_exact_p(3, 3, 0), 2.0 / 20.0, 1e-12);
    NEAR(moe_abtest_exact_p(4, 4, 0), 2.0 / 70.0, 1e-12);
    NEAR(moe_abtest_exact_p(4, 4, 1), 4.0 / 70.0, 1e-12);
    NEAR(moe_abtest_exact_p(5, 5, 2), 2.0 * 4.0 / 252.0, 1e-12);
    /* symmetric: U and m*n - U give the same p; the middle gives 1 */
    NEAR(moe_abtest_exact_p(4, 4, 15), 4.0 / 70.0, 1e-12);
    NEAR(moe_abtest_exact_p(4, 4, 8), 1.0, 1e-12);
    /* unequal sizes: m = 2, n = 3, U = 0: 2 / C(5, 2) = 0.2 */
    NEAR(moe_abtest_exact_p(2, 3, 0), 0.2, 1e-12);
    /* 10 against 10, complete separation: 2 / C(20, 10) = 1.0825e-5 */
    NEAR(moe_abtest_exact_p(10, 10, 0), 2.0 / 184756.0, 1e-15);
}

/* Ties force the normal approximation.  a = {1,2,2,3}, b = {2,3,3,4}:
 * midranks 1 | 3 3 3 | 6 6 6 | 8; b's rank sum 3+6+6+8 = 23, U = 23 - 10 =
 * 13; mu = 8; tie term (27-3)*2 = 48; var = 16/12 * (9 - 48/56) = 10.857;
 * z = (13 - 8 - 0.5) / 3.2950 = 1.3657; p = erfc(z / sqrt 2) = 0.1720. */
static void normal_approximation_with_ties(void **state)
{
    const double a[] = { 1, 2, 2, 3 }, b[] = { 2, 3, 3, 4 };
    struct moe_abtest t;

    (void)state;
    assert_int_equal(moe_abtest_run(a, 4, b, 4, MOE_ABTEST_SEED, &t, NULL), 0);
    assert_false(t.exact);
    NEAR(t.u, 13.0, 1e-12);
    NEAR(t.z, 4.5 / sqrt(16.0 / 12.0 * (9.0 - 48.0 / 56.0)), 1e-12);
    NEAR(t.p_value, erfc(t.z / sqrt(2.0)), 1e-12);
    NEAR(t.p_value, 0.1720, 5e-4);
    NEAR(t.effect_pct, 100.0 * (3.0 - 2.0) / 2.0, 1e-12);
}

/* Equal samples: p = 1, effect 0, interval [0, 0]; too few values is an
 * error, not a verdict. */
static void degenerate_inputs(void **state)
{
    const double a[] = { 5, 5, 5 }, b[] = { 5, 5, 5 };
    struct moe_abtest t;
    struct moe_error e;

    (void)state;
    assert_int_equal(moe_abtest_run(a, 3, b, 3, MOE_ABTEST_SEED, &t, NULL), 0);
    NEAR(t.p_value, 1.0, 0);
    NEAR(t.effect_pct, 0.0, 0);
    NEAR(t.ci_lo_pct, 0.0, 0);
    NEAR(t.ci_hi_pct, 0.0, 0);
    moe_error_clear(&e);
    assert_int_equal(moe_abtest_run(a, 1, b, 3, MOE_ABTEST_SEED, &t, &e), -1);
    assert_non_null(strstr(e.text, "at least two step times"));
}

/* The interval comes from a seeded PRNG: the same inputs give the same
 * bounds, bit for bit, and they bracket the observed effect. */
static void bootstrap_is_reproducible(void **state)
{
    const double a[] = { 100, 103, 98, 101, 99, 102, 97, 100, 104, 96 };
    const double b[] = { 95, 97, 94, 96, 99, 93, 95, 98, 92, 96 };
    struct moe_abtest t1, t2, t3;

    (void)state;
    assert_int_equal(moe_abtest_run(a, 10, b, 10, MOE_ABTEST_SEED, &t1, NULL), 0);
    assert_int_equal(moe_abtest_run(a, 10, b, 10, MOE_ABTEST_SEED, &t2, NULL), 0);
    assert_memory_equal(&t1, &t2, sizeof(t1));
    assert_true(t1.ci_lo_pct <= t1.effect_pct && t1.effect_pct <= t1.ci_hi_pct);
    assert_true(t1.ci_hi_pct < 0);
    assert_int_equal(moe_abtest_run(a, 10, b, 10, 12345, &t3, NULL), 0);
    NEAR(t3.p_value, t1.p_value, 0); /* the test itself does not resample */
    print_message("# synthetic -4.5%% shift: effect %+.2f%% [%+.2f%%, %+.2f%%] p=%.3g (exact %d)\n",
                  t1.effect_pct, t1.ci_lo_pct, t1.ci_hi_pct, t1.p_value, t1.exact);
}

static void read_real(struct moe_log *log)
{
    struct moe_error e;

    moe_log_init(log);
    moe_error_clear(&e);
    if (moe_log_read_file(log, srcpath("tests/data/logs/h200x2-moe-ep2-alltoall-60it.log"),
                          &e) < 0)
        fail_msg("%s", e.text);
}

/* Step times of iterations [first, last] of the real log, every step-th
 * one starting at first. */
static size_t steps_of(const struct moe_log *log, long first, long last, long step, double *out)
{
    size_t n = 0;

    for (size_t i = 0; i < log->niters; i++) {
        long it = log->iters[i].iter;

        if (it >= first && it <= last && (it - first) % step == 0)
            out[n++] = log->iters[i].step_ms;
    }
    return n;
}

/* Two samples of one real run that differ only by noise are never a win or
 * a loss: the odd against the even iterations of the steady part (31-60,
 * interleaved, so a slow drift falls on both sides), and neighbouring
 * 10-step windows after warm-up.  (The run is not steady before ~30: steps
 * 11-20 against 21-30 is a real 8% speed-up, and the test says so.) */
static void real_log_noise_only(void **state)
{
    static const long w[][6] = {
        /* a: first, last, step; b: first, last, step */
        { 31, 60, 2, 32, 60, 2 }, { 41, 60, 2, 42, 60, 2 }, { 31, 50, 2, 32, 50, 2 },
        { 41, 50, 2, 42, 50, 2 }, { 51, 60, 2, 52, 60, 2 }, { 31, 40, 1, 41, 50, 1 },
    };
    double a[64], b[64];
    struct moe_log log;
    struct moe_abtest t;

    (void)state;
    read_real(&log);
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
        size_t na = steps_of(&log, w[i][0], w[i][1], w[i][2], a);
        size_t nb = steps_of(&log, w[i][3], w[i][4], w[i][5], b);
        int significant;

        assert_int_equal(moe_abtest_run(a, na, b, nb, MOE_ABTEST_SEED, &t, NULL), 0);
        significant = t.p_value < MOE_REPORT_ALPHA && (t.ci_lo_pct > 0 || t.ci_hi_pct < 0);
        print_message("# h200 %ld-%ld/%ld vs %ld-%ld/%ld (n=%zu, %zu): medians %.1f / %.1f ms, "
                      "effect %+.2f%% [%+.2f%%, %+.2f%%] p=%.3g -> %s\n",
                      w[i][0], w[i][1], w[i][2], w[i][3], w[i][4], w[i][5], na, nb, t.median_a,
                      t.median_b, t.effect_pct, t.ci_lo_pct, t.ci_hi_pct, t.p_value,
                      significant && fabs(t.effect_pct) >= MOE_REPORT_MIN_EFFECT ? "WIN/LOSS"
                                                                                  : "no change");
        assert_false(significant && fabs(t.effect_pct) >= MOE_REPORT_MIN_EFFECT);
    }
    /* The drift is real, and found: warm-up (11-20 against 21-30) and the
     * slow climb at the end (41-50 against 51-60). */
    assert_int_equal(moe_abtest_run(a, steps_of(&log, 41, 50, 1, a), b,
                                    steps_of(&log, 51, 60, 1, b), MOE_ABTEST_SEED, &t, NULL), 0);
    print_message("# h200 41-50 vs 51-60 (drift): effect %+.2f%% [%+.2f%%, %+.2f%%] "
                  "p=%.3g\n", t.effect_pct, t.ci_lo_pct, t.ci_hi_pct, t.p_value);
    /* 51-60 is slower: found by the test and by the interval, and the
     * figures are those of this log, this seed (MOE_ABTEST_SEED) */
    assert_true(t.p_value < 0.05 && t.ci_lo_pct > 0 && t.effect_pct > 0);
    assert_float_equal(t.effect_pct, 2.94, 0.005);
    assert_float_equal(t.ci_lo_pct, 0.83, 0.005);
    assert_float_equal(t.ci_hi_pct, 16.17, 0.005);
    assert_float_equal(t.p_value, 0.00457, 0.000005);
    assert_int_equal(moe_abtest_run(a, steps_of(&log, 11, 20, 1, a), b,
                                    steps_of(&log, 21, 30, 1, b), MOE_ABTEST_SEED, &t, NULL), 0);
    print_message("# h200 11-20 vs 21-30 (warm-up drift): effect %+.2f%% [%+.2f%%, %+.2f%%] "
                  "p=%.3g\n", t.effect_pct, t.ci_lo_pct, t.ci_hi_pct, t.p_value);
    assert_true(t.p_value < 0.05 && t.ci_hi_pct < 0);
    assert_float_equal(t.effect_pct, -8.16, 0.005);
    moe_log_free(&log);
}

/* Real steps made faster or slower by a known factor (every step time of
 * the log times f) against the same steps as they were.  Window 41-50 is
 * the study default and the noisiest part of the run (CV 8.5%, one step at
 * 244.8 ms): 20% either way is found, 10% is not confirmed by both the
 * test and the interval, 0.5% is no change.  Window 51-60 is steadier (CV
 * 2.7%): 3% and 5% are found there, 1% is not. */
static void real_log_shifted(void **state)
{
    static const struct {
        long first, last;
        double f;
        enum moe_verdict want;
    } c[] = {
        { 41, 50, 0.80, MOE_VERDICT_WIN },       { 41, 50, 1.20, MOE_VERDICT_LOSS },
        { 41, 50, 0.90, MOE_VERDICT_NO_CHANGE }, { 41, 50, 0.995, MOE_VERDICT_NO_CHANGE },
        { 51, 60, 0.95, MOE_VERDICT_WIN },       { 51, 60, 1.05, MOE_VERDICT_LOSS },
        { 51, 60, 0.97, MOE_VERDICT_WIN },       { 51, 60, 0.99, MOE_VERDICT_NO_CHANGE },
    };
    struct moe_log log;
    struct moe_error e;

    (void)state;
    read_real(&log);
    for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
        struct moe_report_run base, cand;
        struct moe_report_ab ab;
        struct moe_log scaled;

        assert_int_equal(moe_report_run_init(&base, "base", &log, c[k].first, c[k].last, NULL,
                                             0, &e), 0);
        moe_log_init(&scaled);
        for (size_t i = 0; i < log.niters; i++) {
            char line[512];

            snprintf(line, sizeof(line),
                     "iteration %ld/ 60 | elapsed time per iteration (ms): %.4f | lm loss: 2.0 | "
                     "number of skipped iterations: 0 | number of nan iterations: 0 |",
                     log.iters[i].iter, log.iters[i].step_ms * c[k].f);
            assert_int_equal(moe_log_feed_line(&scaled, line, (int)i + 1), 0);
        }
        assert_int_equal(moe_report_run_init(&cand, "cand", &scaled, c[k].first, c[k].last,
                                             NULL, 0, &e), 0);
        moe_report_compare(&base, &cand, NULL, &ab);
        print_message("# h200 %ld-%ld x %.3f: effect %+.2f%% [%+.2f%%, %+.2f%%] p=%.3g -> %s "
                      "(baseline CV %.2f%%)\n", c[k].first, c[k].last, c[k].f, ab.delta_pct,
                      ab.ci_lo_pct, ab.ci_hi_pct, ab.p_value, moe_verdict_name(ab.verdict),
                      100 * base.step_cv);
        assert_int_equal(ab.verdict, c[k].want);
        moe_report_run_free(&base);
        moe_report_run_free(&cand);
        moe_log_free(&scaled);
    }
    moe_log_free(&log);
}

/* The candidate's own spread counts: a quiet baseline (CV 0.08%) against a
 * candidate whose median is 1% off but whose steps scatter by 8% is not a
 * result: the rank test and the interval both say so. */
static void candidate_spread_counts(void **state)
{
    const double a[] = { 100.0, 100.1, 99.9, 100.0, 100.1, 99.9, 100.0, 100.1, 99.9, 100.0 };
    const double b[] = { 101, 92, 110, 95, 108, 90, 112, 101, 94, 109 };
    struct moe_abtest t;

    (void)state;
    assert_int_equal(moe_abtest_run(a, 10, b, 10, MOE_ABTEST_SEED, &t, NULL), 0);
    print_message("# quiet base vs noisy candidate: effect %+.2f%% [%+.2f%%, %+.2f%%] p=%.3g\n",
                  t.effect_pct, t.ci_lo_pct, t.ci_hi_pct, t.p_value);
    assert_true(t.p_value > 0.05);
    assert_true(t.ci_lo_pct < 0 && t.ci_hi_pct > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_p_table),
        cmocka_unit_test(normal_approximation_with_ties),
        cmocka_unit_test(degenerate_inputs),
        cmocka_unit_test(bootstrap_is_reproducible),
        cmocka_unit_test(real_log_noise_only),
        cmocka_unit_test(real_log_shifted),
        cmocka_unit_test(candidate_spread_counts),
    };

    return MOE_RUN_TESTS(tests);
}
