/* cluster.launcher.extra_args: Megatron words a study adds after moeflow's
 * own.  Each flag must be one the study's dialect parses (megatron_flags.c,
 * from the argparse dumps), with the values it takes, and none may set
 * what a flag moeflow emits sets: a tuning variable goes through the
 * study's own key, or a run would differ from the baseline in a setting
 * the contract does not name (the one-variable rule). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/suggest.h"
#include "study/megatron_args.h"
#include "study/megatron_args_internal.h"
#include "study/study_schema.h"

/* Every flag megatron_args.c, validate_checkpoint.c and validate_profile.c
 * emit, with the study key that decides it; test_megatron_args fails on a
 * flag literal of those files missing here. */
static const struct moe_megatron_owned owned[] = {
    { "--num-layers", MOE_SK_MODEL_NUM_LAYERS }, { "--hidden-size", MOE_SK_MODEL_HIDDEN },
    { "--ffn-hidden-size", MOE_SK_MODEL_FFN_HIDDEN },
    { "--num-attention-heads", MOE_SK_MODEL_NUM_HEADS },
    { "--multi-latent-attention", MOE_SK_MODEL_ATTENTION },
    { "--q-lora-rank", MOE_SK_MODEL_Q_LORA_RANK }, { "--kv-lora-rank", MOE_SK_MODEL_KV_LORA_RANK },
    { "--qk-head-dim", MOE_SK_MODEL_QK_HEAD_DIM },
    { "--qk-pos-emb-head-dim", MOE_SK_MODEL_QK_POS_HEAD_DIM },
    { "--v-head-dim", MOE_SK_MODEL_V_HEAD_DIM },
    { "--group-query-attention", MOE_SK_MODEL_NUM_QUERY_GROUPS },
    { "--num-query-groups", MOE_SK_MODEL_NUM_QUERY_GROUPS },
    { "--kv-channels", MOE_SK_MODEL_HEAD_DIM }, { "--qk-layernorm", MOE_SK_MODEL_QK_LAYERNORM },
    { "--num-experts", MOE_SK_MODEL_NUM_EXPERTS }, { "--moe-router-topk", MOE_SK_MODEL_TOPK },
    { "--moe-ffn-hidden-size", MOE_SK_MODEL_MOE_FFN_HIDDEN },
    { "--moe-shared-expert-intermediate-size", MOE_SK_MODEL_SHARED_EXPERT_FFN },
    { "--moe-layer-freq", MOE_SK_MODEL_FIRST_DENSE_LAYERS },
    { "--mtp-num-layers", MOE_SK_MODEL_MTP_LAYERS },
    { "--moe-router-score-function", MOE_SK_MODEL_ROUTER_SCORE },
    { "--moe-router-enable-expert-bias", MOE_SK_MODEL_ROUTER_SCORE },
    { "--moe-router-pre-softmax", MOE_SK_MODEL_ROUTER_SCORE },
    { "--moe-router-num-groups", MOE_SK_MODEL_ROUTER_GROUPS },
    { "--moe-router-group-topk", MOE_SK_MODEL_ROUTER_GROUP_TOPK },
    { "--swiglu", MOE_SK_MODEL_SWIGLU },
    { "--untie-embeddings-and-output-weights", MOE_SK_MODEL_UNTIE_EMBEDDINGS },
    { "--vocab-size", MOE_SK_MODEL_VOCAB },
    { "--moe-router-dtype", NULL }, { "--normalization", NULL },
    { "--position-embedding-type", NULL }, { "--disable-bias-linear", NULL },
    { "--moe-grouped-gemm", MOE_SK_SOFTWARE_TRANSFORMER_ENGINE },
    { "--moe-permute-fusion", MOE_SK_SOFTWARE_TRANSFORMER_ENGINE },
    { "--transformer-impl", MOE_SK_SOFTWARE_TRANSFORMER_ENGINE },
    { "--no-persist-layer-norm", MOE_SK_SOFTWARE_TRANSFORMER_ENGINE },
    { "--no-rope-fusion", MOE_SK_SOFTWARE_TRANSFORMER_ENGINE },
    { "--no-masked-softmax-fusion", MOE_SK_SOFTWARE_APEX },
    { "--no-gradient-accumulation-fusion", MOE_SK_SOFTWARE_APEX },
    { "--no-bias-dropout-fusion", MOE_SK_SOFTWARE_APEX },
    { "--moe-expert-capacity-factor", MOE_SK_WORKLOAD_CAPACITY_FACTOR },
    { "--moe-pad-expert-input-to-capacity", MOE_SK_WORKLOAD_ROUTING },
    { "--moe-router-force-load-balancing", MOE_SK_WORKLOAD_ROUTING },
    { "--seq-length", MOE_SK_WORKLOAD_SEQ_LEN },
    { "--max-position-embeddings", MOE_SK_WORKLOAD_SEQ_LEN },
    { "--micro-batch-size", MOE_SK_WORKLOAD_MBS }, { "--global-batch-size", MOE_SK_WORKLOAD_GBS },
    { "--optimizer", MOE_SK_WORKLOAD_OPTIMIZER },
    { "--use-distributed-optimizer", MOE_SK_WORKLOAD_DISTRIBUTED_OPTIMIZER },
    { "--grad-reduce-in-bf16", MOE_SK_WORKLOAD_GRAD_REDUCE_IN_BF16 },
    { "--data-path", MOE_SK_WORKLOAD_DATA }, { "--mock-data", MOE_SK_WORKLOAD_DATA },
    { "--tokenizer-type", MOE_SK_WORKLOAD_TOKENIZER },
    { "--tokenizer-model", MOE_SK_WORKLOAD_TOKENIZER }, { "--lr", MOE_SK_WORKLOAD_LR },
    { "--lr-decay-style", MOE_SK_WORKLOAD_LR_SCHEDULE },
    { "--lr-warmup-iters", MOE_SK_WORKLOAD_LR_WARMUP_ITERS },
    { "--lr-decay-iters", MOE_SK_WORKLOAD_LR_DECAY_ITERS },
    { "--min-lr", MOE_SK_WORKLOAD_MIN_LR },
    { "--moe-aux-loss-coeff", MOE_SK_WORKLOAD_AUX_LOSS_COEFF }, { "--eval-iters", NULL },
    { "--eval-interval", NULL }, { "--log-throughput", NULL },
    { "--tensor-model-parallel-size", MOE_SK_BASELINE_TP },
    { "--sequence-parallel", MOE_SK_BASELINE_TP },
    { "--pipeline-model-parallel-size", MOE_SK_BASELINE_PP },
    { "--context-parallel-size", MOE_SK_BASELINE_CP },
    { "--expert-model-parallel-size", MOE_SK_BASELINE_EP },
    { "--expert-tensor-parallel-size", MOE_SK_BASELINE_ETP },
    { "--pipeline-model-parallel-layout", MOE_SK_BASELINE_PIPELINE_LAYOUT },
    { "--num-virtual-stages-per-pipeline-rank", MOE_SK_BASELINE_VPP },
    { "--moe-token-dispatcher-type", MOE_SK_BASELINE_DISPATCHER },
    { "--moe-flex-dispatcher-backend", MOE_SK_BASELINE_DISPATCHER },
    { "--moe-deepep-num-sms", MOE_SK_BASELINE_DISPATCHER_SMS },
    { "--moe-hybridep-num-sms", MOE_SK_BASELINE_DISPATCHER_SMS },
    { "--moe-flex-dispatcher-num-sms", MOE_SK_BASELINE_DISPATCHER_SMS },
    { "--overlap-moe-expert-parallel-comm", MOE_SK_BASELINE_EP_OVERLAP },
    { "--delay-wgrad-compute", MOE_SK_BASELINE_DELAY_WGRAD },
    { "--moe-shared-expert-overlap", MOE_SK_BASELINE_SHARED_EXPERT_OVERLAP },
    { "--overlap-grad-reduce", MOE_SK_BASELINE_OVERLAP_GRAD_REDUCE },
    { "--tp-comm-overlap", MOE_SK_BASELINE_TP_COMM_OVERLAP },
    { "--manual-gc", MOE_SK_BASELINE_MANUAL_GC },
    { "--manual-gc-interval", MOE_SK_BASELINE_MANUAL_GC },
    { "--recompute-granularity", MOE_SK_BASELINE_RECOMPUTE },
    { "--recompute-method", MOE_SK_BASELINE_RECOMPUTE },
    { "--recompute-num-layers", MOE_SK_BASELINE_RECOMPUTE },
    { "--recompute-modules", MOE_SK_BASELINE_RECOMPUTE_MODULES },
    { "--cuda-graph-impl", MOE_SK_BASELINE_CUDA_GRAPH_MODULES },
    { "--cuda-graph-modules", MOE_SK_BASELINE_CUDA_GRAPH_MODULES },
    { "--cuda-graph-scope", MOE_SK_BASELINE_CUDA_GRAPH_MODULES },
    /* full_iteration turns the NaN check off (megatron_args.c) */
    { "--no-check-for-nan-in-loss-and-grad", MOE_SK_BASELINE_CUDA_GRAPH_MODULES },
    { "--te-rng-tracker", MOE_SK_BASELINE_CUDA_GRAPH_MODULES },
    { "--bf16", MOE_SK_WORKLOAD_PRECISION }, { "--fp8-format", MOE_SK_WORKLOAD_PRECISION },
    { "--fp8-recipe", MOE_SK_WORKLOAD_PRECISION }, { "--fp4-format", MOE_SK_WORKLOAD_PRECISION },
    { "--fp4-recipe", MOE_SK_WORKLOAD_PRECISION },
    { "--train-iters", MOE_SK_MEASURE_SCREEN_STEPS },
    { "--log-interval", MOE_SK_MEASURE_LOG_INTERVAL },
    { "--profile", MOE_SK_MEASURE_PROFILE_STEPS },
    { "--profile-step-start", MOE_SK_MEASURE_PROFILE_STEPS },
    { "--profile-step-end", MOE_SK_MEASURE_PROFILE_STEPS },
    { "--use-pytorch-profiler", MOE_SK_MEASURE_PROFILER },
    { "--tensorboard-dir", MOE_SK_MEASURE_PROFILER },
    { "--fake-process-group", NULL },
    { "--deterministic-mode", MOE_SK_VALIDATION_CHECKPOINT },
    { "--cross-entropy-loss-fusion", MOE_SK_VALIDATION_CHECKPOINT },
    { "--save", MOE_SK_VALIDATION_CHECKPOINT }, { "--load", MOE_SK_VALIDATION_CHECKPOINT },
    { "--save-interval", MOE_SK_VALIDATION_CHECKPOINT },
    { "--ckpt-format", MOE_SK_VALIDATION_CHECKPOINT },
    { "--ckpt-step", MOE_SK_VALIDATION_CHECKPOINT },
};

