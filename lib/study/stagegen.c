/* What `moeflow gen` writes: first the plan, every stage's candidates as
 * structs (candidates.c), rendered; then the files from it.  Scripts are
 * rendered from templates over one JSON context per stage; the manifest
 * and the contracts are serialised from the plan (core/manifest.h). */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_build.h"
#include "core/json_canon.h"
#include "core/manifest.h"
#include "core/readfile.h"
#include "study/candidates.h"
#include "study/candidates_internal.h"
#include "study/capture.h"
#include "study/capture_internal.h"
#include "core/shquote.h"
#include "core/strbuf.h"
#include "core/study_dir.h"
#include "study/launcher.h"
#include "study/launcher_internal.h"
#include "study/megatron_args.h"
#include "study/megatron_args_internal.h"
#include "study/container.h"
#include "study/container_internal.h"
#include "study/stagegen.h"
#include "study/stagegen_internal.h"
#include "study/megatron_rules.h"
#include "study/megatron_rules_internal.h"
#include "study/study_contract.h"
#include "study/study_contract_internal.h"
#include "study/template.h"
#include "study/template_internal.h"
#include "study/validate_checkpoint.h"
#include "study/validate_checkpoint_internal.h"
#include "study/study_internal.h"
#include "study/study_schema.h"

/* The stages whose step times are the measurement. */
static bool is_timing_stage(enum moe_stage st)
{
    return st == MOE_STAGE_SCALE || st == MOE_STAGE_PROFILE || st == MOE_STAGE_RETUNE ||
           st == MOE_STAGE_VALIDATE;
}

/* Sweeps are arrays; validate is one when it validates several runs
 * (recorded winners, then their combination). */
static bool is_array_stage(enum moe_stage st, int n)
{
    return st == MOE_STAGE_FIT || st == MOE_STAGE_SCALE || st == MOE_STAGE_RETUNE ||
           (st == MOE_STAGE_VALIDATE && n > 1);
}

static int add_file(struct moe_gen_output *out, const char *name, char *data, int mode,
                    struct moe_error *err)
{
    if (!data) {
        if (!err->text[0])
            moe_error_set(err, "%s: out of memory", name);
        return -1;
    }
    if (out->n == out->cap) {
        size_t cap = (size_t)out->cap;
        struct moe_gen_file *f = cap < INT_MAX / 2
                                     ? moe_grow_array(out->files, &cap, (size_t)out->n + 1, sizeof(*f))
                                     : NULL;

        if (!f) {
            free(data);
            moe_error_set(err, "%s: out of memory", name);
            return -1;
        }
        out->files = f;
        out->cap = (int)cap;
    }
    if (moe_fmt_fixed(out->files[out->n].name, sizeof(out->files[0].name), err, "%s",
                      name) < 0) {
        free(data);
        return -1;
    }
    out->files[out->n].data = data;
    out->files[out->n].len = strlen(data);
    out->files[out->n].mode = mode;
    out->n++;
    return 0;
}

/* lines += line, stealing it; -1 with err naming the line's place among
 * the context's "sbatch" lines. */
static int append_line(json_t *lines, json_t *line, struct moe_error *err)
{
    struct moe_jb b;

    moe_jb_init(&b, err);
    if (moe_jb_append(&b, lines, line) == 0)
        return 0;
    moe_jb_within(&b, "sbatch");
    return -1;
}

/* Adds "#SBATCH --key=value", quoted for sbatch's own parser (not the
 * shell's: bash never runs these lines).  -1 with err naming the option
 * for a value no quoting carries. */
