/* The argument list follows Megatron-LM's pretrain_gpt.py.  Only flags that
 * exist in every supported dialect are emitted, spelled as the dialect
 * spells them (renames[]: CUDA-graph module selection); the unit test
 * test_megatron_flags checks each flag and choice against the argparse dumps. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "study/megatron_args.h"
#include "study/megatron_args_internal.h"
#include "study/study_internal.h"

/* Renamed flags, by dialect (enum moe_dialect's order). */
static const struct moe_megatron_rename renames[] = {
    /* core 0.18 renamed --cuda-graph-scope; core 0.19 keeps the old name
     * as a deprecated alias (dest cuda_graph_scope_deprecated) */
    { "--cuda-graph-modules",
      { [MOE_DIALECT_CORE_0_16] = "--cuda-graph-scope",
        [MOE_DIALECT_CORE_0_19] = "--cuda-graph-modules",
        [MOE_DIALECT_BRIDGE_PIN] = "--cuda-graph-modules" } },
};

const struct moe_megatron_rename *moe_megatron_renames(size_t *n)
{
    *n = sizeof(renames) / sizeof(renames[0]);
    return renames;
}

const char *moe_megatron_flag(const char *flag, enum moe_dialect d)
{
    for (size_t i = 0; i < sizeof(renames) / sizeof(renames[0]); i++)
        if (strcmp(renames[i].flag, flag) == 0)
            return (unsigned)d < MOE_DIALECT_COUNT ? renames[i].in[d] : NULL;
    return flag;
}

/* An append that fails marks the list (strv.oom); moe_megatron_argv
 * checks once at the end.  So does a flag with no spelling (NULL). */
static void add(struct moe_strv *argv, const char *flag)
{
    if (!flag) {
        argv->oom = true;
        return;
    }
    moe_strv_push(argv, flag);
}

static void addi(struct moe_strv *argv, const char *flag, int v)
{
    add(argv, flag);
    moe_strv_pushf(argv, "%d", v);
}

/* A number as Megatron's float() reads it back: %.9g keeps every digit a
 * study writes for a rate or coefficient. */
static void addf(struct moe_strv *argv, const char *flag, double v)
{
    add(argv, flag);
    moe_strv_pushf(argv, "%.9g", v);
}

static void adds(struct moe_strv *argv, const char *flag, const char *v)
{
    add(argv, flag);
    add(argv, v);
}

void moe_run_from_baseline(struct moe_run *run, const struct moe_study *s, int train_iters)
{
    memset(run, 0, sizeof(*run));
    run->cfg = s->baseline;
    run->mbs = s->workload.mbs;
    run->train_iters = train_iters;
}

