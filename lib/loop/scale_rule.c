#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/abtest.h"
#include "analysis/report.h"
#include "loop/scale_rule.h"
#include "loop/scale_rule_internal.h"

void moe_loop_step_groups(const struct moe_step *s, double g[MOE_LOOP_GROUPS])
{
    g[1] = s->tp_ms + s->cp_ms + s->ep_ms + s->etp_ms + s->pp_ms + s->dp_ms;
    g[2] = s->host_ms + s->sync_ms + s->step_host_ms;
    /* everything else the step sums is the GPU's own work */
    g[0] = s->step_ms - g[1] - g[2];
    if (g[0] < 0)
        g[0] = 0;
}

static double median_of(const double *v, size_t n)
{
    double *c = malloc(n * sizeof(*c)), m;

    if (!c)
        return NAN;
    memcpy(c, v, n * sizeof(*c));
    m = moe_median(c, n);
    free(c);
    return m;
}

static bool measured(const struct moe_loop_layout *l)
{
    return l->samples && l->n >= 2;
}

static bool predicted(const struct moe_loop_layout *l)
{
    return l->pred.step_ms > 0;
}

/* Solves the 3x3 system a x = b by Gaussian elimination with pivoting;
 * -1 when singular (the ridge term keeps it from being). */
static int solve3(double a[3][3], double b[3], double x[3])
{
    for (int c = 0; c < 3; c++) {
        int p = c;

        for (int r = c + 1; r < 3; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        if (fabs(a[p][c]) < 1e-12)
            return -1;
        for (int k = 0; k < 3; k++) {
            double t = a[c][k];
            a[c][k] = a[p][k];
            a[p][k] = t;
        }
        double t = b[c];
        b[c] = b[p];
        b[p] = t;
        for (int r = c + 1; r < 3; r++) {
            double f = a[r][c] / a[c][c];
            for (int k = c; k < 3; k++)
                a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int r = 2; r >= 0; r--) {
        double sum = b[r];
        for (int k = r + 1; k < 3; k++)
            sum -= a[r][k] * x[k];
        x[r] = sum / a[r][r];
    }
    return 0;
}

/* min sum ((m - f.g) / m)^2 + ridge sum (f - 1)^2 over the measured and
 * predicted layouts: (G'WG + ridge I) f = G'Wm + ridge 1. */
static void fit_factors(const struct moe_loop_layout *l, size_t n, double f[3])
{
    double a[3][3] = { { MOE_LOOP_RIDGE, 0, 0 }, { 0, MOE_LOOP_RIDGE, 0 }, { 0, 0, MOE_LOOP_RIDGE } };
    double b[3] = { MOE_LOOP_RIDGE, MOE_LOOP_RIDGE, MOE_LOOP_RIDGE };

    for (size_t i = 0; i < n; i++) {
        double g[3], w;

        if (!measured(&l[i]) || !predicted(&l[i]) || !(l[i].median > 0))
            continue;
        moe_loop_step_groups(&l[i].pred, g);
        w = 1.0 / (l[i].median * l[i].median);
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++)
                a[r][c] += w * g[r] * g[c];
            b[r] += w * g[r] * l[i].median;
        }
    }
    if (solve3(a, b, f) < 0)
        f[0] = f[1] = f[2] = 1;
    for (int k = 0; k < 3; k++)
        f[k] = f[k] < 0.1 ? 0.1 : f[k] > 10 ? 10 : f[k];
}

static double corrected(const struct moe_step *s, const double f[3])
{
    double g[3];

    moe_loop_step_groups(s, g);
    return f[0] * g[0] + f[1] * g[1] + f[2] * g[2];
}

/* Not significantly slower than the fastest: the tie the rule order
 * breaks. */
static bool tied(const struct moe_loop_layout *fast, const struct moe_loop_layout *x, double alpha,
                 double *p)
{
    struct moe_abtest t;
    struct moe_error err;

    if (fast == x) {
        *p = 1;
        return true;
    }
    moe_error_clear(&err);
    if (moe_abtest_run(fast->samples, fast->n, x->samples, x->n, MOE_ABTEST_SEED, &t, &err) != 0)
        return false;
    *p = t.p_value;
    return t.p_value >= alpha;
}

/* stdev / mean of the samples */
static double cv_of(const struct moe_loop_layout *l)
{
    double mean = 0, var = 0;

    for (size_t k = 0; k < l->n; k++)
        mean += l->samples[k] / (double)l->n;
    for (size_t k = 0; k < l->n; k++)
        var += (l->samples[k] - mean) * (l->samples[k] - mean) / (double)(l->n - 1);
    return mean > 0 ? sqrt(var) / mean : INFINITY;
}

/* A decision never rests on a noisy reference (analysis/report.h): past
 * MOE_REPORT_MAX_REF_CV the baseline stays, whatever the others measured. */
static bool noisy_baseline(const struct moe_loop_layout *l, size_t n, struct moe_loop_scale *out)
{
    for (size_t i = 0; i < n; i++)
        if (l[i].baseline && measured(&l[i]) && cv_of(&l[i]) > MOE_REPORT_MAX_REF_CV) {
            out->best = (int)i;
            /* a message: people read it, and a cut one still reads */
            snprintf(out->why, sizeof(out->why), "the baseline's screening steps spread %.0f%% "
                     "(CV), beyond %.0f%%: no layout is adopted on a noisy reference; the "
                     "baseline stays", 100 * cv_of(&l[i]), 100 * MOE_REPORT_MAX_REF_CV);
            return true;
        }
    return false;
}

