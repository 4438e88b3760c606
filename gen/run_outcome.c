/* What a stage's jobs left behind, judged apart from submitting and
 * waiting: the exit statuses the poll counts and the end of the stage
 * acts on are read here only, so both judge a candidate alike, and a fit
 * log is read once per stage run however often the poll asks. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "run_ctx.h"
#include "run_exec.h"
#include "run_outcome.h"
#include "run_state.h"
#include "run_wait.h"
#include "analysis/megatron_log.h"
#include "core/json_build.h"
#include "core/readfile.h"
#include "core/text.h"
#include "core/study_dir.h"

/* results/STAGE/ID.rc of the study; NULL when out of memory, which the
 * callers read as no exit status yet, never as another candidate's. */
static char *rc_path(const struct run_ctx *c, const struct run_stage_plan *p, const char *id)
{
    return moe_study_result(c->dir, p->name, id, MOE_RESULT_RC);
}

bool run_listed(const json_t *ids, const char *id)
{
    size_t i;
    const json_t *v;

    json_array_foreach(ids, i, v)
        if (strcmp(json_string_value(v), id) == 0)
            return true;
    return false;
}

void run_forget_exit_status(const struct run_ctx *c, const struct run_stage_plan *p,
                            const json_t *failed)
{
    for (size_t k = 0; k < p->ms->n; k++) {
        char *path;

        if (failed && !run_listed(failed, p->ms->cands[k].id))
            continue;
        if ((path = rc_path(c, p, p->ms->cands[k].id)))
            unlink(path);
        free(path);
    }
}

/* Whether fit candidate k's log ends in CUDA's out-of-memory error: a fit
 * rung that does not fit has given the answer it exists to give (issue
 * 37), which the fit report reads; it is no failure of the stage.  Only
 * called once its .rc says it failed, when its log is whole: the answer
 * is kept in said[k] and the log not read again. */
static bool fit_ran_out_of_memory(const struct run_ctx *c, const struct run_stage_plan *p,
                                  size_t k, enum run_log_said *said)
{
    char *path;
    struct moe_log log;
    struct moe_error err;
    bool oom;

    if (p->stage != MOE_STAGE_FIT)
        return false;
    if (said[k] != RUN_LOG_UNREAD)
        return said[k] == RUN_LOG_OUT_OF_MEMORY;
    /* out of memory here: not read, so not judged out of memory */
    if (!(path = moe_study_result(c->dir, p->name, p->ms->cands[k].id, MOE_RESULT_LOG)))
        return false;
    moe_log_init(&log);
    moe_error_clear(&err);
    oom = moe_log_read_file(&log, path, &err) == 0 &&
          moe_log_out_of_memory(log.last_error);
    moe_log_free(&log);
    free(path);
    said[k] = oom ? RUN_LOG_OUT_OF_MEMORY : RUN_LOG_OTHER;
    return oom;
}

/* Whether candidate k has an exit status of this attempt: an .rc, not
 * older than its log (an earlier attempt's, while a later one runs or was
 * cut short: moe_study_result_rc_stale). */
static bool has_exit_status(const struct run_ctx *c, const struct run_stage_plan *p, size_t k)
{
    char *path = rc_path(c, p, p->ms->cands[k].id);
    bool has = path && access(path, F_OK) == 0 &&
               !moe_study_result_rc_stale(c->dir, p->name, p->ms->cands[k].id);

    free(path);
    return has;
}

/* Candidate k's exit status: -1 when it has none (has_exit_status) or it
 * is not a number. */
static long exit_status(const struct run_ctx *c, const struct run_stage_plan *p, size_t k)
{
    char *path = rc_path(c, p, p->ms->cands[k].id), *text = NULL, *end;
    struct moe_error err;
    long rc = -1;

    moe_error_clear(&err);
    if (path && has_exit_status(c, p, k))
        text = moe_read_file(path, "exit status", NULL, &err);
    free(path);
    if (!text)
        return -1;
    rc = strtol(text, &end, 10);
    if (end == text || (*end && *end != '\n'))
        rc = -1;
    free(text);
    return rc;
}

