/* Builds every file of a generated study directory.  Scripts are rendered
 * from templates over one JSON context per stage; everything else is
 * serialised from the candidate plans directly. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_canon.h"
#include "core/readfile.h"
#include "study/candidates.h"
#include "study/capture.h"
#include "core/shquote.h"
#include "study/launcher.h"
#include "study/megatron_args.h"
#include "study/stagegen.h"
#include "study/megatron_rules.h"
#include "study/study_contract.h"
#include "study/template.h"

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
        int cap = out->cap ? out->cap * 2 : 64;
        struct moe_gen_file *f = realloc(out->files, (size_t)cap * sizeof(*f));
        if (!f) {
            free(data);
            moe_error_set(err, "%s: out of memory", name);
            return -1;
        }
        out->files = f;
        out->cap = cap;
    }
    snprintf(out->files[out->n].name, sizeof(out->files[0].name), "%s", name);
    out->files[out->n].data = data;
    out->files[out->n].len = strlen(data);
    out->files[out->n].mode = mode;
    out->n++;
    return 0;
}

/* Adds "#SBATCH --key=value", quoted for sbatch's own parser (not the
 * shell's: bash never runs these lines).  -1 with err naming the option
 * for a value no quoting carries. */
static int sbatch_line(json_t *lines, const char *key, const char *value, struct moe_error *err)
{
    char *arg, *q;
    size_t len = strlen(key) + strlen(value) + 4;

    if (!(arg = malloc(len))) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    snprintf(arg, len, "--%s=%s", key, value);
    q = moe_sbatch_quote(arg, err);
    free(arg);
    if (!q) {
        char why[MOE_ERROR_TEXT_MAX];

        snprintf(why, sizeof(why), "%s", err->text[0] ? err->text : "out of memory");
        moe_error_set(err, "#SBATCH --%s: the value %s", key, why);
        return -1;
    }
    json_array_append_new(lines, json_sprintf("#SBATCH %s", q));
    free(q);
    return 0;
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

static json_t *sorted(json_t *lines)
{
    size_t n = json_array_size(lines);
    json_t **v = calloc(n ? n : 1, sizeof(json_t *)), *out = json_array();

    if (!v || !out) {
        free(v);
        json_decref(out);
        json_decref(lines);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(lines, i);
    qsort(v, n, sizeof(json_t *), cmp_lines);
    for (size_t i = 0; i < n; i++)
        json_array_append(out, v[i]);
    free(v);
    json_decref(lines);
    return out;
}

/* Array chunks of at most max indices, each 0-based with an index offset.
 * Arrays name no candidate at sbatch: the plugin then checks every
 * candidate of the stage in manifest.json; each task's srun names its own
 * candidate, which is checked again when it starts. */
static json_t *chunks(const char *script, const json_t *cands, int n, int max, int throttle)
{
    json_t *out = json_array();

    for (int off = 0; off < n; off += max) {
        int count = n - off < max ? n - off : max;
        const char *first = json_string_value(json_object_get(json_array_get(cands, off), "id"));
        json_t *c = json_pack("{s:i, s:i, s:s}", "offset", off, "count", count, "candidate",
                              first ? first : "");
        json_t *args;

        json_object_set_new(c, "array", json_sprintf("0-%d%%%d", count - 1, throttle));
        if (off == 0 && n <= max)
            args = json_string("");
        else if (off == 0)
            args = json_sprintf(" --array=0-%d%%%d", count - 1, throttle);
        else
            args = json_sprintf(" --array=0-%d%%%d --export=ALL,MOEFLOW_INDEX_OFFSET=%d",
                                count - 1, throttle, off);
        json_object_set_new(c, "sbatch", json_sprintf("sbatch%s %s", json_string_value(args),
                                                      script));
        json_object_set_new(c, "args", args);
        json_array_append_new(out, c);
    }
    return out;
}

static const char *value_text(const json_t *v, char *buf, size_t len)
{
    char *dump;

    if (json_is_string(v))
        return json_string_value(v);
    dump = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    snprintf(buf, len, "%s", dump ? dump : "");
    free(dump);
    return buf;
}

static json_t *script_candidates(const json_t *cands)
{
    json_t *out = json_array(), *c;
    size_t i;

    json_array_foreach(cands, i, c) {
        char buf[512];
        char *argv = moe_shquote_argv(json_object_get(c, "argv"));
        char *env = moe_shquote_env(json_object_get(c, "env"));
        char *val = moe_shquote(value_text(json_object_get(c, "value"), buf, sizeof(buf)));
        json_t *rank = json_object_get(c, "rank");

        json_array_append_new(out, json_pack("{s:i, s:O, s:s, s:s, s:O, s:s, s:O, s:O, s:o}",
                                             "index", (int)i, "id", json_object_get(c, "id"),
                                             "argv", argv, "env", env,
                                             "variable", json_object_get(c, "variable"),
                                             "value", val, "label", json_object_get(c, "label"),
                                             "world_size", json_object_get(c, "world_size"),
                                             "rank", rank ? json_incref(rank) : json_integer(0)));
        free(argv);
        free(env);
        free(val);
    }
    return out;
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
static int capture_context(const struct moe_study *s, json_t *ctx, struct moe_error *err)
{
    struct moe_launcher l;
    json_t *argv;
    char *python, *args;

    if (moe_launcher_parse(s->cluster.launcher, &l, err) < 0)
        return -1;
    argv = moe_capture_argv(s, &l);
    python = moe_shquote(l.python);
    args = moe_shquote_argv(argv);
    json_object_set_new(ctx, "capture_python", json_string(python ? python : ""));
    json_object_set_new(ctx, "capture_argv", json_string(args ? args : ""));
    json_object_set_new(ctx, "capture_script", json_string(MOE_CAPTURE_SCRIPT));
    free(python);
    free(args);
    json_decref(argv);
    moe_launcher_free(&l);
    return 0;
}

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
    default:
        return json_sprintf("the baseline for %d steps; report window %d..%d",
                            m->validate_steps, m->window_first, m->window_last);
    }
}

struct stage_out {
    json_t *manifest;       /* this stage's manifest entry */
    json_t *context;        /* template context; NULL when nothing runs */
};

static json_t *sbatch_lines(const struct moe_study *s, enum moe_stage st, const json_t *cands,
                            const json_t *chunk0, const char *study_dir, struct moe_error *err)
{
    const struct moe_cluster *k = &s->cluster;
    const json_t *first = json_array_get(cands, 0);
    int tasks = (int)json_integer_value(json_object_get(first, "tasks_per_node"));
    int nodes = (int)json_integer_value(json_object_get(first, "nodes"));
    json_t *lines = json_array();
    char out[64], gpus[16], ntasks[16], nnodes[16], job[MOE_NAME_MAX + 32];
    bool array = is_array_stage(st, (int)json_array_size(cands));
    int rc = 0;

    snprintf(out, sizeof(out), array ? "logs/%s-%%A_%%a.out" : "logs/%s-%%j.out",
             moe_stage_name(st));
    snprintf(ntasks, sizeof(ntasks), "%d", st == MOE_STAGE_CONTRACT ? 1 : tasks);
    snprintf(gpus, sizeof(gpus), "%s", st == MOE_STAGE_CONTRACT ? "1" : ntasks);
    snprintf(nnodes, sizeof(nnodes), "%d", nodes);
    snprintf(job, sizeof(job), "moeflow-%s-%s", s->name, moe_stage_name(st));
    if (k->account[0])
        rc |= sbatch_line(lines, "account", k->account, err);
    if (k->partition[0] && rc == 0)
        rc |= sbatch_line(lines, "partition", k->partition, err);
    if (array && rc == 0)
        rc |= sbatch_line(lines, "array", json_string_value(json_object_get(chunk0, "array")),
                          err);
    else if (rc == 0)
        rc |= sbatch_line(lines, "moe-candidate",
                          json_string_value(json_object_get(first, "id")), err);
    const char *const kv[][2] = { { "output", out }, { "gpus-per-node", gpus },
                                  { "ntasks-per-node", ntasks }, { "nodes", nnodes },
                                  { "job-name", job }, { "moe-stage", moe_stage_name(st) },
                                  { "moe-study", study_dir }, { "time", k->time_limit } };
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]) && rc == 0; i++)
        rc |= sbatch_line(lines, kv[i][0], kv[i][1], err);
    /* A step time shared with another job's kernels or host threads is not
     * the layout's own: timing stages take whole nodes, all their memory
     * too (--mem=0), unless the study says cluster.exclusive: false. */
    if (k->exclusive && is_timing_stage(st) && rc == 0) {
        json_array_append_new(lines, json_string("#SBATCH --exclusive"));
        rc |= sbatch_line(lines, "mem", "0", err);
    }
    if (rc) {
        json_decref(lines);
        return NULL;
    }
    return sorted(lines);
}

