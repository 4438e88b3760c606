/* What every make bench program times with: a clock in milliseconds and
 * the median of a run's samples. */
#ifndef MOEFLOW_BENCH_H
#define MOEFLOW_BENCH_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now_ms(clockid_t clk)
{
    struct timespec ts;

    clock_gettime(clk, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Sorts v in place; the middle sample (the upper one of an even count). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(v[0]), bench_cmp_double);
    return v[n / 2];
}

#endif
