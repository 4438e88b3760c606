/* moeflow run: drives a generated study through its stages on Slurm, one
 * stage at a time, submitting the scripts moeflow gen wrote, waiting for
 * them, checking every candidate's exit status and reporting; its state
 * (run_state.h) lets a second run resume where the first stopped. */
#include "config.h"

#include <errno.h>
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
#include "run_outcome.h"
#include "run_state.h"
#include "run_submit.h"
#include "run_wait.h"
#include "run_winners.h"
#include "analysis/fit_report.h"
#include "fit_evidence.h"
#include "core/json_build.h"
#include "core/manifest.h"
#include "core/stage.h"
#include "core/strbuf.h"
#include "core/text.h"
#include "core/study_dir.h"
#include "study/baseline_fit.h"
#include "study/study.h"

#define RUN_POLL_DEFAULT 10
#define RUN_TIMEOUT_DEFAULT 86400

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
             "baseline.  Each decision is sealed in STUDY_DIR/" MOE_STUDY_DECISIONS "/.  "
             "Its state is\n"
             "STUDY_DIR/" MOE_STUDY_RUN_STATE ": run it again to resume; a finished stage "
             "is never\n"
             "submitted again, and jobs already submitted are waited for, not resubmitted.\n",
    .opts = run_opts,
    .column = 20,
    .tail = "\nexample: moeflow run tiny-study\n",
    .values = run_help_values,
};

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
 * edited or damaged one must not index past the candidates (D09).  Its
 * keys were read, and their types checked, by moe_manifest_stage_chunks. */
static int chunk_read(const struct run_stage_plan *p, const struct moe_chunk *k, int *idx,
                      struct run_chunk *r)
{
    int n_idx = run_array_indices(k->array, idx, RUN_MAX_INDICES);

    if ((size_t)k->offset != covered(p) || k->offset < 0 || k->count < 1 ||
        k->count > RUN_MAX_INDICES || (size_t)k->offset + (size_t)k->count > p->ms->n ||
        n_idx < 1)
        return -1;
    r->offset = k->offset;
    r->count = k->count;
    for (int x = 0; x < n_idx; x++)
        if (idx[x] < 0 || idx[x] >= r->count)
            return -1;
    _Static_assert(sizeof(r->array) == sizeof(k->array), "run_chunk holds a chunk's array");
    memcpy(r->array, k->array, sizeof(r->array));
    return 0;
}

/* The stage's script and chunks from manifest.json.  0: it runs
 * something; 1: nothing to run; -1 with err. */
static int stage_plan(const struct run_ctx *c, enum moe_stage st, struct run_stage_plan *p,
                      struct moe_error *err)
{
    struct moe_chunk *ch;
    size_t n;

