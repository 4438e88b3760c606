/* lib/loop's rules (issue 37): fit -> the least recompute whose measured
 * peak fits; scale -> the statistically fastest layout, a tie kept by the
 * baseline or the seed's rule order, the per-group correction of the step
 * model and the next round within its remaining error. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/contract_keys.h"
#include "loop/fit_rule.h"
#include "loop/fit_rule_internal.h"
#include "loop/scale_rule.h"
#include "loop/scale_rule_internal.h"
#include "study/study.h"
#include "study/study_adopt.h"
#include "unit.h"

static struct moe_fit_row row(const char *recompute, int rank, double measured, int rc,
                              const char *error)
{
    struct moe_fit_row r;

    memset(&r, 0, sizeof(r));
    snprintf(r.recompute, sizeof(r.recompute), "%s", recompute);
    snprintf(r.id, sizeof(r.id), "%s-%d", recompute, rank);
    snprintf(r.error, sizeof(r.error), "%s", error ? error : "");
    r.rank = rank;
    r.measured_mib = measured;
    r.predicted_mib = NAN;
    r.rc = rc;
    r.ev.seen = true;
    snprintf(r.ev.mode, sizeof(r.ev.mode), "fill");
    if (rc > 0 || isnan(measured))
        r.flags |= MOE_FIT_FAILED;
    return r;
}

static void fit_least_recompute_that_fits(void **state)
{
    struct moe_fit_row rows[] = {
        row("none", 0, 7000, 0, NULL),     row("none", 3, NAN, 1, "torch.OutOfMemoryError: CUDA out of memory"),
        row("moe_act", 0, 7000, 0, NULL),  row("moe_act", 3, 7900, 0, NULL),
        row("full", 0, 3000, 0, NULL),     row("full", 3, 3100, 0, NULL),
    };
    struct moe_fit_report r = { .rows = rows, .n = 6 };
    struct moe_loop_fit f;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_loop_fit_decide(&r, 8000, &f, &err), 0);
    assert_int_equal(f.n, 3);
    /* ranks group into rungs; an out-of-memory rank is an answer: no fit */
    assert_int_equal(f.rungs[0].n_rows, 2);
    assert_int_equal(f.rungs[0].fits, 0);
    assert_non_null(strstr(f.rungs[0].why, "ran out of memory"));
    /* the largest rank decides: 7900 <= 8000 */
    assert_int_equal(f.chosen, 1);
    assert_true(fabs(f.rungs[1].peak_mib - 7900) < 1e-9);
    assert_false(f.none_fits);
    /* one MiB less usable and moe_act's rank 3 no longer fits: full does */
    assert_int_equal(moe_loop_fit_decide(&r, 7899, &f, &err), 0);
    assert_int_equal(f.chosen, 2);
    assert_non_null(strstr(f.rungs[1].why, "rank 3 measured 7900 MiB > 7899 MiB usable"));
}

static void fit_untrusted_is_never_chosen(void **state)
{
    struct moe_fit_row rows[] = { row("none", 0, 1000, 0, NULL), row("full", 0, 500, 0, NULL) };
    struct moe_fit_report r = { .rows = rows, .n = 2 };
    struct moe_loop_fit f;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    rows[0].flags |= MOE_FIT_UNFILLED;
    assert_int_equal(moe_loop_fit_decide(&r, 8000, &f, &err), 0);
    assert_int_equal(f.rungs[0].fits, -1);
    assert_non_null(strstr(f.rungs[0].why, "cannot be trusted"));
    assert_int_equal(f.chosen, 1);
    /* nothing trusted, nothing fits: undecided, not "does not fit" */
    rows[1].flags |= MOE_FIT_NO_EVIDENCE;
    assert_int_equal(moe_loop_fit_decide(&r, 8000, &f, &err), 0);
    assert_int_equal(f.chosen, -1);
    assert_false(f.none_fits);
    /* every rung measured too large: the study does not fit */
    rows[0].flags = rows[1].flags = 0;
    assert_int_equal(moe_loop_fit_decide(&r, 400, &f, &err), 0);
    assert_int_equal(f.chosen, -1);
    assert_true(f.none_fits);
    r.n = 0;
    assert_int_equal(moe_loop_fit_decide(&r, 400, &f, &err), -1);
}

