/* Megatron log parsing on the real logs in tests/data/logs (expected values
 * read off the log lines by hand), the report window statistics, proof of
 * what ran, A/B verdicts and the rendered outputs. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/megatron_log.h"
#include "analysis/megatron_log_internal.h"
#include "analysis/report.h"
#include "analysis/report_internal.h"
#include "analysis/trace.h"
#include "unit.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-6 * (fabs((double)(b)) + 1))

static const char *srcpath(const char *rel)
{
    static char buf[4096];
    const char *dir = getenv("MOEFLOW_SRCDIR");

    snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : ".", rel);
    return buf;
}

static void read_log(struct moe_log *log, const char *rel)
{
    struct moe_error e;

    moe_log_init(log);
    moe_error_clear(&e);
    if (moe_log_read_file(log, srcpath(rel), &e) < 0)
        fail_msg("%s: %s", rel, e.text);
}

/* The 2xH200 run: 60 iteration lines with microsecond timestamps and a
 * leading space, 846 dumped arguments, two memory lines, the theoretical
 * line. */
static void h200_log_records(void **state)
{
    struct moe_log log;

    (void)state;
    read_log(&log, "tests/data/logs/h200x2-moe-ep2-alltoall-60it.log");
    assert_int_equal(log.niters, 60);
    assert_int_equal(log.iters[0].iter, 1);
    assert_int_equal(log.iters[0].total, 60);
    NEAR(log.iters[0].step_ms, 9918.8);
    NEAR(log.iters[0].tflops, 0.2);
    NEAR(log.iters[0].loss, 8.423951);
    assert_int_equal(log.iters[59].iter, 60);
    NEAR(log.iters[59].step_ms, 326.2);
    assert_int_equal(log.nargs, 846); /* lines 37-882 of the log */
    assert_string_equal(moe_log_arg(&log, "moe_token_dispatcher_type"), "alltoall");
    assert_string_equal(
        moe_log_arg(&log, "inference_dynamic_batching_cuda_graph_mixed_prefill_count"),
        "16"); /* no dots: the key fills the column */
    assert_string_equal(moe_log_arg(&log, "cuda_graph_modules"), "[]");
    assert_null(moe_log_arg(&log, "no_such_argument"));
    assert_int_equal(log.nmems, 2);
    assert_int_equal(log.mems[1].rank, 0);
    assert_int_equal(log.mems[1].after, 2);
    NEAR(log.mems[1].max_allocated, 1791.74 * 1048576.0);
    NEAR(log.mems[1].allocated, 635.12 * 1048576.0);
    NEAR(log.mems[1].max_reserved, 1888.00 * 1048576.0);
    NEAR(log.theo_weight_opt_mb, 504.24);
    NEAR(log.theo_activation_mb, 325.53);
    NEAR(log.theo_total_mb, 829.77);
    /* A UserWarning mentions "CUDA graph capture"; it is no evidence. */
    assert_int_equal(log.graphs.started, 0);
    assert_int_equal(log.graphs.built, 0);
    assert_int_equal(log.graphs.errors, 0);
    moe_log_free(&log);
}

/* Steps 41-50 of the 2xH200 run, from its lines: 311.1 244.8 262.8 311.1
 * 278.3 296.7 313.2 314.2 305.0 319.1 ms; TFLOP/s 6.6 8.4 7.8 6.6 7.4 6.9
 * 6.6 6.6 6.8 6.5; no skipped or NaN iteration; peak 1791.74 MiB. */
static void h200_window_41_50(void **state)
{
    struct moe_report_run r;
    struct moe_log log;
    struct moe_error e;

    (void)state;
    read_log(&log, "tests/data/logs/h200x2-moe-ep2-alltoall-60it.log");
    assert_int_equal(moe_report_run_init(&r, "base", &log, 41, 50, NULL, 0, &e), 0);
    assert_int_equal(r.n, 10);
    assert_int_equal(r.steps_seen, 60);
    assert_int_equal(r.max_iter, 60);
    NEAR(r.step_mean, 2956.3 / 10);
    NEAR(r.step_median, (305.0 + 311.1) / 2);
    NEAR(r.step_stdev, 25.24062202086153); /* sample stdev, n - 1 */
    NEAR(r.step_cv, 25.24062202086153 / 295.63);
    NEAR(r.tflops_mean, 70.2 / 10);
    NEAR(r.tflops_median, (6.6 + 6.8) / 2);
    assert_true(r.loss_finite);
    NEAR(r.loss_last, 3.926726);
    assert_int_equal(r.skipped, 0);
    assert_int_equal(r.nan_iters, 0);
    NEAR(r.peak_bytes, 1791.74 * 1048576.0);
    assert_int_equal(r.peak_rank, 0);
    assert_int_equal(json_array_size(r.mismatches), 0);
    assert_string_equal(json_string_value(json_object_get(r.in_effect, "dispatcher")), "alltoall");
    moe_report_run_free(&r);

    /* A window past the end is an error, not a partial answer. */
    assert_int_equal(moe_report_run_init(&r, "base", &log, 55, 70, NULL, 0, &e), -1);
    assert_non_null(strstr(e.text, "only reached iteration 60"));
    moe_log_free(&log);
}

