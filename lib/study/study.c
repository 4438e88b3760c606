/* Step two of reading a study: defaults, presets and the cross-field rules
 * that make a configuration impossible, each explained at the value that
 * breaks it.  The resolved study is then written back as canonical JSON so
 * that two files meaning the same thing hash the same. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "study/launcher.h"
#include "study/launcher_internal.h"
#include "study/megatron_args.h"
#include "study/megatron_args_internal.h"
#include "study/presets.h"
#include "core/number.h"
#include "core/readfile.h"
#include "core/suggest.h"
#include "study/model_check.h"
#include "study/study.h"
#include "study/study_internal.h"
#include "study/study_fit.h"
#include "study/study_fit_internal.h"
#include "study/study_pipeline.h"
#include "study/study_pipeline_internal.h"
#include "study/study_schema.h"
#include "study/study_schema_internal.h"
#include "study/study_yaml.h"
#include "study/study_yaml_internal.h"
#include "study/time_limit.h"
#include "study/time_limit_internal.h"

struct ctx {
    const char *name;
    json_t *root, *pos;
    struct moe_error *err;
    /* The reader reads the schema's keys and no others: each path asked
     * for, and the first one the schema lacks (reader_check). */
    json_t *asked;
    bool asked_short;   /* a path could not be added to asked (out of memory) */
    char unknown[128];
    /* The reader goes on after an error, to report every one it can in
     * one pass: errors.list holds them, errors.bad the key paths in
     * error (the YAML walk's and fail()'s), which later checks skip
     * rather than pile on.  fatal (out of memory, an internal error, in
     * err) stops it. */
    struct moe_yaml_errors errors;
    bool fatal;
};

/* Out of memory or an internal error: what is read after it means
 * nothing, so no rule across sections runs and err says only this. */
static int fatal(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fatal(struct ctx *c, const char *fmt, ...)
{
    char text[MOE_ERROR_TEXT_MAX];
    va_list ap;

    va_start(ap, fmt);
    /* a message: cut, it still reads */
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    moe_error_set(c->err, "%s: %s", c->name, text);
    c->fatal = true;
    return -1;
}

/* bad holds path, or a key above it ("model" over "model.hidden"), or,
 * with below, one under it ("baseline.recompute_modules[1]"). */
static bool in_error(const struct ctx *c, const char *path, bool below)
{
    size_t n = strlen(path);
    const char *key;
    json_t *v;

    json_object_foreach(c->errors.bad, key, v) {
        size_t k = strlen(key);

        if (strcmp(key, "(top)") == 0)
            return true; /* a key of the study itself that could not be read */
        if (k <= n && strncmp(key, path, k) == 0 && strchr(".[", path[k]))
            return true; /* path itself (path[k] is its NUL) or a key above */
        if (below && k > n && strncmp(key, path, n) == 0 && strchr(".[", key[n]))
            return true;
    }
    return false;
}

/* None of the NULL-ended key paths, the inputs of a check, is in error:
 * a check of values that are defaults standing in for a refused one would
 * pile on. */
static bool clean(const struct ctx *c, ...) __attribute__((sentinel));

static bool clean(const struct ctx *c, ...)
{
    const char *path;
    bool ok = true;
    va_list ap;

    va_start(ap, c);
    while (ok && (path = va_arg(ap, const char *)))
        ok = !in_error(c, path, true);
    va_end(ap);
    return ok;
}

static void mark_bad(struct ctx *c, const char *path)
{
    if (json_object_set_new(c->errors.bad, path, json_true()) < 0)
        fatal(c, "out of memory recording %s", path);
}

/* Points at the value of path, or at its closest parent that has one. */
static int fail(struct ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, const char *path, const char *fmt, ...)
{
    char text[MOE_ERROR_TEXT_MAX], p[256];
    struct moe_error e;
    json_t *at = NULL;
    va_list ap;

    va_start(ap, fmt);
    /* a message: people read it, and a cut one still reads */
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    /* a message's position: a cut path points at a parent key, as the loop does */
    snprintf(p, sizeof(p), "%s", path);
    while (!(at = json_object_get(c->pos, p))) {
        char *dot = strrchr(p, '.');
        if (!dot)
            break;
        *dot = '\0';
    }
    /* one error for a key: the first says why it is wrong */
    if (in_error(c, path, false))
        return -1;
    if (at)
        moe_error_at(&e, c->name, (int)json_integer_value(json_array_get(at, 0)),
                     (int)json_integer_value(json_array_get(at, 1)), "%s: %s", path, text);
    else
        moe_error_at(&e, c->name, 0, 0, "%s: %s", path, text);
    moe_error_list_add(c->errors.list, &e);
    mark_bad(c, path);
    return -1;
}

static json_t *get(struct ctx *c, const char *path)
{
    char p[256], *key, *save = NULL;
    json_t *v = c->root;

    /* a path longer than p is no schema key: reader_check names it */
    if ((!moe_study_field(path) || strlen(path) >= sizeof(p)) && !c->unknown[0])
        /* a message: reader_check's; a cut path still names it */
        snprintf(c->unknown, sizeof(c->unknown), "%s", path);
    if (json_object_set_new(c->asked, path, json_true()) < 0)
        c->asked_short = true;
    if (strlen(path) >= sizeof(p))
        return NULL;
    /* fits: checked above */
    snprintf(p, sizeof(p), "%s", path);
    for (key = strtok_r(p, ".", &save); key && v; key = strtok_r(NULL, ".", &save))
        v = json_object_get(v, key);
    return v;
}

static int get_int(struct ctx *c, const char *path, int def)
{
    json_t *v = get(c, path);
    return v ? (int)json_integer_value(v) : def;
}

static bool get_bool(struct ctx *c, const char *path, bool def)
{
    json_t *v = get(c, path);
    return v ? json_is_true(v) : def;
}

static const char *get_str(struct ctx *c, const char *path, const char *def)
{
    json_t *v = get(c, path);
    return v ? json_string_value(v) : def;
}

/* Position of a schema enum value in its list; the schema has already
 * rejected anything else. */
static int get_enum(struct ctx *c, const char *path, const char *const *names, int def)
{
    int i = moe_enum_parse(names, get_str(c, path, NULL));

    return i < 0 ? def : i;
}

/* The one way a string enters the study: its own heap copy, as long as the
 * value.  The YAML reader has refused a value over the schema's limit with
 * the limit named (study_yaml.c string_limit); nothing is cut here. */
static int own_str(struct ctx *c, char **dst, const char *path, const char *def)
{
    const char *v = path ? get_str(c, path, def) : def;

    free(*dst);
    if (!(*dst = strdup(v ? v : "")))
        return fatal(c, "%s: out of memory", path ? path : "(top)");
    return 0;
}

static int require(struct ctx *c, const char *path)
{
    if (get(c, path))
        return 0;
    return fail(c, path, "is required");
}

/* A list of names from the schema's choices: each entry points at the
 * choice itself (static), so nothing is copied or cut. */
static int get_strlist(struct ctx *c, const char *path, struct moe_strlist *out)
{
    const struct moe_field *f = moe_study_field(path);
    json_t *v = get(c, path), *item;
    size_t i;

    out->n = 0;
    if (json_array_size(v) > MOE_STUDY_LIST_MAX)
        return fail(c, path, "%zu values: a list holds at most %d", json_array_size(v),
                    MOE_STUDY_LIST_MAX);
    json_array_foreach(v, i, item) {
        const char *const *ch = f ? f->choices : NULL;

        while (ch && *ch && strcmp(*ch, json_string_value(item)) != 0)
            ch++;
        if (!ch || !*ch)
            return fatal(c, "internal error: %s: '%s' is none of the schema's choices", path,
                         json_string_value(item));
        out->v[out->n++] = *ch;
    }
    return 0;
}

/* The tables behind study.h's enums; the schema's allowed values and the
 * JSON and contract writers use the same ones. */
MOE_ENUM_NAMES_DEFINE(MOE_DIALECT_LIST, MOE_DIALECT_COUNT, moe_dialect_names);
MOE_ENUM_NAMES_DEFINE(MOE_DISPATCHER_LIST, MOE_DISPATCHER_COUNT, moe_dispatcher_names);
MOE_ENUM_NAMES_DEFINE(MOE_PRECISION_LIST, MOE_PRECISION_COUNT, moe_precision_names);
MOE_ENUM_NAMES_DEFINE(MOE_PROFILER_LIST, MOE_PROFILER_COUNT, moe_profiler_names);
MOE_ENUM_NAMES_DEFINE(MOE_RECOMPUTE_LIST, MOE_RECOMPUTE_COUNT, moe_recompute_names);
MOE_ENUM_NAMES_DEFINE(MOE_PLUGIN_MODE_LIST, MOE_PLUGIN_MODE_COUNT, moe_plugin_mode_names);

#define NAME_FN(fn, type, table, count)                                                        \
    const char *fn(type v) { return moe_enum_name(table, count, (int)v); }
NAME_FN(moe_dialect_name, enum moe_dialect, moe_dialect_names, MOE_DIALECT_COUNT)
NAME_FN(moe_dispatcher_name, enum moe_dispatcher, moe_dispatcher_names, MOE_DISPATCHER_COUNT)
NAME_FN(moe_precision_name, enum moe_precision, moe_precision_names, MOE_PRECISION_COUNT)
NAME_FN(moe_profiler_name, enum moe_profiler, moe_profiler_names, MOE_PROFILER_COUNT)
NAME_FN(moe_recompute_name, enum moe_recompute, moe_recompute_names, MOE_RECOMPUTE_COUNT)
NAME_FN(moe_routing_name, enum moe_routing, moe_routing_names, MOE_ROUTING_COUNT)
NAME_FN(moe_router_score_name, enum moe_router_score, moe_router_score_names,
        MOE_ROUTER_SCORE_COUNT)
NAME_FN(moe_attention_name, enum moe_attention_kind, moe_attention_names, MOE_ATTENTION_COUNT)
#undef NAME_FN

bool moe_precision_is_fp8(enum moe_precision p)
{
    return p == MOE_PREC_FP8_TENSORWISE || p == MOE_PREC_FP8_DELAYED || p == MOE_PREC_FP8_BLOCKWISE;
}

/* ---- model ---- */

#define MODEL_INT(key, field) { MOE_SK_MODEL_##key, offsetof(struct moe_model, field) }
static const struct { const char *path; size_t off; } model_ints[] = {
    MODEL_INT(NUM_LAYERS, num_layers), MODEL_INT(HIDDEN, hidden),
    MODEL_INT(FFN_HIDDEN, ffn_hidden), MODEL_INT(MOE_FFN_HIDDEN, moe_ffn_hidden),
    MODEL_INT(NUM_EXPERTS, num_experts), MODEL_INT(TOPK, topk),
    MODEL_INT(SHARED_EXPERT_FFN, shared_expert_ffn),
    MODEL_INT(FIRST_DENSE_LAYERS, first_dense_layers), MODEL_INT(MTP_LAYERS, mtp_layers),
    MODEL_INT(ROUTER_GROUPS, router_groups), MODEL_INT(ROUTER_GROUP_TOPK, router_group_topk),
    MODEL_INT(NUM_HEADS, num_heads), MODEL_INT(NUM_QUERY_GROUPS, num_query_groups),
    MODEL_INT(HEAD_DIM, head_dim), MODEL_INT(Q_LORA_RANK, q_lora_rank),
    MODEL_INT(KV_LORA_RANK, kv_lora_rank), MODEL_INT(QK_HEAD_DIM, qk_head_dim),
    MODEL_INT(QK_POS_HEAD_DIM, qk_pos_head_dim), MODEL_INT(V_HEAD_DIM, v_head_dim),
    MODEL_INT(VOCAB, vocab),
};
#define N_MODEL_INTS (sizeof(model_ints) / sizeof(model_ints[0]))

static int model_preset(struct ctx *c, struct moe_model *m)
{
    const char *name = get_str(c, MOE_SK_MODEL_PRESET, NULL);
    const struct moe_model *p;
    const char *const *names = moe_preset_names();
    int n = 0;

    /* a refused preset named the model: the sizes it stands for are not missing */
    if (!name && in_error(c, MOE_SK_MODEL_PRESET, false))
        return -1;
    if (!name) {
        static const char *const needed[] = {
            MOE_SK_MODEL_NUM_LAYERS, MOE_SK_MODEL_HIDDEN, MOE_SK_MODEL_MOE_FFN_HIDDEN,
            MOE_SK_MODEL_NUM_EXPERTS, MOE_SK_MODEL_TOPK, MOE_SK_MODEL_NUM_HEADS,
            MOE_SK_MODEL_VOCAB };
        memset(m, 0, sizeof(*m));
        /* fits: a literal shorter than any name buffer */
        snprintf(m->name, sizeof(m->name), "custom");
        m->swiglu = true;
        m->untie_embeddings = true;
        for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
            if (require(c, needed[i]) < 0)
                return -1;
        return 0;
    }
    if ((p = moe_preset_find(name))) {
        *m = *p;
        return 0;
    }
    while (names[n])
        n++;
    {
        const char *near = moe_suggest(name, (const char *const *)names, n);
        char list[256] = "";
        size_t off = 0;
        for (int i = 0; i < n; i++)
            off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? "|" : "",
                                    names[i]);
        if (near)
            return fail(c, MOE_SK_MODEL_PRESET,
                        "unknown preset '%s' (did you mean '%s'?); known: %s", name, near, list);
        return fail(c, MOE_SK_MODEL_PRESET, "unknown preset '%s'; known: %s", name, list);
    }
}

