/* moeflow run: drives a generated study through its stages on Slurm, one
 * stage at a time, submitting the scripts moeflow gen wrote, waiting for
 * them, checking every candidate's exit status and reporting; its state
 * (run_state.h) lets a second run resume where the first stopped. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "options.h"
#include "run_ctx.h"
#include "run_exec.h"
#include "run_state.h"
#include "analysis/fit_report.h"
#include "analysis/megatron_log.h"
#include "contract/contract_store.h"
#include "core/manifest.h"
#include "core/readfile.h"
#include "core/stage.h"
#include "core/text.h"
#include "study/baseline_fit.h"
#include "study/study.h"

#define RUN_POLL_DEFAULT 10
#define RUN_TIMEOUT_DEFAULT 86400
#define RUN_MAX_CHUNKS 1024

struct run_chunk {
    int offset, count;
    char array[48];
};

/* One stage as the manifest lays it out for submission. */
struct run_stage_plan {
    enum moe_stage stage;
    const char *name, *script;
    bool array;
    struct run_chunk chunks[RUN_MAX_CHUNKS];
    size_t n_chunks;
    const struct moe_manifest_stage *ms;
};

volatile sig_atomic_t run_interrupted;

static void on_signal(int sig)
{
    run_interrupted = sig;
}

static int set_until(void *args, const struct moe_opt *o, char *value)
{
    (void)o;
    if (moe_stage_parse(value) == MOE_STAGE_NONE)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow run: --until '%s': expected one of %s\n",
                             value, moe_stage_choices());
    ((struct run_args *)args)->until = value;
    return MOE_CLI_RUN;
}

static const struct moe_opt run_opts[] = {
    { "dry-run", no_argument, 'n', NULL,
      "print what would be submitted and run, change nothing", .set = moe_opt_flag,
      .field = offsetof(struct run_args, dry) },
    { "until", required_argument, 'u', "STAGE",
      "stop after STAGE (one of contract, fit, scale, profile,\n"
      "retune, validate) is done", .set = set_until },
    { "timeout", required_argument, 't', "SECONDS",
      "wait at most this long for a stage, its sbatch and\n"
      "squeue calls included (default %d); its jobs stay\n"
      "in Slurm and a later run waits again",
      .set = moe_opt_int, .field = offsetof(struct run_args, timeout), .min = 1,
      .max = 31 * 86400 },
    { "all", no_argument, 'a', NULL,
      "retune screens the whole catalogue, not only the axes\n"
      "that target the bottleneck the profile shows", .set = moe_opt_flag,
      .field = offsetof(struct run_args, all) },
    { "poll", required_argument, 'p', "SECONDS",
      "how often to ask squeue about the jobs (default %d)", .set = moe_opt_int,
      .field = offsetof(struct run_args, poll), .min = 1, .max = 3600 },
    { .name = NULL },
};

static void run_help_values(FILE *out, const char *format)
{
    moe_cli_printf(out, format, RUN_TIMEOUT_DEFAULT, RUN_POLL_DEFAULT);
}

static const struct moe_cli run_cli = {
    .usage = "usage: moeflow run [--dry-run] [--until STAGE] [--timeout SECONDS] [--all] STUDY_DIR\n"
             "\n"
             "Drives a study directory written by moeflow gen through contract, fit, scale,\n"
             "profile, retune and validate on Slurm: submits each stage's script as gen wrote\n"
             "it, waits for its jobs, checks every candidate's exit status, reports, and stops\n"
             "at a stage that failed, naming its failed jobs and their logs.  After each stage\n"
             "it decides from what the stage measured and rebuilds the later stages from it:\n"
             "fit -> the least recompute that fits, scale -> the fastest measured layout (and,\n"
             "when the step model was wrong, a second round), profile -> the retune axes that\n"
             "target its bottleneck, retune -> the winners validate runs beside the written\n"
             "baseline.  Each decision is sealed in STUDY_DIR/decisions/.  Its state is\n"
             "STUDY_DIR/run-state.json: run it again to resume; a finished stage is never\n"
             "submitted again, and jobs already submitted are waited for, not resubmitted.\n",
    .opts = run_opts,
    .column = 20,
    .tail = "\nexample: moeflow run tiny-study\n",
    .values = run_help_values,
};

/* "1h02m05s", "3m20s", "12s" */
static const char *elapsed(time_t since, char *buf, size_t len)
{
    long s = (long)(time(NULL) - since);

    if (s >= 3600)
        snprintf(buf, len, "%ldh%02ldm%02lds", s / 3600, s / 60 % 60, s % 60);
    else if (s >= 60)
        snprintf(buf, len, "%ldm%02lds", s / 60, s % 60);
    else
        snprintf(buf, len, "%lds", s);
    return buf;
}

/* The candidates the chunks read so far cover: gen writes them back to
 * back from index 0. */
static size_t covered(const struct run_stage_plan *p)
{
    return p->n_chunks ? (size_t)p->chunks[p->n_chunks - 1].offset +
                             (size_t)p->chunks[p->n_chunks - 1].count
                       : 0;
}

