/* Every branch of the argument generator (lib/study/megatron_args.c), not
 * only what the example studies happen to use: each case builds one run,
 * in each of the three dialects, and its argument list
 *   - parses against the argparse dump of its dialect (tests/data/megatron:
 *     every flag exists there, every value is one of its choices, int
 *     options get integers, and each flag gets as many values as its nargs);
 *   - carries exactly what the branch means, written here by hand from
 *     Megatron's own help: a dump accepts blockwise where MXFP8 was meant,
 *     and deepep where HybridEP was.
 * The environment is checked by the same cases (CUDA_DEVICE_MAX_CONNECTIONS,
 * HybridEP's domain size, NCCL graph registration). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/readfile.h"
#include "analysis/report_runs.h"
#include "analysis/report_runs_internal.h"
#include "core/retune.h"
#include "fit/memory.h"
#include "study/candidates.h"
#include "study/candidates_internal.h"
#include "study/megatron_args.h"
#include "study/megatron_args_internal.h"
#include "study/study.h"
#include "study/study_internal.h"
#include "unit.h"

static char srcdir[4096];

/* ---- the argparse dumps: option -> dest, nargs, choices, type ---- */

struct flagspec {
    char opt[96];
    char dest[96];
    char nargs[16];
    char choices[1024]; /* "|a|b|", or "" for any value */
    char type[64];
};

struct dump {
    struct flagspec *f;
    int n;
};

static struct dump dumps[MOE_DIALECT_COUNT];

static const char *const dump_files[MOE_DIALECT_COUNT] = {
    "argparse-core_v0.16.0.txt", "argparse-core_v0.19.0.txt", "argparse-bridge-pin-2a75ac12.txt",
};

static void between(const char *line, const char *key, const char *next, char *out, size_t len)
{
    const char *a = strstr(line, key), *b;

    out[0] = '\0';
    if (a && (b = strstr(a + strlen(key), next)))
        snprintf(out, len, "%.*s", (int)(b - a - strlen(key)), a + strlen(key));
}

/* One line a flag: "['--a', '--b'] dest= x default= d choices= ['p', 'q']
 * nargs= N type= T action= A". */
static void load_dump(int d)
{
    char path[4400], line[8192];
    struct dump *dp = &dumps[d];
    FILE *f;

    snprintf(path, sizeof(path), "%s/tests/data/megatron/%s", srcdir, dump_files[d]);
    assert_non_null(f = fopen(path, "r"));
    while (fgets(line, sizeof(line), f)) {
        char opts[1024], dest[96], choices[2048], nargs[16], type[64], *save = NULL;

        if (line[0] != '[' || !strchr(line, ']'))
            continue;
        snprintf(opts, sizeof(opts), "%.*s", (int)(strchr(line, ']') - line - 1), line + 1);
        between(line, " dest= ", " default= ", dest, sizeof(dest));
        between(line, " choices= ", " nargs= ", choices, sizeof(choices));
        between(line, " nargs= ", " type= ", nargs, sizeof(nargs));
        between(line, " type= ", " action= ", type, sizeof(type));
        for (char *o = strtok_r(opts, ", ", &save); o; o = strtok_r(NULL, ", ", &save)) {
            struct flagspec *fs;
            size_t k = 0;

            assert_non_null(dp->f = realloc(dp->f, (size_t)(dp->n + 1) * sizeof(*dp->f)));
            fs = &dp->f[dp->n++];
            snprintf(fs->opt, sizeof(fs->opt), "%.*s", (int)strlen(o) - 2, o + 1);
            snprintf(fs->dest, sizeof(fs->dest), "%s", dest);
            snprintf(fs->nargs, sizeof(fs->nargs), "%s", nargs);
            snprintf(fs->type, sizeof(fs->type), "%s", type);
            fs->choices[0] = '\0';
            if (strcmp(choices, "None") == 0)
                continue;
            fs->choices[k++] = '|';
            for (const char *c = choices; *c && k + 2 < sizeof(fs->choices); c++)
                if (!strchr("[]' ", *c))
                    fs->choices[k++] = *c == ',' ? '|' : *c;
            fs->choices[k++] = '|';
            fs->choices[k] = '\0';
        }
    }
    fclose(f);
    assert_true(dp->n > 500);
}

static const struct flagspec *find(int d, const char *opt)
{
    for (int i = 0; i < dumps[d].n; i++)
        if (strcmp(dumps[d].f[i].opt, opt) == 0)
            return &dumps[d].f[i];
    return NULL;
}

static void load_dumps(void)
{
    for (int d = 0; d < MOE_DIALECT_COUNT; d++)
        if (!dumps[d].n)
            load_dump(d);
}

/* Parses argv as argparse would; fails the test at the first problem. */
static void parses(int d, const json_t *argv, const char *where)
{
    size_t n = json_array_size(argv), i = 0;

    while (i < n) {
        const char *opt = json_string_value(json_array_get(argv, i++));
        const struct flagspec *fs = find(d, opt);
        int values = 0;

        if (!fs)
            fail_msg("%s: %s is not an option of %s", where, opt, dump_files[d]);
        while (i < n && strncmp(json_string_value(json_array_get(argv, i)), "--", 2) != 0) {
            const char *v = json_string_value(json_array_get(argv, i++));
            char needle[256];

            snprintf(needle, sizeof(needle), "|%s|", v);
            if (fs->choices[0] && !strstr(fs->choices, needle))
                fail_msg("%s: %s %s: not one of %s", where, opt, v, fs->choices);
            if (strcmp(fs->type, "int") == 0 && (!*v || strspn(v, "-0123456789") != strlen(v)))
                fail_msg("%s: %s %s: not an int", where, opt, v);
            values++;
        }
        if ((strcmp(fs->nargs, "0") == 0 && values != 0) ||
            (strcmp(fs->nargs, "None") == 0 && values != 1) ||
            (strcmp(fs->nargs, "+") == 0 && values < 1))
            fail_msg("%s: %s takes nargs=%s, got %d values", where, opt, fs->nargs, values);
    }
}