/* 2024 format (issue 756): no microseconds, "num zeros"; the first logged
 * iteration (43) is discarded even inside the window. */
static void mixtral_2024_format(void **state)
{
    struct moe_report_run r;
    struct moe_log log;
    struct moe_error e;

    (void)state;
    read_log(&log, "tests/data/logs/mixtral8x7b-16xH100-issue756.log");
    assert_int_equal(log.niters, 3);
    assert_int_equal(log.iters[0].iter, 43);
    assert_int_equal(log.iters[0].total, 100);
    NEAR(log.iters[0].step_ms, 5444.9);
    NEAR(log.iters[0].tflops, 239.8);
    NEAR(log.iters[0].loss, 1.825991);
    assert_int_equal(moe_report_run_init(&r, "mixtral", &log, 41, 45, NULL, 0, &e), 0);
    assert_int_equal(r.n, 2);
    NEAR(r.step_median, (5533.8 + 5718.6) / 2);
    NEAR(r.tflops_mean, (236.0 + 228.4) / 2);
    assert_true(isnan(r.peak_bytes));
    moe_report_run_free(&r);
    assert_int_equal(moe_report_run_init(&r, "mixtral", &log, 41, 50, NULL, 0, &e), -1);
    assert_non_null(strstr(e.text, "only reached iteration 45"));
    moe_log_free(&log);
}

/* 2026 fixture: no leading space, seq_load_balancing_loss, params norm. */
static void cloudai_2026_format(void **state)
{
    struct moe_report_run r;
    struct moe_log log;
    struct moe_error e;

    (void)state;
    read_log(&log, "tests/data/logs/moe-seq-aux-cloudai-fixture.log");
    assert_int_equal(log.niters, 3);
    assert_int_equal(log.iters[2].iter, 7);
    NEAR(log.iters[2].step_ms, 15448.5);
    NEAR(log.iters[2].tflops, 500.6);
    NEAR(log.iters[2].loss, 13.40574);
    assert_int_equal(moe_report_run_init(&r, "cloudai", &log, 5, 7, NULL, 0, &e), 0);
    assert_int_equal(r.n, 2); /* 5 is the first logged */
    NEAR(r.step_median, (15639.0 + 15448.5) / 2);
    NEAR(r.tflops_median, (494.6 + 500.6) / 2);
    moe_report_run_free(&r);
    moe_log_free(&log);
}

/* Bridge: GB memory lines behind a job-step prefix, rank 3's line glued to
 * rank 2's; the iteration line glued to "Number of parameters"; peak is
 * the max over ranks (rank 0's 194.41 GB, decimal). */
static void bridge_memory_lines(void **state)
{
    struct moe_report_run r;
    struct moe_log log;
    struct moe_error e;

    (void)state;
    read_log(&log, "tests/data/logs/bridge-memory-lines.log");
    assert_int_equal(log.nmems, 4);
    assert_int_equal(log.mems[0].rank, 1);
    NEAR(log.mems[0].max_allocated, 153.4e9);
    assert_int_equal(log.mems[1].rank, 2);
    NEAR(log.mems[1].max_allocated, 153.47e9);
    NEAR(log.mems[1].allocated, 61.881e9);
    assert_int_equal(log.mems[2].rank, 3);
    assert_int_equal(log.mems[2].after, 2);
    NEAR(log.mems[2].max_allocated, 153.39e9);
    NEAR(log.mems[2].max_reserved, 181.59e9);
    assert_int_equal(log.mems[3].rank, 0);
    NEAR(log.mems[3].max_allocated, 194.41e9);
    assert_int_equal(log.niters, 1);
    NEAR(log.iters[0].step_ms, 20289.1);
    NEAR(log.iters[0].loss, 12.58695);
    assert_true(isnan(log.iters[0].tflops));
    NEAR(log.theo_weight_opt_mb, 57438.81);
    assert_true(isnan(log.theo_total_mb));
    /* One logged iteration, and it is the discarded first one. */
    assert_int_equal(moe_report_run_init(&r, "bridge", &log, 1, 1, NULL, 0, &e), -1);
    assert_non_null(strstr(e.text, "besides the first logged one"));
    moe_log_free(&log);
}