/* Chunk k of a manifest, checked against the stage's own candidates: it
 * starts where the one before it ended, its indices name candidates of
 * its own, and none lies past the stage's last.  A manifest is data: an
 * edited or damaged one must not index past the candidates (D09). */
static int chunk_read(const struct run_stage_plan *p, const json_t *k, const char *arr,
                      int *idx, struct run_chunk *r)
{
    const json_t *off = json_object_get(k, "offset"), *cnt = json_object_get(k, "count");
    int n_idx = run_array_indices(arr, idx, RUN_MAX_INDICES);

    if (!json_is_integer(off) || !json_is_integer(cnt) ||
        json_integer_value(off) != (json_int_t)covered(p) || json_integer_value(cnt) < 1 ||
        json_integer_value(cnt) > RUN_MAX_INDICES ||
        json_integer_value(off) + json_integer_value(cnt) > (json_int_t)p->ms->n || n_idx < 1)
        return -1;
    r->offset = (int)json_integer_value(off);
    r->count = (int)json_integer_value(cnt);
    for (int x = 0; x < n_idx; x++)
        if (idx[x] < 0 || idx[x] >= r->count)
            return -1;
    snprintf(r->array, sizeof(r->array), "%s", arr);
    return 0;
}

/* The stage's script and chunks from manifest.json.  0: it runs
 * something; 1: nothing to run; -1 with err. */
static int stage_plan(const struct run_ctx *c, enum moe_stage st, struct run_stage_plan *p,
                      struct moe_error *err)
{
    const json_t *e = moe_manifest_entry(c->m.json, st), *ch, *k;
    size_t i;

    memset(p, 0, sizeof(*p));
    p->stage = st;
    p->name = moe_stage_name(st);
    p->ms = moe_manifest_find(&c->m, st);
    p->script = json_string_value(json_object_get(e, "script"));
    p->array = json_is_true(json_object_get(e, "array"));
    if (!p->ms || !p->ms->n || !p->script || !p->script[0])
        return 1;
    if (strchr(p->script, '/') || p->script[0] == '.' || p->script[0] == '-') {
        moe_error_at(err, c->m.path, 0, 0, "stage %s: script '%s' is not a file name that moeflow "
                     "gen writes", p->name, p->script);
        return -1;
    }
    ch = json_object_get(e, "chunks");
    json_array_foreach(ch, i, k) {
        struct run_chunk *r = &p->chunks[p->n_chunks];
        const char *arr = json_string_value(json_object_get(k, "array"));
        int idx[RUN_MAX_INDICES];

        if (p->n_chunks == RUN_MAX_CHUNKS || !arr || strlen(arr) >= sizeof(r->array)) {
            moe_error_at(err, c->m.path, 0, 0, "stage %s: chunk %zu is not one moeflow gen "
                         "writes", p->name, i);
            return -1;
        }
        if (chunk_read(p, k, arr, idx, r) < 0) {
            moe_error_at(err, c->m.path, 0, 0, "stage %s: chunk %zu (offset %" JSON_INTEGER_FORMAT
                         ", count %" JSON_INTEGER_FORMAT ", array '%s') does not lie within its "
                         "%zu candidates where the chunk before it ended: the manifest "
                         "disagrees with itself", p->name, i,
                         json_integer_value(json_object_get(k, "offset")),
                         json_integer_value(json_object_get(k, "count")), arr, p->ms->n);
            return -1;
        }
        p->n_chunks++;
    }
    if (!p->n_chunks || covered(p) != p->ms->n) {
        moe_error_at(err, c->m.path, 0, 0, "stage %s: its chunks cover %zu of its %zu "
                     "candidates: the manifest disagrees with itself", p->name, covered(p),
                     p->ms->n);
        return -1;
    }
    return 0;
}

