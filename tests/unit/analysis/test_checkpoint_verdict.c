/* validation.checkpoint's verdict on real Megatron log lines.  The
 * uninterrupted run is tests/data/logs/h200x2-moe-ep2-alltoall-60it.log
 * (a real 60-step MoE run on 2x H200, log interval 1; its provenance is in
 * tests/data/logs/PROVENANCE.md), read whole.  A perfect resume at step 40
 * logs exactly that run's lines of steps 41..50, but for step 42's loss,
 * which a fresh Megatron process prints as the mean of its first two steps
 * (training.py:2594 in core 0.19: its first log resets no sums), so the
 * "resumed" log is those lines of the same file with that mean; each
 * failure case changes one field of one real line (a loss, a learning
 * rate, a NaN count) or starts elsewhere, as a broken resume would. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/checkpoint_verdict.h"
#include "analysis/checkpoint_verdict_internal.h"
#include "analysis/megatron_log.h"
#include "analysis/megatron_log_internal.h"
#include "unit.h"

#define LOG "tests/data/logs/h200x2-moe-ep2-alltoall-60it.log"

static const char *srcpath(const char *rel)
{
    static char buf[4096];
    const char *dir = getenv("MOEFLOW_SRCDIR");

    snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : ".", rel);
    return buf;
}

/* The iteration a log line records, or -1. */
static long line_iter(const char *line)
{
    const char *p = strstr(line, "] iteration ");
    long it;

    return p && sscanf(p, "] iteration %ld/", &it) == 1 ? it : -1;
}

/* Replaces the number after key in line (in place, padded to its width). */
static void set_field(char *line, const char *key, const char *value)
{
    char *p = strstr(line, key), *end;
    size_t width;

    assert_non_null(p);
    p += strlen(key);
    p += strspn(p, " ");
    end = p + strcspn(p, " |");
    width = (size_t)(end - p);
    assert_true(strlen(value) <= width);
    memset(p, ' ', width);
    memcpy(p, value, strlen(value));
}

/* How a test changes the real lines of the resumed run. */
struct edit {
    long iter;
    const char *key, *value;
};

/* The lm loss a line prints; NAN when none. */
static double line_loss(const char *line)
{
    const char *p = strstr(line, "lm loss:");

    return p ? strtod(p + strlen("lm loss:"), NULL) : NAN;
}

/* The resumed log: the real lines of steps first..last, step first+1's
 * loss the mean Megatron prints there, one line edited. */
static void resumed(struct moe_log *log, long first, long last, const struct edit *e)
{
    FILE *f = fopen(srcpath(LOG), "r");
    char line[8192], mean[32];
    double first_loss = NAN;
    int n = 0;

    assert_non_null(f);
    moe_log_init(log);
    while (fgets(line, sizeof(line), f)) {
        long it = line_iter(line);

        n++;
        if (it < first || it > last)
            continue;
        if (it == first)
            first_loss = line_loss(line);
        if (it == first + 1) {
            snprintf(mean, sizeof(mean), "%.6E", (first_loss + line_loss(line)) / 2);
            set_field(line, "lm loss:", mean);
        }
        if (e && it == e->iter)
            set_field(line, e->key, e->value);
        assert_int_equal(moe_log_feed_line(log, line, n), 0);
    }
    moe_log_finish(log);
    fclose(f);
}

static void uninterrupted(struct moe_log *log)
{
    struct moe_error err;

    moe_log_init(log);
    assert_int_equal(moe_log_read_file(log, srcpath(LOG), &err), 0);
    assert_int_equal(log->niters, 60);
}

static const struct moe_ckpt_spec at_40 = { .save_step = 40, .last_step = 50,
                                            .deterministic = true };

/* Judges the run against a resume of steps first..last with one edit. */
static struct moe_ckpt_verdict *judge(long first, long last, const struct edit *e,
                                      const struct moe_ckpt_spec *spec)
{
    static struct moe_ckpt_verdict v;
    struct moe_log a, b;

    uninterrupted(&a);
    resumed(&b, first, last, e);
    moe_ckpt_judge(&a, &b, spec, 123456, &v);
    moe_log_free(&a);
    moe_log_free(&b);
    return &v;
}