#define ITER(n, ms, loss, skipped, nan)                                                         \
    " [2026-11-29 18:06:01.850394] iteration       " #n "/     100 | consumed samples: 1 | "  \
    "elapsed time per iteration (ms): " #ms " | throughput per GPU (TFLOP/s/GPU): 6.6 | "       \
    "lm loss: " #loss " | loss scale: 1.0 | number of skipped iterations:   " #skipped " | "     \
    "number of nan iterations:   " #nan " |"

/* srun -l prefixes, two ranks' iteration lines glued on one line (the same
 * iteration twice counts once), a diverged loss, skipped/NaN counts and a
 * pre-0.16 raw-float memory line. */
static void prefixes_glue_and_bad_loss(void **state)
{
    struct moe_report_run r;
    struct moe_log log;
    struct moe_error e;

    (void)state;
    moe_log_init(&log);
    assert_int_equal(moe_log_feed_line(&log, "0: " ITER(1, 900.0, 9.0, 0, 0), 1), 0);
    assert_int_equal(moe_log_feed_line(&log, "1: " ITER(2, 100.0, 8.0, 0, 0) "1: " ITER(
                                                 2, 100.0, 8.0, 0, 0), 2), 0);
    assert_int_equal(moe_log_feed_line(&log, "step/0 " ITER(3, 120.0, nan, 1, 1), 3), 0);
    assert_int_equal(moe_log_feed_line(&log, ITER(4, 110.0, 7.5, 0, 0), 4), 0);
    assert_int_equal(
        moe_log_feed_line(&log,
                          "3: [Rank 3] (after 4 iterations) memory (MB) | allocated: "
                          "15234.2470703125 | max allocated: 40123.9912109375 | reserved: 43008.0 "
                          "| max reserved: 43008.0",
                          5),
        0);
    assert_int_equal(log.niters, 5);
    NEAR(log.iters[2].step_ms, 100.0);
    assert_int_equal(log.nmems, 1);
    NEAR(log.mems[0].max_allocated, 40123.9912109375 * 1048576.0);
    assert_int_equal(moe_report_run_init(&r, "glued", &log, 1, 4, NULL, 0, &e), 0);
    assert_int_equal(r.steps_seen, 4);
    assert_int_equal(r.n, 3); /* iterations 2, 3, 4 */
    NEAR(r.step_median, 110.0);
    NEAR(r.step_mean, 110.0);
    assert_false(r.loss_finite);
    assert_int_equal(r.skipped, 1);
    assert_int_equal(r.nan_iters, 1);
    assert_int_equal(r.peak_rank, 3);
    moe_report_run_free(&r);
    moe_log_free(&log);
}

/* Bridge's "Step Time" line fills the throughput its iteration line lacks;
 * an argument dump behind srun -l prefixes still parses. */
static void bridge_step_time_and_prefixed_dump(void **state)
{
    struct moe_log log;

    (void)state;
    moe_log_init(&log);
    assert_int_equal(moe_log_feed_line(
                         &log, "0: ------------------------ arguments ------------------------", 1),
                     0);
    assert_int_equal(
        moe_log_feed_line(&log, "0:   moe_token_dispatcher_type ....................... flex", 2),
        0);
    assert_int_equal(
        moe_log_feed_line(&log, "0:   data_path ....................................... ./data/x",
                          3),
        0);
    assert_int_equal(moe_log_feed_line(
                         &log, "0: -------------------- end of arguments ---------------------", 4),
                     0);
    assert_int_equal(moe_log_feed_line(&log, "[2025-12-19 10:49:15] iteration        7/      10 | "
                                             "elapsed time per iteration (ms): 2340.0 | lm loss: "
                                             "1.258695E+01 |", 5), 0);
    assert_int_equal(
        moe_log_feed_line(&log, "Step Time : 2.34s GPU utilization: 45.2MODEL_TFLOP/s/GPU", 6), 0);
    assert_int_equal(log.nargs, 2);
    assert_string_equal(moe_log_arg(&log, "moe_token_dispatcher_type"), "flex");
    assert_string_equal(moe_log_arg(&log, "data_path"), "./data/x");
    assert_int_equal(log.niters, 1);
    NEAR(log.iters[0].step_ms, 2340.0);
    NEAR(log.iters[0].tflops, 45.2);
    moe_log_free(&log);
}