static int model_read(struct ctx *c, struct moe_model *m)
{
    if (require(c, MOE_SK_MODEL) < 0 || model_preset(c, m) < 0)
        return -1;
    for (size_t i = 0; i < N_MODEL_INTS; i++) {
        int *v = (int *)((char *)m + model_ints[i].off);

        *v = get_int(c, model_ints[i].path, *v);
    }
    if (get(c, MOE_SK_MODEL_PRESET) && json_object_size(get(c, MOE_SK_MODEL)) > 1)
        /* fits: a literal shorter than any name buffer */
        snprintf(m->name, sizeof(m->name), "custom");
    if (!get(c, MOE_SK_MODEL_PRESET) && !get(c, MOE_SK_MODEL_NUM_QUERY_GROUPS))
        m->num_query_groups = m->num_heads;
    if (!get(c, MOE_SK_MODEL_PRESET) && !get(c, MOE_SK_MODEL_HEAD_DIM))
        m->head_dim = m->hidden / m->num_heads;
    m->router_score = get_enum(c, MOE_SK_MODEL_ROUTER_SCORE, moe_router_score_names,
                               m->router_score);
    m->attention = get_enum(c, MOE_SK_MODEL_ATTENTION, moe_attention_names, m->attention);
    m->qk_layernorm = get_bool(c, MOE_SK_MODEL_QK_LAYERNORM, m->qk_layernorm);
    m->swiglu = get_bool(c, MOE_SK_MODEL_SWIGLU, m->swiglu);
    m->untie_embeddings = get_bool(c, MOE_SK_MODEL_UNTIE_EMBEDDINGS, m->untie_embeddings);
    return 0;
}

/* The one model check (model_check.h), pointed at the key it names. */
static int model_check(struct ctx *c, const struct moe_model *m)
{
    struct moe_error e;
    const char *key;
    char path[64];

    moe_error_clear(&e);
    if (moe_model_check(m, &key, &e) == 0)
        return 0;
    /* a message's position: key is one of moe_model_check's field names, short */
    snprintf(path, sizeof(path), MOE_SK_MODEL ".%s", key ? key : "");
    return fail(c, path, "%s", e.text);
}

/* ---- cluster, workload, software ---- */

/* The step-time settings; unset (-1): the GPU type's default.  Each has
 * the physical range below, with the reason for each bound; a value
 * outside (a unit slip, a denormal that makes a step 10^300 ms long) is
 * refused, and the model never sees it.  The defaults of every GPU type
 * (fit/gpu.h, fit/gpu_perf.c) lie inside: test_study checks them. */
const struct moe_study_rate moe_study_rates[] = {
    /* A100's BF16 at Megatron's share is the least any type reaches (187);
     * under 1 TFLOP/s is a unit slip (GFLOP/s).  20x GB300's dense FP8
     * peak (5 PFLOP/s) is more than any GPU. */
    { MOE_SK_CLUSTER_ACHIEVABLE_TFLOPS_BF16, 1, 1e5, "TFLOP/s per GPU" },
    { MOE_SK_CLUSTER_ACHIEVABLE_TFLOPS_FP8, 1, 1e5, "TFLOP/s per GPU" },
    /* Gigabit Ethernet (0.125 GB/s) is slower than any GPU fabric; 100x
     * NVLink 5's 900 GB/s one way is faster than any. */
    { MOE_SK_CLUSTER_NVLINK_GBPS, 0.1, 1e5, "GB/s per GPU, one way" },
    { MOE_SK_CLUSTER_INTERNODE_GBPS, 0.1, 1e5, "GB/s per GPU, one way" },
    /* A time may be 0 (TE's documented host_expert_us and host_etp_us);
     * one second per layer and microbatch is 85x the slowest measured
     * (the local implementation's 11.8 ms). */
    { MOE_SK_CLUSTER_HOST_OVERHEAD_US, 0, 1e6, "microseconds per layer and microbatch" },
    { MOE_SK_CLUSTER_HOST_EXPERT_US, 0, 1e6, "microseconds per local expert and MoE layer" },
    { MOE_SK_CLUSTER_HOST_ETP_US, 0, 1e6, "microseconds per MoE layer" },
    /* 1 ms per routed token copy is 4000x the slowest default (A100, the
     * local implementation: 255 ns). */
    { MOE_SK_CLUSTER_ROUTE_NS, 0, 1e6, "nanoseconds per routed token copy and MoE layer" },
    { NULL, 0, 0, NULL },
};