static void exact_resume_passes(void **state)
{
    struct moe_ckpt_verdict *v = judge(41, 50, NULL, &at_40);
    json_t *j;

    (void)state;
    assert_int_equal(v->outcome, MOE_CKPT_PASS);
    assert_string_equal(v->reason, "");
    assert_int_equal(v->resumed_first, 41);
    assert_int_equal(v->n, 10);
    /* step 42: the mean printed with 7 digits against the mean of two
     * printed losses; every other step exactly equal */
    assert_true(v->max_loss_diff < 5e-6 && v->max_lr_diff == 0);
    assert_true(v->steps[1].mean_of_two && !v->steps[0].mean_of_two && !v->steps[2].mean_of_two);
    /* step 41 of the log: "learning rate: 3.049124E-05 | ... | lm loss: 4.274879E+00" */
    assert_int_equal(v->steps[0].iter, 41);
    assert_true(fabs(v->steps[0].loss_uninterrupted - 4.274879) < 1e-9);
    assert_true(fabs(v->steps[0].lr_resumed - 3.049124e-05) < 1e-15);
    /* and the loss rose from step 40's 3.799612 by 0.475267: no spike,
     * the uninterrupted run rose as much at that very step */
    assert_true(fabs(v->loss_jump - 0.475267) < 1e-9);
    assert_true(v->largest_rise >= v->loss_jump);
    assert_int_equal(v->skipped + v->nan_iters, 0);
    j = moe_ckpt_verdict_json(v, "cand", NULL);
    assert_string_equal(json_string_value(json_object_get(j, "verdict")), "pass");
    assert_string_equal(json_string_value(json_object_get(j, "source")), "measured");
    assert_int_equal(json_integer_value(json_object_get(j, "checkpoint_bytes")), 123456);
    assert_int_equal(json_array_size(json_object_get(j, "steps")), 10);
    json_decref(j);
}

/* A resumed run that printed step 42's own loss did not log as Megatron
 * does after a restart: under deterministic mode that is a mismatch. */
static void second_step_own_loss_fails(void **state)
{
    FILE *f = fopen(srcpath(LOG), "r");
    char line[8192], own[32] = "";
    struct moe_ckpt_verdict *v;
    struct edit e = { 42, "lm loss:", own };

    (void)state;
    assert_non_null(f);
    while (fgets(line, sizeof(line), f))
        if (line_iter(line) == 42)
            snprintf(own, sizeof(own), "%.6E", line_loss(line));
    fclose(f);
    v = judge(41, 50, &e, &at_40);
    assert_int_equal(v->outcome, MOE_CKPT_FAIL);
    assert_non_null(strstr(v->reason, "step 42: "));
    assert_non_null(strstr(v->reason, "(mean of two steps)"));
}

/* A resumed run whose loss Megatron printed as "nan": the verdict is still
 * in report.json, the step's loss null and named in its "non_finite". */
static void nan_loss_stays_in_the_json(void **state)
{
    const struct edit e = { 45, "lm loss:", "nan" };
    struct moe_ckpt_verdict *v = judge(41, 50, &e, &at_40);
    json_t *j, *step;

    (void)state;
    assert_non_null(j = moe_ckpt_verdict_json(v, "cand", NULL));
    assert_non_null(json_object_get(j, "verdict"));
    step = json_array_get(json_object_get(j, "steps"), 4);
    assert_int_equal(json_integer_value(json_object_get(step, "iteration")), 45);
    assert_true(json_is_null(json_object_get(step, "loss_resumed")));
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(step, "non_finite"), "loss_resumed")), "nan");
    assert_true(json_is_real(json_object_get(step, "loss_uninterrupted")));
    json_decref(j);
}

/* Losses near the largest double make the rise and the differences
 * infinite (the traced bug: json_pack returned NULL and report.json lost
 * the whole verdict): each is null and named, the verdict kept. */
static void infinite_measures_stay_in_the_json(void **state)
{
    struct moe_ckpt_verdict *v = judge(41, 50, NULL, &at_40);
    const char *keys[] = { "largest_rise_uninterrupted", "max_abs_loss_diff", "loss_jump" };
    json_t *j, *nf;

    (void)state;
    v->largest_rise = INFINITY;
    v->max_loss_diff = INFINITY;
    v->loss_jump = -INFINITY;
    v->steps[0].loss_uninterrupted = INFINITY;
    assert_non_null(j = moe_ckpt_verdict_json(v, "cand", NULL));
    assert_string_equal(json_string_value(json_object_get(j, "verdict")), "pass");
    nf = json_object_get(j, "non_finite");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        assert_true(json_is_null(json_object_get(j, keys[i])));
        assert_non_null(json_object_get(nf, keys[i]));
    }
    assert_string_equal(json_string_value(json_object_get(nf, "loss_jump")), "-inf");
    assert_int_equal(json_object_size(nf), 3);
    assert_int_equal(json_array_size(json_object_get(j, "steps")), 10);
    json_decref(j);
}