static int sbatch_line(json_t *lines, const char *key, const char *value, struct moe_error *err)
{
    char *arg, *q;
    int rc;

    if (!(arg = moe_strdup_printf("--%s=%s", key, value))) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    q = moe_sbatch_quote(arg, err);
    free(arg);
    if (!q) {
        char why[MOE_ERROR_TEXT_MAX];

        /* a message: people read it, and a cut one still reads */
        snprintf(why, sizeof(why), "%s", err->text[0] ? err->text : "out of memory");
        moe_error_set(err, "#SBATCH --%s: the value %s", key, why);
        return -1;
    }
    rc = append_line(lines, json_sprintf("#SBATCH %s", q), err);
    free(q);
    return rc;
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* lines (taken) sorted; NULL with err. */
static json_t *sorted(json_t *lines, struct moe_error *err)
{
    size_t n = json_array_size(lines);
    json_t **v = calloc(n ? n : 1, sizeof(json_t *)), *out = json_array();
    int rc = v && out ? 0 : -1;

    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            v[i] = json_array_get(lines, i);
        qsort(v, n, sizeof(json_t *), cmp_lines);
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = append_line(out, json_incref(v[i]), err);
    } else {
        moe_error_set(err, "sbatch: out of memory");
    }
    free(v);
    json_decref(lines);
    if (rc < 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* Array chunks of at most max indices, each 0-based with an index offset.
 * Arrays name no candidate at sbatch: the plugin then checks every
 * candidate of the stage in manifest.json; each task's srun names its own
 * candidate, which is checked again when it starts. */
static struct moe_chunk *chunks(const char *script, int n, int max, int throttle,
                                size_t *count)
{
    struct moe_chunk *out = calloc(n > 0 ? (size_t)(n / max + 1) : 1, sizeof(*out));

    *count = 0;
    for (int off = 0; out && off < n; off += max) {
        struct moe_chunk *c = &out[(*count)++];

        c->offset = off;
        c->count = n - off < max ? n - off : max;
        /* fits: two ints and "0-%", in 48 bytes */
        snprintf(c->array, sizeof(c->array), "0-%d%%%d", c->count - 1, throttle);
        if (off == 0 && n <= max)
            c->args[0] = '\0';
        else if (off == 0)
            /* fits: three ints and the option names */
            snprintf(c->args, sizeof(c->args), " --array=0-%d%%%d", c->count - 1, throttle);
        else
            /* fits: three ints and the option names */
            snprintf(c->args, sizeof(c->args),
                     " --array=0-%d%%%d --export=ALL," MOE_ENV_INDEX_OFFSET "=%d", c->count - 1,
                     throttle, off);
        /* fits: the args (112) and a script name (64) in 192 */
        snprintf(c->sbatch, sizeof(c->sbatch), "sbatch%s %s", c->args, script);
    }
    return out;
}

/* A candidate's value as text, whole (a cut one would run another value):
 * "" for none; malloc'd, NULL when out of memory. */
static char *value_text(const json_t *v)
{
    return v ? moe_value_text(v) : strdup("");
}

/* What the scripts' templates need of each candidate, quoted for the
 * shell. */
static json_t *script_candidates(struct moe_jb *b, const struct moe_manifest_stage *m)
{
    json_t *out = json_array();

    for (size_t i = 0; i < m->n; i++) {
        const struct moe_candidate *c = &m->cands[i];
        char *text = value_text(c->value);
        /* results/... words are the study's files: absolute in the scripts */
        char *argv = moe_shquote_words_rooted((const char *const *)c->argv.v, c->argv.n,
                                              MOE_STUDY_RESULTS "/", "\"$study\"/");
        char *env = moe_shquote_env(&c->env);
        char *val = text ? moe_shquote(text) : NULL;
        char *twin_of = moe_shquote(c->twin_of ? c->twin_of : "");

        /* a NULL among the quoted words (out of memory) fails the pack,
         * and the append names the candidate */
        moe_jb_append(b, out,
                      moe_jb_pack(b, "{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:b, s:s}",
                                  "index", (int)i, "id", c->id, "argv", argv, "env", env,
                                  "variable", c->variable, "value", val, "label", c->label,
                                  "world_size", c->world_size, "rank", c->rank >= 0 ? c->rank : 0,
                                  "twin", c->twin_of != NULL, "twin_of", twin_of));
        free(text);
        free(argv);
        free(env);
        free(val);
        free(twin_of);
    }
    return out;
}

/* Whether a stage holds a profiling twin (study/validate_profile.h): its
 * script then has the lines that run one. */
static bool has_twins(const struct moe_manifest_stage *m)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->cands[i].twin_of)
            return true;
    return false;
}

/* The launcher's words quoted for the scripts; NULL with err when the
 * command does not split (study.c refuses such a study first). */
static char *launcher_words(const struct moe_study *s, struct moe_error *err)
{
    struct moe_launcher l;
    char *out;

    if (moe_launcher_parse(s->cluster.launcher, &l, err) < 0)
        return NULL;
    out = moe_shquote_argv(l.words);
    moe_launcher_free(&l);
    return out;
}

/* The contract stage's capture: the launcher's Python, and the script's
 * arguments (the entry script, the declared software), quoted as data. */
static int capture_context(const struct moe_study *s, json_t *ctx, struct moe_jb *b)
{
    struct moe_launcher l;
    json_t *argv;
    char *python, *args;

    if (moe_launcher_parse(s->cluster.launcher, &l, b->err) < 0)
        return -1;
    if (!(argv = moe_capture_argv(s, &l, b->err))) {
        moe_launcher_free(&l);
        return -1;
    }
    python = moe_shquote(l.python);
    args = moe_shquote_argv(argv);
    /* a NULL here is out of memory: a failure naming the key, not "" */
    moe_jb_str(b, ctx, "capture_python", python);
    moe_jb_str(b, ctx, "capture_argv", args);
    moe_jb_str(b, ctx, "capture_script", MOE_CAPTURE_SCRIPT);
    free(python);
    free(args);
    json_decref(argv);
    moe_launcher_free(&l);
    return b->failed ? -1 : 0;
}