/* One number of the study in its range (core/number.h), the message
 * naming the unit the range is in. */
static int in_range(struct ctx *c, const char *key, double v, double min, double max,
                    const char *unit)
{
    struct moe_error e;

    moe_error_clear(&e);
    if (moe_number_check(v, min, false, max, &e) < 0)
        return fail(c, key, "%s (%s)", e.text, unit);
    return 0;
}

static int cluster_rates(struct ctx *c, struct moe_cluster *k)
{
    double *v[] = { &k->tflops_bf16, &k->tflops_fp8, &k->nvlink_gbps, &k->internode_gbps,
                    &k->host_us, &k->host_expert_us, &k->host_etp_us, &k->route_ns };

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        const struct moe_study_rate *r = &moe_study_rates[i];
        json_t *j = get(c, r->key);

        *v[i] = -1;
        if (!j)
            continue;
        if (in_range(c, r->key, json_number_value(j), r->min, r->max, r->unit) < 0)
            return -1;
        *v[i] = json_number_value(j);
    }
    return 0;
}

/* The schema's pattern has taken the form; what it means is Slurm's to
 * say (time_limit.h): a limit it would wrap is refused, not written. */
static int time_limit_check(struct ctx *c, const char *path, const char *text)
{
    struct moe_error e;
    long minutes;

    moe_error_clear(&e);
    if (moe_time_limit_minutes(text, &minutes, &e) < 0)
        return fail(c, path, "%s", e.text);
    return 0;
}

/* cluster.stage_time_limit: a stage's own limit ("" where it has none,
 * cluster.time_limit then), each held to Slurm's reading as time_limit is;
 * a name that is no stage the YAML reader has refused, naming it. */
static int stage_limits_read(struct ctx *c, struct moe_cluster *k)
{
    static const char *const path[MOE_STAGE_COUNT] = {
        [MOE_STAGE_CONTRACT] = MOE_SK_CLUSTER_STAGE_TIME_LIMIT_CONTRACT,
        [MOE_STAGE_FIT] = MOE_SK_CLUSTER_STAGE_TIME_LIMIT_FIT,
        [MOE_STAGE_SCALE] = MOE_SK_CLUSTER_STAGE_TIME_LIMIT_SCALE,
        [MOE_STAGE_PROFILE] = MOE_SK_CLUSTER_STAGE_TIME_LIMIT_PROFILE,
        [MOE_STAGE_RETUNE] = MOE_SK_CLUSTER_STAGE_TIME_LIMIT_RETUNE,
        [MOE_STAGE_VALIDATE] = MOE_SK_CLUSTER_STAGE_TIME_LIMIT_VALIDATE,
    };

    for (int st = 0; st < MOE_STAGE_COUNT; st++)
        if (own_str(c, &k->stage_time_limit[st], path[st], "") < 0 ||
            (k->stage_time_limit[st][0] &&
             time_limit_check(c, path[st], k->stage_time_limit[st]) < 0))
            return -1;
    return 0;
}

const char *moe_study_time_limit(const struct moe_study *s, enum moe_stage st)
{
    if ((unsigned)st < MOE_STAGE_COUNT && moe_study_str_set(s->cluster.stage_time_limit[st]))
        return s->cluster.stage_time_limit[st];
    return s->cluster.time_limit;
}

/* sbatch's --constraint grammar over what the schema's pattern let
 * through: expr := term (op term)*, op one of & | , ; term := NAME[*N] or
 * [expr] or (expr).  *p moves past what was read; false at the first
 * thing Slurm would refuse (an empty term, a lone operator, an unclosed
 * bracket). */
static bool constraint_expr(const char **p, int depth);

static bool constraint_term(const char **p, int depth)
{
    const char *s = *p;

    if ((*s == '[' || *s == '(') && depth < 8) {
        char close = *s == '[' ? ']' : ')';

        *p = s + 1;
        if (!constraint_expr(p, depth + 1) || **p != close)
            return false;
        (*p)++;
        return true;
    }
    *p += strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
    if (*p == s)
        return false;
    if (**p == '*') {
        size_t n = strspn(*p + 1, "0123456789");

        if (!n)
            return false;
        *p += 1 + n;
    }
    return true;
}

static bool constraint_expr(const char **p, int depth)
{
    if (!constraint_term(p, depth))
        return false;
    while (**p && strchr("&|,", **p)) {
        (*p)++;
        if (!constraint_term(p, depth))
            return false;
    }
    return true;
}

static int constraint_check(struct ctx *c, const char *text)
{
    const char *p = text;

    if (!text[0] || (constraint_expr(&p, 0) && !*p))
        return 0;
    return fail(c, MOE_SK_CLUSTER_CONSTRAINT, "'%.80s' is no feature expression sbatch reads: "
                "at byte %zu, a feature name, [ or ( was expected, or an operator (& | ,) "
                "between two of them", text, (size_t)(p - text) + 1);
}

/* Variables moeflow sets or owns, by name or prefix, and why a study may
 * not set them: the run would no longer be the one its contract declares
 * (moe_megatron_env_names are the tuning variables' own). */
static const struct { const char *name; bool prefix; const char *why; } env_owned[] = {
    { "RANK", false, "rank-env.sh and the moeflow plugin set each task's rank" },
    { "LOCAL_RANK", false, "rank-env.sh and the moeflow plugin set each task's rank" },
    { "WORLD_SIZE", false, "rank-env.sh and the moeflow plugin set the job's size" },
    { "LOCAL_WORLD_SIZE", false, "the moeflow plugin sets the node's task count" },
    { "MASTER_ADDR", false, "the scripts set the rendezvous from the job's first node" },
    { "MASTER_PORT", false, "the scripts set the rendezvous port from the job id" },
    { "CUDA_VISIBLE_DEVICES", false, "Slurm and the moeflow plugin bind each rank's GPU" },
    { "PYTHONPATH", false, "the fit and contract stages put their own modules first on it" },
    { "CUBLAS_WORKSPACE_CONFIG", false, "validation.checkpoint's deterministic run sets it" },
    { "NCCL_ALGO", false, "validation.checkpoint's deterministic run sets it" },
    { "NVTE_ALLOW_NONDETERMINISTIC_ALGO", false,
      "validation.checkpoint's deterministic run sets it" },
    { "SLURM_", true, "Slurm sets its own variables" },
    { "MOEFLOW_", true, "moeflow's own variables are set by moeflow" },
};

/* Why name may not be set, or NULL. */
static const char *env_owner(const char *name)
{
    for (size_t i = 0; i < sizeof(env_owned) / sizeof(env_owned[0]); i++)
        if (env_owned[i].prefix ? strncmp(name, env_owned[i].name, strlen(env_owned[i].name)) == 0
                                : strcmp(name, env_owned[i].name) == 0)
            return env_owned[i].why;
    for (const char *const *n = moe_megatron_env_names; *n; n++)
        if (strcmp(name, *n) == 0)
            return "moeflow sets it from each run's configuration (megatron_args.c), and a "
                   "tuning variable stays a tuning variable: change it through the study's "
                   "baseline and retune keys";
    return NULL;
}

static int env_name_check(struct ctx *c, const char *path, const char *name)
{
    const char *why;

    if (strlen(name) > MOE_STUDY_ENV_NAME_MAX)
        return fail(c, path, "a name over %d bytes", MOE_STUDY_ENV_NAME_MAX);
    if (!name[0] || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
                                 "0123456789") != strlen(name) ||
        (name[0] >= '0' && name[0] <= '9'))
        return fail(c, path, "'%s' is no variable name: letters, digits and _, not starting "
                    "with a digit", name);
    if ((why = env_owner(name)))
        return fail(c, path, "%s is moeflow's to set: %s", name, why);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* cluster.env as NAME=value entries, sorted by name: the order the
 * scripts export them and the contract seals them in. */
static int env_read(struct ctx *c, struct moe_cluster *k)
{
    json_t *env = get(c, MOE_SK_CLUSTER_ENV), *v;
    const char *names[MOE_STUDY_ENV_MAX], *name;
    size_t n = 0;
    char path[256];

    if (json_object_size(env) > MOE_STUDY_ENV_MAX)
        return fail(c, MOE_SK_CLUSTER_ENV, "%zu variables: at most %d",
                    json_object_size(env), MOE_STUDY_ENV_MAX);
    json_object_foreach(env, name, v)
        names[n++] = name;
    qsort(names, n, sizeof(names[0]), cmp_str);
    for (size_t i = 0; i < n; i++) {
        const char *value = json_string_value(json_object_get(env, names[i]));

        /* a message's position: a name cut here is refused for its length */
        snprintf(path, sizeof(path), MOE_SK_CLUSTER_ENV ".%.128s", names[i]);
        if (env_name_check(c, path, names[i]) < 0)
            return -1;
        if (strlen(value) > MOE_STUDY_ENV_VALUE_MAX)
            return fail(c, path, "a value of %zu bytes, over the limit of %d", strlen(value),
                        MOE_STUDY_ENV_VALUE_MAX);
        if (moe_strv_pushf(&k->env, "%s=%s", names[i], value) < 0)
            return fatal(c, "%s: out of memory", path);
    }
    return 0;
}

