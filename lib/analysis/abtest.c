#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/abtest.h"
#include "analysis/abtest_internal.h"

static int by_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;

    return (a > b) - (a < b);
}

double moe_median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), by_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* splitmix64: small, well mixed, and the same on every platform. */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static size_t below(uint64_t *s, size_t n)
{
    return (size_t)(next(s) % n); /* n <= a few thousand: the bias is < 1e-15 */
}

double moe_abtest_exact_p(size_t m, size_t n, double u)
{
    size_t kmax = m * n, w = kmax + 1;
    double *prev = calloc((n + 1) * w, sizeof(double));
    double *cur = calloc((n + 1) * w, sizeof(double));
    double total = 0, lo = 0, hi = 0, p;

    if (!prev || !cur) {
        free(prev);
        free(cur);
        return NAN;
    }
    /* f(i, j, k): orderings of i baseline and j candidate values in which the
     * candidate values beat k pairs.  The largest value is either a
     * baseline one (adds nothing) or a candidate one (beats all i). */
    for (size_t i = 0; i <= m; i++) {
        for (size_t j = 0; j <= n; j++) {
            double *f = cur + j * w;

            memset(f, 0, w * sizeof(double));
            if (i == 0 && j == 0) {
                f[0] = 1;
                continue;
            }
            if (i > 0)
                for (size_t k = 0; k <= (i - 1) * j; k++)
                    f[k] += prev[j * w + k];
            if (j > 0)
                for (size_t k = i; k <= i * j; k++)
                    f[k] += cur[(j - 1) * w + k - i];
        }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    for (size_t k = 0; k <= kmax; k++) {
        double c = prev[n * w + k];

        total += c;
        if ((double)k <= u + 1e-9)
            lo += c;
        if ((double)k >= u - 1e-9)
            hi += c;
    }
    free(prev);
    free(cur);
    p = 2.0 * (lo < hi ? lo : hi) / total;
    return p > 1.0 ? 1.0 : p;
}

struct ranked {
    double v;
    int from_b;
};

static int by_value(const void *pa, const void *pb)
{
    const struct ranked *a = pa, *b = pb;

    return (a->v > b->v) - (a->v < b->v);
}

/* U of b, the tie term sum(t^3 - t), and whether there were ties. */
static int rank_sum(const double *a, size_t na, const double *b, size_t nb, double *u,
                    double *ties, int *any_tie)
{
    size_t n = na + nb;
    struct ranked *r = malloc(n * sizeof(*r));
    double rb = 0;

    if (!r)
        return -1;
    for (size_t i = 0; i < na; i++)
        r[i] = (struct ranked){ a[i], 0 };
    for (size_t i = 0; i < nb; i++)
        r[na + i] = (struct ranked){ b[i], 1 };
    qsort(r, n, sizeof(*r), by_value);
    *ties = 0;
    *any_tie = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double mid;

        while (j + 1 < n && r[j + 1].v == r[i].v)
            j++;
        mid = ((double)i + (double)j) / 2.0 + 1.0; /* ranks are 1-based */
        for (size_t k = i; k <= j; k++)
            if (r[k].from_b)
                rb += mid;
        if (j > i) {
            double t = (double)(j - i + 1);

            *ties += t * t * t - t;
            *any_tie = 1;
        }
        i = j + 1;
    }
    free(r);
    *u = rb - (double)nb * ((double)nb + 1) / 2.0;
    return 0;
}

static int bootstrap(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
                     double *lo, double *hi)
{
    double *ra = malloc(na * sizeof(double)), *rb = malloc(nb * sizeof(double));
    double *eff = malloc(MOE_ABTEST_RESAMPLES * sizeof(double));
    uint64_t s = seed;
    size_t ne = 0;

    if (!ra || !rb || !eff) {
        free(ra);
        free(rb);
        free(eff);
        return -1;
    }
    for (size_t r = 0; r < MOE_ABTEST_RESAMPLES; r++) {
        double ma, mb;

        for (size_t i = 0; i < na; i++)
            ra[i] = a[below(&s, na)];
        for (size_t i = 0; i < nb; i++)
            rb[i] = b[below(&s, nb)];
        ma = moe_median(ra, na);
        mb = moe_median(rb, nb);
        if (ma > 0)
            eff[ne++] = 100.0 * (mb - ma) / ma;
    }
    qsort(eff, ne, sizeof(double), by_double);
    /* Percentile interval: the 2.5% and 97.5% order statistics. */
    *lo = ne ? eff[(size_t)floor(0.025 * (double)(ne - 1))] : NAN;
    *hi = ne ? eff[(size_t)ceil(0.975 * (double)(ne - 1))] : NAN;
    free(ra);
    free(rb);
    free(eff);
    return 0;
}

int moe_abtest_run(const double *a, size_t na, const double *b, size_t nb, uint64_t seed,
                   struct moe_abtest *t, struct moe_error *err)
{
    double *sa, *sb, ties, mu, var, n = (double)(na + nb);
    int any_tie;

    memset(t, 0, sizeof(*t));
    t->z = NAN;
    if (na < 2 || nb < 2) {
        moe_error_set(err, "an A/B test needs at least two step times on each side (have %zu "
                      "and %zu)", na, nb);
        return -1;
    }
    sa = malloc(na * sizeof(double));
    sb = malloc(nb * sizeof(double));
    if (!sa || !sb) {
        free(sa);
        free(sb);
        moe_error_set(err, "out of memory");
        return -1;
    }
    memcpy(sa, a, na * sizeof(double));
    memcpy(sb, b, nb * sizeof(double));
    t->n_a = na;
    t->n_b = nb;
    t->median_a = moe_median(sa, na);
    t->median_b = moe_median(sb, nb);
    free(sa);
    free(sb);
    if (!(t->median_a > 0)) {
        moe_error_set(err, "the baseline's median step time is not positive");
        return -1;
    }
    t->effect_pct = 100.0 * (t->median_b - t->median_a) / t->median_a;
    if (rank_sum(a, na, b, nb, &t->u, &ties, &any_tie) < 0 ||
        bootstrap(a, na, b, nb, seed, &t->ci_lo_pct, &t->ci_hi_pct) < 0) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    if (!any_tie && na <= MOE_ABTEST_EXACT_MAX && nb <= MOE_ABTEST_EXACT_MAX) {
        t->exact = 1;
        t->p_value = moe_abtest_exact_p(na, nb, t->u);
        return 0;
    }
    mu = (double)na * (double)nb / 2.0;
    var = (double)na * (double)nb / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if (var <= 0) { /* every value the same: nothing tells the runs apart */
        t->z = 0;
        t->p_value = 1.0;
        return 0;
    }
    t->z = (fabs(t->u - mu) - 0.5 > 0 ? fabs(t->u - mu) - 0.5 : 0) / sqrt(var);
    if (t->u < mu)
        t->z = -t->z;
    t->p_value = erfc(fabs(t->z) / sqrt(2.0));
    if (t->p_value > 1.0)
        t->p_value = 1.0;
    return 0;
}