/* The generator's argument list as a JSON array of strings. */
static json_t *argv_json(const struct moe_study *s, const struct moe_run *r)
{
    struct moe_strv l = {0};
    json_t *a = json_array();

    assert_int_equal(moe_megatron_argv(s, r, &l, NULL), 0);
    for (size_t i = 0; i < l.n; i++)
        json_array_append_new(a, json_string(l.v[i]));
    moe_strv_free(&l);
    return a;
}

/* Its environment (NAME=value entries) as a JSON object. */
static json_t *env_json(const struct moe_study *s, const struct moe_run *r)
{
    struct moe_strv l = {0};
    json_t *o = json_object();

    assert_int_equal(moe_megatron_env(s, r, &l), 0);
    for (size_t i = 0; i < l.n; i++) {
        const char *eq = strchr(l.v[i], '=');
        char *key;

        assert_non_null(eq);
        key = strndup(l.v[i], (size_t)(eq - l.v[i]));
        assert_non_null(key);
        json_object_set_new(o, key, json_string(eq + 1));
        free(key);
    }
    moe_strv_free(&l);
    return o;
}

/* argv holds the words of `seq` (space-separated) one after another. */
static bool has_seq(const json_t *argv, const char *seq)
{
    char words[64][128];
    int nw = 0;
    char buf[1024], *save = NULL;

    snprintf(buf, sizeof(buf), "%s", seq);
    for (char *w = strtok_r(buf, " ", &save); w && nw < 64; w = strtok_r(NULL, " ", &save))
        snprintf(words[nw++], sizeof(words[0]), "%s", w);
    for (size_t i = 0; i + (size_t)nw <= json_array_size(argv); i++) {
        int k = 0;

        while (k < nw && strcmp(json_string_value(json_array_get(argv, i + (size_t)k)), words[k]) == 0)
            k++;
        if (k == nw)
            return true;
    }
    return false;
}

/* ---- the cases ---- */

#define TINY "tiny-moe-2gpu.yaml"
#define DSV3 "deepseek-v3-1024xh100.yaml"      /* MLA, sigmoid, groups, dense layers, MTP */
#define Q235 "qwen3-235b-a22b-256xh100.yaml"   /* GQA, pipeline layout */
#define MIXTRAL "mixtral-8x7b-16xh100.yaml"

struct moe_case {
    const char *name;
    const char *study;
    const char *te;                 /* the YAML value; NULL: the study's */
    void (*tweak)(struct moe_study *, struct moe_run *);
    const char *has[6];             /* word sequences argv must hold */
    const char *lacks[6];           /* flags argv must not hold */
    const char *env[4];             /* "KEY=VALUE" the environment must hold; "KEY=" for absent */
};

static void none(struct moe_study *s, struct moe_run *r) { (void)s, (void)r; }
static void drop_and_pad(struct moe_study *s, struct moe_run *r)
{
    (void)r;
    s->workload.routing = MOE_ROUTING_DROP_AND_PAD;
    s->workload.capacity_factor = 1.25;
}
static void force_balance(struct moe_study *s, struct moe_run *r)
{
    (void)r;
    s->workload.routing = MOE_ROUTING_FORCE_BALANCE;
}
#define PREC(fn, p) static void fn(struct moe_study *s, struct moe_run *r) { (void)s; r->cfg.precision = p; }
PREC(fp8_tensorwise, MOE_PREC_FP8_TENSORWISE)
PREC(fp8_delayed, MOE_PREC_FP8_DELAYED)
PREC(fp8_blockwise, MOE_PREC_FP8_BLOCKWISE)
PREC(mxfp8, MOE_PREC_MXFP8)
PREC(nvfp4, MOE_PREC_NVFP4)
#define DISP(fn, v) static void fn(struct moe_study *s, struct moe_run *r) { (void)s; r->cfg.dispatcher = v; }
DISP(alltoall, MOE_DISPATCH_ALLTOALL)
DISP(allgather, MOE_DISPATCH_ALLGATHER)
DISP(deepep, MOE_DISPATCH_FLEX_DEEPEP)
DISP(hybridep, MOE_DISPATCH_FLEX_HYBRIDEP)
static void hybridep_nvl72(struct moe_study *s, struct moe_run *r)
{
    hybridep(s, r);
    r->cfg.layout.ep = 64;
    s->cluster.gpu = MOE_GPU_GB200;
    s->cluster.gpus_per_node = 4;
    s->cluster.nvlink_domain = 72;
}
static void modules(struct moe_run *r, const char *const *m)
{
    r->cfg.recompute = MOE_RECOMPUTE_SELECTIVE;
    r->cfg.recompute_modules.n = 0;
    for (; *m; m++)
        r->cfg.recompute_modules.v[r->cfg.recompute_modules.n++] = *m;
}
#define MODULES(fn, ...)                                                                       \
    static void fn(struct moe_study *s, struct moe_run *r)                                     \
    {                                                                                          \
        static const char *const m[] = { __VA_ARGS__, NULL };                                  \
        (void)s;                                                                               \
        modules(r, m);                                                                         \
    }
MODULES(rc_core_attn, "core_attn")
MODULES(rc_moe_act, "moe_act")
MODULES(rc_layernorm, "layernorm")
MODULES(rc_mlp, "mlp")
MODULES(rc_moe, "moe")
MODULES(rc_shared, "shared_experts")
MODULES(rc_mla_up_proj, "mla_up_proj")
MODULES(rc_three, "moe_act", "layernorm", "core_attn")
static void rc_full(struct moe_study *s, struct moe_run *r)
{
    (void)s;
    r->cfg.recompute = MOE_RECOMPUTE_FULL;
}
static void graphs(struct moe_run *r, const char *const *m)
{
    r->cfg.cuda_graph_modules.n = 0;
    for (; *m; m++)
        r->cfg.cuda_graph_modules.v[r->cfg.cuda_graph_modules.n++] = *m;
}
#define GRAPHS(fn, ...)                                                                        \
    static void fn(struct moe_study *s, struct moe_run *r)                                     \
    {                                                                                          \
        static const char *const m[] = { __VA_ARGS__, NULL };                                  \
        (void)s;                                                                               \
        graphs(r, m);                                                                          \
    }