const struct moe_megatron_owned *moe_megatron_owned_flags(size_t *n)
{
    *n = sizeof(owned) / sizeof(owned[0]);
    return owned;
}

static const struct moe_megatron_flag_spec *spec_of(const struct moe_megatron_flag_spec *t,
                                                    size_t n, const char *flag, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].flag) == len && strncmp(t[i].flag, flag, len) == 0)
            return &t[i];
    return NULL;
}

/* The owned flag that sets dest in this dialect, or NULL. */
static const struct moe_megatron_owned *owner(const struct moe_megatron_flag_spec *t, size_t n,
                                              const char *dest)
{
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
        const struct moe_megatron_flag_spec *o = spec_of(t, n, owned[i].flag,
                                                         strlen(owned[i].flag));

        if (o && strcmp(o->dest, dest) == 0)
            return &owned[i];
    }
    return NULL;
}

static int unknown(const struct moe_megatron_flag_spec *t, size_t n, const char *word,
                   enum moe_dialect d, struct moe_error *err)
{
    const char **names = malloc(n * sizeof(*names));
    const char *near;

    if (!names) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        names[i] = t[i].flag;
    near = moe_suggest(word, names, (int)n);
    if (near)
        moe_error_set(err, "'%.80s' is no flag of Megatron %s (did you mean '%s'?)", word,
                      moe_dialect_names[d], near);
    else
        moe_error_set(err, "'%.80s' is no flag of Megatron %s", word, moe_dialect_names[d]);
    free(names);
    return -1;
}