static void choose(struct moe_loop_layout *l, size_t n, double alpha, struct moe_loop_scale *out)
{
    out->fastest = out->predicted_best = out->best = -1;
    for (size_t i = 0; i < n; i++) {
        if (!measured(&l[i]))
            continue;
        if (out->fastest < 0 || l[i].median < l[out->fastest].median)
            out->fastest = (int)i;
        if (predicted(&l[i]) && (out->predicted_best < 0 ||
                                 l[i].pred.step_ms < l[out->predicted_best].pred.step_ms))
            out->predicted_best = (int)i;
    }
    out->best = out->fastest;
    out->p_best = 1;
    if (out->fastest < 0 || noisy_baseline(l, n, out))
        return;
    for (size_t i = 0; i < n; i++) {
        double p;

        if (!measured(&l[i]) || l[out->best].baseline || (int)i == out->fastest ||
            !tied(&l[out->fastest], &l[i], alpha, &p))
            continue;
        if (l[i].baseline || l[i].order < l[out->best].order) {
            out->best = (int)i;
            out->p_best = p;
        }
    }
    if (out->best != out->fastest && l[out->best].baseline)
        /* a message: people read it, and a cut one still reads */
        snprintf(out->why, sizeof(out->why), "the baseline, %s (median %.1f ms), is not "
                 "significantly slower than the fastest, %s (%.1f ms; Mann-Whitney p = %.3f >= "
                 "%.2f): it stays", l[out->best].name, l[out->best].median, l[out->fastest].name,
                 l[out->fastest].median, out->p_best, alpha);
    else if (out->best == out->fastest)
        /* a message: people read it, and a cut one still reads */
        snprintf(out->why, sizeof(out->why), "%s has the lowest median step, %.1f ms", l[out->best].name,
                 l[out->best].median);
    else
        /* a message: people read it, and a cut one still reads */
        snprintf(out->why, sizeof(out->why), "%s (median %.1f ms) is not significantly slower than "
                 "the fastest, %s (%.1f ms; Mann-Whitney p = %.3f >= %.2f), and comes first in "
                 "the seed's rule order", l[out->best].name, l[out->best].median,
                 l[out->fastest].name, l[out->fastest].median, out->p_best, alpha);
}

static void errors(struct moe_loop_layout *l, size_t n, struct moe_loop_scale *out)
{
    out->max_error_pct = out->residual_pct = 0;
    for (size_t i = 0; i < n; i++) {
        l[i].corrected_ms = predicted(&l[i]) ? corrected(&l[i].pred, out->factor) : NAN;
        l[i].error_pct = NAN;
        if (!measured(&l[i]) || !predicted(&l[i]))
            continue;
        l[i].error_pct = 100.0 * (l[i].pred.step_ms - l[i].median) / l[i].median;
        if (fabs(l[i].error_pct) > out->max_error_pct)
            out->max_error_pct = fabs(l[i].error_pct);
        if (100.0 * fabs(l[i].corrected_ms - l[i].median) / l[i].median > out->residual_pct)
            out->residual_pct = 100.0 * fabs(l[i].corrected_ms - l[i].median) / l[i].median;
    }
}

int moe_loop_scale_decide(struct moe_loop_layout *l, size_t n, double alpha,
                          struct moe_loop_scale *out, struct moe_error *err)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        l[i].median = measured(&l[i]) ? median_of(l[i].samples, l[i].n) : NAN;
    choose(l, n, alpha, out);
    if (out->best < 0) {
        moe_error_set(err, "no scale layout has two or more measured steps in the window");
        return -1;
    }
    fit_factors(l, n, out->factor);
    errors(l, n, out);
    if (out->predicted_best >= 0 &&
        !tied(&l[out->fastest], &l[out->predicted_best], alpha, &(double){ 0 }))
        /* a message: people read it, and a cut one still reads */
        snprintf(out->rerank_why, sizeof(out->rerank_why), "the predicted best, %s, measured "
                 "significantly slower than %s", l[out->predicted_best].name,
                 l[out->fastest].name);
    else if (out->max_error_pct > MOE_LOOP_RERANK_PCT)
        /* a message: people read it, and a cut one still reads */
        snprintf(out->rerank_why, sizeof(out->rerank_why), "a prediction was off by %.0f%% "
                 "(beyond %.0f%%)", out->max_error_pct, MOE_LOOP_RERANK_PCT);
    out->rerank = out->rerank_why[0] != '\0';
    return 0;
}

static bool taken(const size_t *idx, size_t k, size_t i)
{
    for (size_t j = 0; j < k; j++)
        if (idx[j] == i)
            return true;
    return false;
}

size_t moe_loop_next_round(const struct moe_loop_layout *l, size_t n,
                           const struct moe_loop_scale *s, size_t *idx, size_t max)
{
    double best = INFINITY, band = (s->residual_pct > 10 ? s->residual_pct : 10) / 100.0;
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        if (!isnan(l[i].corrected_ms) && l[i].corrected_ms < best)
            best = l[i].corrected_ms;
    /* selection, fastest first: n is a few hundred layouts at most */
    while (k < max) {
        int pick = -1;

        for (size_t i = 0; i < n; i++)
            if (!measured(&l[i]) && !isnan(l[i].corrected_ms) &&
                l[i].corrected_ms <= best * (1 + band) && !taken(idx, k, i) &&
                (pick < 0 || l[i].corrected_ms < l[pick].corrected_ms))
                pick = (int)i;
        if (pick < 0)
            break;
        idx[k++] = (size_t)pick;
    }
    return k;
}