GRAPHS(g_attn, "attn")
GRAPHS(g_mlp, "mlp")
GRAPHS(g_moe, "moe")
GRAPHS(g_router, "moe_router")
GRAPHS(g_preprocess, "moe_router", "moe_preprocess")
#define SWITCH(fn, field) static void fn(struct moe_study *s, struct moe_run *r) { (void)s; r->cfg.field = true; }
SWITCH(ep_overlap, ep_overlap)
SWITCH(delay_wgrad, delay_wgrad)
SWITCH(shared_overlap, shared_expert_overlap)
SWITCH(grad_reduce, overlap_grad_reduce)
SWITCH(tp_comm, tp_comm_overlap)
SWITCH(manual_gc, manual_gc)
static void tp2(struct moe_study *s, struct moe_run *r) { (void)s, r->cfg.layout.tp = 2; }
static void tp2_ep_overlap(struct moe_study *s, struct moe_run *r) { tp2(s, r), ep_overlap(s, r); }
static void cp2(struct moe_study *s, struct moe_run *r) { (void)s, r->cfg.layout.cp = 2; }
static void pp2_vpp2(struct moe_study *s, struct moe_run *r)
{
    (void)s;
    r->cfg.layout.pp = 2, r->cfg.layout.vpp = 2;
}
static void blackwell(struct moe_study *s, struct moe_run *r)
{
    (void)r;
    s->cluster.gpu = MOE_GPU_B200;
}
static void apex(struct moe_study *s, struct moe_run *r) { (void)r, s->software.apex = true; }
static void fake_group(struct moe_study *s, struct moe_run *r) { (void)s, r->fake_process_group = true; }
static void profile_nsys(struct moe_study *s, struct moe_run *r)
{
    s->measure.profiler = MOE_PROFILER_NSYS;
    r->profile = true;
}
static void profile_pytorch(struct moe_study *s, struct moe_run *r)
{
    s->measure.profiler = MOE_PROFILER_PYTORCH;
    r->profile = true;
}
static void data_path(struct moe_study *s, struct moe_run *r)
{
    (void)r;
    free(s->data_path);
    s->data_path = strdup("/data/corpus_text_document");
}
static void top1(struct moe_study *s, struct moe_run *r)
{
    (void)r;
    s->model.topk = 1;
}
static void optimizer_plain_bf16_grads(struct moe_study *s, struct moe_run *r)
{
    (void)r;
    s->distributed_optimizer = false, s->grad_reduce_in_bf16 = true;
}
static void mbs4_iters7(struct moe_study *s, struct moe_run *r)
{
    (void)s;
    r->mbs = 4, r->train_iters = 7;
}

#define NOTE "none" /* no TE: the local implementation */