static void loss_mismatch_fails(void **state)
{
    const struct edit e = { 45, "lm loss:", "6.000000E+00" };
    struct moe_ckpt_verdict *v = judge(41, 50, &e, &at_40);

    (void)state;
    assert_int_equal(v->outcome, MOE_CKPT_FAIL);
    assert_non_null(strstr(v->reason, "step 45: loss"));
    assert_true(v->max_loss_diff > 0);
}

/* Without deterministic mode a difference inside 1e-3 relative passes,
 * and one outside it does not. */
static void tolerance_when_not_deterministic(void **state)
{
    const struct moe_ckpt_spec loose = { 40, 50, false };
    struct moe_log a;
    struct edit small = { 45, "lm loss:", NULL }, big = small;
    char near[32], far[32];
    struct moe_ckpt_verdict *v;
    double loss = NAN;

    (void)state;
    uninterrupted(&a);
    for (size_t i = 0; i < a.niters; i++)
        if (a.iters[i].iter == 45)
            loss = a.iters[i].loss;
    moe_log_free(&a);
    snprintf(near, sizeof(near), "%.6E", loss * (1 + 2e-4));
    snprintf(far, sizeof(far), "%.6E", loss * (1 + 5e-3));
    small.value = near;
    big.value = far;
    v = judge(41, 50, &small, &loose);
    assert_int_equal(v->outcome, MOE_CKPT_PASS);
    assert_true(v->max_loss_diff > 0);
    v = judge(41, 50, &small, &at_40);
    assert_int_equal(v->outcome, MOE_CKPT_FAIL);
    v = judge(41, 50, &big, &loose);
    assert_int_equal(v->outcome, MOE_CKPT_FAIL);
}

/* A run that trained from scratch instead: its first iteration is 1. */
static void iteration_not_restored_fails(void **state)
{
    struct moe_ckpt_verdict *v = judge(1, 50, NULL, &at_40);

    (void)state;
    assert_int_equal(v->outcome, MOE_CKPT_FAIL);
    assert_int_equal(v->resumed_first, 1);
    assert_non_null(strstr(v->reason, "iteration counter was not restored"));
}

static void lr_mismatch_fails(void **state)
{
    const struct edit e = { 43, "learning rate:", "1.000000E-04" };
    struct moe_ckpt_verdict *v = judge(41, 50, &e, &at_40);

    (void)state;
    assert_int_equal(v->outcome, MOE_CKPT_FAIL);
    assert_non_null(strstr(v->reason, "step 43: learning rate"));
    assert_non_null(strstr(v->reason, "schedule was not restored"));
}

static void nan_and_skipped_fail(void **state)
{
    const struct edit nan = { 42, "number of nan iterations:", "1" };
    const struct edit skip = { 48, "number of skipped iterations:", "1" };
    struct moe_ckpt_verdict *v = judge(41, 50, &nan, &at_40);

    (void)state;
    assert_int_equal(v->outcome, MOE_CKPT_FAIL);
    assert_int_equal(v->nan_iters, 1);
    assert_non_null(strstr(v->reason, "0 skipped and 1 NaN"));
    v = judge(41, 50, &skip, &at_40);
    assert_int_equal(v->outcome, MOE_CKPT_FAIL);
    assert_int_equal(v->skipped, 1);
}

/* A fresh optimizer state: the first resumed loss jumps above the last
 * saved one by more than the run ever rose in a step. */
static void loss_spike_fails(void **state)
{
    const struct moe_ckpt_spec loose = { 40, 50, false };
    const struct edit e = { 41, "lm loss:", "8.500000E+00" };
    struct moe_ckpt_verdict *v = judge(41, 50, &e, &loose);

    (void)state;
    assert_int_equal(v->outcome, MOE_CKPT_FAIL);
    assert_true(v->loss_jump > v->largest_rise);
}