static void model_args(struct moe_strv *a, const struct moe_study *s)
{
    const struct moe_model *m = &s->model;
    char freq[64];

    addi(a, "--num-layers", m->num_layers);
    addi(a, "--hidden-size", m->hidden);
    if (m->ffn_hidden)
        addi(a, "--ffn-hidden-size", m->ffn_hidden);
    addi(a, "--num-attention-heads", m->num_heads);
    if (m->attention == MOE_ATTN_MLA) {
        add(a, "--multi-latent-attention");
        if (m->q_lora_rank)
            addi(a, "--q-lora-rank", m->q_lora_rank);
        addi(a, "--kv-lora-rank", m->kv_lora_rank);
        addi(a, "--qk-head-dim", m->qk_head_dim);
        addi(a, "--qk-pos-emb-head-dim", m->qk_pos_head_dim);
        addi(a, "--v-head-dim", m->v_head_dim);
    } else {
        if (m->num_query_groups != m->num_heads) {
            add(a, "--group-query-attention");
            addi(a, "--num-query-groups", m->num_query_groups);
        }
        addi(a, "--kv-channels", m->head_dim);
    }
    if (m->qk_layernorm)
        add(a, "--qk-layernorm");
    addi(a, "--num-experts", m->num_experts);
    addi(a, "--moe-router-topk", m->topk);
    addi(a, "--moe-ffn-hidden-size", m->moe_ffn_hidden);
    if (m->shared_expert_ffn)
        addi(a, "--moe-shared-expert-intermediate-size", m->shared_expert_ffn);
    if (m->first_dense_layers) {
        /* Megatron evaluates this Python list expression. */
        snprintf(freq, sizeof(freq), "([0]*%d+[1]*%d)", m->first_dense_layers,
                 m->num_layers - m->first_dense_layers);
        adds(a, "--moe-layer-freq", freq);
    }
    if (m->mtp_layers)
        addi(a, "--mtp-num-layers", m->mtp_layers);
    adds(a, "--moe-router-score-function",
         m->router_score == MOE_ROUTER_SIGMOID ? "sigmoid" : "softmax");
    if (m->router_score == MOE_ROUTER_SIGMOID)
        add(a, "--moe-router-enable-expert-bias");
    /* A softmax over one chosen expert has a zero gradient: Megatron
     * refuses top-1 softmax routing without the softmax before top-k
     * (core/transformer/transformer_config.py:2336 in core 0.19, :1641 in
     * 0.16, :2428 in bridge-pin; measured in tests/gpu/fit-matrix.tsv). */
    if (m->topk == 1 && m->router_score == MOE_ROUTER_SOFTMAX)
        add(a, "--moe-router-pre-softmax");
    if (m->router_groups) {
        addi(a, "--moe-router-num-groups", m->router_groups);
        addi(a, "--moe-router-group-topk", m->router_group_topk);
    }
    /* The router stays FP32 whatever the training precision. */
    adds(a, "--moe-router-dtype", "fp32");
    /* Both are Transformer Engine kernels; the local implementation runs
     * the experts one by one (SequentialMLP) and permutes in PyTorch. */
    if (moe_software_has_te(&s->software)) {
        add(a, "--moe-grouped-gemm");
        add(a, "--moe-permute-fusion");
    }
    if (m->swiglu)
        add(a, "--swiglu");
    if (m->untie_embeddings)
        add(a, "--untie-embeddings-and-output-weights");
    adds(a, "--normalization", "RMSNorm");
    adds(a, "--position-embedding-type", "rope");
    add(a, "--disable-bias-linear");
    addi(a, "--vocab-size", m->vocab);
}

static void routing_args(struct moe_strv *a, const struct moe_workload *w,
                         const struct moe_training *t)
{
    char cf[32];

    /* Megatron's default coefficient is 0: no load-balancing loss
     * (--moe-aux-loss-coeff in the argparse dumps); a stated one, 0 too,
     * is emitted as stated */
    if (t->aux_loss_coeff >= 0)
        addf(a, "--moe-aux-loss-coeff", t->aux_loss_coeff);

    switch (w->routing) {
    case MOE_ROUTING_DROPLESS:
        break;
    case MOE_ROUTING_DROP_AND_PAD:
        /* fits: %g is 6 significant digits and an exponent */
        snprintf(cf, sizeof(cf), "%g", w->capacity_factor);
        adds(a, "--moe-expert-capacity-factor", cf);
        add(a, "--moe-pad-expert-input-to-capacity");
        break;
    case MOE_ROUTING_FORCE_BALANCE:
        add(a, "--moe-router-force-load-balancing");
        break;
    }
}

static void layout_args(struct moe_strv *a, const struct moe_study *s, const struct moe_baseline *c)
{
    const struct moe_layout *l = &c->layout;

    addi(a, "--tensor-model-parallel-size", l->tp);
    addi(a, "--pipeline-model-parallel-size", l->pp);
    addi(a, "--context-parallel-size", l->cp);
    addi(a, "--expert-model-parallel-size", l->ep);
    addi(a, "--expert-tensor-parallel-size", l->etp);
    /* The local implementation's RMSNorm (WrappedTorchNorm) refuses
     * sequence parallelism; core 0.19 then refuses MoE with TP > 1
     * (the layout rule moe-tp-needs-sp, fit/layouts.c). */
    if (l->tp > 1 && moe_software_has_te(&s->software))
        add(a, "--sequence-parallel");
    if (moe_study_str_set(c->pipeline_layout))
        adds(a, "--pipeline-model-parallel-layout", c->pipeline_layout);
    else if (l->vpp > 1)
        addi(a, "--num-virtual-stages-per-pipeline-rank", l->vpp);
}