/* The stage's one line in its script and in submit.sh.  No default: -Wswitch
 * names a stage added without a summary, and a value outside the enum is
 * NULL, which add_script reports. */
static json_t *summary(const struct moe_study *s, enum moe_stage st, int n)
{
    const struct moe_measure *m = &s->measure;

    switch (st) {
    case MOE_STAGE_CONTRACT:
        return json_string("capture software versions, hardware and topology of one node; "
                           "freeze the measurement contract");
    case MOE_STAGE_FIT:
        return json_sprintf("%d memory-fit runs, one GPU each, Megatron's fake process group "
                            "standing in for a rank of %d GPUs", n, moe_study_world_size(s));
    case MOE_STAGE_SCALE:
        return json_sprintf("%d parallel layouts on %d GPUs, %d steps each", n,
                            moe_study_world_size(s), m->warmup + m->screen_steps);
    case MOE_STAGE_PROFILE:
        return json_sprintf("the baseline under %s, profiling steps %d..%d",
                            m->profiler == MOE_PROFILER_NSYS ? "Nsight Systems"
                                                             : "the PyTorch profiler",
                            m->profile_first, m->profile_last);
    case MOE_STAGE_RETUNE:
        return json_sprintf("%d candidates, one change from the baseline each, %d steps each", n,
                            m->warmup + m->screen_steps);
    case MOE_STAGE_VALIDATE:
        if (s->validate_checkpoint)
            return json_sprintf("the baseline for %d steps; report window %d..%d; a "
                                "checkpoint/resume check from step %d",
                                m->validate_steps, m->window_first, m->window_last,
                                moe_checkpoint_step(s));
        return json_sprintf("the baseline for %d steps; report window %d..%d",
                            m->validate_steps, m->window_first, m->window_last);
    case MOE_STAGE_NONE:
    case MOE_STAGE_COUNT:
        break;
    }
    return NULL; /* not a stage: add_script says so */
}

/* The #SBATCH lines of a stage whose first candidate is first and whose
 * first chunk is chunk0, sorted. */
static json_t *sbatch_lines(const struct moe_study *s, const struct moe_manifest_stage *m,
                            const char *study_dir, bool plugin, struct moe_error *err)
{
    const struct moe_cluster *k = &s->cluster;
    const struct moe_candidate *first = &m->cands[0];
    enum moe_stage st = m->stage;
    json_t *lines = json_array();
    char out[64], gpus[16], ntasks[16], nnodes[16], job[MOE_NAME_MAX + 32];
    bool array = m->array;
    int tasks = first->tasks_per_node, nodes = first->nodes, rc = 0;

    /* fits: a stage name and the pattern, 40 bytes at most */
    snprintf(out, sizeof(out), array ? "logs/%s-%%A_%%a.out" : "logs/%s-%%j.out",
             moe_stage_name(st));
    /* fits: an int */
    snprintf(ntasks, sizeof(ntasks), "%d", st == MOE_STAGE_CONTRACT ? 1 : tasks);
    /* fits: ntasks, of the same size */
    snprintf(gpus, sizeof(gpus), "%s", st == MOE_STAGE_CONTRACT ? "1" : ntasks);
    /* fits: an int */
    snprintf(nnodes, sizeof(nnodes), "%d", nodes);
    /* fits: the study name is at most MOE_NAME_MAX, a stage name 8 */
    snprintf(job, sizeof(job), "moeflow-%s-%s", s->name, moe_stage_name(st));
    if (moe_study_str_set(k->account))
        rc |= sbatch_line(lines, "account", k->account, err);
    if (moe_study_str_set(k->partition) && rc == 0)
        rc |= sbatch_line(lines, "partition", k->partition, err);
    /* the rest of what a cluster asks of every job (cluster.qos,
     * reservation, constraint), each checked against Slurm's form */
    if (moe_study_str_set(k->qos) && rc == 0)
        rc |= sbatch_line(lines, "qos", k->qos, err);
    if (moe_study_str_set(k->reservation) && rc == 0)
        rc |= sbatch_line(lines, "reservation", k->reservation, err);
    if (moe_study_str_set(k->constraint) && rc == 0)
        rc |= sbatch_line(lines, "constraint", k->constraint, err);
    if (array && rc == 0)
        rc |= sbatch_line(lines, "array", m->chunks[0].array, err);
    else if (rc == 0 && plugin)
        rc |= sbatch_line(lines, "moe-candidate", first->id, err);
    const char *const kv[][2] = { { "output", out }, { "gpus-per-node", gpus },
                                  { "ntasks-per-node", ntasks }, { "nodes", nnodes },
                                  { "job-name", job }, { "time", moe_study_time_limit(s, st) },
                                  { "moe-stage", moe_stage_name(st) }, { "moe-study", study_dir } };
    /* without the plugin, sbatch would refuse its options: the last two */
    size_t nkv = sizeof(kv) / sizeof(kv[0]) - (plugin ? 0 : 2);
    for (size_t i = 0; i < nkv && rc == 0; i++)
        rc |= sbatch_line(lines, kv[i][0], kv[i][1], err);
    /* A step time shared with another job's kernels or host threads is not
     * the layout's own: timing stages take whole nodes, all their memory
     * too (--mem=0), unless the study says cluster.exclusive: false. */
    if (k->exclusive && is_timing_stage(st) && rc == 0) {
        rc |= append_line(lines, json_string("#SBATCH --exclusive"), err);
        if (rc == 0)
            rc |= sbatch_line(lines, "mem", "0", err);
    }
    if (rc) {
        json_decref(lines);
        return NULL;
    }
    return sorted(lines, err);
}