    memset(p, 0, sizeof(*p));
    p->stage = st;
    p->name = moe_stage_name(st);
    p->ms = moe_manifest_find(&c->m, st);
    p->script = p->ms ? p->ms->script : NULL;
    p->array = p->ms && p->ms->array;
    if (!p->ms || !p->ms->n || !p->script || !p->script[0])
        return 1;
    if (strchr(p->script, '/') || p->script[0] == '.' || p->script[0] == '-') {
        moe_error_at(err, c->m.path, 0, 0, "stage %s: script '%s' is not a file name that moeflow "
                     "gen writes", p->name, p->script);
        return -1;
    }
    if (moe_manifest_stage_chunks(&c->m, st, &ch, &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int idx[RUN_MAX_INDICES];

        if (p->n_chunks == RUN_MAX_CHUNKS) {
            moe_error_at(err, c->m.path, 0, 0, "stage %s: more than %d chunks, more than "
                         "moeflow gen writes", p->name, RUN_MAX_CHUNKS);
            free(ch);
            return -1;
        }
        if (chunk_read(p, &ch[i], idx, &p->chunks[p->n_chunks]) < 0) {
            moe_error_at(err, c->m.path, 0, 0, "stage %s: chunk %zu (offset %d, count %d, "
                         "array '%s') does not lie within its %zu candidates where the chunk "
                         "before it ended: the manifest disagrees with itself", p->name, i,
                         ch[i].offset, ch[i].count, ch[i].array, p->ms->n);
            free(ch);
            return -1;
        }
        p->n_chunks++;
    }
    free(ch);
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

/* --dry-run: what the stage would submit, or that it would wait. */
static void print_dry(const struct run_ctx *c, const struct run_stage_plan *p, const json_t *js)
{
    const char *s = run_state_of(js);
    const json_t *failed = strcmp(s, "failed") == 0 ? json_object_get(js, "failed") : NULL;
    struct moe_error err;
    struct moe_jb b;
    json_t *plan;

    if (strcmp(s, "submitted") == 0) {
        printf("%s: would wait for its jobs already submitted, then check %zu candidates\n",
               p->name, p->ms->n);
        return;
    }
    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    plan = strcmp(s, "submitting") == 0 ? json_incref(json_object_get(js, "plan"))
                                        : run_make_plan(&b, p, NULL);
    if (b.failed) {
        moe_jb_within(&b, "plan");
        moe_jb_within(&b, p->name);
        moe_cli_report(&err);
        return;
    }
    if (p->stage == MOE_STAGE_VALIDATE && !run_winners_settled(c->state))
        printf("validate: as rebuilt from the winners after retune (the baseline if none); "
               "as it is now (%zu candidates):\n", p->ms->n);
    if (failed)
        printf("%s: failed earlier; would submit again its %zu failed candidates (all %zu "
               "indices shown)\n", p->name, json_array_size(failed), p->ms->n);
    run_print_planned(c, p, plan);
    json_decref(plan);
}

/* A new or failed stage planned (its candidates' old exit statuses
 * removed first: a job that dies before writing its own, such as a scale
 * round's rerun baseline, is never read as its predecessor), or one an
 * earlier run submitted resumed; the stage's deadline set. */
static int start_stage(struct run_ctx *c, const struct run_stage_plan *p, json_t *js)
{
    char s[16]; /* a copy: the state string is replaced below (D25) */
    struct moe_error err;
    struct moe_jb b;
    int rc;

    /* a state this is too short for is none moeflow run writes: as "" or a
     * cut name it is planned afresh, and what is not "failed" keeps its jobs */
    snprintf(s, sizeof(s), "%s", run_state_of(js));
    if (!s[0] || strcmp(s, "failed") == 0) {
        const json_t *failed = s[0] ? json_object_get(js, "failed") : NULL;

        run_forget_exit_status(c, p, failed);
        moe_error_clear(&err);
        moe_jb_init(&b, &err);
        moe_jb_set(&b, js, "plan", run_make_plan(&b, p, failed));
        moe_jb_str(&b, js, "state", "submitting");
        moe_jb_int(&b, js, "started", (json_int_t)time(NULL));
        moe_jb_within(&b, p->name);
        if (b.failed)
            return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
        json_object_del(js, "failed");
        if ((rc = run_save(c)) != MOE_EXIT_OK)
            return rc;
        printf("%s: %zu candidates%s\n", p->name, p->ms->n, s[0] ? "; again, the failed ones" : "");
    } else {
        printf("%s: resuming: waiting for the jobs an earlier run submitted\n", p->name);
    }
    c->deadline = time(NULL) + c->a->timeout;
    return MOE_EXIT_OK;
}

/* Submits (or resumes) one stage and waits for it. */
static int run_stage(struct run_ctx *c, const struct run_stage_plan *p)
{
    json_t *js = run_state_stage(c->state, p->name);
    enum run_log_said *said;
    enum run_waited w;
    int rc;

    if (!js)
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: %s: out of memory\n", p->name);

    if (strcmp(run_state_of(js), "done") == 0) {
        printf("%s: done in an earlier run (%zu candidates); not submitted again\n", p->name,
               p->ms->n);
        return MOE_EXIT_OK;
    }
    if ((rc = start_stage(c, p, js)) != MOE_EXIT_OK ||
        (rc = run_submit_plan(c, p, js)) != MOE_EXIT_OK)
        return rc;
    if (!(said = calloc(p->ms->n, sizeof(*said))))
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: out of memory\n");
    if ((w = run_wait_stage(c, p, js, said)) == RUN_WAITED) {
        rc = run_judge_stage(c, p, js, said);
    } else {
        fprintf(stderr, "moeflow run: %s: %s; its jobs stay in Slurm and in %s/%s: run moeflow "
                "run again to wait for them (scancel them to give up)\n", p->name,
                w == RUN_WAIT_INTERRUPTED ? "interrupted" : "timed out", c->shown,
                RUN_STATE_FILE);
        rc = MOE_EXIT_STOPPED;
    }
    free(said);
    return rc;
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
            rc = run_winners(c);
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
    char *path = moe_path_join(dir, "run.lock");
    int fd;

    if (!path)
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: out of memory\n");
    fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    free(path);
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
    char *yaml = moe_path_join(c->dir, "study.yaml");
    struct moe_study s;
    struct moe_fit_report r;
    struct moe_error err;
    int rc;

    if (!yaml)
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: out of memory\n");
    moe_error_clear(&err);
    rc = moe_study_load(&s, yaml, &err);
    free(yaml);
    if (rc < 0) {
        moe_study_free(&s);
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    }
    if (moe_fit_report_load(c->dir, &r, &err) == 0) {
        moe_gen_take_fit_evidence(&s, &r);
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
        printf("[%s] study %s: %s\n", run_elapsed(c->t0, t, sizeof(t)), c->shown,
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
                             "by moeflow gen (no " MOE_STUDY_MANIFEST ")\n", c.shown);
    if (!(c.dir = realpath(argv[first], NULL)))
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: %s: %s\n", c.shown, strerror(errno));
    c.shown = moe_text_visible(c.dir, c.shown_buf, sizeof(c.shown_buf));
    if (!a.dry && geteuid() == 0) {
        free(c.dir);
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow run: refusing to run as root: the jobs "
                             "freeze contracts and record winners as the job user\n");
    }
    moe_error_clear(&err);
    if (moe_manifest_load(c.dir, &c.m, &err) < 0) {
        free(c.dir);
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    }
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
    free(c.dir);
    return rc;
}
