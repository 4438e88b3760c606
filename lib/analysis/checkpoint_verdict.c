#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/checkpoint_verdict.h"
#include "analysis/checkpoint_verdict_internal.h"
#include "core/json_build.h"
#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

static const char *moe_ckpt_outcome_name(enum moe_ckpt_outcome o)
{
    return o == MOE_CKPT_PASS ? "pass" : o == MOE_CKPT_FAIL ? "fail" : "missing evidence";
}

/* The first record of iteration it in log (ranks may repeat a line). */
static const struct moe_log_iter *iter_of(const struct moe_log *log, long it)
{
    for (size_t i = 0; log && i < log->niters; i++)
        if (log->iters[i].iter == it && !log->iters[i].superseded)
            return &log->iters[i];
    return NULL;
}

static long last_iter(const struct moe_log *log)
{
    long last = -1;

    for (size_t i = 0; log && i < log->niters; i++)
        if (log->iters[i].iter > last)
            last = log->iters[i].iter;
    return last;
}

static long first_iter(const struct moe_log *log)
{
    long first = -1;

    for (size_t i = 0; log && i < log->niters; i++)
        if (first < 0 || log->iters[i].iter < first)
            first = log->iters[i].iter;
    return first;
}

static void verdict(struct moe_ckpt_verdict *v, enum moe_ckpt_outcome o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Keeps the first reason: later checks must not hide an earlier one. */
static void verdict(struct moe_ckpt_verdict *v, enum moe_ckpt_outcome o, const char *fmt, ...)
{
    va_list ap;

    if (v->outcome != MOE_CKPT_PASS)
        return;
    v->outcome = o;
    va_start(ap, fmt);
    /* a reason for people: cut, it still says it */
    vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
    va_end(ap);
}

static bool has(double x)
{
    return !isnan(x);
}

/* The uninterrupted run's largest rise of the loss from one step to the
 * next, over steps 2..N+M: how much the loss may go up without a reset. */
static double largest_rise(const struct moe_log *a, long last)
{
    double rise = 0;

    for (long k = 2; k <= last; k++) {
        const struct moe_log_iter *p = iter_of(a, k - 1), *q = iter_of(a, k);

        if (p && q && has(p->loss) && has(q->loss) && q->loss - p->loss > rise)
            rise = q->loss - p->loss;
    }
    return rise;
}

/* Fills steps N+1..N+M; returns false (with the verdict) when a step
 * lacks its numbers. */
static bool collect(const struct moe_log *a, const struct moe_log *b, struct moe_ckpt_verdict *v)
{
    for (long k = v->spec.save_step + 1; k <= v->compared_last; k++) {
        const struct moe_log_iter *x = iter_of(a, k), *y = iter_of(b, k);
        struct moe_ckpt_step *s = &v->steps[v->n];

        if (!x || !x->has_loss || !has(x->lr)) {
            verdict(v, MOE_CKPT_MISSING, "the uninterrupted run logged no loss and learning "
                    "rate for step %ld", k);
            return false;
        }
        if (!y && last_iter(b) < k) {
            /* a run cut short (killed, timed out) says nothing of the steps it never ran */
            verdict(v, MOE_CKPT_MISSING, "the resumed run ends at step %ld, before step %ld: it "
                    "was cut short or is still running", last_iter(b), k);
            return false;
        }
        if (!y || !y->has_loss || !has(y->lr)) {
            verdict(v, MOE_CKPT_FAIL, "the resumed run logged no loss and learning rate for "
                    "step %ld", k);
            return false;
        }
        *s = (struct moe_ckpt_step){ k, x->loss, y->loss, x->lr, y->lr, false };
        if (k == v->spec.save_step + 2 && v->n == 1) {
            s->loss_uninterrupted = (v->steps[0].loss_uninterrupted + x->loss) / 2;
            s->mean_of_two = true;
        }
        v->skipped += x->skipped + y->skipped;
        v->nan_iters += x->nan_iters + y->nan_iters;
        v->n++;
    }
    return true;
}

/* The differences, in step order: the first failing step is the reason. */
static void compare(struct moe_ckpt_verdict *v)
{
    v->max_loss_diff = v->max_lr_diff = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct moe_ckpt_step *s = &v->steps[i];
        double dl = fabs(s->loss_resumed - s->loss_uninterrupted);
        double dr = fabs(s->lr_resumed - s->lr_uninterrupted);
        double allowed = s->mean_of_two ? fmax(v->tolerance, MOE_CKPT_PRINT_ROUNDING)
                                        : v->tolerance;

        if (!has(s->loss_resumed) || !has(s->loss_uninterrupted)) {
            verdict(v, MOE_CKPT_FAIL, "step %ld: the loss is NaN", s->iter);
            continue;
        }
        v->max_loss_diff = fmax(v->max_loss_diff, dl);
        v->max_lr_diff = fmax(v->max_lr_diff, dr);
        if (dr > MOE_CKPT_LR_TOLERANCE * fabs(s->lr_uninterrupted))
            verdict(v, MOE_CKPT_FAIL, "step %ld: learning rate %.6e resumed, %.6e uninterrupted: "
                    "the schedule was not restored", s->iter, s->lr_resumed, s->lr_uninterrupted);
        if (dl > allowed * fabs(s->loss_uninterrupted))
            verdict(v, MOE_CKPT_FAIL, "step %ld: loss %.6e resumed, %.6e uninterrupted%s "
                    "(|difference| %.3e, allowed %s)", s->iter, s->loss_resumed,
                    s->loss_uninterrupted, s->mean_of_two ? " (mean of two steps)" : "", dl,
                    allowed == 0 ? "0" : allowed == MOE_CKPT_TOLERANCE ? "1e-3 relative"
                                                                    : "1e-6 relative");
    }
}