/* Another rank's records forwarded by srun in the middle of rank 0's
 * argument dump (a loaded node, in the README walkthrough's run): they are
 * the run's iteration and memory, and the dump goes on around them. */
static void records_inside_the_dump(void **state)
{
    static const char *lines[] = {
        "------------------------ arguments ------------------------",
        "  micro_batch_size ................................ 1",
        " [2026-12-03 14:20:01] iteration        3/      10 | consumed samples:           24 | "
        "elapsed time per iteration (ms): 995.1 | lm loss: 1.097000E+01 |",
        "1: [Rank 1] (after 1 iterations) memory (MB) | allocated: 635.12 | max allocated: "
        "1592.68 | reserved: 1756.00 | max reserved: 1756.00",
        "  train_iters ..................................... 10",
        "-------------------- end of arguments ---------------------",
    };
    struct moe_log log;

    (void)state;
    moe_log_init(&log);
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        assert_int_equal(moe_log_feed_line(&log, lines[i], (int)i + 1), 0);
    assert_int_equal(log.nargs, 2);
    assert_string_equal(moe_log_arg(&log, "micro_batch_size"), "1");
    assert_string_equal(moe_log_arg(&log, "train_iters"), "10");
    assert_int_equal(log.niters, 1);
    assert_int_equal(log.iters[0].iter, 3);
    NEAR(log.iters[0].step_ms, 995.1);
    assert_int_equal(log.nmems, 1);
    moe_log_free(&log);
}

/* A Bridge iteration line with no time of its own: "Step Time : 2.34s"
 * gives it, in seconds (2340 ms, not 2.34).  Where the iteration line has
 * its own time and throughput, the Step Time line does not replace them. */
static void bridge_step_time_only(void **state)
{
    struct moe_log log;

    (void)state;
    moe_log_init(&log);
    assert_int_equal(moe_log_feed_line(&log, "[2025-12-19 10:49:15] iteration        7/      10 | "
                                             "lm loss: 1.258695E+01 | number of skipped iterations:"
                                             "   0 | number of nan iterations:   0 |", 1), 0);
    assert_int_equal(
        moe_log_feed_line(&log, "Step Time : 2.34s GPU utilization: 45.2MODEL_TFLOP/s/GPU", 2), 0);
    assert_int_equal(moe_log_feed_line(&log, "[2025-12-19 10:49:17] iteration        8/      10 | "
                                             "elapsed time per iteration (ms): 2100.0 | throughput "
                                             "per GPU (TFLOP/s/GPU): 50.0 | lm loss: 1.25E+01 | "
                                             "number of skipped iterations:   2 | number of nan "
                                             "iterations:   1 |", 3), 0);
    assert_int_equal(
        moe_log_feed_line(&log, "Step Time : 9.99s GPU utilization: 11.1MODEL_TFLOP/s/GPU", 4), 0);
    moe_log_finish(&log);
    assert_int_equal(log.niters, 2);
    NEAR(log.iters[0].step_ms, 2340.0);
    NEAR(log.iters[0].tflops, 45.2);
    NEAR(log.iters[1].step_ms, 2100.0);
    NEAR(log.iters[1].tflops, 50.0);
    assert_int_equal(log.iters[1].skipped, 2);
    assert_int_equal(log.iters[1].nan_iters, 1);
    moe_log_free(&log);
}

/* The real 2xH200 log with four lines corrupted the ways logs really break:
 * "(ms): 1e" (a cut-off exponent), "-5" ms, "abc", a line cut off mid-way.
 * Each is a warning naming file and line; none becomes a number; the clean
 * log gives no warning at all. */