/* The flex dispatcher's SM count, as each dialect names it.  Core 0.16
 * has one flag per backend (TransformerConfig moe_deepep_num_sms = 20,
 * moe_hybridep_num_sms = 16: transformer_config.py:722, :725), read by
 * DeepEP's set_deepep_num_sms and HybridEP's dispatch and combine
 * (token_dispatcher.py:1153, :1044).  Core 0.19 and bridge-pin deprecate
 * both for --moe-flex-dispatcher-num-sms (transformer_config.py:926 / :942;
 * None lets each backend keep its default, DeepEP's 20,
 * token_dispatcher.py:1279 / :1286) and route a deprecated one to it in
 * __post_init__ (:1616 / :1674), so the flag of record is the new one. */
const char *moe_megatron_sms_flag(enum moe_dispatcher d, enum moe_dialect dialect)
{
    if (d != MOE_DISPATCH_FLEX_DEEPEP && d != MOE_DISPATCH_FLEX_HYBRIDEP)
        return NULL;
    if (dialect == MOE_DIALECT_CORE_0_16)
        return d == MOE_DISPATCH_FLEX_DEEPEP ? "--moe-deepep-num-sms" : "--moe-hybridep-num-sms";
    return "--moe-flex-dispatcher-num-sms";
}

/* The SM count when the run sets one; the study refuses one without a
 * flex dispatcher, and so does the flag's absence here (argv->oom). */
static void sms_args(struct moe_strv *a, const struct moe_baseline *c, enum moe_dialect d)
{
    if (c->dispatcher_sms)
        addi(a, moe_megatron_sms_flag(c->dispatcher, d), c->dispatcher_sms);
}

static void dispatcher_args(struct moe_strv *a, enum moe_dispatcher d)
{
    switch (d) {
    case MOE_DISPATCH_ALLTOALL:
        adds(a, "--moe-token-dispatcher-type", "alltoall");
        break;
    case MOE_DISPATCH_ALLGATHER:
        adds(a, "--moe-token-dispatcher-type", "allgather");
        break;
    case MOE_DISPATCH_FLEX_DEEPEP:
        adds(a, "--moe-token-dispatcher-type", "flex");
        adds(a, "--moe-flex-dispatcher-backend", "deepep");
        break;
    case MOE_DISPATCH_FLEX_HYBRIDEP:
        adds(a, "--moe-token-dispatcher-type", "flex");
        adds(a, "--moe-flex-dispatcher-backend", "hybridep");
        break;
    }
}

/* flag as the study's dialect spells it; a rename without that spelling
 * fails the list with err naming the flag and the dialect (it used to
 * read as out of memory). */
static void add_renamed(struct moe_strv *a, const char *flag, enum moe_dialect d,
                        struct moe_error *err)
{
    const char *f = moe_megatron_flag(flag, d);

    if (!f) /* moe_dialect_name says "unknown" for a value outside the enum */
        moe_error_set(err, "Megatron flag %s: the renames table (megatron_args.c) has no "
                           "spelling for dialect %d (%s)", flag, (int)d, moe_dialect_name(d));
    add(a, f);
}