/* A resumed run whose first loss rises above the step before the save by
 * more than the uninterrupted run ever rose from one step to the next. */
static void spike(const struct moe_log *a, struct moe_ckpt_verdict *v)
{
    const struct moe_log_iter *before = iter_of(a, v->spec.save_step);

    v->largest_rise = largest_rise(a, v->compared_last);
    if (!v->n || !before || !has(before->loss) || !has(v->steps[0].loss_resumed))
        return;
    v->loss_jump = v->steps[0].loss_resumed - before->loss;
    if (v->loss_jump > v->largest_rise + v->tolerance * fabs(before->loss))
        verdict(v, MOE_CKPT_FAIL, "the loss jumps by %.4g at step %ld, more than the "
                "uninterrupted run ever rose in one step (%.4g): the optimizer state was not "
                "restored", v->loss_jump, v->spec.save_step + 1, v->largest_rise);
}

void moe_ckpt_judge(const struct moe_log *a, const struct moe_log *b,
                    const struct moe_ckpt_spec *spec, long long dir_bytes,
                    struct moe_ckpt_verdict *v)
{
    memset(v, 0, sizeof(*v));
    v->spec = *spec;
    v->tolerance = spec->deterministic ? 0 : MOE_CKPT_TOLERANCE;
    v->dir_bytes = dir_bytes;
    v->max_loss_diff = v->max_lr_diff = v->loss_jump = NAN;
    v->resumed_first = first_iter(b);
    /* a longer run is compared over its first MOE_CKPT_STEPS_MAX resumed
     * steps, which say as much about what the checkpoint restored */
    v->compared_last = spec->last_step - spec->save_step > MOE_CKPT_STEPS_MAX
                           ? spec->save_step + MOE_CKPT_STEPS_MAX : spec->last_step;
    if (spec->save_step < 1 || spec->last_step <= spec->save_step)
        verdict(v, MOE_CKPT_MISSING, "no steps to compare (save at %ld, train to %ld)",
                spec->save_step, spec->last_step);
    else if (!a || !a->niters)
        verdict(v, MOE_CKPT_MISSING, "the uninterrupted run has no iteration in its log");
    else if (dir_bytes < 0)
        verdict(v, MOE_CKPT_MISSING, "the checkpoint folder is missing");
    else if (!b)
        verdict(v, MOE_CKPT_MISSING, "the resumed run has no log (the uninterrupted run "
                "failed, or the job has not run it)");
    else if (v->resumed_first < 0 && b->last_error[0])
        /* it ended by itself, loading the checkpoint: that is the verdict */
        verdict(v, MOE_CKPT_FAIL, "the resumed run stopped before its first iteration: %.200s",
                b->last_error);
    else if (v->resumed_first < 0)
        verdict(v, MOE_CKPT_MISSING, "the resumed run logged no iteration: it was cut short "
                "before its first step, or has not got there yet");
    else if (v->resumed_first != spec->save_step + 1)
        verdict(v, MOE_CKPT_FAIL, "the resumed run starts at iteration %ld, not %ld: the "
                "iteration counter was not restored", v->resumed_first, spec->save_step + 1);
    if (v->outcome != MOE_CKPT_PASS || !collect(a, b, v))
        return;
    if (v->skipped || v->nan_iters)
        verdict(v, MOE_CKPT_FAIL, "%ld skipped and %ld NaN iterations in steps %ld..%ld",
                v->skipped, v->nan_iters, spec->save_step + 1, v->compared_last);
    compare(v);
    spike(a, v);
}