static void corrupt_numbers_are_warnings(void **state)
{
    char tmp[] = "/tmp/moe-corrupt-log.XXXXXX", line[4096];
    FILE *in = fopen(srcpath("tests/data/logs/h200x2-moe-ep2-alltoall-60it.log"), "r"), *out;
    struct moe_log log;
    struct moe_error e;
    int fd = mkstemp(tmp), n = 0;
    int bad1e = 0, badneg = 0, badabc = 0, badcut = 0;

    (void)state;
    assert_non_null(in);
    assert_true(fd >= 0);
    out = fdopen(fd, "w");
    while (fgets(line, sizeof(line), in)) {
        char *p = strstr(line, "elapsed time per iteration (ms): ");

        n++;
        if (p && strstr(line, "iteration       42/")) {
            bad1e = n;
            strcpy(p + 33, "1e | lm loss: 8.0 | number of nan iterations:   0 |\n");
        } else if (p && strstr(line, "iteration       43/")) {
            badneg = n;
            strcpy(p + 33, "-5.0 | lm loss: 8.0 | number of nan iterations:   0 |\n");
        } else if (p && strstr(line, "iteration       44/")) {
            badabc = n;
            strcpy(p + 33, "abc | lm loss: 8.0 | number of nan iterations:   0 |\n");
        } else if (p && strstr(line, "iteration       45/")) {
            badcut = n;
            strcpy(p + 33, "311.1 | throughput per GPU (TFLOP/s/GPU): 6.\n");
        }
        fputs(line, out);
    }
    fclose(in);
    fclose(out);

    read_log(&log, "tests/data/logs/h200x2-moe-ep2-alltoall-60it.log");
    assert_int_equal(log.warnings_total, 0);
    moe_log_free(&log);

    moe_log_init(&log);
    moe_error_clear(&e);
    assert_int_equal(moe_log_read_file(&log, tmp, &e), 0);
    unlink(tmp);
    assert_int_equal(log.niters, 60);
    assert_true(isnan(log.iters[41].step_ms)); /* "1e" is not 1.0 */
    assert_true(isnan(log.iters[42].step_ms)); /* -5 ms is impossible */
    assert_true(isnan(log.iters[43].step_ms));
    NEAR(log.iters[44].step_ms, 311.1);        /* the cut line keeps what it has */
    /* 42, 43, 44: the bad number, then "no usable step time" at the end;
     * 45: cut off. */
    assert_int_equal(log.warnings_total, 7);
    for (size_t i = 0; i < log.nwarnings; i++)
        print_message("# %s\n", log.warnings[i].text);
    snprintf(line, sizeof(line), "%s:%d: iteration 42: 'elapsed time per iteration (ms): 1e' is "
             "not a number", tmp, bad1e);
    assert_non_null(strstr(log.warnings[0].text, line));
    snprintf(line, sizeof(line), "%s:%d: iteration 43: 'elapsed time per iteration (ms): -5' is "
             "impossible (a step takes from 1e-3 ms", tmp, badneg);
    assert_non_null(strstr(log.warnings[1].text, line));
    snprintf(line, sizeof(line), "%s:%d: iteration 44: 'elapsed time per iteration (ms): abc' is "
             "not a number", tmp, badabc);
    assert_non_null(strstr(log.warnings[2].text, line));
    snprintf(line, sizeof(line), "%s:%d: iteration 45: the line ends early", tmp, badcut);
    assert_non_null(strstr(log.warnings[3].text, line));
    snprintf(line, sizeof(line), "%s:%d: iteration 42 has no usable step time", tmp, bad1e);
    assert_non_null(strstr(log.warnings[4].text, line));
    moe_log_free(&log);
}

/* A synthetic run: iteration 1 at 1000 ms, then `ms` for 2..n except a
 * +-jitter alternation, so the CV is known. */
static void synth_run(struct moe_log *log, double ms, double jitter, const char *args)
{
    char line[512];

    moe_log_init(log);
    if (args) {
        char buf[512], *save = NULL;

        snprintf(buf, sizeof(buf), "%s", args);
        moe_log_feed_line(log, "------------------------ arguments ------------------------", 1);
        for (char *tok = strtok_r(buf, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save))
            assert_int_equal(moe_log_feed_line(log, tok, 2), 0);
        moe_log_feed_line(log, "-------------------- end of arguments ---------------------", 3);
    }
    for (int i = 1; i <= 20; i++) {
        double v = i == 1 ? 1000.0 : ms + (i % 2 ? jitter : -jitter);

        snprintf(line, sizeof(line),
                 " [2026-01-01 00:00:00] iteration %d/ 20 | elapsed time per iteration (ms): "
                 "%.1f | throughput per GPU (TFLOP/s/GPU): 100.0 | lm loss: 2.0 |",
                 i, v);
        assert_int_equal(moe_log_feed_line(log, line, i), 0);
    }
}