static void missing_evidence(void **state)
{
    struct moe_ckpt_verdict v;
    struct moe_log a, b;

    (void)state;
    uninterrupted(&a);
    moe_ckpt_judge(&a, NULL, &at_40, 100, &v);
    assert_int_equal(v.outcome, MOE_CKPT_MISSING);
    assert_non_null(strstr(v.reason, "resumed run has no log"));
    resumed(&b, 41, 50, NULL);
    moe_ckpt_judge(&a, &b, &at_40, -1, &v);
    assert_int_equal(v.outcome, MOE_CKPT_MISSING);
    assert_non_null(strstr(v.reason, "checkpoint folder is missing"));
    moe_ckpt_judge(NULL, &b, &at_40, 100, &v);
    assert_int_equal(v.outcome, MOE_CKPT_MISSING);
    /* the resumed run stopped early (killed, timed out): step 50 is not
     * there, which says nothing of the checkpoint (issue 37) */
    moe_log_free(&b);
    resumed(&b, 41, 49, NULL);
    moe_ckpt_judge(&a, &b, &at_40, 100, &v);
    assert_int_equal(v.outcome, MOE_CKPT_MISSING);
    assert_non_null(strstr(v.reason, "ends at step 49, before step 50: it was cut short"));
    /* a run longer than MOE_CKPT_STEPS_MAX after the save is compared over
     * that many steps; this log stops at 60, so step 61 is missing */
    {
        const struct moe_ckpt_spec longer = { 40, 40 + MOE_CKPT_STEPS_MAX + 500, true };

        moe_ckpt_judge(&a, &b, &longer, 100, &v);
        assert_int_equal(v.compared_last, 40 + MOE_CKPT_STEPS_MAX);
        assert_int_equal(v.outcome, MOE_CKPT_MISSING); /* the resumed log ends at 49 */
    }
    moe_log_free(&a);
    moe_log_free(&b);
}

/* Killed before its first iteration: the resumed log holds no iteration
 * line.  Missing evidence, not "starts at iteration -1" (issue 37 item 5). */
static void resumed_cut_before_first_step(void **state)
{
    struct moe_ckpt_verdict v;
    struct moe_log a, b;

    (void)state;
    uninterrupted(&a);
    moe_log_init(&b);
    moe_ckpt_judge(&a, &b, &at_40, 100, &v);
    assert_int_equal(v.outcome, MOE_CKPT_MISSING);
    assert_int_equal(v.resumed_first, -1);
    assert_non_null(strstr(v.reason, "logged no iteration: it was cut short"));
    /* one that ended by itself before its first step, in Megatron's
     * traceback (the GPU lane's torch-format resume: KeyError 'step'),
     * failed to resume: that is a verdict */
    assert_int_equal(moe_log_feed_line(&b, "[rank0]: KeyError: 'step'\n", 1), 0);
    moe_log_finish(&b);
    moe_ckpt_judge(&a, &b, &at_40, 100, &v);
    assert_int_equal(v.outcome, MOE_CKPT_FAIL);
    assert_non_null(strstr(v.reason, "stopped before its first iteration: KeyError: 'step'"));
    moe_log_free(&b);
    moe_log_free(&a);
}

/* A step missing inside the resumed run (it logged 46 after 44) is a
 * failure: the run went on past it. */
static void resumed_gap_fails(void **state)
{
    const struct edit e = { 45, "] iteration", "46/" };
    struct moe_ckpt_verdict *v = judge(41, 50, &e, &at_40);

    (void)state;
    assert_int_equal(v->outcome, MOE_CKPT_FAIL);
    assert_non_null(strstr(v->reason, "no loss and learning rate for step 45"));
}

/* The folder's size is the sum of its regular files, links not followed. */
static void dir_bytes_measured(void **state)
{
    FILE *f;

    (void)state;
    assert_int_equal(moe_ckpt_dir_bytes(moe_unit_path("none")), -1);
    assert_int_equal(mkdir(moe_unit_path("ck"), 0755), 0);
    assert_int_equal(mkdir(moe_unit_path("ck/iter_0000040"), 0755), 0);
    assert_non_null(f = fopen(moe_unit_path("ck/iter_0000040/a.distcp"), "w"));
    fputs("0123456789", f);
    fclose(f);
    assert_non_null(f = fopen(moe_unit_path("ck/latest_checkpointed_iteration.txt"), "w"));
    fputs("50", f);
    fclose(f);
    assert_int_equal(symlink("/etc/passwd", moe_unit_path("ck/link")), 0);
    assert_int_equal(moe_ckpt_dir_bytes(moe_unit_path("ck")), 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_resume_passes),
        cmocka_unit_test(loss_mismatch_fails),
        cmocka_unit_test(nan_loss_stays_in_the_json),
        cmocka_unit_test(infinite_measures_stay_in_the_json),
        cmocka_unit_test(second_step_own_loss_fails),
        cmocka_unit_test(tolerance_when_not_deterministic),
        cmocka_unit_test(iteration_not_restored_fails),
        cmocka_unit_test(lr_mismatch_fails),
        cmocka_unit_test(nan_and_skipped_fail),
        cmocka_unit_test(loss_spike_fails),
        cmocka_unit_test(missing_evidence),
        cmocka_unit_test(resumed_cut_before_first_step),
        cmocka_unit_test(resumed_gap_fails),
        cmocka_unit_test_setup_teardown(dir_bytes_measured, moe_unit_make_dir,
                                        moe_unit_remove_dir),
    };

    return MOE_RUN_TESTS(tests);
}