/* A flag that sets what one of moeflow's sets: which study key decides
 * it instead, if any. */
static int owned_error(const struct moe_megatron_flag_spec *f, const struct moe_megatron_owned *o,
                       struct moe_error *err)
{
    char who[160];

    if (strcmp(f->flag, o->flag) == 0)
        /* fits: a flag of the table, short */
        snprintf(who, sizeof(who), "moeflow sets %s itself", f->flag);
    else
        /* a message: a cut one still reads */
        snprintf(who, sizeof(who), "%s sets what moeflow's %s sets (%s)", f->flag, o->flag,
                 f->dest);
    if (o->key)
        moe_error_set(err, "%s: set %s in the study instead, so that every run's contract "
                      "names it", who, o->key);
    else
        moe_error_set(err, "%s, the same in every run: it is no study setting", who);
    return -1;
}

/* The flag at words[i] (--flag or --flag=value): known, not owned, and
 * followed by as many values as it takes; *next is the word after them. */
static int one_flag(const struct moe_megatron_flag_spec *t, size_t n, enum moe_dialect d,
                    const struct moe_strv *words, size_t i, size_t *next, struct moe_error *err)
{
    const char *w = words->v[i], *eq = strchr(w, '=');
    size_t len = eq ? (size_t)(eq - w) : strlen(w), vals = eq ? 1 : 0, j = i + 1;
    const struct moe_megatron_flag_spec *f = spec_of(t, n, w, len);
    const struct moe_megatron_owned *o;

    if (!f)
        return eq ? (moe_error_set(err, "'%.*s' is no flag of Megatron %s", (int)len, w,
                                   moe_dialect_names[d]), -1)
                  : unknown(t, n, w, d, err);
    if ((o = owner(t, n, f->dest)))
        return owned_error(f, o, err);
    while (!eq && j < words->n && strncmp(words->v[j], "--", 2) != 0)
        j++, vals++;
    if ((int)vals < f->min || (f->max >= 0 && (int)vals > f->max)) {
        if (f->max == 0)
            moe_error_set(err, "%s takes no value; %zu follow%s it", f->flag, vals,
                          vals == 1 ? "s" : "");
        else
            moe_error_set(err, "%s takes %d%s value%s, not %zu", f->flag, f->min,
                          f->max < 0 ? " or more" : f->max > f->min ? " or 1" : "",
                          f->max == 1 && f->min == 1 ? "" : "s", vals);
        return -1;
    }
    *next = j;
    return 0;
}

int moe_megatron_extra_check(enum moe_dialect d, const struct moe_strv *words, size_t *at,
                             struct moe_error *err)
{
    size_t n, i = 0;
    const struct moe_megatron_flag_spec *t = moe_megatron_flags(d, &n);

    while (i < words->n) {
        *at = i;
        if (strncmp(words->v[i], "--", 2) != 0 || !words->v[i][2]) {
            moe_error_set(err, "'%.80s' is not a flag: each value follows its flag", words->v[i]);
            return -1;
        }
        if (one_flag(t, n, d, words, i, &i, err) < 0)
            return -1;
    }
    return 0;
}