static long arg_long(const struct moe_strv *argv, const char *flag)
{
    const char *s = moe_strv_flag_value(argv, flag);
    char *end;
    long v;

    if (!s)
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    return errno || *end || end == s ? -1 : v;
}

/* An id as moeflow writes them: lowercase hex, so that it names a file
 * below the study and nothing else. */
static bool is_id(const char *s)
{
    size_t n = s ? strlen(s) : 0;

    return n > 0 && n <= 64 && strspn(s, "0123456789abcdef") == n;
}

/* The spec of a checkpoint candidate from its arguments, and the folder
 * it saves in, relative to the study; -1 when they lack one, or --save is
 * not the folder moeflow gen names (MOE_CANDIDATE_CHECKPOINT_DIR/<value>). */
static int moe_ckpt_spec_of(const struct moe_candidate *c, struct moe_ckpt_spec *spec, char *dir,
                            size_t len)
{
    const char *save = moe_strv_flag_value(&c->argv, "--save"), *of = json_string_value(c->value);

    spec->save_step = arg_long(&c->argv, "--save-interval");
    spec->last_step = arg_long(&c->argv, "--train-iters");
    spec->deterministic = moe_strv_find(&c->argv, "--deterministic-mode") >= 0;
    if (!save || spec->save_step < 1 || spec->last_step < 1 || !is_id(of) || !is_id(c->id))
        return -1;
    /* the folder moeflow gen names, and only that: a manifest's --save
     * could name any path */
    snprintf(dir, len, MOE_CANDIDATE_CHECKPOINT_DIR "/%s", of);
    return strcmp(save, dir) == 0 ? 0 : -1;
}

static long long dir_total;

static int add_size(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)path;
    (void)f;
    if (flag == FTW_F && S_ISREG(st->st_mode))
        dir_total += (long long)st->st_size;
    return 0;
}

long long moe_ckpt_dir_bytes(const char *dir)
{
    struct stat st;

    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return -1;
    dir_total = 0;
    return nftw(dir, add_size, 16, FTW_PHYS) < 0 ? -1 : dir_total;
}

/* Reads path into log; 0 when it is missing (present false), -1 with err
 * when it cannot be read. */
static int read_log(const char *path, struct moe_log *log, bool *present, struct moe_error *err)
{
    struct stat st;

    *present = lstat(path, &st) == 0;
    if (!*present)
        return 0;
    return moe_log_read_file(log, path, err);
}

/* The size the job measured when the runs ended
 * (results/validate/<id>.checkpoint-bytes), or -1. */
static long long recorded_bytes(const char *study, const char *id)
{
    struct moe_error e;
    char *path = moe_study_result(study, "validate", id, MOE_RESULT_CHECKPOINT_BYTES);
    char *text = path ? moe_read_file(path, "checkpoint size", NULL, &e) : NULL, *end;
    long long n;

    free(path);
    if (!text)
        return -1;
    errno = 0;
    n = strtoll(text, &end, 10);
    if (errno || end == text || (*end && *end != '\n') || n < 0)
        n = -1;
    free(text);
    return n;
}

/* A job without its exit status (results/validate/<id>.rc), or with an
 * earlier attempt's (older than its log: moe_study_result_rc_stale), is
 * running or was cut short: what its logs show so far is missing evidence,
 * never a failure of the checkpoint. */
static void unfinished(const char *study, const char *id, struct moe_ckpt_verdict *v)
{
    char *rc, was[sizeof(v->reason)];
    struct stat st;
    bool ended, stale;

    if (v->outcome != MOE_CKPT_FAIL)
        return;
    /* out of memory: no path to look at, and the failure stands */
    rc = moe_study_result(study, "validate", id, MOE_RESULT_RC);
    ended = !rc || lstat(rc, &st) == 0;
    free(rc);
    stale = ended && moe_study_result_rc_stale(study, "validate", id);
    if (ended && !stale)
        return;
    memcpy(was, v->reason, sizeof(was));
    v->outcome = MOE_CKPT_MISSING;
    /* id and was are cut (%.64s, %.300s) to fit reason */
    snprintf(v->reason, sizeof(v->reason), "the job has no exit status yet (" MOE_STUDY_RESULTS
             "/validate/%.64s" MOE_RESULT_RC "%s): it is running or was cut short; so far: %.300s",
             id, stale ? " is older than its log: an earlier attempt's" : "", was);
}