/* Six samples around med, spread +-spread percent. */
static void samples(double *s, double med, double spread)
{
    static const double at[] = { -1, -0.6, -0.2, 0.2, 0.6, 1 };

    for (int i = 0; i < 6; i++)
        s[i] = med * (1 + spread / 100 * at[i]);
}

static struct moe_loop_layout layout(const char *name, int order, double gpu, double comm,
                                     double host, const double *s, bool baseline)
{
    struct moe_loop_layout l;

    memset(&l, 0, sizeof(l));
    snprintf(l.name, sizeof(l.name), "%s", name);
    snprintf(l.id, sizeof(l.id), "id-%s", name);
    l.order = order;
    l.baseline = baseline;
    l.pred.compute_ms = gpu;
    l.pred.ep_ms = comm;
    l.pred.host_ms = host;
    l.pred.step_ms = gpu + comm + host;
    l.samples = s;
    l.n = s ? 6 : 0;
    return l;
}

static void scale_fastest_and_ties(void **state)
{
    double a[6], b[6], c[6];
    struct moe_loop_layout l[3];
    struct moe_loop_scale d;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    samples(a, 100, 1);
    samples(b, 80, 1);
    samples(c, 81, 20);
    l[0] = layout("base", 2, 50, 30, 20, a, true);
    l[1] = layout("fast", 1, 40, 30, 10, b, false);
    l[2] = layout("noisy", 0, 40, 30, 10, c, false);
    assert_int_equal(moe_loop_scale_decide(l, 3, 0.05, &d, &err), 0);
    assert_int_equal(d.fastest, 1);
    /* "noisy" is not significantly slower and comes first in rule order */
    assert_int_equal(d.best, 2);
    assert_non_null(strstr(d.why, "rule order"));
    /* a baseline that ties the fastest stays */
    samples(a, 80.5, 1);
    samples(c, 95, 1);
    assert_int_equal(moe_loop_scale_decide(l, 3, 0.05, &d, &err), 0);
    assert_int_equal(d.best, 0);
    assert_non_null(strstr(d.why, "it stays"));
    /* a noisy baseline (CV 20% > 15%) stays, whatever the others did */
    samples(a, 100, 35);
    samples(c, 95, 1);
    assert_int_equal(moe_loop_scale_decide(l, 3, 0.05, &d, &err), 0);
    assert_int_equal(d.best, 0);
    assert_non_null(strstr(d.why, "noisy reference"));
    /* no layout with two samples: no decision */
    for (int i = 0; i < 3; i++)
        l[i].n = 1;
    assert_int_equal(moe_loop_scale_decide(l, 3, 0.05, &d, &err), -1);
}

static void scale_correction_recovers_factors(void **state)
{
    /* measured = 2 x gpu + 0.5 x communication + 3 x host, exactly */
    /* the three groups vary independently across the layouts: a fit
     * cannot tell apart groups that move together (the ridge then keeps
     * them near 1) */
    static const double g[] = { 40, 60, 30, 50, 20 }, m[] = { 10, 40, 30, 5, 20 },
                        h[] = { 25, 5, 10, 30, 15 };
    double s[5][6];
    struct moe_loop_layout l[6];
    struct moe_loop_scale d;
    struct moe_error err;
    size_t next[4], n;

    (void)state;
    moe_error_clear(&err);
    for (int i = 0; i < 5; i++) {
        samples(s[i], 2 * g[i] + 0.5 * m[i] + 3 * h[i], 0.5);
        l[i] = layout((const char *[]){ "a", "b", "c", "d", "e" }[i], i, g[i], m[i], h[i], s[i],
                      i == 0);
    }
    /* not run: the corrected model ranks it first */
    l[5] = layout("f", 5, 10, 10, 1, NULL, false);
    assert_int_equal(moe_loop_scale_decide(l, 6, 0.05, &d, &err), 0);
    assert_true(fabs(d.factor[0] - 2) < 0.1);
    assert_true(fabs(d.factor[1] - 0.5) < 0.05);
    assert_true(fabs(d.factor[2] - 3) < 0.15);
    assert_true(d.residual_pct < 5);
    assert_true(d.max_error_pct > 25);
    assert_true(d.rerank);
    assert_non_null(strstr(d.rerank_why, "off by"));
    n = moe_loop_next_round(l, 6, &d, next, 4);
    assert_int_equal(n, 1);
    assert_int_equal(next[0], 5);
    assert_true(fabs(l[5].corrected_ms - (20 + 5 + 3)) < 2);
    /* the ridge: a group no layout exercises keeps its factor 1 */
    for (int i = 0; i < 5; i++) {
        l[i].pred.step_ms -= l[i].pred.host_ms;
        l[i].pred.host_ms = 0;
    }
    assert_int_equal(moe_loop_scale_decide(l, 5, 0.05, &d, &err), 0);
    assert_true(fabs(d.factor[2] - 1) < 1e-9);
}

