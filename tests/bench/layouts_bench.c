/* make bench: enumerate, estimate, fit and time (step-time model) every
 * DeepSeek-V3 layout on 4096 GPUs and rank the top 10 grids.  Prints the layouts considered and the median of the runs
 * against the 100 ms target. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fit/layouts.h"
#include "study/presets.h"

static double now_ms(clockid_t clk)
{
    struct timespec ts;

    clock_gettime(clk, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 9;
    double ms[64], cpu[64];
    const struct moe_model *m = moe_preset_find("deepseek-v3");
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 16384 };
    struct moe_train t;
    struct moe_machine c;
    struct moe_layout_set s;
    struct moe_error err;

    if (runs < 1 || runs > 64)
        runs = 9;
    moe_train_defaults(&t);
    t.uneven_pp = true;
    moe_machine_defaults(&c);
    c.gpus = 4096;
    for (int i = 0; i < runs; i++) {
        double t0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
        if (moe_layouts_enumerate(m, &w, &t, &c, 10, false, &s, &err) < 0) {
            fprintf(stderr, "layouts_bench: %s\n", err.text);
            return 1;
        }
        ms[i] = now_ms(CLOCK_MONOTONIC) - t0;
        cpu[i] = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
        if (i + 1 < runs)
            moe_layout_set_free(&s);
    }
    qsort(ms, (size_t)runs, sizeof(ms[0]), cmp_double);
    qsort(cpu, (size_t)runs, sizeof(cpu[0]), cmp_double);
    printf("deepseek-v3 on 4096 GPUs: %zu layouts considered, %zu valid, %zu fit\n",
           s.considered, s.n_valid, s.n_fitting);
    /* CPU time is what the code costs; wall time also counts a busy host */
    printf("median %.2f ms wall, %.2f ms CPU over %d runs (target < 100 ms: CPU ratio %.2f)\n",
           ms[runs / 2], cpu[runs / 2], runs, cpu[runs / 2] / 100.0);
    moe_layout_set_free(&s);
    return 0;
}