int run_save(struct run_ctx *c)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (run_state_save(c->dir, c->state, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    return MOE_EXIT_OK;
}

/* The sbatch command line of one submission: argv strings in bufs.  -1
 * when the submission (from run-state.json, which is data) is not one
 * make_plan writes: an array value that does not fit, a negative offset. */
static int sbatch_argv(const struct run_stage_plan *p, const json_t *sub, char *argv[8],
                       char bufs[3][96])
{
    const char *arr = json_string_value(json_object_get(sub, "array"));
    json_int_t off = json_integer_value(json_object_get(sub, "offset"));
    int n = 0;

    if (off < 0 || off > INT_MAX || (arr && strlen(arr) > 80) || strlen(p->script) >= 96)
        return -1;
    argv[n++] = "sbatch";
    argv[n++] = "--parsable";
    if (arr) {
        snprintf(bufs[0], 96, "--array=%s", arr);
        argv[n++] = bufs[0];
    }
    if (off > 0) {
        snprintf(bufs[1], 96, "--export=ALL,MOEFLOW_INDEX_OFFSET=%d", (int)off);
        argv[n++] = bufs[1];
    }
    snprintf(bufs[2], 96, "%s", p->script);
    argv[n++] = bufs[2];
    argv[n] = NULL;
    return 0;
}

static void print_argv(const char *prefix, char *const argv[])
{
    printf("%s", prefix);
    for (int i = 0; argv[i]; i++)
        printf("%s%s", i ? " " : "", argv[i]);
    putchar('\n');
}

/* Whether a fit candidate's log ends in CUDA's out-of-memory error: a fit
 * rung that does not fit has given the answer it exists to give (issue
 * 37), which the fit report reads; it is no failure of the stage. */
static bool fit_ran_out_of_memory(const struct run_ctx *c, const struct run_stage_plan *p,
                                  const char *id)
{
    char path[4300];
    struct moe_log log;
    struct moe_error err;
    bool oom;

    if (p->stage != MOE_STAGE_FIT)
        return false;
    snprintf(path, sizeof(path), "%s/results/%s/%s.log", c->dir, p->name, id);
    moe_log_init(&log);
    moe_error_clear(&err);
    oom = moe_log_read_file(&log, path, &err) == 0 &&
          moe_log_out_of_memory(log.last_error);
    moe_log_free(&log);
    return oom;
}

/* The candidate ids of the stage whose last exit status is not 0 (or
 * missing), into ids; returns how many (0 when every one exited 0).  A
 * fit rung that ran out of memory counts as done, its id into oom. */
static size_t failed_candidates(const struct run_ctx *c, const struct run_stage_plan *p,
                                json_t *ids, json_t *oom, size_t *done)
{
    size_t bad = 0;

    *done = 0;
    for (size_t k = 0; k < p->ms->n; k++) {
        char path[4300], *text;
        struct moe_error err;
        long rc = -1;

        snprintf(path, sizeof(path), "%s/results/%s/%s.rc", c->dir, p->name, p->ms->cands[k].id);
        moe_error_clear(&err);
        if (access(path, F_OK) == 0 && (text = moe_read_file(path, "exit status", NULL, &err))) {
            char *end;

            rc = strtol(text, &end, 10);
            if (end == text || (*end && *end != '\n'))
                rc = -1;
            free(text);
        }
        if (rc == 0) {
            (*done)++;
        } else if (rc > 0 && fit_ran_out_of_memory(c, p, p->ms->cands[k].id)) {
            (*done)++;
            if (oom)
                json_array_append_new(oom, json_string(p->ms->cands[k].id));
        } else if (ids) {
            json_array_append_new(ids, json_string(p->ms->cands[k].id));
            bad++;
        } else {
            bad += access(path, F_OK) == 0;
        }
    }
    return bad;
}

/* The submissions of a new stage (every chunk), or of a failed one (the
 * failed candidates' array indices, chunk by chunk, their old exit status
 * removed first so that a job that dies early is not read as its
 * predecessor). */
static json_t *make_plan(const struct run_ctx *c, const struct run_stage_plan *p,
                         const json_t *failed)
{
    json_t *plan = json_array();

    for (size_t i = 0; i < p->n_chunks; i++) {
        const struct run_chunk *k = &p->chunks[i];
        char spec[RUN_MAX_INDICES * 8] = "", *pct = strchr(k->array, '%');
        size_t len = 0;

        for (int j = 0; failed && j < k->count; j++) {
            const char *id = p->ms->cands[k->offset + j].id;
            size_t f;
            json_t *v;
            char rc[4300];

            json_array_foreach(failed, f, v) {
                if (strcmp(json_string_value(v), id) != 0)
                    continue;
                len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s%d", len ? "," : "", j);
                snprintf(rc, sizeof(rc), "%s/results/%s/%s.rc", c->dir, p->name, id);
                unlink(rc);
            }
        }
        if (failed && !len)
            continue;
        if (failed && pct)
            snprintf(spec + len, sizeof(spec) - len, "%s", pct);
        json_array_append_new(plan, json_pack("{s:s?, s:i}", "array",
                                              !p->array ? NULL : failed ? spec : k->array,
                                              "offset", k->offset));
    }
    return plan;
}

/* sbatch is given RUN_SBATCH_GRACE seconds after a Ctrl-C or the
 * deadline to print the id of a job it may already have submitted. */
#define RUN_SBATCH_GRACE 10

static struct run_limits sbatch_limits(const struct run_ctx *c)
{
    return (struct run_limits){ .deadline = c->deadline, .stop = &run_interrupted,
                                .grace = RUN_SBATCH_GRACE };
}

/* An sbatch moeflow run ended: the job may be in Slurm without its id in
 * the state, so a later run would submit it again; say how to look. */
static int sbatch_stopped(const struct run_ctx *c, const struct run_stage_plan *p,
                          const struct run_result *r)
{
    fprintf(stderr, "moeflow run: %s: sbatch did not finish %s and was stopped after %d s more "
            "(exit %d); if it had submitted its job, squeue --me shows it: scancel it before "
            "running moeflow run again on %s, which submits that chunk again\n", p->name,
            r->stopped == RUN_STOPPED_SIGNAL ? "before the interrupt" : "within --timeout",
            RUN_SBATCH_GRACE, r->status, c->shown);
    return MOE_EXIT_STOPPED;
}

/* sbatch exited non-zero, or printed no job id (--parsable prints
 * "ID[;CLUSTER]" alone): what it said is shown, made safe for a terminal. */
static int sbatch_failed(const struct run_stage_plan *p, const struct run_result *r,
                         const char *id)
{
    char shown_id[256], out[1024], err[2048], said[sizeof(r->out)];
    size_t n = strlen(r->out);

    while (n && r->out[n - 1] == '\n')
        n--;
    snprintf(said, sizeof(said), "%.*s", (int)n, r->out);
    if (r->status == 0)
        fprintf(stderr, "moeflow run: %s: sbatch exited 0 but printed no job id ('%s' is not "
                "one; sbatch --parsable prints ID[;CLUSTER]); nothing after it was submitted; "
                "its output:\n%s\n%s", p->name, moe_text_visible(id, shown_id, sizeof(shown_id)),
                moe_text_visible(said, out, sizeof(out)),
                moe_text_visible(r->err, err, sizeof(err)));
    else
        fprintf(stderr, "moeflow run: %s: sbatch failed (exit %d); nothing after it was "
                "submitted:\n%s", p->name, r->status, moe_text_visible(r->err, err, sizeof(err)));
    return MOE_EXIT_SYSTEM;
}

/* Submits what the stage's plan still holds, recording each job id in
 * the state before the next sbatch. */
static int submit_plan(struct run_ctx *c, const struct run_stage_plan *p, json_t *js)
{
    json_t *plan = json_object_get(js, "plan"), *jobs = json_object_get(js, "jobs");

    if (!json_is_array(jobs)) {
        jobs = json_array();
        json_object_set_new(js, "jobs", jobs);
    }
    while (json_array_size(plan)) {
        json_t *sub = json_array_get(plan, 0);
        char *argv[8], bufs[3][96], id[64];
        struct run_limits lim = sbatch_limits(c);
        struct run_result r;
        int rc;

        if (sbatch_argv(p, sub, argv, bufs) < 0)
            return moe_cli_error(MOE_EXIT_INVALID_INPUT, "moeflow run: %s/%s: stage %s: a "
                                 "planned submission is not one moeflow run writes\n", c->shown,
                                 RUN_STATE_FILE, p->name);
        if (run_program(c->dir, argv, 1, &lim, &r) < 0)
            return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: %s: cannot run sbatch: %s\n",
                                 p->name, strerror(errno));
        if (r.stopped)
            return sbatch_stopped(c, p, &r);
        snprintf(id, sizeof(id), "%.*s", (int)strcspn(r.out, ";\n"), r.out);
        if (r.status != 0 || !id[0] || strspn(id, "0123456789") != strlen(id))
            return sbatch_failed(p, &r, id);
        json_object_set_new(sub, "job", json_string(id));
        json_array_append(jobs, sub);
        json_array_remove(plan, 0);
        if ((rc = run_save(c)) != MOE_EXIT_OK)
            return rc;
        printf("%s: submitted job %s: ", p->name, id);
        print_argv("", argv);
    }
    json_object_set_new(js, "state", json_string("submitted"));
    return run_save(c);
}