static char *render(const struct moe_gen_opts *o, const char *tname, const json_t *ctx,
                    struct moe_error *err)
{
    char *path = moe_path_join(o->templates_dir, tname), *text;

    if (!path) {
        moe_error_at(err, o->templates_dir, 0, 0, "out of memory");
        return NULL;
    }
    text = moe_template_render_file(path, ctx, err);
    free(path);
    return text;
}

/* The file name in the templates folder, read whole; NULL with err. */
static char *read_template(const char *dir, const char *name, const char *what,
                           struct moe_error *err)
{
    char *path = moe_path_join(dir, name), *text;

    if (!path) {
        moe_error_at(err, dir, 0, 0, "out of memory");
        return NULL;
    }
    text = moe_read_file(path, what, NULL, err);
    free(path);
    return text;
}

static char *with_newline(char *s)
{
    size_t n, cap;
    char *p;

    if (!s)
        return NULL;
    n = strlen(s);
    cap = n + 1;
    if (!(p = moe_grow_array(s, &cap, n + 2, 1))) {
        free(s);
        return NULL;
    }
    p[n] = '\n';
    p[n + 1] = '\0';
    return p;
}

static char *canonical_line(const json_t *doc)
{
    return with_newline(moe_json_canonical(doc));
}

/* The fit stage's Python folder, copied from the templates into the study
 * directory: the container sees it wherever it sees the study, and a
 * reviewer sees exactly what the jobs load (templates/fit-python/). */
static int add_fit_python(const struct moe_gen_opts *o, struct moe_gen_output *out,
                          struct moe_error *err)
{
    static const char *const files[] = { "sitecustomize.py", "moeflow_fake_collectives.py" };

    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char name[128];

        /* fits: the folder's name and the short names above */
        snprintf(name, sizeof(name), MOE_FIT_PYTHON_DIR "/%s", files[i]);
        if (add_file(out, name, read_template(o->templates_dir, name, "template", err), 0644,
                     err) < 0)
            return -1;
    }
    return 0;
}

/* The contract stage runs the capture script from the study directory,
 * which the container sees through the same mounts as the training. */
static int add_capture_script(const struct moe_gen_opts *o, struct moe_gen_output *out,
                              struct moe_error *err)
{
    return add_file(out, MOE_CAPTURE_SCRIPT,
                    read_template(o->templates_dir, MOE_CAPTURE_SCRIPT, "the capture script", err),
                    0644, err);
}


/* ---- the plan: every stage's candidates, rendered ---- */

/* The validate stage from recorded winners instead of the baseline alone. */
static int use_validate(struct moe_stage_plan *sp, const struct moe_stage_plan *winners)
{
    for (size_t i = 0; i < sp->n; i++)
        moe_candidate_free(&sp->cands[i]);
    sp->n = 0;
    for (size_t i = 0; i < winners->n; i++)
        if (moe_stage_plan_add(sp, &winners->cands[i]) < 0)
            return -1;
    return 0;
}

/* Validate beside an adopted baseline: the written one, rendered from the
 * study as its file says, so the loop's answer is measured against what
 * the user wrote (contract rule validate-written-baseline). */
static int add_written_baseline(const struct moe_study *written, struct moe_stage_plan *sp,
                                struct moe_error *err)
{
    struct moe_stage_plan w;
    int rc = -1;

    if (moe_candidates_build(written, MOE_STAGE_VALIDATE, &w, err) < 0)
        return -1;
    if (moe_candidates_render(written, &w, err) == 0 && w.n) {
        free(w.cands[0].variable);
        w.cands[0].variable = strdup("written_baseline");
        json_decref(w.cands[0].value);
        w.cands[0].value = json_string("as the study file wrote it");
        rc = w.cands[0].variable && moe_stage_plan_add(sp, &w.cands[0]) == 0 ? 0 : -1;
        if (rc < 0)
            moe_error_set(err, "validate stage: out of memory");
    }
    moe_stage_plan_free(&w);
    return rc;
}

/* Retune on a layout a scale decision adopted is compared with the scale
 * run of that layout, as the decision names it. */