/* A/B: a significant change beyond the minimum effect is a win or a loss;
 * a median 0.5% off inside the baseline's own scatter is no change. */
static void ab_verdicts(void **state)
{
    struct moe_report_run base, fast, same, slow;
    struct moe_report_ab ab;
    struct moe_log log;
    struct moe_error e;

    (void)state;
    /* Window 11-20: five at 101 and five at 99 ms -> mean 100, sample
     * stdev sqrt(10/9) = 1.054 ms, CV 1.054%. */
    synth_run(&log, 100.0, 1.0, NULL);
    assert_int_equal(moe_report_run_init(&base, "base", &log, 11, 20, NULL, 0, &e), 0);
    moe_log_free(&log);
    NEAR(base.step_cv, sqrt(10.0 / 9.0) / 100.0);
    synth_run(&log, 90.0, 0.0, NULL);
    assert_int_equal(moe_report_run_init(&fast, "fast", &log, 11, 20, NULL, 0, &e), 0);
    moe_log_free(&log);
    synth_run(&log, 100.5, 0.0, NULL);
    assert_int_equal(moe_report_run_init(&same, "same", &log, 11, 20, NULL, 0, &e), 0);
    moe_log_free(&log);
    synth_run(&log, 105.0, 0.0, NULL);
    assert_int_equal(moe_report_run_init(&slow, "slow", &log, 11, 20, NULL, 0, &e), 0);
    moe_log_free(&log);

    moe_report_compare(&base, &fast, NULL, &ab);
    NEAR(ab.delta_pct, -10.0);
    assert_int_equal(ab.n_base, 10);
    assert_int_equal(ab.n_cand, 10);
    assert_true(ab.p_value < 0.001); /* complete separation of 10 and 10 */
    assert_true(ab.ci_hi_pct < 0);
    assert_int_equal(ab.verdict, MOE_VERDICT_WIN);
    moe_report_compare(&base, &same, NULL, &ab);
    NEAR(ab.delta_pct, 0.5);
    assert_true(ab.p_value > 0.05);
    assert_int_equal(ab.verdict, MOE_VERDICT_NO_CHANGE);
    assert_non_null(strstr(ab.why, "not significant"));
    moe_report_compare(&base, &slow, NULL, &ab);
    assert_int_equal(ab.verdict, MOE_VERDICT_LOSS);
    /* 5% slower, but a 10% minimum effect: no change, and why */
    moe_report_compare(&base, &slow, &(struct moe_report_opts){ 0.05, 10.0 }, &ab);
    assert_int_equal(ab.verdict, MOE_VERDICT_NO_CHANGE);
    assert_non_null(strstr(ab.why, "below the 10.00% minimum effect"));
    assert_string_equal(moe_verdict_name(MOE_VERDICT_NO_CHANGE), "no change");
    moe_report_run_free(&base);
    moe_report_run_free(&fast);
    moe_report_run_free(&same);
    moe_report_run_free(&slow);
}

/* Requested values that the argument dump contradicts are flagged, as are
 * CUDA graphs without capture lines, and FP8 or a dispatcher backend whose
 * kernels the profile lacks. */