/* States in which a job is still in Slurm's hands. */
static bool active(const char *state)
{
    static const char *const live[] = { "PENDING", "CONFIGURING", "RUNNING", "COMPLETING",
                                        "SUSPENDED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
                                        "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED",
                                        "RESV_DEL_HOLD", NULL };

    for (int i = 0; live[i]; i++)
        if (strcmp(state, live[i]) == 0)
            return true;
    return false;
}

/* Counts the job's tasks still pending and running; 0 when it has left
 * the queue, 1 while it is in it, -1 when squeue could not say. */
static int job_status(const struct run_ctx *c, const char *job, int *pending, int *running)
{
    char *argv[] = { "squeue", "-h", "-r", "-o", "%T", "-j", (char *)job, NULL };
    struct run_limits lim = { .deadline = c->deadline, .stop = &run_interrupted };
    struct run_result r;
    int live = 0;

    if (!job || run_program(NULL, argv, 1, &lim, &r) < 0 || r.stopped)
        return -1;
    if (r.status != 0)
        return strstr(r.err, "Invalid job id") ? 0 : -1;
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
        if (!active(line))
            continue;
        live = 1;
        if (strcmp(line, "PENDING") == 0)
            (*pending)++;
        else
            (*running)++;
    }
    return live;
}

/* Sleeps s seconds, or less when interrupted. */
static void nap(int s)
{
    for (int i = 0; i < s * 5 && !run_interrupted; i++) {
        struct timespec t = { 0, 200000000 };

        nanosleep(&t, NULL);
    }
}