/* moeflow gen --for B: the retune candidates that target bottleneck B (as
 * moeflow diagnose names it); the others are listed as skipped. */
static void keep_bottleneck(struct moe_stage_plan *plan, const char *bottleneck)
{
    json_t *kept = json_array(), *c;
    size_t i;

    json_array_foreach(plan->candidates, i, c) {
        const char *b = json_string_value(json_object_get(c, "bottleneck"));
        if (b && strcmp(b, bottleneck) == 0) {
            json_array_append(kept, c);
            continue;
        }
        json_array_append_new(plan->skipped,
                              json_pack("{s:O, s:O, s:s++}", "variable",
                                        json_object_get(c, "variable"), "value",
                                        json_object_get(c, "value"), "reason", "targets ",
                                        b ? b : "nothing", ", not the diagnosed bottleneck"));
    }
    json_decref(plan->candidates);
    plan->candidates = kept;
}

static int build_stage(const struct moe_study *s, const struct moe_gen_opts *o, const char *hash,
                       int max, enum moe_stage st, struct stage_out *so, struct moe_error *err)
{
    struct moe_stage_plan plan = { .candidates = NULL };
    const char *name = moe_stage_name(st);
    char script[64], *launcher, *image, *mounts;
    json_t *ch, *first, *sb = NULL;
    int n, throttle, per_job;

    so->context = NULL;
    if (moe_candidates_build(s, st, &plan, err) < 0)
        return -1;
    if (st == MOE_STAGE_VALIDATE && o->validate) {
        json_decref(plan.candidates);
        plan.candidates = json_deep_copy(o->validate);
    }
    if (st == MOE_STAGE_RETUNE && o->retune_for)
        keep_bottleneck(&plan, o->retune_for);
    n = (int)json_array_size(plan.candidates);
    snprintf(script, sizeof(script), "%s.sbatch", name);
    first = json_array_get(plan.candidates, 0);
    per_job = first ? (int)(json_integer_value(json_object_get(first, "nodes")) *
                            json_integer_value(json_object_get(first, "tasks_per_node")))
                    : 1;
    /* As many array tasks at once as the study's GPUs hold. */
    throttle = moe_study_world_size(s) / per_job;
    if (throttle < 1)
        throttle = 1;
    ch = chunks(script, plan.candidates, is_array_stage(st, n) ? n : (n ? 1 : 0), max, throttle);
    so->manifest = json_pack("{s:s, s:s, s:b, s:O, s:O, s:O}", "stage", name, "script",
                             n ? script : "", "array", is_array_stage(st, n), "chunks", ch,
                             "candidates", plan.candidates, "skipped", plan.skipped);
    if (n && !(sb = sbatch_lines(s, st, plan.candidates, json_array_get(ch, 0), o->study_dir,
                                 err))) {
        json_decref(so->manifest);
        json_decref(ch);
        moe_stage_plan_free(&plan);
        return -1;
    }
    if (n) {
        if (!(launcher = launcher_words(s, err))) {
            json_decref(ch);
            json_decref(so->manifest);
            moe_stage_plan_free(&plan);
            return -1;
        }
        image = moe_shquote(s->cluster.container_image);
        mounts = moe_shquote(s->cluster.container_mounts);
        so->context = json_pack(
            "{s:s, s:s, s:s, s:s, s:o, s:o, s:O, s:b, s:o, s:O, s:s, s:b, s:s, s:b, s:s,"
            " s:i, s:i, s:O, s:b, s:b, s:i, s:i}",
            "version", o->version, "study", s->name, "study_hash", hash, "stage", name,
            "summary", summary(s, st, n),
            "sbatch", sb,
            "chunks", ch, "array", is_array_stage(st, n),
            "candidates", script_candidates(plan.candidates), "candidate",
            json_array_get(plan.candidates, 0), "launcher", launcher,
            "container", s->cluster.container_image[0] != '\0', "container_image", image,
            "container_mounts_set", s->cluster.container_mounts[0] != '\0',
            "container_mounts", mounts,
            "tasks_per_node", (int)json_integer_value(json_object_get(first, "tasks_per_node")),
            "world_size", moe_study_world_size(s), "measure", json_object_get(s->json, "measure"),
            "nsys", s->measure.profiler == MOE_PROFILER_NSYS, "fit", st == MOE_STAGE_FIT,
            "window_first", s->measure.window_first, "window_last", s->measure.window_last);
        free(launcher);
        free(image);
        free(mounts);
    }
    json_decref(ch);
    moe_stage_plan_free(&plan);
    if (so->context && st == MOE_STAGE_CONTRACT && capture_context(s, so->context, err) < 0) {
        json_decref(so->context);
        json_decref(so->manifest);
        so->context = NULL;
        return -1;
    }
    return 0;
}

