/* moeflow run's submissions, kept apart from waiting and judging: every
 * sbatch a stage makes goes through run_submit_plan, which writes each job
 * id into run-state.json before the next sbatch, so that an interrupted
 * run finishes its plan instead of submitting a chunk twice. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "run_ctx.h"
#include "run_exec.h"
#include "run_outcome.h"
#include "run_state.h"
#include "run_submit.h"
#include "core/text.h"
#include "core/study_dir.h"

/* sbatch is given RUN_SBATCH_GRACE seconds after a Ctrl-C or the
 * deadline to print the id of a job it may already have submitted. */
#define RUN_SBATCH_GRACE 10

/* The sbatch command line of one submission: argv strings in bufs.  -1
 * when the submission (from run-state.json, which is data) is not one
 * run_make_plan writes: an array value that does not fit, a negative
 * offset. */
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
        /* fits: arr is at most 80 bytes, checked above */
        snprintf(bufs[0], 96, "--array=%s", arr);
        argv[n++] = bufs[0];
    }
    if (off > 0) {
        /* fits: an int is at most 11 bytes */
        snprintf(bufs[1], 96, "--export=ALL," MOE_ENV_INDEX_OFFSET "=%d", (int)off);
        argv[n++] = bufs[1];
    }
    /* fits: the script's name is under 96 bytes, checked above */
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

json_t *run_make_plan(struct moe_jb *b, const struct run_stage_plan *p,
                      const json_t *failed)
{
    json_t *plan = json_array();

    for (size_t i = 0; i < p->n_chunks; i++) {
        const struct run_chunk *k = &p->chunks[i];
        /* fits: at most RUN_MAX_INDICES (k->count) indices of at most 4
         * digits and a comma each, then the throttle, part of k->array[48] */
        char spec[RUN_MAX_INDICES * 8] = "", *pct = strchr(k->array, '%');
        size_t len = 0;
        json_t *sub;

        for (int j = 0; failed && j < k->count; j++)
            if (run_listed(failed, p->ms->cands[k->offset + j].id))
                len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s%d", len ? "," : "", j);
        if (failed && !len)
            continue;
        if (failed && pct)
            /* fits: see spec */
            snprintf(spec + len, sizeof(spec) - len, "%s", pct);
        sub = json_object();
        moe_jb_str_opt(b, sub, "array", !p->array ? NULL : failed ? spec : k->array);
        moe_jb_int(b, sub, "offset", k->offset);
        moe_jb_append(b, plan, moe_jb_done(b, sub));
    }
    return moe_jb_done(b, plan);
}

void run_print_planned(const struct run_ctx *c, const struct run_stage_plan *p,
                       const json_t *plan)
{
    size_t i;
    const json_t *sub;

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
}

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

/* What sbatch said, a line at a time, each made safe for a terminal:
 * its own line breaks are kept, never shown as \x0a. */
static void print_lines(const char *text)
{
    char line[1024], shown[2048];

    while (*text) {
        size_t n = strcspn(text, "\n");

        /* a message: a longer line is cut on purpose */
        snprintf(line, sizeof(line), "%.*s", (int)n, text);
        fprintf(stderr, "  %s\n", moe_text_visible(line, shown, sizeof(shown)));
        text += n + (text[n] == '\n');
    }
}

/* sbatch refused the plugin's options: this cluster has no moeflow plugin,
 * which sbatch itself does not say. */
static void hint_plugin(const char *said)
{
    if (!strstr(said, "unrecognized option '--moe-") && !strstr(said, "unrecognized option \"--moe-"))
        return;
    fprintf(stderr, "moeflow run: sbatch does not know the --moe-* options of these scripts: this "
            "cluster does not load the moeflow SPANK plugin (spank_moeflow.so). Either ask its "
            "admin to install it (spank_moeflow(8)), or set cluster.plugin: none in the study "
            "and run moeflow gen again: its scripts check the measurement contract themselves "
            "(moeflow-study(5), PLUGIN)\n");
}

/* sbatch exited non-zero, or printed no job id (--parsable prints
 * "ID[;CLUSTER]" alone): what it said is shown, made safe for a terminal. */
static int sbatch_failed(const struct run_stage_plan *p, const struct run_result *r,
                         const char *id)
{
    char shown_id[256];

    if (r->status == 0) {
        fprintf(stderr, "moeflow run: %s: sbatch exited 0 but printed no job id ('%s' is not "
                "one; sbatch --parsable prints ID[;CLUSTER]); nothing after it was submitted; "
                "its output:\n", p->name, moe_text_visible(id, shown_id, sizeof(shown_id)));
        print_lines(r->out);
    } else {
        fprintf(stderr, "moeflow run: %s: sbatch failed (exit %d); nothing after it was "
                "submitted; it said:\n", p->name, r->status);
    }
    print_lines(r->err);
    hint_plugin(r->err);
    return MOE_EXIT_SYSTEM;
}

/* The state could not record a submission: said, with the stage's name. */
static int submit_unrecorded(struct moe_jb *b, const struct run_stage_plan *p,
                             struct moe_error *err)
{
    moe_jb_within(b, p->name);
    return moe_cli_fail(err, MOE_EXIT_SYSTEM);
}

int run_submit_plan(struct run_ctx *c, const struct run_stage_plan *p, json_t *js)
{
    json_t *plan = json_object_get(js, "plan"), *jobs = json_object_get(js, "jobs");
    struct moe_error err;
    struct moe_jb b;

    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    if (!json_is_array(jobs)) {
        if (moe_jb_set(&b, js, "jobs", json_array()) < 0)
            return submit_unrecorded(&b, p, &err);
        jobs = json_object_get(js, "jobs");
    }
    while (json_array_size(plan)) {
        json_t *sub = json_array_get(plan, 0);
        char *argv[8], bufs[3][96], id[64];
        struct run_limits lim = sbatch_limits(c);
        struct run_result r;
        int rc, n;

        if (sbatch_argv(p, sub, argv, bufs) < 0)
            return moe_cli_error(MOE_EXIT_INVALID_INPUT, "moeflow run: %s/%s: stage %s: a "
                                 "planned submission is not one moeflow run writes\n", c->shown,
                                 RUN_STATE_FILE, p->name);
        if (run_program(c->dir, argv, 1, &lim, &r) < 0)
            return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: %s: cannot run sbatch: %s\n",
                                 p->name, strerror(errno));
        if (r.stopped)
            return sbatch_stopped(c, p, &r);
        /* checked: an id as long as id is none sbatch prints */
        n = snprintf(id, sizeof(id), "%.*s", (int)strcspn(r.out, ";\n"), r.out);
        if (r.status != 0 || !id[0] || n >= (int)sizeof(id) ||
            strspn(id, "0123456789") != strlen(id))
            return sbatch_failed(p, &r, id);
        /* checked: the job must be in the state before the plan forgets it */
        if (moe_jb_str(&b, sub, "job", id) < 0 || json_array_append(jobs, sub) < 0)
            return submit_unrecorded(&b, p, &err);
        json_array_remove(plan, 0);
        if ((rc = run_save(c)) != MOE_EXIT_OK)
            return rc;
        printf("%s: submitted job %s: ", p->name, id);
        print_argv("", argv);
    }
    if (moe_jb_str(&b, js, "state", "submitted") < 0)
        return submit_unrecorded(&b, p, &err);
    return run_save(c);
}