/* Waits until every job of the stage has left the queue: 0; 1 when
 * interrupted; 2 after the timeout.  A squeue that hangs is ended at
 * either (run_program), so neither waits for the controller. */
static int wait_stage(struct run_ctx *c, const struct run_stage_plan *p, json_t *js)
{
    const json_t *jobs = json_object_get(js, "jobs");
    time_t start = time(NULL), last_print = 0;

    char last[256] = "", t1[32], t2[32];

    for (;;) {
        int pending = 0, running = 0, live = 0, unknown = 0;
        size_t done, i, failed = failed_candidates(c, p, NULL, NULL, &done);
        const json_t *j;
        char line[256];

        json_array_foreach(jobs, i, j) {
            int s = job_status(c, json_string_value(json_object_get(j, "job")), &pending,
                               &running);

            live |= s != 0;
            unknown |= s < 0;
        }
        snprintf(line, sizeof(line), "%s: %zu/%zu done, %d running, %d pending, %zu failed%s",
                 p->name, done, p->ms->n, running, pending, failed,
                 unknown ? " (squeue did not answer)" : "");
        if (strcmp(line, last) != 0 || time(NULL) - last_print >= 60) {
            printf("[%s] %s (stage %s)\n", elapsed(c->t0, t1, sizeof(t1)), line,
                   elapsed(start, t2, sizeof(t2)));
            fflush(stdout);
            snprintf(last, sizeof(last), "%s", line);
            last_print = time(NULL);
        }
        if (run_interrupted)
            return 1;
        if (!live)
            return 0;
        if (time(NULL) >= c->deadline)
            return 2;
        nap(c->a->poll);
        if (run_interrupted)
            return 1;
    }
}

/* The job (and array task) that last ran candidate k: "123_4" or "123". */
static void last_job_of(const struct run_stage_plan *p, const json_t *js, size_t k, char *out,
                        size_t len, bool *task)
{
    const json_t *jobs = json_object_get(js, "jobs"), *j;
    size_t i;

    out[0] = '\0';
    *task = false;
    json_array_foreach(jobs, i, j) {
        const char *arr = json_string_value(json_object_get(j, "array"));
        const char *job = json_string_value(json_object_get(j, "job"));
        int off = (int)json_integer_value(json_object_get(j, "offset"));
        int idx[RUN_MAX_INDICES], n = arr ? run_array_indices(arr, idx, RUN_MAX_INDICES) : 0;

        if (!arr && k == 0)
            snprintf(out, len, "%s", job);
        for (int x = 0; x < n; x++)
            if ((size_t)(off + idx[x]) == k) {
                snprintf(out, len, "%s_%d", job, idx[x]);
                *task = true;
            }
    }
    (void)p;
}

/* Names each failed candidate, its job and its logs. */
static void print_failed(const struct run_ctx *c, const struct run_stage_plan *p,
                         const json_t *js, const json_t *failed)
{
    printf("%s: FAILED: %zu of %zu candidates did not exit 0\n", p->name,
           json_array_size(failed), p->ms->n);
    for (size_t k = 0; k < p->ms->n; k++) {
        const struct moe_candidate *cand = &p->ms->cands[k];
        char job[96], rcpath[4300], *rc = NULL, *val, shown[512], shown_rc[256], shown_var[256];
        char *text;
        struct moe_error err;
        size_t f;
        const json_t *v;
        bool listed = false, task;

        json_array_foreach(failed, f, v)
            listed |= strcmp(json_string_value(v), cand->id) == 0;
        if (!listed)
            continue;
        last_job_of(p, js, k, job, sizeof(job), &task);
        snprintf(rcpath, sizeof(rcpath), "%s/results/%s/%s.rc", c->dir, p->name, cand->id);
        moe_error_clear(&err);
        if (access(rcpath, F_OK) == 0 && (text = moe_read_file(rcpath, "exit status", NULL, &err)))
            rc = text;
        if (rc)
            rc[strcspn(rc, "\n")] = '\0';
        val = moe_value_text(cand->value);
        printf("  %s=%s (index %zu, job %s): %s%s\n    log: %s/logs/%s-%s.out\n"
               "    run: %s/results/%s/%s.log\n",
               moe_text_visible(cand->variable ? cand->variable : "?", shown_var,
                                sizeof(shown_var)),
               moe_text_visible(val ? val : "?", shown, sizeof(shown)), k, job,
               rc ? "exited " : "no exit status (the job ended before its candidate did)",
               rc ? moe_text_visible(rc, shown_rc, sizeof(shown_rc)) : "", c->shown, p->name,
               job[0] ? job : "?", c->shown, p->name, cand->id);
        free(val);
        free(rc);
    }
}