static int add_reference(const struct moe_candidate *ref, struct moe_stage_plan *sp,
                         struct moe_error *err)
{
    if ((sp->reference = calloc(1, sizeof(*sp->reference))) &&
        moe_candidate_copy(sp->reference, ref) == 0)
        return 0;
    moe_error_set(err, "retune stage: out of memory");
    return -1;
}

static int plan_stage(const struct moe_study *written, const struct moe_gen_opts *o,
                      enum moe_stage st, struct moe_stage_plan *sp, struct moe_error *err)
{
    const struct moe_study *s = o->adopted[st] ? o->adopted[st] : written;

    if (moe_candidates_build(s, st, sp, err) < 0)
        return -1;
    if ((st == MOE_STAGE_VALIDATE && o->validate && use_validate(sp, o->validate) < 0) ||
        (st == MOE_STAGE_RETUNE && o->retune_for &&
         moe_candidates_keep_bottleneck(sp, o->retune_for) < 0)) {
        moe_error_set(err, "%s stage: out of memory", moe_stage_name(st));
        moe_stage_plan_free(sp);
        return -1;
    }
    if (moe_candidates_render(s, sp, err) < 0 ||
        (st == MOE_STAGE_VALIDATE && s != written && add_written_baseline(written, sp, err) < 0) ||
        (st == MOE_STAGE_RETUNE && o->retune_reference &&
         add_reference(o->retune_reference, sp, err) < 0) ||
        (st == MOE_STAGE_VALIDATE && s->validate_checkpoint &&
         moe_validate_add_checkpoint(s, sp, err) < 0)) {
        moe_stage_plan_free(sp);
        return -1;
    }
    return 0;
}

int moe_gen_plan(const struct moe_study *s, const struct moe_gen_opts *o, struct moe_gen_plan *p,
                 struct moe_error *err)
{
    memset(p, 0, sizeof(*p));
    p->max_array_size = o->max_array_size       ? o->max_array_size
                        : s->cluster.max_array_size ? s->cluster.max_array_size
                                                    : MOE_MAX_ARRAY_SIZE_DEFAULT;
    if (moe_megatron_study_check(s, err) < 0)
        return -1;
    if (moe_json_sha256(s->json, p->study_hash) < 0) {
        moe_error_set(err, "cannot hash the study");
        return -1;
    }
    for (int st = 0; st < MOE_STAGE_COUNT; st++) {
        if (o->only != MOE_STAGE_NONE &&
            (o->onward ? st < (int)o->only : o->only != (enum moe_stage)st))
            continue;
        if (plan_stage(s, o, (enum moe_stage)st, &p->stages[p->n], err) < 0) {
            moe_gen_plan_free(p);
            return -1;
        }
        p->n++;
    }
    return 0;
}

const struct moe_stage_plan *moe_gen_plan_stage(const struct moe_gen_plan *p, enum moe_stage st)
{
    for (int i = 0; i < p->n; i++)
        if (p->stages[i].stage == st)
            return &p->stages[i];
    return NULL;
}

void moe_gen_plan_free(struct moe_gen_plan *p)
{
    for (int i = 0; i < p->n; i++)
        moe_stage_plan_free(&p->stages[i]);
    p->n = 0;
}

/* ---- the files, from the plan ---- */

struct gen_render {
    const struct moe_study *s;
    const struct moe_gen_opts *o;
    const struct moe_gen_plan *p;
    struct moe_gen_output *out;
    json_t *stages;          /* the manifest's stage entries */
    json_t *submit;          /* submit.sh's list of stages */
    struct moe_error *err;
};

/* validation.checkpoint's candidate for the validate script: its id, the
 * resumed run's arguments and the folder it saves in, quoted; false when
 * the stage has none. */
static json_t *checkpoint_context(struct moe_jb *b, const struct moe_study *s,
                                  const struct moe_manifest_stage *m)
{
    const struct moe_candidate *c = moe_checkpoint_candidate(m->cands, m->n);
    const char *from = c ? json_string_value(c->value) : NULL;
    struct moe_strv resume;
    char *dir, *argv, *qdir;
    json_t *out;

    if (!c || !from)
        return json_false();
    if (moe_checkpoint_resume_argv(c, &resume) < 0)
        return NULL; /* out of memory: the key it is set at names it */
    dir = moe_strdup_printf(MOE_CHECKPOINT_DIR "/%s", from);
    argv = moe_shquote_words_rooted((const char *const *)resume.v, resume.n,
                                    MOE_STUDY_RESULTS "/", "\"$study\"/");
    qdir = dir ? moe_shquote(dir) : NULL;
    /* a NULL word (out of memory) fails the pack */
    out = moe_jb_pack(b, "{s:s, s:s, s:s, s:i}", "id", c->id, "resume_argv", argv, "dir", qdir,
                      "step", moe_checkpoint_step(s));
    free(dir);
    free(argv);
    free(qdir);
    moe_strv_free(&resume);
    return out;
}