static char *tsv(const json_t *stages)
{
    json_t *st, *c;
    size_t i, j;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);

    if (!f)
        return NULL;
    fprintf(f, "stage\tindex\tid\tvariable\tvalue\tlabel\tbottleneck\tnodes\ttasks_per_node"
               "\trank\n");
    json_array_foreach(stages, i, st) {
        json_array_foreach(json_object_get(st, "candidates"), j, c) {
            char buf[512], rank[32] = "";
            if (json_object_get(c, "rank"))
                snprintf(rank, sizeof(rank), "%lld",
                         (long long)json_integer_value(json_object_get(c, "rank")));
            fprintf(f, "%s\t%zu\t%s\t%s\t%s\t%s\t%s\t%lld\t%lld\t%s\n",
                    json_string_value(json_object_get(c, "stage")), j,
                    json_string_value(json_object_get(c, "id")),
                    json_string_value(json_object_get(c, "variable")),
                    value_text(json_object_get(c, "value"), buf, sizeof(buf)),
                    json_string_value(json_object_get(c, "label")),
                    json_string_value(json_object_get(c, "bottleneck")),
                    (long long)json_integer_value(json_object_get(c, "nodes")),
                    (long long)json_integer_value(json_object_get(c, "tasks_per_node")), rank);
        }
    }
    fclose(f);
    return out;
}

