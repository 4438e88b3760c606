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
#include "core/readfile.h"
#include "core/text.h"
#include "core/study_dir.h"

/* A path too long for path is "", which names no file: read as no exit
 * status yet, never as another candidate's. */
static void rc_path(const struct run_ctx *c, const struct run_stage_plan *p, const char *id,
                    char *path, size_t len)
{
    (void)moe_study_result_buf(path, len, c->dir, p->name, id, MOE_RESULT_RC);
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
        char path[4300];

        if (failed && !run_listed(failed, p->ms->cands[k].id))
            continue;
        rc_path(c, p, p->ms->cands[k].id, path, sizeof(path));
        unlink(path);
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
    char path[4300];
    struct moe_log log;
    struct moe_error err;
    bool oom;

    if (p->stage != MOE_STAGE_FIT)
        return false;
    if (said[k] != RUN_LOG_UNREAD)
        return said[k] == RUN_LOG_OUT_OF_MEMORY;
    (void)moe_study_result_buf(path, sizeof(path), c->dir, p->name, p->ms->cands[k].id,
                               MOE_RESULT_LOG);
    moe_log_init(&log);
    moe_error_clear(&err);
    oom = moe_log_read_file(&log, path, &err) == 0 &&
          moe_log_out_of_memory(log.last_error);
    moe_log_free(&log);
    said[k] = oom ? RUN_LOG_OUT_OF_MEMORY : RUN_LOG_OTHER;
    return oom;
}

/* Candidate k's exit status: -1 when it has none or it is not a number. */
static long exit_status(const struct run_ctx *c, const struct run_stage_plan *p, size_t k)
{
    char path[4300], *text, *end;
    struct moe_error err;
    long rc = -1;

    rc_path(c, p, p->ms->cands[k].id, path, sizeof(path));
    moe_error_clear(&err);
    if (access(path, F_OK) != 0 || !(text = moe_read_file(path, "exit status", NULL, &err)))
        return -1;
    rc = strtol(text, &end, 10);
    if (end == text || (*end && *end != '\n'))
        rc = -1;
    free(text);
    return rc;
}

size_t run_failed_candidates(const struct run_ctx *c, const struct run_stage_plan *p,
                             enum run_log_said *said, json_t *ids, json_t *oom, size_t *done)
{
    size_t bad = 0;

    *done = 0;
    for (size_t k = 0; k < p->ms->n; k++) {
        const char *id = p->ms->cands[k].id;
        long rc = exit_status(c, p, k);
        char path[4300];

        if (rc == 0) {
            (*done)++;
        } else if (rc > 0 && fit_ran_out_of_memory(c, p, k, said)) {
            (*done)++;
            if (oom)
                json_array_append_new(oom, json_string(id));
        } else if (ids) {
            json_array_append_new(ids, json_string(id));
            bad++;
        } else {
            rc_path(c, p, id, path, sizeof(path));
            bad += access(path, F_OK) == 0;
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
            snprintf(out, len, "%s", job);
        for (int x = 0; x < n; x++)
            if ((long long)off + idx[x] == (long long)k)
                snprintf(out, len, "%s_%d", job, idx[x]);
    }
}

/* One failed candidate: its value, job, exit status and logs. */
static void print_one_failed(const struct run_ctx *c, const struct run_stage_plan *p,
                             const json_t *js, size_t k)
{
    const struct moe_candidate *cand = &p->ms->cands[k];
    char job[96], rcpath[4300], *rc = NULL, *val, shown[512], shown_rc[256], shown_var[256];
    struct moe_error err;

    last_job_of(js, k, job, sizeof(job));
    rc_path(c, p, cand->id, rcpath, sizeof(rcpath));
    moe_error_clear(&err);
    if (access(rcpath, F_OK) == 0)
        rc = moe_read_file(rcpath, "exit status", NULL, &err);
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
    char outdir[4300];
    int rc;

    if (p->stage == MOE_STAGE_PROFILE)
        diagnose_profile(c);
    if (p->stage == MOE_STAGE_CONTRACT || p->stage == MOE_STAGE_PROFILE ||
        p->stage == MOE_STAGE_RETUNE) /* run_winners() reports retune, recording its winners */
        return;
    snprintf(outdir, sizeof(outdir), "%s/" MOE_STUDY_RESULTS "/%s/" MOE_STUDY_REPORT_DIR, c->dir,
             p->name);
    if (p->stage == MOE_STAGE_FIT) {
        char *argv[] = { NULL, "report", (char *)c->dir, "--stage", "fit", NULL };

        rc = run_self("report", argv);
    } else {
        char *argv[] = { NULL, "report", (char *)c->dir, "--stage", (char *)p->name, "-o",
                         outdir, NULL };

        rc = run_self("report", argv);
    }
    if (rc != 0)
        fprintf(stderr, "moeflow run: warning: moeflow report of %s exited %d\n", p->name, rc);
}

int run_judge_stage(struct run_ctx *c, const struct run_stage_plan *p, json_t *js,
                    enum run_log_said *said)
{
    json_t *failed = json_array(), *oom = json_array();
    char t[32];
    int rc;

    json_object_set_new(js, "finished", json_integer((json_int_t)time(NULL)));
    json_object_set_new(js, "out_of_memory", oom);
    if (run_failed_candidates(c, p, said, failed, oom, &(size_t){ 0 })) {
        json_object_set_new(js, "state", json_string("failed"));
        json_object_set_new(js, "failed", failed);
        if ((rc = run_save(c)) != MOE_EXIT_OK)
            return rc;
        print_failed(c, p, js, failed);
        printf("%s: stopped; fix the cause and run moeflow run again: it submits the failed "
               "candidates only\n", p->name);
        return MOE_EXIT_STAGE_FAILED;
    }
    json_decref(failed);
    json_object_set_new(js, "state", json_string("done"));
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