/* The whole step in one graph, as each dialect spells it: core 0.16 names
 * it a scope of the local implementation ("full_iteration scope is only
 * supported with --cuda-graph-impl=local", megatron/training/arguments.py
 * --cuda-graph-scope help), core 0.19 and bridge-pin an implementation of
 * its own (transformer_config.py cuda_graph_impl: 'full_iteration').  Every
 * dialect refuses it while the NaN check is on, which reads the loss on
 * the host inside the step (arguments.py:727 in core 0.16, :1196 in core
 * 0.19, :1185 in bridge-pin). */
static void full_iteration_args(struct moe_strv *a, enum moe_dialect d, struct moe_error *err)
{
    if (d == MOE_DIALECT_CORE_0_16) {
        adds(a, "--cuda-graph-impl", "local");
        add_renamed(a, "--cuda-graph-modules", d, err);
        add(a, "full_iteration");
    } else {
        adds(a, "--cuda-graph-impl", "full_iteration");
    }
    add(a, "--no-check-for-nan-in-loss-and-grad");
}

static void tuning_args(struct moe_strv *a, const struct moe_study *s, const struct moe_baseline *c,
                        struct moe_error *err)
{
    if (c->ep_overlap)
        add(a, "--overlap-moe-expert-parallel-comm");
    if (c->delay_wgrad)
        add(a, "--delay-wgrad-compute");
    if (c->shared_expert_overlap)
        add(a, "--moe-shared-expert-overlap");
    if (c->overlap_grad_reduce)
        add(a, "--overlap-grad-reduce");
    if (c->tp_comm_overlap)
        add(a, "--tp-comm-overlap");
    if (c->manual_gc) {
        add(a, "--manual-gc");
        addi(a, "--manual-gc-interval", 10);
    }
    if (c->recompute == MOE_RECOMPUTE_SELECTIVE) {
        adds(a, "--recompute-granularity", "selective");
        add(a, "--recompute-modules");
        for (int i = 0; i < c->recompute_modules.n; i++)
            add(a, c->recompute_modules.v[i]);
    } else if (c->recompute == MOE_RECOMPUTE_FULL) {
        adds(a, "--recompute-granularity", "full");
        adds(a, "--recompute-method", "uniform");
        addi(a, "--recompute-num-layers", 1);
    }
    if (moe_graphs_full_iteration(c)) {
        full_iteration_args(a, s->software.dialect, err);
    } else if (c->cuda_graph_modules.n) {
        adds(a, "--cuda-graph-impl", "transformer_engine");
        add_renamed(a, "--cuda-graph-modules", s->software.dialect, err);
        for (int i = 0; i < c->cuda_graph_modules.n; i++)
            add(a, c->cuda_graph_modules.v[i]);
        add(a, "--te-rng-tracker");
    }
}

static void precision_args(struct moe_strv *a, enum moe_precision p)
{
    add(a, "--bf16");
    switch (p) {
    case MOE_PREC_BF16:
        break;
    case MOE_PREC_FP8_TENSORWISE:
        adds(a, "--fp8-format", "hybrid");
        adds(a, "--fp8-recipe", "tensorwise");
        break;
    case MOE_PREC_FP8_DELAYED:
        adds(a, "--fp8-format", "hybrid");
        adds(a, "--fp8-recipe", "delayed");
        break;
    case MOE_PREC_FP8_BLOCKWISE:
        adds(a, "--fp8-format", "e4m3");
        adds(a, "--fp8-recipe", "blockwise");
        break;
    case MOE_PREC_MXFP8:
        adds(a, "--fp8-format", "e4m3");
        adds(a, "--fp8-recipe", "mxfp8");
        break;
    case MOE_PREC_NVFP4:
        adds(a, "--fp4-format", "e2m1");
        adds(a, "--fp4-recipe", "nvfp4");
        break;
    }
}

/* Transformer Engine, or Megatron's local implementation with every fusion
 * turned off whose kernels come from TE or Apex. */