/* cluster.launcher.extra_args, kept as written and checked against the
 * dialect software.megatron names (megatron_extra.c); without one,
 * software's own check says so. */
static int extra_args_read(struct ctx *c, struct moe_cluster *k)
{
    json_t *args = get(c, MOE_SK_CLUSTER_LAUNCHER_EXTRA_ARGS), *w;
    int d = moe_enum_parse(moe_dialect_names, get_str(c, MOE_SK_SOFTWARE_MEGATRON, NULL));
    struct moe_error e;
    char path[128];
    size_t i, at = 0;

    if (json_array_size(args) > MOE_STUDY_ARGS_MAX)
        return fail(c, MOE_SK_CLUSTER_LAUNCHER_EXTRA_ARGS, "%zu words: at most %d",
                    json_array_size(args), MOE_STUDY_ARGS_MAX);
    json_array_foreach(args, i, w)
        if (moe_strv_push(&k->extra_args, json_string_value(w)) < 0)
            return fatal(c, MOE_SK_CLUSTER_LAUNCHER_EXTRA_ARGS ": out of memory");
    moe_error_clear(&e);
    if (d < 0 || moe_megatron_extra_check((enum moe_dialect)d, &k->extra_args, &at, &e) == 0)
        return 0;
    /* fits: the key and an index */
    snprintf(path, sizeof(path), MOE_SK_CLUSTER_LAUNCHER_EXTRA_ARGS "[%zu]", at);
    return fail(c, path, "%s", e.text);
}

/* Every stage splits the launcher the same way (launcher.h): one that does
 * not split is refused here, with its position, not at generation. */
static int launcher_check(struct ctx *c, const char *command)
{
    struct moe_launcher l;
    struct moe_error e;

    moe_error_clear(&e);
    if (moe_launcher_parse(command, &l, &e) < 0)
        return fail(c, MOE_SK_CLUSTER_LAUNCHER_COMMAND, "%s", e.text);
    moe_launcher_free(&l);
    return 0;
}

/* srun --container-workdir: an absolute path with no ".." (the folder
 * must be the one named, not one a mount makes of it); the YAML reader
 * has refused control characters, and a blank is data (templates quote). */