static char *render(const struct moe_gen_opts *o, const char *tname, const json_t *ctx,
                    struct moe_error *err)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s", o->templates_dir, tname);
    return moe_template_render_file(path, ctx, err);
}

static char *with_newline(char *s)
{
    size_t n;
    char *p;

    if (!s)
        return NULL;
    n = strlen(s);
    if (!(p = realloc(s, n + 2))) {
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
        char path[4096], name[128];

        snprintf(path, sizeof(path), "%s/" MOE_FIT_PYTHON_DIR "/%s", o->templates_dir, files[i]);
        snprintf(name, sizeof(name), MOE_FIT_PYTHON_DIR "/%s", files[i]);
        if (add_file(out, name, moe_read_file(path, "template", NULL, err), 0644, err) < 0)
            return -1;
    }
    return 0;
}

/* The contract stage runs the capture script from the study directory,
 * which the container sees through the same mounts as the training. */
static int add_capture_script(const struct moe_gen_opts *o, struct moe_gen_output *out,
                              struct moe_error *err)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s", o->templates_dir, MOE_CAPTURE_SCRIPT);
    return add_file(out, MOE_CAPTURE_SCRIPT, moe_read_file(path, "the capture script", NULL, err),
                    0644, err);
}

/* contracts/baseline.json and contracts/<id>.json: what the plugin checks
 * each run against (see contract/contract_check.h). */
static int add_contracts(const struct moe_study *s, const json_t *stages,
                         struct moe_gen_output *out, struct moe_error *err)
{
    struct moe_run run;
    json_t *st, *c, *doc;
    size_t i, j;
    int rc;

    moe_run_from_baseline(&run, s, 0);
    doc = moe_run_contract(s, &run, s->workload.routing == MOE_ROUTING_FORCE_BALANCE
                                        ? "benchmark-only" : "training-equivalent");
    rc = add_file(out, "contracts/baseline.json", canonical_line(doc), 0644, err);
    json_decref(doc);
    json_array_foreach(stages, i, st) {
        json_array_foreach(json_object_get(st, "candidates"), j, c) {
            char name[128];
            snprintf(name, sizeof(name), "contracts/%s.json",
                     json_string_value(json_object_get(c, "id")));
            if (rc == 0)
                rc = add_file(out, name, canonical_line(json_object_get(c, "contract")), 0644,
                              err);
        }
    }
    return rc;
}