static void implementation_args(struct moe_strv *a, const struct moe_software *sw)
{
    if (moe_software_has_te(sw)) {
        adds(a, "--transformer-impl", "transformer_engine");
        return;
    }
    adds(a, "--transformer-impl", "local");
    /* RMSNorm in the local spec is always WrappedTorchNorm, which refuses
     * the persistent kernel (megatron/core/transformer/torch_norm.py). */
    add(a, "--no-persist-layer-norm");
    /* Fused RoPE is TE's (transformer_config.py: "apply_rope_fusion is not
     * available. Please install TE"). */
    add(a, "--no-rope-fusion");
    if (sw->apex)
        return;
    /* Apex builds the masked-softmax and fused-wgrad kernels
     * (scaled_masked_softmax_cuda, fused_weight_gradient_mlp_cuda); the
     * bias-dropout fusion is torch.compile'd at first use (core/jit.py),
     * which the GPU lane's runs without TE or Apex leave out. */
    add(a, "--no-masked-softmax-fusion");
    add(a, "--no-gradient-accumulation-fusion");
    add(a, "--no-bias-dropout-fusion");
}

/* The study's LR schedule where it states one.  Unstated, moeflow's 1e-4
 * with Megatron's defaults: linear decay (--lr-decay-style's default in
 * the argparse dumps) over --train-iters to --min-lr 0, no warm-up; the
 * label says so (study_contract.c). */
static void lr_args(struct moe_strv *a, const struct moe_training *t)
{
    if (t->lr_schedule < 0) {
        adds(a, "--lr", "1.0e-4");
        return;
    }
    addf(a, "--lr", t->lr);
    adds(a, "--lr-decay-style", moe_lr_schedule_names[t->lr_schedule]);
    if (t->lr_warmup_iters)
        addi(a, "--lr-warmup-iters", t->lr_warmup_iters);
    if (t->lr_decay_iters)
        addi(a, "--lr-decay-iters", t->lr_decay_iters);
    if (t->min_lr > 0)
        addf(a, "--min-lr", t->min_lr);
}

/* A stated tokenizer is HuggingFace's (its name or path, one word, data
 * only); otherwise the null tokenizer over --vocab-size.  --vocab-size
 * stays: only the null tokenizer reads it, and the memory model reads the
 * study's vocab either way. */
static void tokenizer_args(struct moe_strv *a, const struct moe_training *t)
{
    if (!moe_study_str_set(t->tokenizer)) {
        adds(a, "--tokenizer-type", "NullTokenizer");
        return;
    }
    adds(a, "--tokenizer-type", "HuggingFaceTokenizer");
    adds(a, "--tokenizer-model", t->tokenizer);
}

static void training_args(struct moe_strv *a, const struct moe_study *s, const struct moe_run *r)
{
    const struct moe_measure *m = &s->measure;

    addi(a, "--seq-length", s->workload.seq_len);
    addi(a, "--max-position-embeddings", s->workload.seq_len);
    addi(a, "--micro-batch-size", r->mbs);
    addi(a, "--global-batch-size", s->workload.gbs);
    addi(a, "--train-iters", r->train_iters);
    adds(a, "--optimizer", s->optimizer);
    lr_args(a, &s->training);
    if (s->distributed_optimizer)
        add(a, "--use-distributed-optimizer");
    /* Megatron's default for bf16 accumulates and reduces the main grads in
     * fp32 (core 0.19 arguments.py:1192-1193); this keeps them bf16 (:1190) */
    if (s->grad_reduce_in_bf16)
        add(a, "--grad-reduce-in-bf16");
    tokenizer_args(a, &s->training);
    if (moe_study_str_set(s->data_path))
        adds(a, "--data-path", s->data_path);
    else
        add(a, "--mock-data");
    /* No evaluation, but Megatron still divides train_iters by
     * eval_interval, whose default is None (training.py, see
     * megatron_rules.c: eval_interval_required). */
    addi(a, "--eval-iters", 0);
    addi(a, "--eval-interval", r->train_iters);
    implementation_args(a, &s->software);
    addi(a, "--log-interval", m->log_interval);
    add(a, "--log-throughput");
    if (r->fake_process_group)
        add(a, "--fake-process-group");
    if (r->profile)
        moe_megatron_profile_args(s, MOE_PYTORCH_PROFILE_DIR, a);
}