static int workdir_check(struct ctx *c, const char *dir)
{
    const char *p = dir;

    if (!dir[0])
        return 0;
    if (dir[0] != '/')
        return fail(c, MOE_SK_CLUSTER_CONTAINER_WORKDIR, "'%.80s' is not an absolute path "
                    "(it is a folder inside the container, e.g. /workspace)", dir);
    while ((p = strstr(p, "..")))
        if ((p == dir || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
            return fail(c, MOE_SK_CLUSTER_CONTAINER_WORKDIR, "'%.80s' has a '..' component: "
                        "name the folder itself", dir);
        else
            p += 2;
    return 0;
}

static int cluster_read(struct ctx *c, struct moe_cluster *k)
{
    const struct moe_gpu_type *type;

    if (require(c, MOE_SK_CLUSTER) < 0 || require(c, MOE_SK_CLUSTER_NODES) < 0)
        return -1;
    k->gpu = get_enum(c, MOE_SK_CLUSTER_GPU, moe_gpu_names, MOE_GPU_H100);
    type = moe_gpu_type(k->gpu); /* the schema took only its names */
    k->gpu_memory_gib = get_int(c, MOE_SK_CLUSTER_GPU_MEMORY_GIB, type->memory_gib);
    k->gpus_per_node = get_int(c, MOE_SK_CLUSTER_GPUS_PER_NODE, type->gpus_per_node);
    /* a board's domain is its node, however many GPUs the study uses */
    k->nvlink_domain = get_int(c, MOE_SK_CLUSTER_NVLINK_DOMAIN,
                               type->nvlink_domain == type->gpus_per_node ? k->gpus_per_node
                                                                          : type->nvlink_domain);
    k->nodes = get_int(c, MOE_SK_CLUSTER_NODES, 1);
    k->max_array_size = get_int(c, MOE_SK_CLUSTER_MAX_ARRAY_SIZE, 0);
    k->exclusive = get_bool(c, MOE_SK_CLUSTER_EXCLUSIVE, true);
    k->plugin = get_enum(c, MOE_SK_CLUSTER_PLUGIN, moe_plugin_mode_names, MOE_PLUGIN_AUTO);
    if (own_str(c, &k->partition, MOE_SK_CLUSTER_PARTITION, "") < 0 ||
        own_str(c, &k->account, MOE_SK_CLUSTER_ACCOUNT, "") < 0 ||
        own_str(c, &k->time_limit, MOE_SK_CLUSTER_TIME_LIMIT, "01:00:00") < 0 ||
        time_limit_check(c, MOE_SK_CLUSTER_TIME_LIMIT, k->time_limit) < 0 ||
        stage_limits_read(c, k) < 0 ||
        own_str(c, &k->qos, MOE_SK_CLUSTER_QOS, "") < 0 ||
        own_str(c, &k->reservation, MOE_SK_CLUSTER_RESERVATION, "") < 0 ||
        own_str(c, &k->constraint, MOE_SK_CLUSTER_CONSTRAINT, "") < 0 ||
        constraint_check(c, k->constraint) < 0 ||
        env_read(c, k) < 0 || extra_args_read(c, k) < 0 ||
        own_str(c, &k->container_image, MOE_SK_CLUSTER_CONTAINER_IMAGE, "") < 0 ||
        own_str(c, &k->container_mounts, MOE_SK_CLUSTER_CONTAINER_MOUNTS, "") < 0 ||
        own_str(c, &k->container_workdir, MOE_SK_CLUSTER_CONTAINER_WORKDIR, "") < 0 ||
        workdir_check(c, k->container_workdir) < 0 ||
        own_str(c, &k->launcher, MOE_SK_CLUSTER_LAUNCHER_COMMAND, "python pretrain_gpt.py") < 0)
        return -1;
    if (!k->launcher[0] || strspn(k->launcher, " \t") == strlen(k->launcher))
        return fail(c, MOE_SK_CLUSTER_LAUNCHER_COMMAND, "is empty");
    if (launcher_check(c, k->launcher) < 0)
        return -1;
    if (k->nvlink_domain < k->gpus_per_node && k->gpus_per_node % k->nvlink_domain)
        return fail(c, MOE_SK_CLUSTER_NVLINK_DOMAIN, "%d does not divide %s %d",
                    k->nvlink_domain, MOE_SK_KEY(CLUSTER, GPUS_PER_NODE), k->gpus_per_node);
    if (moe_study_str_set(k->container_mounts) && !moe_study_str_set(k->container_image) &&
        clean(c, MOE_SK_CLUSTER_CONTAINER_IMAGE, NULL))
        return fail(c, MOE_SK_CLUSTER_CONTAINER_MOUNTS,
                    "mounts need " MOE_SK_CLUSTER_CONTAINER_IMAGE);
    if (moe_study_str_set(k->container_workdir) && !moe_study_str_set(k->container_image))
        return fail(c, MOE_SK_CLUSTER_CONTAINER_WORKDIR,
                    "a container's workdir needs " MOE_SK_CLUSTER_CONTAINER_IMAGE);
    return cluster_rates(c, k);
}

/* A number the study may leave out: its value, or def when absent. */
static double get_num(struct ctx *c, const char *path, double def)
{
    json_t *v = get(c, path);

    return v ? json_number_value(v) : def;
}

/* The LR schedule's own rules, each Megatron's where it refuses (the
 * citations are megatron_rules.c's lr_* rules, checked against the
 * committed excerpts) or the honesty of the label where it does not. */
static int schedule_check(struct ctx *c, const struct moe_training *t)
{
    int rc = 0;

    if (t->lr_schedule < 0) {
        static const char *const need[] = { MOE_SK_WORKLOAD_LR_WARMUP_ITERS,
                                             MOE_SK_WORKLOAD_LR_DECAY_ITERS,
                                             MOE_SK_WORKLOAD_MIN_LR, NULL };

        for (const char *const *k = need; *k; k++)
            if (get(c, *k))
                rc = fail(c, *k, "applies to a stated schedule: set "
                          MOE_SK_WORKLOAD_LR_SCHEDULE " too");
        return rc;
    }
    if (!get(c, MOE_SK_WORKLOAD_LR))
        return fail(c, MOE_SK_WORKLOAD_LR_SCHEDULE, "needs " MOE_SK_WORKLOAD_LR
                    ", the training's peak learning rate");
    /* Unset, Megatron decays (and bounds the warm-up) over --train-iters,
     * the run's own few steps: not the training's schedule. */
    if (!t->lr_decay_iters && (t->lr_warmup_iters || strcmp(moe_lr_schedule_names[t->lr_schedule],
                                                            "constant") != 0))
        return fail(c, MOE_SK_WORKLOAD_LR_SCHEDULE, "needs " MOE_SK_WORKLOAD_LR_DECAY_ITERS
                    ": unset, Megatron decays over --train-iters, the run's own few steps");
    if (t->lr_decay_iters && t->lr_warmup_iters >= t->lr_decay_iters)
        rc = fail(c, MOE_SK_WORKLOAD_LR_WARMUP_ITERS, "%d: Megatron needs fewer warm-up "
                  "iterations than " MOE_SK_WORKLOAD_LR_DECAY_ITERS " (%d)", t->lr_warmup_iters,
                  t->lr_decay_iters);
    if (t->min_lr > t->lr)
        rc = fail(c, MOE_SK_WORKLOAD_MIN_LR, "%g is above " MOE_SK_WORKLOAD_LR " (%g)",
                  t->min_lr, t->lr);
    return rc;
}

/* workload's training semantics (struct moe_training): each key left out
 * keeps Megatron's default and says so in the label. */
static int training_read(struct ctx *c, struct moe_training *t)
{
    const char *tok = get_str(c, MOE_SK_WORKLOAD_TOKENIZER, "");
    int rc = 0;

    t->lr = get_num(c, MOE_SK_WORKLOAD_LR, 0);
    t->lr_schedule = get_enum(c, MOE_SK_WORKLOAD_LR_SCHEDULE, moe_lr_schedule_names, -1);
    t->lr_warmup_iters = get_int(c, MOE_SK_WORKLOAD_LR_WARMUP_ITERS, 0);
    t->lr_decay_iters = get_int(c, MOE_SK_WORKLOAD_LR_DECAY_ITERS, 0);
    t->min_lr = get_num(c, MOE_SK_WORKLOAD_MIN_LR, 0);
    t->aux_loss_coeff = get_num(c, MOE_SK_WORKLOAD_AUX_LOSS_COEFF, -1);
    if (own_str(c, &t->tokenizer, NULL, tok) < 0)
        return -1;
    if (get(c, MOE_SK_WORKLOAD_TOKENIZER) && !tok[0])
        rc = fail(c, MOE_SK_WORKLOAD_TOKENIZER, "is empty: leave it out for the null "
                  "tokenizer, or name the HuggingFace tokenizer (a name or a path)");
    /* a learning rate of 0 trains nothing; above 1 no optimizer moeflow
     * emits (Adam, SGD) trains a transformer */
    if (get(c, MOE_SK_WORKLOAD_LR))
        rc |= in_range(c, MOE_SK_WORKLOAD_LR, t->lr, 1e-12, 1, "the peak learning rate");
    if (get(c, MOE_SK_WORKLOAD_MIN_LR))
        rc |= in_range(c, MOE_SK_WORKLOAD_MIN_LR, t->min_lr, 0, 1, "a learning rate");
    /* 0 is a statement too: a model trained without the auxiliary loss
     * (e.g. balanced by the router's expert bias alone) */
    if (get(c, MOE_SK_WORKLOAD_AUX_LOSS_COEFF))
        rc |= in_range(c, MOE_SK_WORKLOAD_AUX_LOSS_COEFF, t->aux_loss_coeff, 0, 100,
                       "times the load-balancing loss added to the LM loss");
    if (rc == 0)
        rc = schedule_check(c, t);
    return rc;
}

static int workload_read(struct ctx *c, struct moe_study *s)
{
    struct moe_workload *w = &s->workload;
    const char *data;

    if (require(c, MOE_SK_WORKLOAD) < 0 || require(c, MOE_SK_WORKLOAD_GBS) < 0)
        return -1;
    w->seq_len = get_int(c, MOE_SK_WORKLOAD_SEQ_LEN, 4096);
    w->mbs = get_int(c, MOE_SK_WORKLOAD_MBS, 1);
    w->gbs = get_int(c, MOE_SK_WORKLOAD_GBS, 0);
    w->routing = get_enum(c, MOE_SK_WORKLOAD_ROUTING, moe_routing_names, MOE_ROUTING_DROPLESS);
    /* Only an absent factor takes drop-and-pad's default: an explicit 0 is
     * refused by its range, not replaced. */
    w->capacity_factor = get(c, MOE_SK_WORKLOAD_CAPACITY_FACTOR)
                             ? json_real_value(get(c, MOE_SK_WORKLOAD_CAPACITY_FACTOR))
                             : w->routing == MOE_ROUTING_DROP_AND_PAD ? 1.0 : 0.0;
    if (w->routing != MOE_ROUTING_DROP_AND_PAD && get(c, MOE_SK_WORKLOAD_CAPACITY_FACTOR) &&
        clean(c, MOE_SK_WORKLOAD_ROUTING, NULL))
        return fail(c, MOE_SK_WORKLOAD_CAPACITY_FACTOR, "applies only to routing: drop-and-pad");
    /* Each expert keeps capacity_factor x its balanced share of tokens:
     * under 1% it drops nearly every token, which no run means; over 64x
     * no token is ever dropped, and the buffers grow with it. */
    if (w->routing == MOE_ROUTING_DROP_AND_PAD &&
        in_range(c, MOE_SK_WORKLOAD_CAPACITY_FACTOR, w->capacity_factor, 0.01, 64,
                 "times each expert's balanced share of tokens") < 0)
        return -1;
    data = get_str(c, MOE_SK_WORKLOAD_DATA, "mock");
    if (own_str(c, &s->data_path, NULL, strcmp(data, "mock") == 0 ? "" : data) < 0 ||
        own_str(c, &s->optimizer, MOE_SK_WORKLOAD_OPTIMIZER, "adam") < 0)
        return -1;
    s->distributed_optimizer = get_bool(c, MOE_SK_WORKLOAD_DISTRIBUTED_OPTIMIZER, true);
    s->grad_reduce_in_bf16 = get_bool(c, MOE_SK_WORKLOAD_GRAD_REDUCE_IN_BF16, false);
    s->baseline.precision = get_enum(c, MOE_SK_WORKLOAD_PRECISION, moe_precision_names,
                                     MOE_PREC_BF16);
    return training_read(c, &s->training);
}

/* What each answer means, for the message that asks for one: the
 * implementation decides which recompute, precision, CUDA graphs and
 * overlaps Megatron accepts (megatron_rules.c, fit/layouts.c). */
static const char te_choices[] =
    "say \"none\" (Megatron's local implementation, --transformer-impl local: BF16 only, no "
    "TE CUDA graphs, no MLA, CP or MoE TP, no delayed wgrad or TP comm overlap, no "
    "layernorm or moe_act recompute) or the container's Transformer Engine version, e.g. "
    "\"2.9\" (--transformer-impl transformer_engine)";

/* transformer_engine is stated: "none" (kept as the empty string, which
 * every stage reads through moe_software_has_te, and which the canonical
 * JSON and the contract write as before, so no study's hash moves) or a
 * version, which starts with a digit. */
static int te_read(struct ctx *c, struct moe_software *sw)
{
    const char *v = get_str(c, MOE_SK_SOFTWARE_TRANSFORMER_ENGINE, NULL);

    if (!v) /* also when the walk refused it: fail() then adds nothing */
        return fail(c, MOE_SK_SOFTWARE_TRANSFORMER_ENGINE, "is required: %s", te_choices);
    if (strcmp(v, "none") == 0)
        v = "";
    else if (!v[0])
        return fail(c, MOE_SK_SOFTWARE_TRANSFORMER_ENGINE, "is empty: %s", te_choices);
    else if (v[0] < '0' || v[0] > '9')
        return fail(c, MOE_SK_SOFTWARE_TRANSFORMER_ENGINE, "'%.80s' is neither \"none\" nor a "
                    "version: %s", v, te_choices);
    return own_str(c, &sw->transformer_engine, NULL, v);
}

static int software_read(struct ctx *c, struct moe_software *sw)
{
    if (require(c, MOE_SK_SOFTWARE) < 0 || require(c, MOE_SK_SOFTWARE_MEGATRON) < 0)
        return -1;
    sw->dialect = get_enum(c, MOE_SK_SOFTWARE_MEGATRON, moe_dialect_names, MOE_DIALECT_CORE_0_16);
    sw->deepep = get_bool(c, MOE_SK_SOFTWARE_DEEPEP, false);
    sw->hybridep = get_bool(c, MOE_SK_SOFTWARE_HYBRIDEP, false);
    /* an error marks the key alone: the rest of the section still reads */
    if (te_read(c, sw) < 0 && c->fatal)
        return -1;
    /* NGC's PyTorch containers ship Apex with TE; a plain PyTorch
     * environment has neither. */
    sw->apex = get_bool(c, MOE_SK_SOFTWARE_APEX, moe_software_has_te(sw));
    return 0;
}

/* ---- baseline ---- */

static int baseline_read(struct ctx *c, struct moe_baseline *b)
{
    struct moe_layout *l = &b->layout;

    l->tp = get_int(c, MOE_SK_BASELINE_TP, 1);
    l->cp = get_int(c, MOE_SK_BASELINE_CP, 1);
    l->pp = get_int(c, MOE_SK_BASELINE_PP, 1);
    l->vpp = get_int(c, MOE_SK_BASELINE_VPP, 1);
    l->ep = get_int(c, MOE_SK_BASELINE_EP, 1);
    l->etp = get_int(c, MOE_SK_BASELINE_ETP, 1);
    b->dispatcher = get_enum(c, MOE_SK_BASELINE_DISPATCHER, moe_dispatcher_names,
                             MOE_DISPATCH_ALLTOALL);
    b->ep_overlap = get_bool(c, MOE_SK_BASELINE_EP_OVERLAP, false);
    b->shared_expert_overlap = get_bool(c, MOE_SK_BASELINE_SHARED_EXPERT_OVERLAP, false);
    b->delay_wgrad = get_bool(c, MOE_SK_BASELINE_DELAY_WGRAD, false);
    b->overlap_grad_reduce = get_bool(c, MOE_SK_BASELINE_OVERLAP_GRAD_REDUCE, false);
    b->tp_comm_overlap = get_bool(c, MOE_SK_BASELINE_TP_COMM_OVERLAP, false);
    b->manual_gc = get_bool(c, MOE_SK_BASELINE_MANUAL_GC, false);
    if (get_strlist(c, MOE_SK_BASELINE_RECOMPUTE_MODULES, &b->recompute_modules) < 0 ||
        get_strlist(c, MOE_SK_BASELINE_CUDA_GRAPH_MODULES, &b->cuda_graph_modules) < 0)
        return -1;
    b->dispatcher_sms = get_int(c, MOE_SK_BASELINE_DISPATCHER_SMS, 0);
    b->recompute = get_enum(c, MOE_SK_BASELINE_RECOMPUTE, moe_recompute_names,
                            b->recompute_modules.n ? MOE_RECOMPUTE_SELECTIVE
                                                   : MOE_RECOMPUTE_NONE);
    return own_str(c, &b->pipeline_layout, MOE_SK_BASELINE_PIPELINE_LAYOUT, "");
}

/* The study key each layout rule (fit/layouts.h) names when the baseline
 * breaks it: the value the rule refuses, or the one that does not divide. */
static const char *const rule_keys[MOE_RULE_COUNT] = {
    [MOE_RULE_OK] = MOE_SK_BASELINE,
    [MOE_RULE_LAYERS_PP] = MOE_SK_BASELINE_PP,
    [MOE_RULE_WORLD_DENSE] = MOE_SK_BASELINE_TP,
    [MOE_RULE_HEADS_TP] = MOE_SK_BASELINE_TP,
    [MOE_RULE_GROUPS_TP] = MOE_SK_BASELINE_TP,
    [MOE_RULE_FFN_TP] = MOE_SK_BASELINE_TP,
    [MOE_RULE_SEQ_CP] = MOE_SK_WORKLOAD_SEQ_LEN,
    [MOE_RULE_SEQ_TP] = MOE_SK_WORKLOAD_SEQ_LEN,
    [MOE_RULE_CP_IMPL] = MOE_SK_BASELINE_CP,
    [MOE_RULE_GBS] = MOE_SK_WORKLOAD_GBS,
    [MOE_RULE_WORLD_EXPERT] = MOE_SK_BASELINE_EP,
    [MOE_RULE_EXPERTS_EP] = MOE_SK_BASELINE_EP,
    [MOE_RULE_FFN_ETP] = MOE_SK_BASELINE_ETP,
    [MOE_RULE_SP] = MOE_SK_BASELINE_TP,
    [MOE_RULE_VPP_PP] = MOE_SK_BASELINE_VPP,
    [MOE_RULE_VPP_LAYERS] = MOE_SK_BASELINE_VPP,
};

const char *moe_study_rule_key(enum moe_rule r)
{
    return (unsigned)r < MOE_RULE_COUNT && rule_keys[r] ? rule_keys[r] : NULL;
}

/* The baseline layout through the one layout checker (fit/layouts.h), as
 * the study runs it; it also sets DP and EDP.  Then each retune MBS, which
 * only the GBS rule reads. */
static int layout_check(struct ctx *c, struct moe_study *s)
{
    struct moe_layout *l = &s->baseline.layout;
    char why[512];
    enum moe_rule r = moe_study_layout_check(s, l, s->workload.mbs, why, sizeof(why));

    if (r != MOE_RULE_OK)
        return fail(c, moe_study_rule_key(r) ? moe_study_rule_key(r) : MOE_SK_BASELINE, "%s%s", why,
                    (r == MOE_RULE_LAYERS_PP || r == MOE_RULE_VPP_LAYERS)
                        ? " (" MOE_SK_BASELINE_PIPELINE_LAYOUT ", e.g. \"Et|(tt|)*30mL\")"
                        : "");
    for (int i = 0; i < s->retune_mbs_n; i++) {
        struct moe_layout m = *l;

        if (moe_study_layout_check(s, &m, s->retune_mbs[i], why, sizeof(why)) != MOE_RULE_OK)
            return fail(c, MOE_SK_RETUNE_MBS, "%d: %s", s->retune_mbs[i], why);
    }
    return 0;
}

/* An explicit pipeline layout: its stages are PP x VPP (the layout rules
 * have checked an even split when there is none). */
static int pipeline_check(struct ctx *c, const struct moe_study *s)
{
    const struct moe_layout *l = &s->baseline.layout;
    const char *layout = s->baseline.pipeline_layout;
    struct moe_error perr;

    if (!moe_study_str_set(layout))
        return 0;
    moe_error_clear(&perr);
    if (moe_pipeline_layout_check(layout, l->pp * l->vpp, s->model.num_layers,
                                  s->model.mtp_layers, &perr) < 0)
        return fail(c, MOE_SK_BASELINE_PIPELINE_LAYOUT, "%s", perr.text);
    return 0;
}

static int has_module(const struct moe_strlist *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->v[i], name) == 0)
            return 1;
    return 0;
}