/* moeflow's own subcommand, as a child: its output is moeflow run's. */
int run_self(const char *what, char *argv[])
{
    struct run_limits lim = { .stop = &run_interrupted };
    struct run_result r;

    argv[0] = (char *)run_self_path();
    printf("--- moeflow");
    for (int i = 1; argv[i]; i++) {
        char shown[4096];

        printf(" %s", moe_text_visible(argv[i], shown, sizeof(shown)));
    }
    putchar('\n');
    if (!argv[0][0] || run_program(NULL, argv, 0, &lim, &r) < 0) {
        fprintf(stderr, "moeflow run: cannot run moeflow %s: %s\n", what, strerror(errno));
        return -1;
    }
    return r.status;
}

/* After a stage: its report (saved under results/STAGE/report) and the
 * diagnosis of its reference run. */
static void report_stage(const struct run_ctx *c, const struct run_stage_plan *p)
{
    char outdir[4300];
    int rc;

    if (p->stage == MOE_STAGE_CONTRACT || p->stage == MOE_STAGE_PROFILE)
        return;
    snprintf(outdir, sizeof(outdir), "%s/results/%s/report", c->dir, p->name);
    if (p->stage == MOE_STAGE_FIT) {
        char *argv[] = { NULL, "report", (char *)c->dir, "--stage", "fit", NULL };

        rc = run_self("report", argv);
    } else if (p->stage == MOE_STAGE_RETUNE) {
        rc = 0; /* winners() reports retune, recording its winners */
    } else {
        char *argv[] = { NULL, "report", (char *)c->dir, "--stage", (char *)p->name, "-o",
                         outdir, NULL };

        rc = run_self("report", argv);
    }
    if (rc != 0)
        fprintf(stderr, "moeflow run: warning: moeflow report of %s exited %d\n", p->name, rc);
    if (p->stage != MOE_STAGE_FIT) {
        char *argv[] = { NULL, "diagnose", (char *)c->dir, "--stage", (char *)p->name, NULL };

        if ((rc = run_self("diagnose", argv)) != 0)
            fprintf(stderr, "moeflow run: warning: moeflow diagnose of %s exited %d\n", p->name,
                    rc);
    }
}

/* "generated": validate was rebuilt from the winners; "none": retune had
 * no win, and validate runs the baseline as gen wrote it. */
static bool winners_settled(const json_t *state)
{
    const char *w = json_string_value(json_object_get(state, "winners"));

    return w && (strcmp(w, "generated") == 0 || strcmp(w, "none") == 0);
}

/* How many winners the study has recorded; -1 with err when they do not load. */
static int recorded_winners(const char *dir, struct moe_error *err)
{
    json_t *w = moe_contract_load_winners(dir, err);
    int n = w ? (int)json_array_size(w) : -1;

    json_decref(w);
    return n;
}

/* Whether validate runs the study's written baseline beside the one the
 * decisions adopted (study/stagegen.h). */
static bool written_beside(const struct moe_manifest *m)
{
    const struct moe_manifest_stage *v = moe_manifest_find(m, MOE_STAGE_VALIDATE);

    for (size_t i = 0; v && i < v->n; i++)
        if (v->cands[i].variable && strcmp(v->cands[i].variable, "written_baseline") == 0)
            return true;
    return false;
}

/* After retune: the winners by the statistical rule, and validate rebuilt
 * from them (once: a later run must not rebuild validate under its jobs). */