size_t run_failed_candidates(const struct run_ctx *c, const struct run_stage_plan *p,
                             enum run_log_said *said, struct moe_jb *b, json_t *ids, json_t *oom,
                             size_t *done)
{
    size_t bad = 0;

    *done = 0;
    for (size_t k = 0; k < p->ms->n; k++) {
        const char *id = p->ms->cands[k].id;
        long rc = exit_status(c, p, k);

        if (rc == 0) {
            (*done)++;
        } else if (rc > 0 && fit_ran_out_of_memory(c, p, k, said)) {
            (*done)++;
            if (oom)
                moe_jb_append(b, oom, json_string(id));
        } else if (ids) {
            moe_jb_append(b, ids, json_string(id));
            bad++;
        } else {
            bad += has_exit_status(c, p, k);
        }
    }
    return bad;
}

/* The job (and array task) that last ran candidate k: "123_4" or "123". */
static void last_job_of(const json_t *js, size_t k, char *out, size_t len)
{
    const json_t *jobs = json_object_get(js, "jobs"), *j;
    size_t i;

    out[0] = '\0';
    json_array_foreach(jobs, i, j) {
        const char *arr = json_string_value(json_object_get(j, "array"));
        const char *job = json_string_value(json_object_get(j, "job"));
        int off = (int)json_integer_value(json_object_get(j, "offset"));
        int idx[RUN_MAX_INDICES], n = arr ? run_array_indices(arr, idx, RUN_MAX_INDICES) : 0;

        if (!arr && k == 0)
            /* a message: a job id is digits, far shorter than out; cut, it
             * still names the job's start */
            snprintf(out, len, "%s", job);
        for (int x = 0; x < n; x++)
            if ((long long)off + idx[x] == (long long)k)
                /* a message, as above */
                snprintf(out, len, "%s_%d", job, idx[x]);
    }
}

/* One failed candidate: its value, job, exit status and logs. */
static void print_one_failed(const struct run_ctx *c, const struct run_stage_plan *p,
                             const json_t *js, size_t k)
{
    const struct moe_candidate *cand = &p->ms->cands[k];
    char job[96], *rcpath = rc_path(c, p, cand->id), *rc = NULL, *val, shown[512], shown_rc[256],
        shown_var[256];
    struct moe_error err;

    last_job_of(js, k, job, sizeof(job));
    moe_error_clear(&err);
    if (rcpath && access(rcpath, F_OK) == 0)
        rc = moe_read_file(rcpath, "exit status", NULL, &err);
    free(rcpath);
    if (rc)
        rc[strcspn(rc, "\n")] = '\0';
    val = moe_value_text(cand->value);
    printf("  %s=%s (index %zu, job %s): %s%s\n    log: %s/logs/%s-%s.out\n"
           "    run: %s/" MOE_STUDY_RESULTS "/%s/%s" MOE_RESULT_LOG "\n",
           moe_text_visible(cand->variable ? cand->variable : "?", shown_var, sizeof(shown_var)),
           moe_text_visible(val ? val : "?", shown, sizeof(shown)), k, job,
           rc ? "exited " : "no exit status (the job ended before its candidate did)",
           rc ? moe_text_visible(rc, shown_rc, sizeof(shown_rc)) : "", c->shown, p->name,
           job[0] ? job : "?", c->shown, p->name, cand->id);
    free(val);
    free(rc);
}

/* Names each failed candidate, its job and its logs. */
static void print_failed(const struct run_ctx *c, const struct run_stage_plan *p,
                         const json_t *js, const json_t *failed)
{
    printf("%s: FAILED: %zu of %zu candidates did not exit 0\n", p->name,
           json_array_size(failed), p->ms->n);
    for (size_t k = 0; k < p->ms->n; k++)
        if (run_listed(failed, p->ms->cands[k].id))
            print_one_failed(c, p, js, k);
}