/* The start of every srun that runs the trainer: the plugin's candidate
 * option, or -- without the plugin -- Slurm's own CPU binding; then the
 * container's options (study/container.h).  NULL with err. */
static char *srun_words(const struct gen_render *g, struct moe_error *err)
{
    char *container = moe_container_srun_options(g->s, g->o->study_dir, err), *out;

    if (!container)
        return NULL;
    out = moe_strdup_printf("srun %s%s", g->o->plugin_free ? "--cpu-bind=cores"
                                                            : "--moe-candidate=\"$candidate\"",
                            container);
    free(container);
    if (!out)
        moe_error_set(err, "srun: out of memory");
    return out;
}

/* The template context of a stage that runs something: the study, the
 * stage's summary, #SBATCH lines (taken), chunks and candidates, the
 * srun that runs the trainer and the measurement window; NULL with err. */
static json_t *stage_context(const struct gen_render *g, const struct moe_manifest_stage *m,
                             json_t *summary, json_t *sbatch, json_t *chunks)
{
    const struct moe_study *s = g->s;
    char *launcher = launcher_words(s, g->err), *srun, *qdir, *qmoeflow;
    struct moe_error inner = { 0 };
    struct moe_jb b;
    json_t *ctx;

    if (!launcher || !(ctx = json_object())) {
        if (launcher)
            moe_error_set(g->err, "%s: out of memory", moe_stage_name(m->stage));
        free(launcher);
        json_decref(sbatch);
        return NULL;
    }
    moe_jb_init(&b, g->err);
    srun = srun_words(g, g->err);
    qdir = moe_shquote(g->o->study_dir);
    qmoeflow = moe_shquote(g->o->moeflow_path ? g->o->moeflow_path : "moeflow");
    moe_jb_str(&b, ctx, "srun", srun);
    moe_jb_str(&b, ctx, "study_dir", qdir);
    moe_jb_bool(&b, ctx, "plugin", !g->o->plugin_free);
    moe_jb_str(&b, ctx, "moeflow", qmoeflow);
    free(srun);
    free(qdir);
    free(qmoeflow);
    moe_jb_str(&b, ctx, "version", g->o->version);
    moe_jb_str(&b, ctx, "study", s->name);
    moe_jb_str(&b, ctx, "study_hash", g->p->study_hash);
    moe_jb_str(&b, ctx, "stage", moe_stage_name(m->stage));
    moe_jb_copy(&b, ctx, "summary", summary);
    moe_jb_set(&b, ctx, "sbatch", sbatch);
    moe_jb_copy(&b, ctx, "chunks", chunks);
    moe_jb_bool(&b, ctx, "array", m->array);
    moe_jb_set(&b, ctx, "candidates", script_candidates(&b, m));
    moe_jb_set(&b, ctx, "candidate", moe_candidate_json(&m->cands[0], false, &inner));
    moe_jb_str(&b, ctx, "launcher", launcher);
    moe_jb_int(&b, ctx, "tasks_per_node", m->cands[0].tasks_per_node);
    moe_jb_int(&b, ctx, "world_size", moe_study_world_size(s));
    moe_jb_copy(&b, ctx, "measure", json_object_get(s->json, MOE_SK_MEASURE));
    moe_jb_bool(&b, ctx, "nsys", s->measure.profiler == MOE_PROFILER_NSYS);
    moe_jb_bool(&b, ctx, "fit", m->stage == MOE_STAGE_FIT);
    moe_jb_int(&b, ctx, "window_first", s->measure.window_first);
    moe_jb_int(&b, ctx, "window_last", s->measure.window_last);
    moe_jb_bool(&b, ctx, "twins", has_twins(m));
    moe_jb_set(&b, ctx, "layout", moe_study_dir_template(moe_stage_name(m->stage)));
    free(launcher);
    if (!b.failed && m->stage == MOE_STAGE_CONTRACT && capture_context(s, ctx, &b) < 0) {
        json_decref(ctx);
        return NULL;
    }
    moe_jb_set(&b, ctx, "checkpoint", checkpoint_context(&b, s, m));
    if (b.failed)
        moe_jb_within(&b, moe_stage_name(m->stage));
    if (inner.text[0]) /* the candidate's own key, not "candidate: no value" */
        moe_error_set(g->err, "%s.candidate: %s", moe_stage_name(m->stage), inner.text);
    return moe_jb_done(&b, ctx);
}

/* The sbatch script of a stage that runs something, the files it needs
 * beside it, and its line in submit.sh. */
