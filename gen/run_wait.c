/* moeflow run's wait for a stage, kept apart from submitting and judging:
 * the only place that asks squeue, so that a controller that does not
 * answer is met in one place, by the stage's deadline and the signal flag
 * (run_program ends a squeue that hangs at either). */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "run_ctx.h"
#include "run_exec.h"
#include "run_outcome.h"
#include "run_wait.h"

const char *run_elapsed(time_t since, char *buf, size_t len)
{
    long s = (long)(time(NULL) - since);

    if (s >= 3600)
        /* a message: an elapsed time for the progress line */
        snprintf(buf, len, "%ldh%02ldm%02lds", s / 3600, s / 60 % 60, s % 60);
    else if (s >= 60)
        /* a message: as above */
        snprintf(buf, len, "%ldm%02lds", s / 60, s % 60);
    else
        /* a message: as above */
        snprintf(buf, len, "%lds", s);
    return buf;
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

/* Asks squeue about every job: whether any is still in the queue, with
 * its tasks counted; *unknown when squeue did not say for one. */
static bool any_live(const struct run_ctx *c, const json_t *jobs, int *pending, int *running,
                     bool *unknown)
{
    bool live = false;
    const json_t *j;
    size_t i;

    json_array_foreach(jobs, i, j) {
        int s = job_status(c, json_string_value(json_object_get(j, "job")), pending, running);

        live |= s != 0;
        *unknown |= s < 0;
    }
    return live;
}

enum run_waited run_wait_stage(struct run_ctx *c, const struct run_stage_plan *p,
                               const json_t *js, enum run_log_said *said)
{
    const json_t *jobs = json_object_get(js, "jobs");
    time_t start = time(NULL), last_print = 0;
    char last[256] = "", t1[32], t2[32];

    for (;;) {
        size_t done, failed = run_failed_candidates(c, p, said, NULL, NULL, NULL, &done);
        int pending = 0, running = 0;
        bool unknown = false, live = any_live(c, jobs, &pending, &running, &unknown);
        char line[256];

        /* a message: the progress line */
        snprintf(line, sizeof(line), "%s: %zu/%zu done, %d running, %d pending, %zu failed%s",
                 p->name, done, p->ms->n, running, pending, failed,
                 unknown ? " (squeue did not answer)" : "");
        if (strcmp(line, last) != 0 || time(NULL) - last_print >= 60) {
            printf("[%s] %s (stage %s)\n", run_elapsed(c->t0, t1, sizeof(t1)), line,
                   run_elapsed(start, t2, sizeof(t2)));
            fflush(stdout);
            /* fits: line and last are the same size */
            snprintf(last, sizeof(last), "%s", line);
            last_print = time(NULL);
        }
        if (run_interrupted)
            return RUN_WAIT_INTERRUPTED;
        if (!live)
            return RUN_WAITED;
        if (time(NULL) >= c->deadline)
            return RUN_WAIT_TIMED_OUT;
        nap(c->a->poll);
        if (run_interrupted)
            return RUN_WAIT_INTERRUPTED;
    }
}