/* After the profile stage: its diagnosis, the one read from a trace.  No
 * other stage has one, and a diagnosis without it ("compute ... without a
 * profile") would contradict the bottleneck the profile measured (issue 37). */
static void diagnose_profile(const struct run_ctx *c)
{
    char *argv[] = { NULL, "diagnose", (char *)c->dir, "--stage", "profile", NULL };
    int rc = run_self("diagnose", argv);

    if (rc != 0)
        fprintf(stderr, "moeflow run: warning: moeflow diagnose of profile exited %d\n", rc);
}

/* After a stage: its report (saved under results/STAGE/report), or the
 * profile's diagnosis. */
static void report_stage(const struct run_ctx *c, const struct run_stage_plan *p)
{
    char *outdir;
    int rc;

    if (p->stage == MOE_STAGE_PROFILE)
        diagnose_profile(c);
    if (p->stage == MOE_STAGE_CONTRACT || p->stage == MOE_STAGE_PROFILE ||
        p->stage == MOE_STAGE_RETUNE) /* run_winners() reports retune, recording its winners */
        return;
    if (!(outdir = moe_study_result(c->dir, p->name, MOE_STUDY_REPORT_DIR, ""))) {
        fprintf(stderr, "moeflow run: warning: no report of %s: out of memory\n", p->name);
        return;
    }
    if (p->stage == MOE_STAGE_FIT) {
        char *argv[] = { NULL, "report", (char *)c->dir, "--stage", "fit", NULL };

        rc = run_self("report", argv);
    } else {
        char *argv[] = { NULL, "report", (char *)c->dir, "--stage", (char *)p->name, "-o",
                         outdir, NULL };

        rc = run_self("report", argv);
    }
    free(outdir);
    if (rc != 0)
        fprintf(stderr, "moeflow run: warning: moeflow report of %s exited %d\n", p->name, rc);
}

int run_judge_stage(struct run_ctx *c, const struct run_stage_plan *p, json_t *js,
                    enum run_log_said *said)
{
    json_t *failed = json_array(), *oom = json_array();
    struct moe_error err;
    struct moe_jb b;
    size_t bad;
    char t[32];
    int rc;

    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    moe_jb_int(&b, js, "finished", (json_int_t)time(NULL));
    bad = run_failed_candidates(c, p, said, &b, failed, oom, &(size_t){ 0 });
    /* borrowed on: oom is printed below, failed by print_failed */
    moe_jb_copy(&b, js, "out_of_memory", oom);
    json_decref(oom);
    if (bad)
        moe_jb_copy(&b, js, "failed", failed);
    moe_jb_str(&b, js, "state", bad ? "failed" : "done");
    json_decref(failed);
    moe_jb_within(&b, p->name);
    if (b.failed)
        return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    failed = json_object_get(js, "failed");
    oom = json_object_get(js, "out_of_memory");
    if (bad) {
        if ((rc = run_save(c)) != MOE_EXIT_OK)
            return rc;
        print_failed(c, p, js, failed);
        printf("%s: stopped; fix the cause and run moeflow run again: it submits the failed "
               "candidates only\n", p->name);
        return MOE_EXIT_STAGE_FAILED;
    }
    if ((rc = run_save(c)) != MOE_EXIT_OK)
        return rc;
    if (json_array_size(oom))
        printf("[%s] %s: done, %zu candidates exited 0 and %zu ran out of memory: the answer "
               "those rungs exist to give (moeflow report --stage fit)\n",
               run_elapsed(c->t0, t, sizeof(t)), p->name, p->ms->n - json_array_size(oom),
               json_array_size(oom));
    else
        printf("[%s] %s: done, all %zu candidates exited 0\n", run_elapsed(c->t0, t, sizeof(t)),
               p->name, p->ms->n);
    report_stage(c, p);
    return MOE_EXIT_OK;
}