int moe_megatron_profile_args(const struct moe_study *s, const char *tensorboard_dir,
                              struct moe_strv *a)
{
    const struct moe_measure *m = &s->measure;

    add(a, "--profile");
    addi(a, "--profile-step-start", m->profile_first);
    addi(a, "--profile-step-end", m->profile_last + 1);
    if (m->profiler == MOE_PROFILER_PYTORCH) {
        /* Megatron writes the Kineto trace next to the TensorBoard
         * folder: <dir>/../torch_profile/rank-N.json.gz (core 0.19,
         * bridge-pin) or into <dir> itself (core 0.16). */
        add(a, "--use-pytorch-profiler");
        adds(a, "--tensorboard-dir", tensorboard_dir);
    }
    return a->oom ? -1 : 0;
}

int moe_megatron_argv(const struct moe_study *s, const struct moe_run *r, struct moe_strv *a,
                      struct moe_error *err)
{
    model_args(a, s);
    routing_args(a, &s->workload, &s->training);
    layout_args(a, s, &r->cfg);
    dispatcher_args(a, r->cfg.dispatcher);
    sms_args(a, &r->cfg, s->software.dialect);
    tuning_args(a, s, &r->cfg, err);
    precision_args(a, r->cfg.precision);
    training_args(a, s, r);
    /* the study's own words last, checked against the dialect when the
     * study was read (megatron_extra.c): every run has them alike */
    for (size_t i = 0; i < s->cluster.extra_args.n; i++)
        add(a, s->cluster.extra_args.v[i]);
    return a->oom ? -1 : 0;
}

int moe_cuda_max_connections(const struct moe_study *s, const struct moe_baseline *c)
{
    bool flex = c->dispatcher == MOE_DISPATCH_FLEX_DEEPEP ||
                c->dispatcher == MOE_DISPATCH_FLEX_HYBRIDEP;

    if (!moe_gpu_is_blackwell(s->cluster.gpu) && (c->layout.tp > 1 || c->layout.cp > 1) &&
        !c->ep_overlap)
        return 1;
    if (flex || moe_gpu_is_blackwell(s->cluster.gpu))
        return 32;
    return 8;
}

const char *const moe_megatron_env_names[] = {
    "CUDA_DEVICE_MAX_CONNECTIONS", "PYTORCH_CUDA_ALLOC_CONF", "NCCL_GRAPH_REGISTER",
    "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN", "USE_MNNVL", NULL,
};

int moe_megatron_env(const struct moe_study *s, const struct moe_run *r, struct moe_strv *env)
{
    const struct moe_baseline *c = &r->cfg;

    moe_strv_pushf(env, "CUDA_DEVICE_MAX_CONNECTIONS=%d", moe_cuda_max_connections(s, c));
    moe_strv_push(env, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
    /* NCCL buffer registration inside graphs breaks with expandable segments. */
    if (c->cuda_graph_modules.n)
        moe_strv_push(env, "NCCL_GRAPH_REGISTER=0");
    if (c->dispatcher == MOE_DISPATCH_FLEX_HYBRIDEP) {
        int domain = s->cluster.nvlink_domain;
        int ep_ranks = c->layout.ep * c->layout.etp;

        moe_strv_pushf(env, "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN=%d",
                       ep_ranks < domain ? ep_ranks : domain);
        if (domain > s->cluster.gpus_per_node)
            moe_strv_push(env, "USE_MNNVL=1");
    }
    /* cluster.env after moeflow's: its names are none of the above
     * (the study reader refuses them), so nothing is overridden */
    for (size_t i = 0; i < s->cluster.env.n; i++)
        moe_strv_push(env, s->cluster.env.v[i]);
    return env->oom ? -1 : 0;
}