static const struct moe_case cases[] = {
    /* routing */
    { "dropless", TINY, NULL, none, { "--num-experts 8 --moe-router-topk 2" },
      { "--moe-expert-capacity-factor", "--moe-pad-expert-input-to-capacity",
        "--moe-router-force-load-balancing" }, { NULL } },
    { "drop-and-pad", TINY, NULL, drop_and_pad,
      { "--moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity" },
      { "--moe-router-force-load-balancing" }, { NULL } },
    { "force-balance", TINY, NULL, force_balance, { "--moe-router-force-load-balancing" },
      { "--moe-expert-capacity-factor", "--moe-pad-expert-input-to-capacity" }, { NULL } },
    /* precision: the router stays FP32 in every one */
    { "bf16", TINY, NULL, none, { "--bf16", "--moe-router-dtype fp32" },
      { "--fp8-format", "--fp8-recipe", "--fp4-format", "--fp4-recipe" }, { NULL } },
    { "fp8-tensorwise", TINY, NULL, fp8_tensorwise,
      { "--bf16", "--fp8-format hybrid --fp8-recipe tensorwise", "--moe-router-dtype fp32" },
      { "--fp4-format" }, { NULL } },
    { "fp8-delayed", TINY, NULL, fp8_delayed, { "--fp8-format hybrid --fp8-recipe delayed" },
      { "--fp4-format" }, { NULL } },
    { "fp8-blockwise", TINY, NULL, fp8_blockwise, { "--fp8-format e4m3 --fp8-recipe blockwise" },
      { "--fp4-format" }, { NULL } },
    { "mxfp8", TINY, NULL, mxfp8, { "--fp8-format e4m3 --fp8-recipe mxfp8", "--moe-router-dtype fp32" },
      { "--fp4-format" }, { NULL } },
    { "nvfp4", TINY, NULL, nvfp4,
      { "--bf16", "--fp4-format e2m1 --fp4-recipe nvfp4", "--moe-router-dtype fp32" },
      { "--fp8-format", "--fp8-recipe" }, { NULL } },
    /* dispatchers and their environment */
    { "alltoall", TINY, NULL, alltoall, { "--moe-token-dispatcher-type alltoall" },
      { "--moe-flex-dispatcher-backend" },
      { "CUDA_DEVICE_MAX_CONNECTIONS=8", "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN=" } },
    { "allgather", TINY, NULL, allgather, { "--moe-token-dispatcher-type allgather" },
      { "--moe-flex-dispatcher-backend" }, { "CUDA_DEVICE_MAX_CONNECTIONS=8" } },
    { "flex-deepep", TINY, NULL, deepep,
      { "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep" }, { NULL },
      { "CUDA_DEVICE_MAX_CONNECTIONS=32", "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN=" } },
    { "flex-hybridep", TINY, NULL, hybridep,
      { "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep" }, { NULL },
      { "CUDA_DEVICE_MAX_CONNECTIONS=32", "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN=2",
        "USE_MNNVL=" } },
    { "flex-hybridep, EP 64 in an NVL72 domain", TINY, NULL, hybridep_nvl72,
      { "--moe-flex-dispatcher-backend hybridep", "--expert-model-parallel-size 64" }, { NULL },
      { "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN=64", "USE_MNNVL=1" } },
    /* recompute: each module Megatron takes, and full */
    { "recompute core_attn", TINY, NULL, rc_core_attn,
      { "--recompute-granularity selective --recompute-modules core_attn" },
      { "--recompute-method", "--recompute-num-layers" }, { NULL } },
    { "recompute moe_act", TINY, NULL, rc_moe_act,
      { "--recompute-granularity selective --recompute-modules moe_act" }, { NULL }, { NULL } },
    { "recompute layernorm", TINY, NULL, rc_layernorm,
      { "--recompute-granularity selective --recompute-modules layernorm" }, { NULL }, { NULL } },
    { "recompute mlp", DSV3, NULL, rc_mlp,
      { "--recompute-granularity selective --recompute-modules mlp" }, { NULL }, { NULL } },
    { "recompute moe", TINY, NULL, rc_moe,
      { "--recompute-granularity selective --recompute-modules moe" }, { NULL }, { NULL } },
    { "recompute shared_experts", DSV3, NULL, rc_shared,
      { "--recompute-granularity selective --recompute-modules shared_experts" }, { NULL },
      { NULL } },
    { "recompute mla_up_proj", DSV3, NULL, rc_mla_up_proj,
      { "--recompute-granularity selective --recompute-modules mla_up_proj" }, { NULL }, { NULL } },
    { "recompute three modules", TINY, NULL, rc_three,
      { "--recompute-modules moe_act layernorm core_attn" }, { NULL }, { NULL } },
    { "full recompute", TINY, NULL, rc_full,
      { "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1" },
      { "--recompute-modules" }, { NULL } },
    { "no recompute", TINY, NULL, none, { "--seq-length 1024" },
      { "--recompute-granularity", "--recompute-modules", "--recompute-method" }, { NULL } },
    /* CUDA graph scopes: the flag is --cuda-graph-scope before core 0.18
     * (dialect core-0.16), --cuda-graph-modules after; has[] lists both,
     * the case checks the dialect's */
    { "graph attn", TINY, NULL, g_attn, { "--cuda-graph-impl transformer_engine", "@attn", "--te-rng-tracker" },
      { NULL }, { "NCCL_GRAPH_REGISTER=0" } },
    { "graph mlp", TINY, NULL, g_mlp, { "@mlp" }, { NULL }, { "NCCL_GRAPH_REGISTER=0" } },
    { "graph moe", TINY, NULL, g_moe, { "@moe" }, { NULL }, { NULL } },
    { "graph moe_router", TINY, NULL, g_router, { "@moe_router" }, { NULL }, { NULL } },
    { "graph moe_router moe_preprocess", TINY, NULL, g_preprocess, { "@moe_router moe_preprocess" },
      { NULL }, { NULL } },
    { "no graph", TINY, NULL, none, { "--seq-length 1024" },
      { "--cuda-graph-impl", "--cuda-graph-scope", "--cuda-graph-modules", "--te-rng-tracker" },
      { "NCCL_GRAPH_REGISTER=" } },
    /* the tuning switches */
    { "EP overlap", TINY, NULL, ep_overlap, { "--overlap-moe-expert-parallel-comm" }, { NULL }, { NULL } },
    { "delayed wgrad", TINY, NULL, delay_wgrad, { "--delay-wgrad-compute" }, { NULL }, { NULL } },
    { "shared-expert overlap", DSV3, NULL, shared_overlap, { "--moe-shared-expert-overlap" },
      { NULL }, { NULL } },
    { "grad-reduce overlap", TINY, NULL, grad_reduce, { "--overlap-grad-reduce" }, { NULL }, { NULL } },
    { "TP comm overlap", TINY, NULL, tp_comm, { "--tp-comm-overlap" }, { NULL }, { NULL } },
    { "manual GC", TINY, NULL, manual_gc, { "--manual-gc --manual-gc-interval 10" }, { NULL }, { NULL } },
    { "no switches", TINY, NULL, none, { "--seq-length 1024" },
      { "--overlap-moe-expert-parallel-comm", "--delay-wgrad-compute", "--moe-shared-expert-overlap",
        "--overlap-grad-reduce", "--tp-comm-overlap", "--manual-gc" }, { NULL } },
    /* layouts */
    { "TP 2 with TE: sequence parallel, one connection", TINY, NULL, tp2,
      { "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 --context-parallel-size 1 "
        "--expert-model-parallel-size 2 --expert-tensor-parallel-size 1",
        "--sequence-parallel" }, { NULL }, { "CUDA_DEVICE_MAX_CONNECTIONS=1" } },
    { "TP 2 with EP overlap: 8 connections", TINY, NULL, tp2_ep_overlap, { "--sequence-parallel" },
      { NULL }, { "CUDA_DEVICE_MAX_CONNECTIONS=8" } },
    { "CP 2: one connection", TINY, NULL, cp2, { "--context-parallel-size 2" }, { NULL },
      { "CUDA_DEVICE_MAX_CONNECTIONS=1" } },
    { "TP 2 without TE", TINY, NOTE, tp2, { "--tensor-model-parallel-size 2" },
      { "--sequence-parallel" }, { NULL } },
    { "Blackwell: 32 connections", TINY, NULL, blackwell, { "--seq-length 1024" }, { NULL },
      { "CUDA_DEVICE_MAX_CONNECTIONS=32" } },
    { "PP 2 x VPP 2", TINY, NULL, pp2_vpp2,
      { "--pipeline-model-parallel-size 2", "--num-virtual-stages-per-pipeline-rank 2" },
      { "--pipeline-model-parallel-layout" }, { NULL } },
    { "explicit pipeline layout", Q235, NULL, none,
      { "--pipeline-model-parallel-layout", "--pipeline-model-parallel-size 8" },
      { "--num-virtual-stages-per-pipeline-rank" }, { NULL } },
    /* Transformer Engine or the local implementation */
    { "TE", TINY, NULL, none,
      { "--transformer-impl transformer_engine", "--moe-grouped-gemm", "--moe-permute-fusion" },
      { "--no-persist-layer-norm", "--no-rope-fusion", "--no-masked-softmax-fusion" }, { NULL } },
    { "local, no Apex", TINY, NOTE, none,
      { "--transformer-impl local --no-persist-layer-norm --no-rope-fusion --no-masked-softmax-fusion "
        "--no-gradient-accumulation-fusion --no-bias-dropout-fusion" },
      { "--moe-grouped-gemm", "--moe-permute-fusion" }, { NULL } },
    { "local with Apex", TINY, NOTE, apex,
      { "--transformer-impl local --no-persist-layer-norm --no-rope-fusion" },
      { "--no-masked-softmax-fusion", "--no-gradient-accumulation-fusion", "--no-bias-dropout-fusion",
        "--moe-grouped-gemm" }, { NULL } },
    /* training */
    { "fit's fake process group", TINY, NULL, fake_group, { "--fake-process-group" }, { NULL }, { NULL } },
    { "nsys profile", TINY, NULL, profile_nsys,
      { "--profile --profile-step-start 4 --profile-step-end 6" },
      { "--use-pytorch-profiler", "--tensorboard-dir" }, { NULL } },
    { "PyTorch profile", TINY, NULL, profile_pytorch,
      { "--profile --profile-step-start 4 --profile-step-end 6 --use-pytorch-profiler "
        "--tensorboard-dir " MOE_PYTORCH_PROFILE_DIR }, { NULL }, { NULL } },
    { "no profile", TINY, NULL, none, { "--log-interval 1 --log-throughput" },
      { "--profile", "--use-pytorch-profiler", "--fake-process-group" }, { NULL } },
    { "mock data", TINY, NULL, none, { "--mock-data", "--tokenizer-type NullTokenizer" },
      { "--data-path" }, { NULL } },
    { "a data path", TINY, NULL, data_path, { "--data-path /data/corpus_text_document" },
      { "--mock-data" }, { NULL } },
    { "distributed optimizer, fp32 grads", TINY, NULL, none, { "--use-distributed-optimizer" },
      { "--grad-reduce-in-bf16" }, { NULL } },
    { "mixed-precision optimizer, bf16 grads", TINY, NULL, optimizer_plain_bf16_grads,
      { "--grad-reduce-in-bf16" }, { "--use-distributed-optimizer" }, { NULL } },
    { "MBS and iterations", TINY, NULL, mbs4_iters7,
      { "--micro-batch-size 4 --global-batch-size 8 --train-iters 7", "--eval-iters 0 --eval-interval 7" },
      { NULL }, { NULL } },
    /* models */
    { "GQA", TINY, NULL, none,
      { "--num-attention-heads 8 --group-query-attention --num-query-groups 4 --kv-channels 64",
        "--moe-router-score-function softmax" },
      { "--multi-latent-attention", "--moe-router-pre-softmax", "--moe-router-enable-expert-bias",
        "--moe-layer-freq", "--mtp-num-layers", "--moe-shared-expert-intermediate-size" }, { NULL } },
    { "MLA, sigmoid router, groups, dense layers, MTP, shared expert", DSV3, NULL, none,
      { "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 "
        "--qk-pos-emb-head-dim 64 --v-head-dim 128",
        "--moe-shared-expert-intermediate-size 2048", "--moe-layer-freq ([0]*3+[1]*58)",
        "--mtp-num-layers 1",
        "--moe-router-score-function sigmoid --moe-router-enable-expert-bias",
        "--moe-router-num-groups 8 --moe-router-group-topk 4" },
      { "--group-query-attention", "--kv-channels" }, { NULL } },
    { "top-1 softmax routing", TINY, NULL, top1, { "--moe-router-topk 1", "--moe-router-pre-softmax" },
      { NULL }, { NULL } },
    { "Mixtral", MIXTRAL, NULL, none, { "--num-experts 8 --moe-router-topk 2", "--swiglu" },
      { "--moe-router-pre-softmax" }, { NULL } },
};