/* The whole evidence of study's checkpoint candidate c: its logs
 * results/validate/<id>.log and <id>.resumed.log and its folder (or, when
 * the folder is gone, the size the job measured, <id>.checkpoint-bytes).  -1 with
 * err only when a log exists but cannot be read. */
static int moe_ckpt_evidence(const char *study, const struct moe_candidate *c,
                             struct moe_ckpt_verdict *v, struct moe_error *err)
{
    char *a_path, *b_path, dir[1024], *full;
    struct moe_ckpt_spec spec = { 0 };
    struct moe_log a, b;
    bool has_a = false, has_b = false;
    int rc = 0;

    moe_log_init(&a);
    moe_log_init(&b);
    if (moe_ckpt_spec_of(c, &spec, dir, sizeof(dir)) < 0) {
        memset(v, 0, sizeof(*v));
        v->outcome = MOE_CKPT_MISSING;
        /* a fixed text, shorter than reason */
        snprintf(v->reason, sizeof(v->reason), "the checkpoint candidate is not one moeflow "
                 "gen writes (--save " MOE_CANDIDATE_CHECKPOINT_DIR "/ID, --save-interval, "
                 "--train-iters)");
        return 0;
    }
    full = moe_path_join(study, dir);
    a_path = moe_study_result(study, "validate", c->id, MOE_RESULT_LOG);
    b_path = moe_study_result(study, "validate", c->id, MOE_RESULT_RESUMED_LOG);
    if (!full || !a_path || !b_path) {
        moe_error_at(err, study, 0, 0, "the checkpoint run's logs: out of memory");
        rc = -1;
    } else if (read_log(a_path, &a, &has_a, err) < 0 || read_log(b_path, &b, &has_b, err) < 0) {
        rc = -1;
    }
    free(a_path);
    free(b_path);
    if (rc == 0) {
        bool recorded = false;
        long long bytes = moe_ckpt_dir_bytes(full);

        if (bytes < 0 && (bytes = recorded_bytes(study, c->id)) >= 0)
            recorded = true;
        moe_ckpt_judge(has_a ? &a : NULL, has_b ? &b : NULL, &spec, bytes, v);
        v->bytes_recorded = recorded;
        unfinished(study, c->id, v);
    }
    if (!full)
        moe_error_set(err, "out of memory");
    free(full);
    moe_log_free(&a);
    moe_log_free(&b);
    return rc;
}

int moe_ckpt_study(const char *study, struct moe_ckpt_verdict *v, char *id, size_t len,
                   struct moe_error *err)
{
    struct moe_manifest m;
    const struct moe_manifest_stage *st;
    const struct moe_candidate *c = NULL;
    int rc;

    if (moe_manifest_load(study, &m, err) < 0)
        return -1;
    st = moe_manifest_find(&m, MOE_STAGE_VALIDATE);
    for (size_t i = 0; st && i < st->n && !c; i++)
        if (st->cands[i].variable && st->cands[i].id &&
            strcmp(st->cands[i].variable, MOE_CANDIDATE_CHECKPOINT) == 0)
            c = &st->cands[i];
    rc = c ? 1 : 0;
    if (c) {
        if (moe_fmt_fixed(id, len, err, "%s", c->id) < 0 ||
            moe_ckpt_evidence(study, c, v, err) < 0)
            rc = -1;
    }
    moe_manifest_free(&m);
    return rc;
}

/* One compared step; a loss Megatron logged as inf or nan is null and
 * named in the step's "non_finite" (core/json_build.h). */
static json_t *step_json(struct moe_jb *b, const struct moe_ckpt_step *s)
{
    json_t *j = json_object();

    moe_jb_int(b, j, "iteration", (json_int_t)s->iter);
    moe_jb_num(b, j, "loss_uninterrupted", s->loss_uninterrupted);
    moe_jb_num(b, j, "loss_resumed", s->loss_resumed);
    moe_jb_num(b, j, "lr_uninterrupted", s->lr_uninterrupted);
    moe_jb_num(b, j, "lr_resumed", s->lr_resumed);
    moe_jb_bool(b, j, "loss_is_mean_of_two", s->mean_of_two);
    return moe_jb_done(b, j);
}

static const char *bytes_from(const struct moe_ckpt_verdict *v)
{
    if (v->dir_bytes < 0)
        return "nowhere";
    return v->bytes_recorded ? "the job's record" : "the folder";
}

/* The differences and rises: losses near the largest double make them
 * infinite, and they are written null and named, never the verdict left
 * out; NaN is "not measured" (no step compared). */