/* Megatron's own validity rules for the baseline's switches: each is
 * checked when its inputs are not in error, and each one broken is
 * reported (they are independent: one fix does not mend another). */
#define B(key) MOE_SK_BASELINE_##key
#define RULE(cond, key, ...)                                                                   \
    do {                                                                                       \
        if (cond)                                                                              \
            rc = fail(c, key, __VA_ARGS__);                                                    \
    } while (0)

/* full_iteration anywhere in baseline.cuda_graph_modules */
static bool full_iteration_named(const struct moe_baseline *b)
{
    for (int i = 0; i < b->cuda_graph_modules.n; i++)
        if (strcmp(b->cuda_graph_modules.v[i], "full_iteration") == 0)
            return true;
    return false;
}

static int features_dispatch(struct ctx *c, const struct moe_study *s)
{
    const struct moe_baseline *b = &s->baseline;
    const struct moe_layout *l = &b->layout;
    int rc = 0;

    /* only the flex dispatcher's kernels take an SM count
     * (token_dispatcher.py, MoEFlexTokenDispatcher) */
    RULE(b->dispatcher_sms && b->dispatcher != MOE_DISPATCH_FLEX_DEEPEP &&
         b->dispatcher != MOE_DISPATCH_FLEX_HYBRIDEP && clean(c, B(DISPATCHER), NULL),
         B(DISPATCHER_SMS), "applies to the flex-deepep and flex-hybridep dispatchers, not %s",
         moe_dispatcher_name(b->dispatcher));
    /* DeepEP's Buffer.set_num_sms asserts an even count (deep_ep/buffer.py),
     * which Megatron calls for the deepep backend (fused_a2a.py
     * set_deepep_num_sms); HybridEP takes DeepEP's count by default */
    RULE(b->dispatcher_sms % 2, B(DISPATCHER_SMS), "%d: DeepEP takes an even SM count",
         b->dispatcher_sms);
    if (clean(c, B(DISPATCHER), MOE_SK_SOFTWARE, NULL)) {
        RULE(b->dispatcher == MOE_DISPATCH_FLEX_DEEPEP && !s->software.deepep, B(DISPATCHER),
             "flex-deepep needs " MOE_SK_SOFTWARE_DEEPEP ": true");
        RULE(b->dispatcher == MOE_DISPATCH_FLEX_HYBRIDEP && !s->software.hybridep,
             B(DISPATCHER), "flex-hybridep needs " MOE_SK_SOFTWARE_HYBRIDEP ": true");
    }
    if (!clean(c, B(EP_OVERLAP), NULL))
        return rc;
    RULE(b->ep_overlap && l->pp > 1 && l->vpp == 1 && clean(c, B(PP), B(VPP), NULL),
         B(EP_OVERLAP), "EP overlap with PP %d needs VPP > 1", l->pp);
    RULE(b->ep_overlap && b->dispatcher == MOE_DISPATCH_ALLGATHER && clean(c, B(DISPATCHER), NULL),
         B(EP_OVERLAP), "EP overlap needs the alltoall or flex dispatcher");
    RULE(b->ep_overlap && b->recompute == MOE_RECOMPUTE_FULL && clean(c, B(RECOMPUTE), NULL),
         B(EP_OVERLAP), "EP overlap does not work with full recompute");
    RULE(b->delay_wgrad && !b->ep_overlap && clean(c, B(DELAY_WGRAD), NULL), B(DELAY_WGRAD),
         "delayed wgrad needs %s: true", MOE_SK_KEY(BASELINE, EP_OVERLAP));
    return rc;
}