/* value of key at the end of text's "key: " line replaced; frees text */
static char *set_value(char *text, const char *key, const char *value)
{
    char *p = strstr(text, key), *eol, *out;

    assert_non_null(p);
    p += strlen(key);
    eol = strchr(p, '\n');
    assert_non_null(out = malloc(strlen(text) + strlen(value) + 1));
    sprintf(out, "%.*s%s%s", (int)(p - text), text, value, eol ? eol : "");
    free(text);
    return out;
}

static void load(const char *file, const char *dialect, const char *te, struct moe_study *s)
{
    char path[4400], buf[1024], *text;
    struct moe_error e;

    snprintf(path, sizeof(path), "%s/etc/studies/%s", srcdir, file);
    assert_non_null(text = moe_read_file(path, "study", NULL, &e));
    text = set_value(text, "megatron: ", dialect);
    if (te)
        text = set_value(text, "transformer_engine: ", te);
    if (moe_study_load_string(s, path, text, &e) < 0)
        fail_msg("%s", moe_error_format(&e, buf, sizeof(buf)));
    free(text);
}

/* "@mods": the CUDA-graph flag of the dialect, then the modules. */
static void graph_seq(const char *spec, enum moe_dialect d, char *out, size_t len)
{
    snprintf(out, len, "%s %s", d == MOE_DIALECT_CORE_0_16 ? "--cuda-graph-scope" : "--cuda-graph-modules",
             spec + 1);
}

static void each_branch_parses_and_means_what_it_says(void **state)
{
    (void)state;
    load_dumps();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
            const struct moe_case *c = &cases[i];
            struct moe_study s;
            struct moe_run r;
            json_t *argv, *env;
            char where[256], seq[512], *text;

            load(c->study, moe_dialect_name((enum moe_dialect)d), c->te, &s);
            moe_run_from_baseline(&r, &s, 20);
            c->tweak(&s, &r);
            argv = argv_json(&s, &r);
            env = env_json(&s, &r);
            snprintf(where, sizeof(where), "%s in %s", c->name, moe_dialect_name((enum moe_dialect)d));
            parses(d, argv, where);
            text = json_dumps(argv, JSON_COMPACT);
            for (int k = 0; k < 6 && c->has[k]; k++) {
                if (c->has[k][0] == '@')
                    graph_seq(c->has[k], (enum moe_dialect)d, seq, sizeof(seq));
                else
                    snprintf(seq, sizeof(seq), "%s", c->has[k]);
                if (!has_seq(argv, seq))
                    fail_msg("%s: no '%s' in %s", where, seq, text);
            }
            for (int k = 0; k < 6 && c->lacks[k]; k++)
                if (has_seq(argv, c->lacks[k]))
                    fail_msg("%s: '%s' should not be in %s", where, c->lacks[k], text);
            for (int k = 0; k < 4 && c->env[k]; k++) {
                const char *eq = strchr(c->env[k], '=');
                char key[128];
                const char *got;

                snprintf(key, sizeof(key), "%.*s", (int)(eq - c->env[k]), c->env[k]);
                got = json_string_value(json_object_get(env, key));
                if (!eq[1] ? got != NULL : !got || strcmp(got, eq + 1) != 0)
                    fail_msg("%s: environment %s is %s, not %s", where, key, got ? got : "unset",
                             eq[1] ? eq + 1 : "unset");
            }
            free(text);
            json_decref(argv);
            json_decref(env);
            moe_study_free(&s);
        }
}