static void measured_json(struct moe_jb *b, json_t *j, const struct moe_ckpt_verdict *v)
{
    moe_jb_num(b, j, "tolerance_relative", v->tolerance);
    moe_jb_int(b, j, "resumed_first_iteration", (json_int_t)v->resumed_first);
    moe_jb_num_opt(b, j, "max_abs_loss_diff", v->max_loss_diff);
    moe_jb_num_opt(b, j, "max_abs_lr_diff", v->max_lr_diff);
    moe_jb_num_opt(b, j, "loss_jump", v->loss_jump);
    moe_jb_num(b, j, "largest_rise_uninterrupted", v->largest_rise);
    moe_jb_int(b, j, "skipped_iterations", (json_int_t)v->skipped);
    moe_jb_int(b, j, "nan_iterations", (json_int_t)v->nan_iters);
    moe_jb_set(b, j, "checkpoint_bytes",
               v->dir_bytes >= 0 ? json_integer(v->dir_bytes) : json_null());
    moe_jb_str(b, j, "checkpoint_bytes_from", bytes_from(v));
}

json_t *moe_ckpt_verdict_json(const struct moe_ckpt_verdict *v, const char *candidate,
                              struct moe_error *err)
{
    json_t *j = json_object(), *steps = json_array();
    struct moe_jb b;

    moe_jb_init(&b, err);
    for (size_t i = 0; i < v->n; i++)
        moe_jb_append(&b, steps, step_json(&b, &v->steps[i]));
    moe_jb_str(&b, j, "candidate", candidate ? candidate : "");
    moe_jb_str(&b, j, "verdict", moe_ckpt_outcome_name(v->outcome));
    moe_jb_str(&b, j, "reason", v->reason);
    moe_jb_str(&b, j, "source", "measured");
    moe_jb_int(&b, j, "save_step", (json_int_t)v->spec.save_step);
    moe_jb_int(&b, j, "last_step", (json_int_t)v->spec.last_step);
    moe_jb_int(&b, j, "compared_through", (json_int_t)v->compared_last);
    moe_jb_bool(&b, j, "deterministic", v->spec.deterministic);
    measured_json(&b, j, v);
    moe_jb_set(&b, j, "steps", steps);
    return moe_jb_done(&b, j);
}

void moe_ckpt_verdict_print(FILE *out, const struct moe_ckpt_verdict *v, const char *candidate)
{
    fprintf(out, "checkpoint/resume (%s): %s%s%s\n", candidate ? candidate : "?",
            moe_ckpt_outcome_name(v->outcome), v->reason[0] ? ": " : "", v->reason);
    fprintf(out, "  saved at step %ld, trained to %ld; %s\n", v->spec.save_step,
            v->spec.last_step, v->spec.deterministic
                                   ? "deterministic mode: losses must match exactly"
                                   : "not deterministic: losses within 1e-3 relative");
    fprintf(out, "  resumed run's first iteration: %ld (measured; %ld expected)\n",
            v->resumed_first, v->spec.save_step + 1);
    fprintf(out, "  %6s %14s %14s %13s %13s  (measured, from the two logs)\n", "step", "loss",
            "loss_resumed", "lr", "lr_resumed");
    for (size_t i = 0; i < v->n; i++)
        fprintf(out, "  %6ld %14.6e %14.6e %13.6e %13.6e%s\n", v->steps[i].iter,
                v->steps[i].loss_uninterrupted, v->steps[i].loss_resumed,
                v->steps[i].lr_uninterrupted, v->steps[i].lr_resumed,
                v->steps[i].mean_of_two ? "  *" : "");
    if (v->n > 1 && v->steps[1].mean_of_two)
        fprintf(out, "  * the mean of steps %ld and %ld in both columns: Megatron logs a "
                "process's first step without resetting its loss sums, so the resumed run "
                "prints that mean there\n", v->steps[0].iter, v->steps[1].iter);
    if (!v->n)
        fprintf(out, "  no step compared\n");
    else
        fprintf(out, "  largest |loss difference| %.3e, |lr difference| %.3e; loss jump at the "
                "first resumed step %.4g (largest rise uninterrupted %.4g); %ld skipped, %ld "
                "NaN iterations (all measured)\n", v->max_loss_diff, v->max_lr_diff,
                v->loss_jump, v->largest_rise, v->skipped, v->nan_iters);
    if (v->dir_bytes >= 0)
        fprintf(out, "  checkpoint folder: %lld bytes (measured%s)\n", v->dir_bytes,
                v->bytes_recorded ? " by the job; the folder is gone" : "");
    else
        fprintf(out, "  checkpoint folder: missing\n");
}