static int winners(struct run_ctx *c)
{
    char yaml[4300];
    char outdir[4300];
    char *rec[] = { NULL, "report", c->dir, "--stage", "retune", "-o", outdir,
                    "--record-winners", NULL };
    char *gen[] = { NULL, "gen", yaml, "--stage", "validate", "--winners", c->dir, NULL };
    struct moe_error err;
    int rc;

    if (winners_settled(c->state))
        return MOE_EXIT_OK;
    snprintf(yaml, sizeof(yaml), "%s/study.yaml", c->dir);
    snprintf(outdir, sizeof(outdir), "%s/results/retune/report", c->dir);
    if ((rc = run_self("report", rec)) == 0) {
        int n;

        moe_error_clear(&err);
        if ((n = recorded_winners(c->dir, &err)) < 0)
            return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
        if (n == 0) {
            /* nothing beat the baseline: validating it is still the answer */
            printf("retune: no winner; validate runs the baseline %s\n",
                   written_beside(&c->m) ? "the decisions adopted, beside the study's written one"
                                         : "as moeflow gen wrote it");
            json_object_set_new(c->state, "winners", json_string("none"));
            return run_save(c);
        }
    }
    if (rc != 0 || (rc = run_self("gen", gen)) != 0)
        return moe_cli_error(MOE_EXIT_STAGE_FAILED, "moeflow run: retune: the winners were not "
                             "recorded or validate not rebuilt from them (exit %d); validate "
                             "was not submitted\n", rc);
    json_object_set_new(c->state, "winners", json_string("generated"));
    if ((rc = run_save(c)) != MOE_EXIT_OK)
        return rc;
    moe_manifest_free(&c->m);
    moe_error_clear(&err);
    if (moe_manifest_load(c->dir, &c->m, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    return MOE_EXIT_OK;
}

static void print_dry(const struct run_ctx *c, const struct run_stage_plan *p, const json_t *js)
{
    const char *s = run_state_of(js);
    json_t *failed = strcmp(s, "failed") == 0 ? json_object_get(js, "failed") : NULL;
    json_t *plan = strcmp(s, "submitting") == 0 ? json_incref(json_object_get(js, "plan"))
                                                : make_plan(c, p, NULL);
    size_t i;
    json_t *sub;

    if (strcmp(s, "submitted") == 0) {
        printf("%s: would wait for its jobs already submitted, then check %zu candidates\n",
               p->name, p->ms->n);
        json_decref(plan);
        return;
    }
    if (p->stage == MOE_STAGE_VALIDATE &&
        !winners_settled(c->state))
        printf("validate: as rebuilt from the winners after retune (the baseline if none); "
               "as it is now (%zu candidates):\n", p->ms->n);
    if (failed)
        printf("%s: failed earlier; would submit again its %zu failed candidates (all %zu "
               "indices shown)\n", p->name, json_array_size(failed), p->ms->n);
    json_array_foreach(plan, i, sub) {
        char *argv[8], bufs[3][96];

        if (sbatch_argv(p, sub, argv, bufs) < 0) {
            printf("%s: a planned submission in %s/%s is not one moeflow run writes\n",
                   p->name, c->shown, RUN_STATE_FILE);
            continue;
        }
        printf("%s: would submit in %s: ", p->name, c->shown);
        print_argv("", argv);
    }
    json_decref(plan);
}

/* Submits (or resumes) one stage and waits for it. */
static int run_stage(struct run_ctx *c, const struct run_stage_plan *p)
{
    json_t *js = run_state_stage(c->state, p->name), *failed, *oom;
    char s[16]; /* a copy: the state string is replaced below (D25) */
    int rc, w;
    char t[32];

    snprintf(s, sizeof(s), "%s", run_state_of(js));
    if (strcmp(s, "done") == 0) {
        printf("%s: done in an earlier run (%zu candidates); not submitted again\n", p->name,
               p->ms->n);
        return MOE_EXIT_OK;
    }
    if (!s[0] || strcmp(s, "failed") == 0) {
        json_object_set_new(js, "plan", make_plan(c, p, s[0] ? json_object_get(js, "failed")
                                                              : NULL));
        json_object_set_new(js, "state", json_string("submitting"));
        json_object_set_new(js, "started", json_integer((json_int_t)time(NULL)));
        json_object_del(js, "failed");
        if ((rc = run_save(c)) != MOE_EXIT_OK)
            return rc;
        printf("%s: %zu candidates%s\n", p->name, p->ms->n, s[0] ? "; again, the failed ones" : "");
    } else {
        printf("%s: resuming: waiting for the jobs an earlier run submitted\n", p->name);
    }
    c->deadline = time(NULL) + c->a->timeout;
    if ((rc = submit_plan(c, p, js)) != MOE_EXIT_OK)
        return rc;
    w = wait_stage(c, p, js);
    if (w == 1 || w == 2) {
        fprintf(stderr, "moeflow run: %s: %s; its jobs stay in Slurm and in %s/%s: run moeflow "
                "run again to wait for them (scancel them to give up)\n", p->name,
                w == 1 ? "interrupted" : "timed out", c->shown, RUN_STATE_FILE);
        return MOE_EXIT_STOPPED;
    }
    failed = json_array();
    oom = json_array();
    json_object_set_new(js, "finished", json_integer((json_int_t)time(NULL)));
    json_object_set_new(js, "out_of_memory", oom);
    if (failed_candidates(c, p, failed, oom, &(size_t){ 0 })) {
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
               elapsed(c->t0, t, sizeof(t)), p->name, p->ms->n - json_array_size(oom),
               json_array_size(oom));
    else
        printf("[%s] %s: done, all %zu candidates exited 0\n", elapsed(c->t0, t, sizeof(t)),
               p->name, p->ms->n);
    report_stage(c, p);
    return MOE_EXIT_OK;
}

/* One stage: nothing, a dry-run line, or its run and what follows it. */
static int one_stage(struct run_ctx *c, enum moe_stage st)
{
    struct run_stage_plan *p = malloc(sizeof(*p));
    struct moe_error err;
    int r, rc = MOE_EXIT_OK;

    if (!p)
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: out of memory\n");
    moe_error_clear(&err);
    r = stage_plan(c, st, p, &err);
    if (r < 0)
        rc = moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    else if (r == 1)
        printf("%s: nothing to run\n", moe_stage_name(st));
    else if (c->a->dry)
        print_dry(c, p, run_state_stage(c->state, p->name));
    else
        rc = run_stage(c, p);
    if (rc == MOE_EXIT_OK && st == MOE_STAGE_RETUNE && r == 0) {
        if (c->a->dry)
            printf("retune: would then record the winners (moeflow report --record-winners) and "
                   "rebuild validate from them (moeflow gen --winners)\n");
        else
            rc = winners(c);
    }
    if (rc == MOE_EXIT_OK && r == 0 && c->a->dry)
        run_decide_dry(c, st);
    else if (rc == MOE_EXIT_OK && r == 0)
        rc = run_decide(c, st);
    free(p);
    return rc;
}

/* One moeflow run per study at a time: two would submit every stage twice. */
static int lock_study(const char *dir, const char *shown)
{
    char path[4200];
    int fd;

    snprintf(path, sizeof(path), "%s/run.lock", dir);
    fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: %s/run.lock: cannot open: %s\n",
                             shown, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) < 0)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow run: %s: another moeflow run is driving "
                             "this study\n", shown);
    return MOE_EXIT_OK; /* held until exit */
}