/* Every value of the enums behind a branch has a case above: a precision,
 * dispatcher, recompute module or routing added without one fails here. */
static void every_enum_value_has_a_case(void **state)
{
    const char *const *lists[] = { moe_precision_names, moe_dispatcher_names,
                                   moe_recompute_module_names, moe_routing_names };
    const char *const prefix[] = { "", "", "recompute ", "" };

    (void)state;
    for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
        for (const char *const *v = lists[l]; *v; v++) {
            char name[128];
            bool seen = false;

            snprintf(name, sizeof(name), "%s%s", prefix[l], *v);
            for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && !seen; i++)
                seen = strcmp(cases[i].name, name) == 0;
            if (!seen)
                fail_msg("no case named '%s'", name);
        }
}

/* A renamed flag the study's dialect has no spelling for fails the list
 * with the flag and the dialect named, not "out of memory". */
static void rename_without_spelling_is_named(void **state)
{
    static const char *const mods[] = { "moe_router", NULL };
    struct moe_study s;
    struct moe_run r;
    struct moe_strv l = { 0 };
    struct moe_error e;

    (void)state;
    load("qwen3-30b-a3b-16xh100.yaml", "core-0.19", NULL, &s);
    moe_run_from_baseline(&r, &s, 20);
    graphs(&r, mods);
    s.software.dialect = (enum moe_dialect)MOE_DIALECT_COUNT;
    moe_error_clear(&e);
    assert_int_equal(moe_megatron_argv(&s, &r, &l, &e), -1);
    assert_non_null(strstr(e.text, "--cuda-graph-modules"));
    assert_non_null(strstr(e.text, "has no spelling for dialect"));
    moe_strv_free(&l);
    s.software.dialect = MOE_DIALECT_CORE_0_19;
    moe_study_free(&s);
}

/* Every renamed flag has a spelling in every dialect of enum moe_dialect,
 * that spelling is an option of the dialect's argparse dump, and moeflow's
 * own name is not where the dialect spells it otherwise (else the rename
 * would not be needed). */
static void renames_match_each_dialect(void **state)
{
    size_t n;
    const struct moe_megatron_rename *r = moe_megatron_renames(&n);

    (void)state;
    load_dumps();
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
            const char *in = r[i].in[d], *dn = moe_dialect_name((enum moe_dialect)d);

            if (!in)
                fail_msg("renamed flag %s has no spelling in %s", r[i].flag, dn);
            assert_string_equal(moe_megatron_flag(r[i].flag, (enum moe_dialect)d), in);
            if (!find(d, in))
                fail_msg("renamed flag %s: %s is not an option of %s", r[i].flag, in,
                         dump_files[d]);
            if (strcmp(in, r[i].flag) != 0 && find(d, r[i].flag))
                fail_msg("renamed flag %s is an option of %s itself: %s needs no rename",
                         r[i].flag, dump_files[d], dn);
        }
    assert_string_equal(moe_megatron_flag("--bf16", MOE_DIALECT_CORE_0_16), "--bf16");
    assert_null(moe_megatron_flag("--cuda-graph-modules", (enum moe_dialect)MOE_DIALECT_COUNT));
}

/* moeflow's name for the flag that the report table's entry f spells. */
static const char *renamed_from(const char *f)
{
    size_t n;
    const struct moe_megatron_rename *r = moe_megatron_renames(&n);

    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < MOE_DIALECT_COUNT; d++)
            if (r[i].in[d] && strcmp(r[i].in[d], f) == 0)
                return r[i].flag;
    return f;
}

/* Each flag of the report's table (lib/analysis/report_runs.c) is an
 * option of every dialect moeflow spells it so in, with the argument-dump
 * key the table claims (argparse's dest): a key that is not the dest is a
 * proof that never finds its value. */
/* Whether a dialect emits flag, for the SM-count flags, which are spelled
 * per dialect and backend (megatron_args.c moe_megatron_sms_flag); true
 * for every other flag. */
static bool sms_flag_of(enum moe_dialect d, const char *flag)
{
    const char *deepep = moe_megatron_sms_flag(MOE_DISPATCH_FLEX_DEEPEP, d);
    const char *hybridep = moe_megatron_sms_flag(MOE_DISPATCH_FLEX_HYBRIDEP, d);

    if (!strstr(flag, "-num-sms"))
        return true;
    return strcmp(flag, deepep) == 0 || strcmp(flag, hybridep) == 0;
}

static void report_flags_match_each_dialect(void **state)
{
    size_t n;
    const struct moe_report_flag *t = moe_report_requested_flags(&n);

    (void)state;
    load_dumps();
    for (size_t i = 0; i < n; i++) {
        const char *own = renamed_from(t[i].flag);
        int spelled = 0;

        for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
            const struct flagspec *fs;

            if (strcmp(moe_megatron_flag(own, (enum moe_dialect)d), t[i].flag) != 0 ||
                !sms_flag_of((enum moe_dialect)d, t[i].flag))
                continue;
            spelled++;
            if (!(fs = find(d, t[i].flag)))
                fail_msg("report flag %s is not an option of %s", t[i].flag, dump_files[d]);
            if (strcmp(fs->dest, t[i].key) != 0)
                fail_msg("report flag %s: its key in %s is %s, the table says %s", t[i].flag,
                         dump_files[d], fs->dest, t[i].key);
        }
        if (!spelled)
            fail_msg("report flag %s is spelled so in no dialect", t[i].flag);
    }
}