int moe_gen_build(const struct moe_study *s, const struct moe_gen_opts *o,
                  struct moe_gen_output *out, struct moe_error *err)
{
    char hash[65], tname[64];
    int max = o->max_array_size ? o->max_array_size
                                : s->cluster.max_array_size ? s->cluster.max_array_size
                                                            : MOE_MAX_ARRAY_SIZE_DEFAULT;
    json_t *stages = json_array(), *submit = json_array(), *manifest = NULL, *ctx;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (moe_megatron_study_check(s, err) < 0)
        goto done;
    if (moe_json_sha256(s->json, hash) < 0) {
        moe_error_set(err, "cannot hash the study");
        goto done;
    }
    for (int st = 0; st < MOE_STAGE_COUNT; st++) {
        struct stage_out so;

        if (o->only != MOE_STAGE_NONE && o->only != (enum moe_stage)st)
            continue;
        if (build_stage(s, o, hash, max, (enum moe_stage)st, &so, err) < 0)
            goto done;
        json_array_append_new(stages, so.manifest);
        if (!so.context) {
            json_array_append_new(submit, json_pack("{s:s, s:s, s:b}", "stage",
                                                    moe_stage_name(st), "summary",
                                                    "no candidates: see skipped in manifest.json",
                                                    "run", 0));
            continue;
        }
        json_array_append_new(submit, json_pack("{s:s, s:O, s:O, s:b, s:b, s:s+}", "stage",
                                                moe_stage_name(st), "summary",
                                                json_object_get(so.context, "summary"),
                                                "chunks", json_object_get(so.context, "chunks"),
                                                "run", 1, "wait", st == MOE_STAGE_CONTRACT,
                                                "script", moe_stage_name(st), ".sbatch"));
        snprintf(tname, sizeof(tname), "%s.sbatch.in", moe_stage_name(st));
        snprintf(tname + 32, 32, "%s.sbatch", moe_stage_name(st));
        if (add_file(out, tname + 32, render(o, tname, so.context, err), 0755, err) < 0) {
            json_decref(so.context);
            goto done;
        }
        json_decref(so.context);
        if (st == MOE_STAGE_FIT && add_fit_python(o, out, err) < 0)
            goto done;
        if (st == MOE_STAGE_CONTRACT && add_capture_script(o, out, err) < 0)
            goto done;
    }
    if (add_contracts(s, stages, out, err) < 0)
        goto done;
    ctx = json_pack("{s:s, s:s, s:s, s:O}", "version", o->version, "study", s->name,
                    "study_hash", hash, "stages", submit);
    if (add_file(out, "submit.sh", render(o, "submit.sh.in", ctx, err), 0755, err) < 0 ||
        add_file(out, "rank-env.sh", render(o, "rank-env.sh.in", ctx, err), 0755, err) < 0) {
        json_decref(ctx);
        goto done;
    }
    json_decref(ctx);
    manifest = json_pack("{s:s, s:s, s:s, s:i, s:O}", "moeflow_version", o->version, "study",
                         s->name, "study_hash", hash, "max_array_size", max, "stages", stages);
    if (add_file(out, "manifest.json",
                 with_newline(json_dumps(manifest, JSON_SORT_KEYS | JSON_INDENT(2) |
                                                       JSON_REAL_PRECISION(15))),
                 0644, err) < 0 ||
        add_file(out, "candidates.tsv", tsv(stages), 0644, err) < 0 ||
        add_file(out, "study.json", with_newline(moe_json_canonical(s->json)), 0644, err) < 0 ||
        add_file(out, "study.yaml", strdup(o->study_text), 0644, err) < 0)
        goto done;
    rc = 0;
done:
    json_decref(manifest);
    json_decref(stages);
    json_decref(submit);
    if (rc < 0)
        moe_gen_output_free(out);
    return rc;
}

void moe_gen_output_free(struct moe_gen_output *out)
{
    for (int i = 0; i < out->n; i++)
        free(out->files[i].data);
    free(out->files);
    out->files = NULL;
    out->n = out->cap = 0;
}