static int features_recompute(struct ctx *c, const struct moe_study *s)
{
    const struct moe_baseline *b = &s->baseline;
    const struct moe_strlist *m = &b->recompute_modules;
    bool model = clean(c, MOE_SK_MODEL, NULL);
    int rc = 0;

    RULE(b->shared_expert_overlap && !s->model.shared_expert_ffn && model &&
         clean(c, B(SHARED_EXPERT_OVERLAP), NULL), B(SHARED_EXPERT_OVERLAP),
         "the model has no shared expert");
    RULE(b->shared_expert_overlap && b->ep_overlap &&
         clean(c, B(SHARED_EXPERT_OVERLAP), B(EP_OVERLAP), NULL), B(SHARED_EXPERT_OVERLAP),
         "EP overlap already overlaps the shared expert; set only one");
    RULE(b->tp_comm_overlap && b->layout.tp == 1 && clean(c, B(TP_COMM_OVERLAP), B(TP), NULL),
         B(TP_COMM_OVERLAP), "needs tp > 1");
    if (!clean(c, B(RECOMPUTE), B(RECOMPUTE_MODULES), NULL))
        return rc;
    RULE(b->recompute == MOE_RECOMPUTE_SELECTIVE && !m->n, B(RECOMPUTE_MODULES),
         "selective recompute needs modules");
    RULE(b->recompute != MOE_RECOMPUTE_SELECTIVE && m->n, B(RECOMPUTE_MODULES),
         "modules apply to selective recompute only");
    if (!model)
        return rc;
    RULE(has_module(m, "mla_up_proj") && s->model.attention != MOE_ATTN_MLA, B(RECOMPUTE_MODULES),
         "mla_up_proj needs MLA attention");
    RULE(has_module(m, "shared_experts") && !s->model.shared_expert_ffn, B(RECOMPUTE_MODULES),
         "the model has no shared expert");
    RULE(has_module(m, "mlp") && !s->model.first_dense_layers, B(RECOMPUTE_MODULES),
         "mlp recomputes dense layers; the model has none");
    return rc;
}

static int features_hardware(struct ctx *c, const struct moe_study *s)
{
    const struct moe_baseline *b = &s->baseline;
    int rc = 0;

    if (clean(c, MOE_SK_WORKLOAD_PRECISION, MOE_SK_CLUSTER_GPU, NULL)) {
        RULE(moe_precision_is_fp8(b->precision) && !moe_gpu_is_hopper(s->cluster.gpu) &&
             !moe_gpu_is_blackwell(s->cluster.gpu), MOE_SK_WORKLOAD_PRECISION,
             "FP8 needs Hopper or Blackwell, not %s", moe_gpu_name(s->cluster.gpu));
        RULE((b->precision == MOE_PREC_MXFP8 || b->precision == MOE_PREC_NVFP4) &&
             !moe_gpu_is_blackwell(s->cluster.gpu), MOE_SK_WORKLOAD_PRECISION,
             "%s needs Blackwell, not %s", moe_precision_name(b->precision),
             moe_gpu_name(s->cluster.gpu));
    }
    RULE(b->cuda_graph_modules.n && !full_iteration_named(b) &&
         !moe_software_has_te(&s->software) &&
         clean(c, B(CUDA_GRAPH_MODULES), MOE_SK_SOFTWARE_TRANSFORMER_ENGINE, NULL),
         B(CUDA_GRAPH_MODULES), "TE CUDA graphs need " MOE_SK_SOFTWARE_TRANSFORMER_ENGINE);
    /* one graph of the whole step holds every module already */
    RULE(full_iteration_named(b) && !moe_graphs_full_iteration(b), B(CUDA_GRAPH_MODULES),
         "full_iteration stands alone: Megatron refuses graph modules with it "
         "(--cuda-graph-modules must be empty when --cuda-graph-impl=full_iteration, "
         "megatron/training/arguments.py:1889 in core 0.19, :1885 in bridge-pin)");
    return rc;
}
#undef RULE
#undef B

static int features_check(struct ctx *c, const struct moe_study *s)
{
    int rc = features_dispatch(c, s);

    rc |= features_recompute(c, s);
    return rc | features_hardware(c, s);
}

/* Each rule of the measured steps, when its inputs are not in error; a
 * refused count leaves its default, which the rules after it skip. */
static int measure_check(struct ctx *c, const struct moe_measure *m, json_t *win, json_t *prof)
{
    int rc = 0;

    if (win && json_array_size(win) != 2)
        rc = fail(c, MOE_SK_MEASURE_REPORT_WINDOW, "give two steps: [first, last]");
    if (prof && json_array_size(prof) != 2)
        rc = fail(c, MOE_SK_MEASURE_PROFILE_STEPS, "give two steps: [first, last]");
    if (m->screen_steps < 6 || m->screen_steps > 12)
        rc = fail(c, MOE_SK_MEASURE_SCREEN_STEPS, "%d: screen with 6 to 12 post-warm-up steps",
                  m->screen_steps);
    if (m->validate_steps < 50)
        rc = fail(c, MOE_SK_MEASURE_VALIDATE_STEPS,
                  "%d: a validation run needs at least 50 steps", m->validate_steps);
    if (!clean(c, MOE_SK_MEASURE_WARMUP, MOE_SK_MEASURE_SCREEN_STEPS,
               MOE_SK_MEASURE_VALIDATE_STEPS, NULL))
        return rc;
    if (m->window_first > m->window_last || m->window_last > m->validate_steps)
        rc = fail(c, MOE_SK_MEASURE_REPORT_WINDOW,
                  "[%d, %d] must lie inside 1..%d (%s)", m->window_first, m->window_last,
                  m->validate_steps, MOE_SK_KEY(MEASURE, VALIDATE_STEPS));
    if (m->window_first <= m->warmup)
        rc = fail(c, MOE_SK_MEASURE_REPORT_WINDOW, "starts at %d, inside the %d warm-up steps",
                  m->window_first, m->warmup);
    if (m->profile_first <= m->warmup || m->profile_first > m->profile_last ||
        m->profile_last > m->warmup + m->screen_steps)
        rc = fail(c, MOE_SK_MEASURE_PROFILE_STEPS,
                  "[%d, %d] must lie after warm-up, inside steps %d..%d", m->profile_first,
                  m->profile_last, m->warmup + 1, m->warmup + m->screen_steps);
    return rc;
}

static int measure_read(struct ctx *c, struct moe_measure *m)
{
    json_t *win = get(c, MOE_SK_MEASURE_REPORT_WINDOW);
    json_t *prof = get(c, MOE_SK_MEASURE_PROFILE_STEPS);

    m->warmup = get_int(c, MOE_SK_MEASURE_WARMUP, 3);
    m->screen_steps = get_int(c, MOE_SK_MEASURE_SCREEN_STEPS, 10);
    m->validate_steps = get_int(c, MOE_SK_MEASURE_VALIDATE_STEPS, 50);
    m->profiler = get_enum(c, MOE_SK_MEASURE_PROFILER, moe_profiler_names, MOE_PROFILER_NSYS);
    m->log_interval = get_int(c, MOE_SK_MEASURE_LOG_INTERVAL, 1);
    m->window_first = win ? (int)json_integer_value(json_array_get(win, 0)) : 41;
    m->window_last = win ? (int)json_integer_value(json_array_get(win, 1)) : 50;
    m->profile_first = prof ? (int)json_integer_value(json_array_get(prof, 0)) : m->warmup + 2;
    m->profile_last = prof ? (int)json_integer_value(json_array_get(prof, 1)) : m->warmup + 4;
    return measure_check(c, m, win, prof);
}

/* The SM counts the dispatcher_sms axis screens; unset, around the
 * backends' defaults (DeepEP 20; HybridEP 16 in core 0.16, DeepEP's
 * otherwise): fewer SMs leave more to the compute kernels beside it, more
 * speed the dispatch itself.  Even counts: DeepEP takes no other. */