/* The flags of argv that base lacks or holds with other values. */
static void changed_flags(const struct moe_strv *argv, const struct moe_strv *base,
                          char *out, size_t len)
{
    out[0] = '\0';
    for (size_t i = 0; i < argv->n; i++) {
        size_t e = i + 1, k;
        long j;

        if (strncmp(argv->v[i], "--", 2) != 0)
            continue;
        while (e < argv->n && strncmp(argv->v[e], "--", 2) != 0)
            e++;
        j = moe_strv_find(base, argv->v[i]);
        for (k = 1; j >= 0 && i + k < e; k++)
            if ((size_t)j + k >= base->n || strcmp(base->v[j + k], argv->v[i + k]) != 0)
                break;
        if (j < 0 || i + k < e)
            snprintf(out + strlen(out), len - strlen(out), "%s ", argv->v[i]);
    }
}

/* Flags a retune candidate may change that the report does not prove:
 * Megatron takes them as given or stops, with nothing to fall back to. */
static const char *const unproven[] = {
    "--manual-gc",        /* Python's collector at fixed intervals */
    "--manual-gc-interval",
    "--micro-batch-size", /* the mbs axis; the dump's micro_batch_size is shown, not checked */
    /* with CUDA graphs Megatron turns the TE RNG tracker on itself
     * (core 0.19 arguments.py:1878) */
    "--te-rng-tracker", NULL,
};

static bool proven(const char *flag)
{
    size_t n;
    const struct moe_report_flag *t = moe_report_requested_flags(&n);

    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].flag, flag) == 0)
            return true;
    for (const char *const *u = unproven; *u; u++)
        if (strcmp(*u, flag) == 0)
            return true;
    return false;
}

/* Every flag a retune candidate changes from the baseline, for every axis
 * of MOE_RETUNE_LIST, is in the report's table (or unproven[], with its
 * reason): an axis added to the catalogue whose flag the report would not
 * check fails here.  Each axis must have a candidate in some example. */
static void report_flags_cover_the_retune_axes(void **state)
{
    /* the third with EP overlap on, which delay_wgrad needs */
    static const char *const studies[] = { "qwen3-30b-a3b-16xh100.yaml",
                                           "deepseek-v3-1024xh100.yaml",
                                           "qwen3-30b-a3b-16xh100.yaml" };
    bool seen[MOE_RETUNE_COUNT] = { false };

    (void)state;
    for (size_t k = 0; k < 3; k++)
        for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
            struct moe_study s;
            struct moe_stage_plan base, p;
            struct moe_error e;

            load(studies[k], moe_dialect_name((enum moe_dialect)d), NULL, &s);
            s.baseline.ep_overlap = k == 2;
            assert_int_equal(moe_candidates_build(&s, MOE_STAGE_PROFILE, &base, &e), 0);
            assert_int_equal(moe_candidates_render(&s, &base, &e), 0);
            assert_int_equal(moe_candidates_build(&s, MOE_STAGE_RETUNE, &p, &e), 0);
            assert_int_equal(moe_candidates_render(&s, &p, &e), 0);
            for (size_t i = 0; i < p.n; i++) {
                char flags[2048], *save = NULL;
                int a = 0;

                while (a < MOE_RETUNE_COUNT &&
                       strcmp(moe_retune_entry((enum moe_retune_axis)a)->variable,
                              p.cands[i].variable) != 0)
                    a++;
                if (a == MOE_RETUNE_COUNT)
                    continue; /* the reference run */
                seen[a] = true;
                changed_flags(&p.cands[i].argv, &base.cands[0].argv, flags, sizeof(flags));
                for (char *f = strtok_r(flags, " ", &save); f; f = strtok_r(NULL, " ", &save))
                    if (!proven(f))
                        fail_msg("%s in %s: the retune axis %s changes %s, which the report's "
                                 "table (lib/analysis/report_runs.c) does not prove",
                                 studies[k], moe_dialect_name((enum moe_dialect)d),
                                 moe_retune_entry((enum moe_retune_axis)a)->axis, f);
            }
            moe_stage_plan_free(&base);
            moe_stage_plan_free(&p);
            moe_study_free(&s);
        }
    for (int a = 0; a < MOE_RETUNE_COUNT; a++)
        if (!seen[a])
            fail_msg("the retune axis %s has no candidate in the examples: nothing checks its flags",
                     moe_retune_entry((enum moe_retune_axis)a)->axis);
}

/* ---- cluster.launcher.extra_args (issue 40) ---- */

/* lib/study/megatron_flags.c, which tests/data/megatron/flags.py writes,
 * is the dumps: every flag with its dest and nargs, no more, no fewer. */
static void flag_table_is_the_dumps(void **state)
{
    (void)state;
    load_dumps();
    for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
        size_t n, want = 0;
        const struct moe_megatron_flag_spec *t = moe_megatron_flags((enum moe_dialect)d, &n);

        for (int i = 0; i < dumps[d].n; i++) {
            const struct flagspec *fs = &dumps[d].f[i];
            const struct moe_megatron_flag_spec *g = NULL;
            const char *nargs = fs->nargs;
            int lo = strcmp(nargs, "None") == 0 ? 1 : strchr("?*", nargs[0]) ? 0 : nargs[0] == '+'
                                                                                  ? 1 : atoi(nargs);
            int hi = strcmp(nargs, "None") == 0 ? 1 : nargs[0] == '?' ? 1 : strchr("*+", nargs[0])
                                                                             ? -1 : atoi(nargs);

            if (strncmp(fs->opt, "--", 2) != 0 || strcmp(fs->opt, "--help") == 0)
                continue;
            want++;
            for (size_t k = 0; k < n && !g; k++)
                if (strcmp(t[k].flag, fs->opt) == 0)
                    g = &t[k];
            if (!g || strcmp(g->dest, fs->dest) != 0 || g->min != lo || g->max != hi)
                fail_msg("%s: %s (dest %s, nargs %s) is not in megatron_flags.c as the dump "
                         "has it: run tests/data/megatron/flags.py", dump_files[d], fs->opt,
                         fs->dest, nargs);
        }
        assert_int_equal(n, want);
    }
}