/* A baseline that fits under no recompute or offload is refused before
 * a stage is submitted: every stage after fit runs it (issue 37).  Once
 * the fit stage has a run it trusts, its measured/predicted peak scales
 * the memory the model may use, as gen --fit-memory-from does. */
static int baseline_fits(const struct run_ctx *c)
{
    char yaml[4300];
    struct moe_study s;
    struct moe_fit_report r;
    const struct moe_fit_row *from;
    struct moe_error err;
    int rc;

    snprintf(yaml, sizeof(yaml), "%s/study.yaml", c->dir);
    moe_error_clear(&err);
    if (moe_study_load(&s, yaml, &err) < 0) {
        moe_study_free(&s);
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    }
    if (moe_fit_report_load(c->dir, &r, &err) == 0) {
        double ratio = moe_fit_report_ratio(&r, &from);

        if (ratio > 0)
            s.fit_memory_ratio = ratio;
        moe_fit_report_free(&r);
    }
    moe_error_clear(&err);
    rc = moe_study_baseline_fit(&s, &err);
    moe_study_free(&s);
    if (rc != 0)
        return moe_cli_fail(&err, rc > 0 ? MOE_EXIT_INFEASIBLE : MOE_EXIT_INVALID_INPUT);
    return MOE_EXIT_OK;
}

static int drive(struct run_ctx *c)
{
    enum moe_stage until = c->a->until ? moe_stage_parse(c->a->until) : MOE_STAGE_VALIDATE;
    char t[32];
    int rc = MOE_EXIT_OK;

    for (int st = MOE_STAGE_CONTRACT; st <= until && rc == MOE_EXIT_OK; st++) {
        rc = one_stage(c, (enum moe_stage)st);
        if (rc == RUN_AGAIN) { /* another scale round */
            rc = MOE_EXIT_OK;
            st--;
        }
        if (rc == MOE_EXIT_OK && run_interrupted && !c->a->dry) {
            fprintf(stderr, "moeflow run: interrupted after %s; run moeflow run again to go on\n",
                    moe_stage_name((enum moe_stage)st));
            rc = MOE_EXIT_STOPPED;
        }
    }
    if (rc == MOE_EXIT_OK && !c->a->dry)
        printf("[%s] study %s: %s\n", elapsed(c->t0, t, sizeof(t)), c->shown,
               c->a->until ? "stopped after --until stage" : "every stage done");
    return rc;
}

static void catch_signals(void)
{
    struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: waits wake up */

    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int cmd_run(int argc, char **argv)
{
    struct run_args a = { .timeout = RUN_TIMEOUT_DEFAULT, .poll = RUN_POLL_DEFAULT };
    struct run_ctx c = { .a = &a, .t0 = time(NULL) };
    struct moe_error err;
    int first, rc = moe_cli_parse(&run_cli, argc, argv, &a, &first);

    if (rc != MOE_CLI_RUN)
        return rc;
    if (argc - first != 1)
        return moe_cli_misuse(&run_cli);
    c.shown = moe_text_visible(argv[first], c.shown_buf, sizeof(c.shown_buf));
    if (!moe_study_is_dir(argv[first]))
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow run: '%s': not a study directory written "
                             "by moeflow gen (no manifest.json)\n", c.shown);
    if (!realpath(argv[first], c.dir))
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: %s: %s\n", c.shown, strerror(errno));
    c.shown = moe_text_visible(c.dir, c.shown_buf, sizeof(c.shown_buf));
    if (!a.dry && geteuid() == 0)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow run: refusing to run as root: the jobs "
                             "freeze contracts and record winners as the job user\n");
    moe_error_clear(&err);
    if (moe_manifest_load(c.dir, &c.m, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    if (!a.dry && (rc = lock_study(c.dir, c.shown)) != MOE_EXIT_OK)
        goto out;
    if (!(c.state = run_state_load(c.dir, c.m.study_hash, &err))) {
        rc = moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
        goto out;
    }
    catch_signals();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if ((rc = baseline_fits(&c)) == MOE_EXIT_OK)
        rc = drive(&c);
out:
    json_decref(c.state);
    moe_manifest_free(&c.m);
    return rc;
}