static int retune_sms_read(struct ctx *c, struct moe_study *s)
{
    static const int defaults[] = { 16, 24, 32 };
    json_t *sms = get(c, MOE_SK_RETUNE_DISPATCHER_SMS), *v;
    size_t i;

    s->retune_sms_n = 0;
    if (!sms) {
        for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
            s->retune_sms[s->retune_sms_n++] = defaults[i];
        return 0;
    }
    s->retune_sms_set = true;
    if (json_array_size(sms) > MOE_STUDY_LIST_MAX)
        return fail(c, MOE_SK_RETUNE_DISPATCHER_SMS, "%zu values: a list holds at most %d",
                    json_array_size(sms), MOE_STUDY_LIST_MAX);
    json_array_foreach(sms, i, v) {
        int n = (int)json_integer_value(v);

        if (n % 2)
            return fail(c, MOE_SK_RETUNE_DISPATCHER_SMS, "%d: DeepEP takes an even SM count "
                        "(deep_ep/buffer.py, Buffer.set_num_sms)", n);
        s->retune_sms[s->retune_sms_n++] = n;
    }
    return 0;
}

static int retune_read(struct ctx *c, struct moe_study *s)
{
    json_t *mbs = get(c, MOE_SK_RETUNE_MBS), *v;
    size_t i;

    if (get(c, MOE_SK_RETUNE_AXES)) {
        if (get_strlist(c, MOE_SK_RETUNE_AXES, &s->retune_axes) < 0)
            return -1;
    } else {
        for (const char *const *a = moe_retune_axes; *a; a++)
            if (s->retune_axes.n < MOE_STUDY_LIST_MAX)
                s->retune_axes.v[s->retune_axes.n++] = *a;
    }
    if (json_array_size(mbs) > MOE_STUDY_LIST_MAX)
        return fail(c, MOE_SK_RETUNE_MBS, "%zu values: a list holds at most %d",
                    json_array_size(mbs),
                    MOE_STUDY_LIST_MAX);
    s->retune_mbs_n = 0;
    json_array_foreach(mbs, i, v)
        s->retune_mbs[s->retune_mbs_n++] = (int)json_integer_value(v);
    return retune_sms_read(c, s);
}

int moe_study_world_size(const struct moe_study *s)
{
    return s->cluster.nodes * s->cluster.gpus_per_node;
}

/* Every key the reader asked for is in the schema, and it asked for every
 * key of the schema: a key added to one and not the other fails every
 * load, so no test that loads a study passes with them apart. */
static int reader_keys(struct ctx *c, const struct moe_field *keys, const char *prefix)
{
    char path[128];

    for (const struct moe_field *f = keys; f->key; f++) {
        int w = snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", f->key);

        if (w < 0 || (size_t)w >= sizeof(path))
            return fatal(c, "internal error: the schema key %s.%s is over %zu bytes", prefix,
                         f->key, sizeof(path) - 1);
        if (f->type == MOE_F_MAP ? reader_keys(c, f->sub, path) < 0
                                 : !json_object_get(c->asked, path))
            return f->type == MOE_F_MAP ? -1 : fatal(c, "internal error: the study reader "
                                                     "never reads %s, a key of the schema", path);
    }
    return 0;
}

static int reader_check(struct ctx *c)
{
    if (c->asked_short)
        return fatal(c, "out of memory recording the keys the study reader reads");
    if (c->unknown[0])
        return fatal(c, "internal error: the study reader reads %s, which the schema lacks",
                     c->unknown);
    return reader_keys(c, moe_study_schema, "");
}

/* top_k layouts always run; the model's error band can add more, up to
 * max_layouts, which therefore cannot be below top_k. */
static int scale_read(struct ctx *c, struct moe_study *s)
{
    s->scale_top_k = get_int(c, MOE_SK_SCALE_TOP_K, 4);
    s->scale_max_layouts = get_int(c, MOE_SK_SCALE_MAX_LAYOUTS,
                                   s->scale_top_k > 16 ? s->scale_top_k : 16);
    if (s->scale_max_layouts < s->scale_top_k && clean(c, MOE_SK_SCALE_TOP_K, NULL))
        return fail(c, MOE_SK_SCALE_MAX_LAYOUTS,
                    "is %d, below " MOE_SK_SCALE_TOP_K " (%d): the first top_k "
                    "ranked layouts always run", s->scale_max_layouts, s->scale_top_k);
    return 0;
}

/* A section's reader stops at its first error, leaving what it had not
 * read yet unset: the whole section is then in error for the checks that
 * read it. */
static int section(struct ctx *c, const char *key, int rc)
{
    if (rc < 0 && !c->fatal)
        mark_bad(c, key);
    return rc;
}

/* The rules across sections, each run when its inputs are not in error. */
static void cross_checks(struct ctx *c, struct moe_study *s)
{
    if (!c->fatal && clean(c, MOE_SK_MODEL, MOE_SK_CLUSTER_NODES, MOE_SK_CLUSTER_GPU,
                           MOE_SK_CLUSTER_GPUS_PER_NODE, MOE_SK_SOFTWARE, MOE_SK_WORKLOAD,
                           MOE_SK_BASELINE, MOE_SK_RETUNE, NULL) &&
        layout_check(c, s) == 0)
        pipeline_check(c, s);
    if (!c->fatal)
        features_check(c, s);
}

static int resolve(struct ctx *c, struct moe_study *s)
{
    section(c, MOE_SK_NAME, own_str(c, &s->name, MOE_SK_NAME, NULL) < 0 ||
                                    require(c, MOE_SK_NAME) < 0 ? -1 : 0);
    if (section(c, MOE_SK_MODEL, model_read(c, &s->model)) == 0 && clean(c, MOE_SK_MODEL, NULL))
        section(c, MOE_SK_MODEL, model_check(c, &s->model));
    section(c, MOE_SK_CLUSTER, cluster_read(c, &s->cluster));
    section(c, MOE_SK_SOFTWARE, software_read(c, &s->software));
    section(c, MOE_SK_WORKLOAD, workload_read(c, s));
    section(c, MOE_SK_BASELINE, baseline_read(c, &s->baseline));
    section(c, MOE_SK_MEASURE, measure_read(c, &s->measure));
    section(c, MOE_SK_RETUNE, retune_read(c, s));
    section(c, MOE_SK_SCALE, scale_read(c, s));
    s->validate_checkpoint = get_bool(c, MOE_SK_VALIDATION_CHECKPOINT, false);
    cross_checks(c, s);
    if (c->fatal)
        return -1;
    /* the keys read are the schema's only when every section was read
     * to its end */
    if (moe_error_list_take(c->errors.list, c->err) > 0 || reader_check(c) < 0)
        return -1;
    if (!(s->json = moe_study_to_json(s, c->err))) {
        moe_error_locate(c->err, c->name, 0, 0);
        return -1;
    }
    return 0;
}

int moe_study_load_text(struct moe_study *study, const char *name, const char *text, size_t len,
                        struct moe_error *err)
{
    struct ctx c = { .name = name, .err = err };
    int rc = -1;

    memset(study, 0, sizeof(*study));
    if (!(study->path = strdup(name))) {
        moe_error_set(err, "%s: out of memory", name);
        return -1;
    }
    if (!(c.errors.list = calloc(1, sizeof(*c.errors.list))) ||
        !(c.errors.bad = json_object()) || !(c.asked = json_object()))
        moe_error_set(err, "%s: out of memory", name);
    /* libyaml refuses the NUL as a control character, where it is */
    else if ((c.root = moe_study_yaml_parse(name, text, len, moe_study_schema, &c.pos,
                                            &c.errors, err)))
        rc = resolve(&c, study);
    free(c.errors.list);
    json_decref(c.errors.bad);
    json_decref(c.asked);
    json_decref(c.root);
    json_decref(c.pos);
    return rc;
}

int moe_study_load_string(struct moe_study *study, const char *name, const char *text,
                          struct moe_error *err)
{
    return moe_study_load_text(study, name, text, strlen(text), err);
}

int moe_study_load(struct moe_study *study, const char *path, struct moe_error *err)
{
    char *text;
    size_t len;
    int rc;

    /* moe_study_free() is safe on the study whatever happens below, an
     * unreadable file included. */
    memset(study, 0, sizeof(*study));
    if (!(text = moe_read_file(path, "study", &len, err)))
        return -1;
    rc = moe_study_load_text(study, path, text, len, err);
    free(text);
    return rc;
}

void moe_study_free(struct moe_study *study)
{
    char **owned[] = { &study->path, &study->name, &study->cluster.partition,
                       &study->cluster.account, &study->cluster.time_limit,
                       &study->cluster.container_image, &study->cluster.container_mounts,
                       &study->cluster.container_workdir, &study->cluster.qos,
                       &study->cluster.reservation, &study->cluster.constraint,
                       &study->cluster.launcher, &study->data_path, &study->optimizer,
                       &study->training.tokenizer,
                       &study->software.transformer_engine, &study->baseline.pipeline_layout };

    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
        free(*owned[i]);
        *owned[i] = NULL;
    }
    for (int st = 0; st < MOE_STAGE_COUNT; st++) {
        free(study->cluster.stage_time_limit[st]);
        study->cluster.stage_time_limit[st] = NULL;
    }
    moe_strv_free(&study->cluster.env);
    moe_strv_free(&study->cluster.extra_args);
    json_decref(study->json);
    study->json = NULL;
}