/* Every flag literal of the files that emit Megatron's arguments is one
 * megatron_extra.c's owned[] lists with the study key that decides it. */
static void every_emitted_flag_is_owned(void **state)
{
    static const char *const files[] = { "lib/study/megatron_args.c",
                                         "lib/study/validate_checkpoint.c",
                                         "lib/study/validate_profile.c", NULL };
    size_t n;
    const struct moe_megatron_owned *o = moe_megatron_owned_flags(&n);

    (void)state;
    for (const char *const *f = files; *f; f++) {
        char path[4400], *text, *p;
        size_t len;
        struct moe_error e;

        snprintf(path, sizeof(path), "%s/%s", srcdir, *f);
        assert_non_null(text = moe_read_file(path, "source", &len, &e));
        for (p = text; (p = strstr(p, "\"--")); p += 3) {
            size_t k = strspn(p + 1, "-abcdefghijklmnopqrstuvwxyz0123456789"), i = 0;

            if (p[1 + k] != '"' || k == 2)
                continue;
            while (i < n && (strlen(o[i].flag) != k || strncmp(o[i].flag, p + 1, k) != 0))
                i++;
            if (i == n)
                fail_msg("%s emits %.*s, which megatron_extra.c's owned[] lacks", *f, (int)k,
                         p + 1);
        }
        free(text);
    }
}

/* Every variable moe_megatron_env sets is in moe_megatron_env_names, which
 * cluster.env may not set. */
static void every_env_variable_is_named(void **state)
{
    char path[4400], *text, *p;
    size_t len;
    struct moe_error e;

    (void)state;
    snprintf(path, sizeof(path), "%s/lib/study/megatron_args.c", srcdir);
    assert_non_null(text = moe_read_file(path, "source", &len, &e));
    assert_non_null(p = strstr(text, "int moe_megatron_env("));
    for (; (p = strchr(p, '"')); p++) {
        size_t k = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        const char *const *nm = moe_megatron_env_names;

        if (k && p[1 + k] == '=') {
            while (*nm && (strlen(*nm) != k || strncmp(*nm, p + 1, k) != 0))
                nm++;
            if (!*nm)
                fail_msg("moe_megatron_env sets %.*s, which moe_megatron_env_names lacks",
                         (int)k, p + 1);
        }
        p = strchr(p + 1, '"');
        if (!p)
            break;
    }
    free(text);
}

static void extra(enum moe_dialect d, const char *const *words, long want_at, const char *want)
{
    struct moe_strv v = { 0 };
    struct moe_error e;
    size_t at = 99;

    for (; *words; words++)
        assert_int_equal(moe_strv_push(&v, *words), 0);
    moe_error_clear(&e);
    if (!want) {
        if (moe_megatron_extra_check(d, &v, &at, &e) != 0)
            fail_msg("refused: %s", e.text);
    } else {
        assert_int_equal(moe_megatron_extra_check(d, &v, &at, &e), -1);
        assert_int_equal((long)at, want_at);
        if (!strstr(e.text, want))
            fail_msg("want '%s' in '%s'", want, e.text);
    }
    moe_strv_free(&v);
}

/* megatron_extra.c: known flags with their values pass; an unknown one
 * names the closest, one moeflow sets names the study key, and a value
 * count argparse would refuse is refused. */
static void extra_args_checked(void **state)
{
    (void)state;
    extra(MOE_DIALECT_CORE_0_19, (const char *const[]){ "--seed", "7", "--log-timers-to-tensorboard",
                                                        "--exit-signal-handler", NULL }, 0, NULL);
    extra(MOE_DIALECT_CORE_0_16, (const char *const[]){ "--seed=7", NULL }, 0, NULL);
    extra(MOE_DIALECT_CORE_0_19, (const char *const[]){ "--sed", "7", NULL }, 0,
          "did you mean '--seed'?");
    extra(MOE_DIALECT_CORE_0_19, (const char *const[]){ "--seed", "7", "--recompute-granularity",
                                                        "full", NULL }, 2,
          "set baseline.recompute in the study instead");
    extra(MOE_DIALECT_BRIDGE_PIN, (const char *const[]){ "--lr", "3e-4", NULL }, 0,
          "set workload.lr in the study instead");
    /* the training semantics and the SM count are the study's keys now
     * (issue 41): the label and the contract read them there */
    extra(MOE_DIALECT_CORE_0_19, (const char *const[]){ "--moe-aux-loss-coeff", "0.01", NULL },
          0, "set workload.aux_loss_coeff in the study instead");
    extra(MOE_DIALECT_CORE_0_16, (const char *const[]){ "--moe-deepep-num-sms", "24", NULL },
          0, "set baseline.dispatcher_sms in the study instead");
    extra(MOE_DIALECT_CORE_0_19, (const char *const[]){ "--seed", NULL }, 0,
          "--seed takes 1 value, not 0");
    extra(MOE_DIALECT_CORE_0_19, (const char *const[]){ "7", NULL }, 0, "is not a flag");
    extra(MOE_DIALECT_CORE_0_19, (const char *const[]){ "--", NULL }, 0, "is not a flag");
}

int main(void)
{
    const char *src = getenv("MOEFLOW_SRCDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_branch_parses_and_means_what_it_says),
        cmocka_unit_test(every_enum_value_has_a_case),
        cmocka_unit_test(renames_match_each_dialect),
        cmocka_unit_test(rename_without_spelling_is_named),
        cmocka_unit_test(report_flags_match_each_dialect),
        cmocka_unit_test(report_flags_cover_the_retune_axes),
        cmocka_unit_test(flag_table_is_the_dumps),
        cmocka_unit_test(every_emitted_flag_is_owned),
        cmocka_unit_test(every_env_variable_is_named),
        cmocka_unit_test(extra_args_checked),
    };
    int rc;

    snprintf(srcdir, sizeof(srcdir), "%s", src ? src : "..");
    rc = MOE_RUN_TESTS(tests);
    for (int d = 0; d < MOE_DIALECT_COUNT; d++)
        free(dumps[d].f);
    return rc;
}