static void scale_no_rerank_when_model_right(void **state)
{
    double a[6], b[6];
    struct moe_loop_layout l[3];
    struct moe_loop_scale d;
    struct moe_error err;
    size_t next[4];

    (void)state;
    moe_error_clear(&err);
    samples(a, 100, 1);
    samples(b, 90, 1);
    l[0] = layout("a", 1, 60, 30, 10, a, true);
    l[1] = layout("b", 0, 55, 25, 10, b, false);
    /* far slower than the band: never a next round */
    l[2] = layout("c", 2, 200, 50, 10, NULL, false);
    assert_int_equal(moe_loop_scale_decide(l, 3, 0.05, &d, &err), 0);
    assert_int_equal(d.best, 1);
    assert_int_equal(d.predicted_best, 1);
    assert_false(d.rerank);
    assert_int_equal(moe_loop_next_round(l, 3, &d, next, 4), 0);
}

/* A decision's baseline put back into the study: its layout and
 * recompute, checked by the study's layout rules. */
static void adopt_layout_and_recompute(void **state)
{
    char path[4096];
    const char *dir = getenv("MOEFLOW_SRCDIR");
    struct moe_study s;
    struct moe_error err;
    struct moe_layout l = { .tp = 2, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 };
    json_t *c = json_pack("{s:o, s:{s:{s:s, s:[s]}}}", "parallel", moe_contract_parallel(&l, ""),
                          "tuning", "recompute", "granularity", "selective", "modules", "moe_act");

    (void)state;
    moe_error_clear(&err);
    snprintf(path, sizeof(path), "%s/etc/studies/tiny-moe-2gpu.yaml", dir ? dir : ".");
    assert_int_equal(moe_study_load(&s, path, &err), 0);
    assert_int_equal(moe_study_adopt(&s, c, &err), 0);
    assert_int_equal(s.baseline.layout.tp, 2);
    assert_int_equal(s.baseline.layout.ep, 1);
    assert_int_equal(s.baseline.layout.dp, 1);
    assert_int_equal(s.baseline.recompute, MOE_RECOMPUTE_SELECTIVE);
    assert_int_equal(s.baseline.recompute_modules.n, 1);
    assert_string_equal(s.baseline.recompute_modules.v[0], "moe_act");
    /* a module Megatron does not recompute, a layout the rules refuse */
    json_array_set_new(json_object_get(json_object_get(json_object_get(c, "tuning"), "recompute"),
                                       "modules"), 0, json_string("everything"));
    assert_int_equal(moe_study_adopt(&s, c, &err), -1);
    assert_non_null(strstr(err.text, "modules[0]"));
    l.tp = 3;
    json_object_set_new(c, "parallel", moe_contract_parallel(&l, ""));
    json_array_set_new(json_object_get(json_object_get(json_object_get(c, "tuning"), "recompute"),
                                       "modules"), 0, json_string("moe_act"));
    moe_error_clear(&err);
    assert_int_equal(moe_study_adopt(&s, c, &err), -1);
    assert_non_null(strstr(err.text, "layout rule"));
    json_decref(c);
    moe_study_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fit_least_recompute_that_fits),
        cmocka_unit_test(fit_untrusted_is_never_chosen),
        cmocka_unit_test(scale_fastest_and_ties),
        cmocka_unit_test(scale_correction_recovers_factors),
        cmocka_unit_test(scale_no_rerank_when_model_right),
        cmocka_unit_test(adopt_layout_and_recompute),
    };

    return MOE_RUN_TESTS(tests);
}