static int add_script(struct gen_render *g, const struct moe_manifest_stage *m)
{
    const char *name = moe_stage_name(m->stage);
    json_t *sb = sbatch_lines(g->s, m, g->o->study_dir, !g->o->plugin_free, g->err), *ctx;
    json_t *summ = summary(g->s, m->stage, (int)m->n);
    json_t *chunks = sb ? moe_manifest_chunks_json(m, g->err) : NULL;
    char tname[64];
    struct moe_jb b;
    json_t *entry;
    int rc = -1;

    if (!sb)
        goto done;
    if (!chunks) {
        moe_error_within(g->err, "%s.chunks", name);
        json_decref(sb);
        goto done;
    }
    if (!summ) {
        moe_error_set(g->err, "stage %d (%s): no summary (a stage summary() does not know, or "
                              "out of memory)", (int)m->stage, name ? name : "?");
        json_decref(sb);
        goto done;
    }
    if (!(ctx = stage_context(g, m, summ, sb, chunks)))
        goto done;
    moe_jb_init(&b, g->err);
    entry = json_object();
    moe_jb_str(&b, entry, "stage", name);
    moe_jb_copy(&b, entry, "summary", summ);
    moe_jb_copy(&b, entry, "chunks", chunks);
    moe_jb_int(&b, entry, "run", 1);
    moe_jb_bool(&b, entry, "wait", m->stage == MOE_STAGE_CONTRACT);
    moe_jb_str(&b, entry, "script", m->script);
    if (moe_jb_append(&b, g->submit, moe_jb_done(&b, entry)) < 0) {
        moe_jb_within(&b, "stages");
        json_decref(ctx);
        goto done;
    }
    if (moe_fmt_fixed(tname, sizeof(tname), g->err, "%s.in", m->script) < 0) {
        json_decref(ctx);
        goto done;
    }
    rc = add_file(g->out, m->script, render(g->o, tname, ctx, g->err), 0755, g->err);
    json_decref(ctx);
    if (rc == 0 && m->stage == MOE_STAGE_FIT)
        rc = add_fit_python(g->o, g->out, g->err);
    if (rc == 0 && m->stage == MOE_STAGE_CONTRACT)
        rc = add_capture_script(g->o, g->out, g->err);
done:
    json_decref(summ);
    json_decref(chunks);
    return rc;
}

/* One stage: its manifest entry, and its script when it runs anything. */
static int render_stage(struct gen_render *g, const struct moe_stage_plan *sp)
{
    const struct moe_candidate *first = sp->n ? &sp->cands[0] : NULL;
    int n = (int)sp->n, per_job = first ? first->nodes * first->tasks_per_node : 1;
    /* As many array tasks at once as the study's GPUs hold. */
    int throttle = moe_study_world_size(g->s) / per_job;
    bool array = is_array_stage(sp->stage, n);
    char script[64];
    struct moe_manifest_stage m = {
        .stage = sp->stage, .script = n ? script : "", .array = array, .cands = sp->cands,
        .n = sp->n, .skipped = sp->skipped, .n_skipped = sp->n_skipped,
        .reference = sp->reference,
    };
    struct moe_chunk *ch;
    struct moe_jb b;
    json_t *entry;
    int rc;

    /* fits: the longest stage name and ".sbatch" */
    snprintf(script, sizeof(script), "%s.sbatch", moe_stage_name(sp->stage));
    ch = chunks(script, array ? n : (n ? 1 : 0), g->p->max_array_size, throttle < 1 ? 1 : throttle,
                &m.n_chunks);
    if (!ch) {
        moe_error_set(g->err, "%s: out of memory", script);
        return -1;
    }
    m.chunks = ch;
    moe_jb_init(&b, g->err);
    if (!(entry = moe_manifest_stage_json(&m, g->err))) {
        moe_error_within(g->err, "stages[%zu]", json_array_size(g->stages));
        rc = -1;
    } else if (moe_jb_append(&b, g->stages, entry) < 0) {
        moe_jb_within(&b, "stages");
        rc = -1;
    } else if (n) {
        rc = add_script(g, &m);
    } else if (moe_jb_append(&b, g->submit,
                             moe_jb_pack(&b, "{s:s, s:s, s:b}", "stage", moe_stage_name(sp->stage),
                                         "summary",
                                         "no candidates: see skipped in " MOE_STUDY_MANIFEST,
                                         "run", 0)) < 0) {
        moe_jb_within(&b, "submit");
        rc = -1;
    } else {
        rc = 0;
    }
    free(ch);
    return rc;
}

/* contracts/baseline.json and contracts/<id>.json: what the plugin checks
 * each run against (see contract/contract_check.h). */
static int add_contracts(struct gen_render *g)
{
    const struct moe_study *s = g->s;
    struct moe_run run;
    json_t *doc;
    int rc;

    moe_run_from_baseline(&run, s, 0);
    if (!(doc = moe_run_contract(s, &run, moe_study_routing_class(s), g->err)))
        return -1;
    rc = add_file(g->out, MOE_STUDY_BASELINE, canonical_line(doc), 0644, g->err);
    json_decref(doc);
    for (int i = 0; i < g->p->n && rc == 0; i++) {
        const struct moe_stage_plan *sp = &g->p->stages[i];

        for (size_t j = 0; j < sp->n && rc == 0; j++) {
            char name[128];

            /* fits: an id is 64 hex digits */
            snprintf(name, sizeof(name), MOE_STUDY_CONTRACTS "/%s.json", sp->cands[j].id);
            rc = add_file(g->out, name, canonical_line(sp->cands[j].contract), 0644, g->err);
        }
    }
    return rc;
}