static void mismatches_are_flagged(void **state)
{
    const struct moe_report_expect ex[] = {
        { "moe_token_dispatcher_type", "flex", false },
        { "dispatcher", "deepep", false },
        { "overlap_moe_expert_parallel_comm", "True", false },
    };
    struct moe_report_run r;
    struct moe_log log;
    struct moe_error e;
    struct moe_trace t;
    json_t *m;

    (void)state;
    synth_run(&log,
              100.0, 0.0,
              "  moe_token_dispatcher_type ....................... flex\n"
              "  moe_flex_dispatcher_backend ..................... deepep\n"
              "  moe_enable_deepep ............................... False\n"
              "  overlap_moe_expert_parallel_comm ................ False\n"
              "  fp8 ............................................. e4m3\n"
              "  cuda_graph_impl ................................. transformer_engine\n");
    assert_int_equal(moe_report_run_init(&r, "c1", &log, 11, 20, ex, 3, &e), 0);
    m = r.mismatches;
    /* flex and deepep ran as asked; EP overlap did not; graphs left no trace. */
    assert_int_equal(json_array_size(m), 2);
    assert_string_equal(json_string_value(json_array_get(m, 0)),
                        "requested overlap_moe_expert_parallel_comm=True, ran with "
                        "overlap_moe_expert_parallel_comm=False");
    assert_non_null(strstr(json_string_value(json_array_get(m, 1)), "CUDA graphs requested"));

    /* The synthetic profile has NCCL and DeepEP kernels but no FP8 GEMM. */
    moe_trace_init(&t, "synthetic", NULL, NULL);
    assert_int_equal(moe_trace_load(&t, srcpath("tests/data/traces/synthetic-2gpu.json"), &e), 0);
    assert_int_equal(moe_report_run_profile(&r, &t, &e), 0);
    moe_trace_free(&t);
    /* the graph verdict is made again with the trace, and goes last */
    assert_int_equal(json_array_size(m), 3);
    assert_non_null(strstr(json_string_value(json_array_get(m, 1)), "no FP8 GEMM kernels"));
    assert_non_null(strstr(json_string_value(json_array_get(m, 2)),
                           "CUDA graphs requested, but the log has no capture line"));
    assert_int_equal(json_integer_value(json_object_get(r.profile, "graph_launches")), 0);
    assert_int_equal(json_integer_value(json_object_get(r.profile, "dispatcher_kernel_names")), 1);
    moe_report_run_free(&r);
    moe_log_free(&log);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, 1 << 20);

    assert_non_null(f);
    assert_non_null(buf);
    fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    return buf;
}

/* report.md has the table and the verdict; the SVG is one self-contained
 * document with the window shaded and one line per run. */
static void rendered_outputs(void **state)
{
    struct moe_report_run runs[2];
    struct moe_log log;
    struct moe_error e;
    char md[256], svg[256], *text, *p;
    int lines = 0;

    (void)state;
    read_log(&log, "tests/data/logs/h200x2-moe-ep2-alltoall-60it.log");
    assert_int_equal(moe_report_run_init(&runs[0], "base", &log, 41, 50, NULL, 0, &e), 0);
    assert_int_equal(moe_report_run_init(&runs[1], "again", &log, 41, 50, NULL, 0, &e), 0);
    moe_log_free(&log);
    snprintf(md, sizeof(md), "%s/moeflow-test-report-%ld.md",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    snprintf(svg, sizeof(svg), "%s/moeflow-test-report-%ld.svg",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    assert_int_equal(moe_report_write_md(runs, 2, NULL, md, &e), 0);
    assert_int_equal(moe_report_write_svg(runs, 2, svg, &e), 0);
    text = slurp(md);
    assert_non_null(strstr(
        text,
        "| base | 10 | 308.1 | 295.63 | 25.24 | 8.54 | 6.7 | yes | 0 | 0 | 1792 | baseline |"));
    /* the same window twice: U = 50 of 100, p = 1 (ties: normal approximation) */
    assert_non_null(strstr(text, "| +0.00% ["));
    assert_non_null(strstr(text, "| 1 | no change: not significant (p=1 >= alpha, interval "
                                 "includes 0) |"));
    free(text);
    text = slurp(svg);
    assert_true(strncmp(text, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
    assert_non_null(strstr(text, "window 41-50"));
    for (p = text; (p = strstr(p, "<polyline")); p++)
        lines++;
    assert_int_equal(lines, 2);
    assert_non_null(strstr(text, "</svg>\n"));
    free(text);
    unlink(md);
    unlink(svg);
    moe_report_run_free(&runs[0]);
    moe_report_run_free(&runs[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(h200_log_records),        cmocka_unit_test(h200_window_41_50),
        cmocka_unit_test(mixtral_2024_format),     cmocka_unit_test(cloudai_2026_format),
        cmocka_unit_test(bridge_memory_lines),     cmocka_unit_test(prefixes_glue_and_bad_loss),
        cmocka_unit_test(bridge_step_time_and_prefixed_dump),
        cmocka_unit_test(bridge_step_time_only),
        cmocka_unit_test(records_inside_the_dump),
        cmocka_unit_test(ab_verdicts),             cmocka_unit_test(mismatches_are_flagged),
        cmocka_unit_test(rendered_outputs),
        cmocka_unit_test(corrupt_numbers_are_warnings),
    };

    return MOE_RUN_TESTS(tests);
}