/* -1 when out of memory. */
static int tsv_row(FILE *f, const struct moe_candidate *c, size_t index)
{
    char rank[32] = "", *text = value_text(c->value);

    if (c->rank >= 0)
        /* fits: an int */
        snprintf(rank, sizeof(rank), "%d", c->rank);
    fprintf(f, "%s\t%zu\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", moe_stage_name(c->stage), index,
            c->id, c->variable, text ? text : "", c->label, c->bottleneck,
            c->nodes, c->tasks_per_node, rank);
    if (!text)
        return -1;
    free(text);
    return 0;
}

char *moe_gen_tsv(const struct moe_stage_plan *stages, int n, bool header)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    bool failed = false;

    if (!f)
        return NULL;
    if (header)
        fprintf(f, "stage\tindex\tid\tvariable\tvalue\tlabel\tbottleneck\tnodes\ttasks_per_node"
                   "\trank\n");
    for (int i = 0; i < n && !failed; i++)
        for (size_t j = 0; j < stages[i].n && !failed; j++)
            failed = tsv_row(f, &stages[i].cands[j], j) < 0;
    if (fclose(f) != 0 || failed) {
        free(out);
        return NULL;
    }
    return out;
}

/* submit.sh, which submits every stage in order, and rank-env.sh. */
static int add_launchers(struct gen_render *g)
{
    json_t *ctx = json_object();
    struct moe_jb b;
    int rc;

    moe_jb_init(&b, g->err);
    moe_jb_str(&b, ctx, "version", g->o->version);
    moe_jb_str(&b, ctx, "study", g->s->name);
    moe_jb_str(&b, ctx, "study_hash", g->p->study_hash);
    moe_jb_copy(&b, ctx, "stages", g->submit);
    moe_jb_bool(&b, ctx, "plugin", !g->o->plugin_free);
    moe_jb_set(&b, ctx, "layout", moe_study_dir_template(NULL));
    if (!(ctx = moe_jb_done(&b, ctx))) {
        moe_jb_within(&b, "submit.sh");
        return -1;
    }
    rc = add_file(g->out, "submit.sh", render(g->o, "submit.sh.in", ctx, g->err), 0755, g->err);

    if (rc == 0)
        rc = add_file(g->out, "rank-env.sh", render(g->o, "rank-env.sh.in", ctx, g->err), 0755,
                      g->err);
    json_decref(ctx);
    return rc;
}

/* manifest.json, candidates.tsv, and the study as JSON and as given. */
static int add_index(struct gen_render *g)
{
    struct moe_gen_output *out = g->out;

    out->manifest = moe_manifest_json(g->o->version, g->s->name, g->p->study_hash,
                                      g->p->max_array_size, g->stages, g->err);
    if (!out->manifest) {
        moe_error_within(g->err, "%s", MOE_STUDY_MANIFEST);
        return -1;
    }
    if (add_file(out, MOE_STUDY_MANIFEST, out->manifest ? moe_manifest_text(out->manifest) : NULL,
                 0644, g->err) < 0 ||
        add_file(out, "candidates.tsv", moe_gen_tsv(g->p->stages, g->p->n, true), 0644,
                 g->err) < 0 ||
        add_file(out, "study.json", with_newline(moe_json_canonical(g->s->json)), 0644,
                 g->err) < 0 ||
        add_file(out, "study.yaml", strdup(g->o->study_text), 0644, g->err) < 0)
        return -1;
    return 0;
}

int moe_gen_render(const struct moe_study *s, const struct moe_gen_opts *o,
                   const struct moe_gen_plan *p, struct moe_gen_output *out,
                   struct moe_error *err)
{
    struct gen_render g;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    g = (struct gen_render){ s, o, p, out, json_array(), json_array(), err };
    for (int i = 0; i < p->n; i++)
        if (render_stage(&g, &p->stages[i]) < 0)
            goto done;
    if (add_contracts(&g) == 0 && add_launchers(&g) == 0 && add_index(&g) == 0)
        rc = 0;
done:
    json_decref(g.stages);
    json_decref(g.submit);
    if (rc < 0)
        moe_gen_output_free(out);
    return rc;
}

void moe_gen_output_free(struct moe_gen_output *out)
{
    for (int i = 0; i < out->n; i++)
        free(out->files[i].data);
    free(out->files);
    json_decref(out->manifest);
    memset(out, 0, sizeof(*out));
}
