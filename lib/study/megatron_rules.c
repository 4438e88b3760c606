/* The rule table.  Line numbers were read in the three source trees of
 * ../shared/megatron (core_v0.16.0, core_v0.19.0 and 2a75ac12, the commit
 * Megatron-Bridge pins); each rule's unit test in test_megatron_rules.c
 * builds a run that breaks it and one that does not.  Abbreviations:
 * ARGS = megatron/training/arguments.py (validate_args),
 * TC = megatron/core/transformer/transformer_config.py (__post_init__),
 * SCHED = megatron/core/optimizer_param_scheduler.py (OptimizerParamScheduler),
 * A2A = megatron/core/transformer/moe/fused_a2a.py (DeepEP's entry points). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/megatron_rules.h"
#include "study/megatron_rules_internal.h"
#include "study/study_fit.h"
#include "study/study_fit_internal.h"
#include "study/megatron_args_internal.h"
#include "study/study_internal.h"

#define ARGS "megatron/training/arguments.py:"
#define TC "megatron/core/transformer/transformer_config.py:"
#define FULL_CG "megatron/core/full_cuda_graph.py:"
#define DISPATCH "megatron/core/transformer/moe/token_dispatcher.py:"
#define SCHED "megatron/core/optimizer_param_scheduler.py:"
#define A2A "megatron/core/transformer/moe/fused_a2a.py:"

int moe_version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        char *ea, *eb;
        long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);

        if (ea == a && eb == b)
            break;
        if (x != y)
            return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
    }
    return 0;
}

static bool has_te(const struct moe_study *s)
{
    return moe_software_has_te(&s->software);
}

static bool te_below(const struct moe_study *s, const char *version)
{
    return has_te(s) && moe_version_cmp(s->software.transformer_engine, version) < 0;
}

static bool recomputes(const struct moe_run *r, const char *module)
{
    const struct moe_strlist *m = &r->cfg.recompute_modules;

    if (r->cfg.recompute != MOE_RECOMPUTE_SELECTIVE)
        return false;
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->v[i], module) == 0)
            return true;
    return false;
}

/* Any CUDA graph (module NULL), or one of that module. */
static bool graphs(const struct moe_run *r, const char *module)
{
    const struct moe_strlist *g = &r->cfg.cuda_graph_modules;

    if (!module)
        return g->n > 0;
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->v[i], module) == 0)
            return true;
    return false;
}

static bool flex(const struct moe_run *r)
{
    return r->cfg.dispatcher == MOE_DISPATCH_FLEX_DEEPEP ||
           r->cfg.dispatcher == MOE_DISPATCH_FLEX_HYBRIDEP;
}

static bool fp8(const struct moe_run *r)
{
    return moe_precision_is_fp8(r->cfg.precision);
}

/* ---- the implementation: what needs Transformer Engine ---- */

static bool router_gemm_without_te(const struct moe_study *s, const struct moe_run *r)
{
    (void)r;
    return s->software.dialect == MOE_DIALECT_CORE_0_16 && !has_te(s);
}

static bool mla_without_te(const struct moe_study *s, const struct moe_run *r)
{
    (void)r;
    return s->model.attention == MOE_ATTN_MLA && !has_te(s);
}

/* CP without TE and MoE TP without sequence parallelism (which moeflow
 * emits with TE only: the local spec's RMSNorm, WrappedTorchNorm, refuses
 * it; megatron/core/transformer/torch_norm.py: 32 / 50 / 50) are layout
 * rules: cp-needs-te and moe-tp-needs-sp, checked by fit/layouts.c. */

static bool moe_act_without_grouped_gemm(const struct moe_study *s, const struct moe_run *r)
{
    return recomputes(r, "moe_act") && !has_te(s);
}

static bool layernorm_recompute_without_te(const struct moe_study *s, const struct moe_run *r)
{
    return recomputes(r, "layernorm") && !has_te(s);
}

static bool permute_fusion_old_te(const struct moe_study *s, const struct moe_run *r)
{
    (void)r;
    return te_below(s, "2.1");
}

/* ---- overlap switches ---- */

static bool ep_overlap_without_ep(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return r->cfg.ep_overlap && r->cfg.layout.ep == 1;
}

static bool ep_overlap_allgather(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return r->cfg.ep_overlap && r->cfg.dispatcher == MOE_DISPATCH_ALLGATHER;
}

static bool ep_overlap_pp_without_vpp(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return r->cfg.ep_overlap && r->cfg.layout.pp > 1 && r->cfg.layout.vpp == 1 &&
           !moe_study_str_set(r->cfg.pipeline_layout);
}

static bool ep_overlap_full_recompute(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return r->cfg.ep_overlap && r->cfg.recompute == MOE_RECOMPUTE_FULL;
}

static bool ep_overlap_with_shared_overlap(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return r->cfg.ep_overlap && r->cfg.shared_expert_overlap;
}

static bool shared_overlap_dispatcher(const struct moe_study *s, const struct moe_run *r)
{
    if (!r->cfg.shared_expert_overlap || !s->model.shared_expert_ffn)
        return false;
    /* core 0.16 takes alltoall only; later versions flex too */
    return r->cfg.dispatcher == MOE_DISPATCH_ALLGATHER ||
           (s->software.dialect == MOE_DIALECT_CORE_0_16 && flex(r));
}

static bool delay_wgrad_without_te(const struct moe_study *s, const struct moe_run *r)
{
    return r->cfg.delay_wgrad && !has_te(s);
}

static bool delay_wgrad_without_ep_overlap(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return r->cfg.delay_wgrad && !r->cfg.ep_overlap;
}

static bool delay_wgrad_grad_reduce_old_te(const struct moe_study *s, const struct moe_run *r)
{
    return r->cfg.delay_wgrad && r->cfg.overlap_grad_reduce && te_below(s, "2.8");
}

/* Without TE, TP > 1 is refused for MoE first (the layout rule
 * moe-tp-needs-sp), so TE's userbuffers check (initialize.py) is never the
 * one that fires. */
static bool tp_comm_overlap_without_sp(const struct moe_study *s, const struct moe_run *r)
{
    return r->cfg.tp_comm_overlap && (r->cfg.layout.tp == 1 || !has_te(s));
}

/* ---- CUDA graphs, precision, fit ---- */

/* Module graphs are TE's (--cuda-graph-impl transformer_engine); the
 * full_iteration scope is Megatron's own graph of the whole step, which
 * needs no TE (megatron_args.c emits it per dialect). */
static bool te_graphs(const struct moe_run *r)
{
    return graphs(r, NULL) && !moe_graphs_full_iteration(&r->cfg);
}

static bool graphs_without_te(const struct moe_study *s, const struct moe_run *r)
{
    return te_graphs(r) && !has_te(s);
}

static bool graphs_full_recompute(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return te_graphs(r) && r->cfg.recompute == MOE_RECOMPUTE_FULL;
}

/* attention dropout stays at Megatron's default 0.1 in what moeflow emits;
 * a full-iteration graph holds the attention too (TC's full_cudagraph) */
static bool graphed_attention_recompute(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return (graphs(r, "attn") || moe_graphs_full_iteration(&r->cfg)) &&
           recomputes(r, "core_attn");
}

/* Megatron captures in training step cuda_graph_warmup_steps + 1 (1-based;
 * moeflow leaves the default 3): the TE helper when iteration -
 * start_iteration == cuda_graph_warmup_steps, before that step's
 * train_step; the full-iteration wrapper on its (warmup + 1)-th call.
 * Every timed window (screening, report_window, profile_steps) starts
 * after measure.warmup (study.c), so the capture stays out of all of them
 * exactly when measure.warmup reaches the capture step.  moeflow refuses
 * rather than moving the window (the contract freezes one window for every
 * candidate, so an A/B against the baseline stays like for like) or
 * emitting fewer --cuda-graph-warmup-steps (Megatron's warm-up lets lazy
 * initialisation - NCCL communicators, cuBLAS handles, the allocator's
 * first blocks - happen before the capture, not inside it). */
static bool capture_in_window(const struct moe_study *s)
{
    return s->measure.warmup < MOE_GRAPH_CAPTURE_STEP;
}

static bool te_capture_in_window(const struct moe_study *s, const struct moe_run *r)
{
    return te_graphs(r) && capture_in_window(s);
}

static bool full_iteration_capture_in_window(const struct moe_study *s, const struct moe_run *r)
{
    return moe_graphs_full_iteration(&r->cfg) && capture_in_window(s);
}

/* A captured graph replays fixed shapes: dropless routing sizes each
 * expert's rows by the step's token counts, which the alltoall dispatcher
 * copies to the host and waits for inside the forward (its
 * _maybe_dtoh_and_synchronize, skipped only with drop-and-pad); the
 * recording on one H200 (tests/gpu/cuda-graphs.tsv, local-layer) stopped
 * there with cudaErrorStreamCaptureInvalidated. */
static bool full_iteration_dropless(const struct moe_study *s, const struct moe_run *r)
{
    return moe_graphs_full_iteration(&r->cfg) && s->workload.routing != MOE_ROUTING_DROP_AND_PAD;
}

/* the allgather dispatcher copies its token counts to the host on every
 * forward, drop-and-pad or not */
static bool full_iteration_allgather(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return moe_graphs_full_iteration(&r->cfg) && r->cfg.dispatcher == MOE_DISPATCH_ALLGATHER;
}

static bool low_precision_without_te(const struct moe_study *s, const struct moe_run *r)
{
    return r->cfg.precision != MOE_PREC_BF16 && !has_te(s);
}

static bool fp4_old_te(const struct moe_study *s, const struct moe_run *r)
{
    return r->cfg.precision == MOE_PREC_NVFP4 && te_below(s, "2.7");
}

static bool fp8_delayed_recompute(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return r->cfg.precision == MOE_PREC_FP8_DELAYED &&
           (recomputes(r, "moe_act") || recomputes(r, "layernorm"));
}

static bool fp8_recompute_old_te(const struct moe_study *s, const struct moe_run *r)
{
    return fp8(r) && (recomputes(r, "moe_act") || recomputes(r, "layernorm")) &&
           te_below(s, "2.6");
}

static bool fake_group_flex(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return r->fake_process_group && flex(r);
}

/* ---- the training semantics a study states, and the dispatcher's SMs ---- */

/* Megatron counts the warm-up and the decay in samples (iterations x
 * GBS) and decays over --train-iters when --lr-decay-iters is unset. */
static bool lr_warmup_past_decay(const struct moe_study *s, const struct moe_run *r)
{
    const struct moe_training *t = &s->training;
    int decay = t->lr_decay_iters ? t->lr_decay_iters : r->train_iters;

    return t->lr_schedule >= 0 && t->lr_warmup_iters >= decay;
}

static bool min_lr_above_lr(const struct moe_study *s, const struct moe_run *r)
{
    (void)r;
    return s->training.lr_schedule >= 0 && s->training.min_lr > s->training.lr;
}

static bool deepep_odd_sms(const struct moe_study *s, const struct moe_run *r)
{
    (void)s;
    return r->cfg.dispatcher == MOE_DISPATCH_FLEX_DEEPEP && r->cfg.dispatcher_sms % 2;
}

/* moeflow's drop-and-pad pads every expert's input to its capacity
 * (--moe-pad-expert-input-to-capacity, megatron_args.c), which DeepEP's
 * flex dispatcher refuses; HybridEP takes it. */
static bool deepep_padded(const struct moe_study *s, const struct moe_run *r)
{
    return r->cfg.dispatcher == MOE_DISPATCH_FLEX_DEEPEP &&
           s->workload.routing == MOE_ROUTING_DROP_AND_PAD;
}

static bool profile_past_train_iters(const struct moe_study *s, const struct moe_run *r)
{
    return r->profile && r->train_iters < s->measure.profile_last + 1;
}

static const struct moe_megatron_rule rules[] = {
    { "moe_router_needs_te",
      "core 0.16's MoE router calls TE's te_general_gemm unconditionally: no MoE model trains "
      "without Transformer Engine (NameError at the first MoE layer)",
      { "megatron/core/transformer/moe/moe_utils.py:1192", NULL, NULL },
      router_gemm_without_te },
    { "mla_needs_te",
      "multi-latent attention needs TE attention: the local DotProductAttention takes no "
      "k_channels (TypeError when the model is built)",
      { "megatron/core/transformer/spec_utils.py:126", "megatron/core/transformer/spec_utils.py:127",
        "megatron/core/transformer/spec_utils.py:129" },
      mla_without_te },
    { "recompute_moe_act_needs_grouped_gemm",
      "moe_act in recompute_modules is only supported with --moe-grouped-gemm, which moeflow "
      "emits with Transformer Engine only",
      { TC "1214", TC "1785", TC "1843" },
      moe_act_without_grouped_gemm },
    { "recompute_layernorm_needs_te",
      "layernorm recompute (CheckpointWithoutOutput) reads TE's FP8GlobalStateManager: "
      "NameError without Transformer Engine",
      { "megatron/core/tensor_parallel/random.py:589", "megatron/core/tensor_parallel/random.py:693",
        "megatron/core/tensor_parallel/random.py:697" },
      layernorm_recompute_without_te },
    { "permute_fusion_needs_te_2_1",
      "--moe-permute-fusion needs Transformer Engine >= 2.1",
      { TC "1850", TC "2667", TC "2759" },
      permute_fusion_old_te },
    { "ep_overlap_needs_ep",
      "overlap_moe_expert_parallel_comm is only supported with expert model parallelism",
      { TC "1863", TC "2680", TC "2772" },
      ep_overlap_without_ep },
    { "ep_overlap_needs_alltoall_or_flex",
      "overlap_moe_expert_parallel_comm is supported with the alltoall or flex dispatcher",
      { TC "1866", TC "2683", TC "2775" },
      ep_overlap_allgather },
    { "ep_overlap_pp_needs_vpp",
      "EP overlap with PP > 1 needs virtual pipeline stages",
      { TC "1858", TC "2675", TC "2767" },
      ep_overlap_pp_without_vpp },
    { "ep_overlap_no_full_recompute",
      "EP overlap does not work with full recompute",
      { TC "1871", TC "2688", TC "2780" },
      ep_overlap_full_recompute },
    { "ep_overlap_no_shared_expert_overlap",
      "EP overlap replaces the shared-expert overlap: the two cannot both be on",
      { TC "1886", TC "2706", TC "2798" },
      ep_overlap_with_shared_overlap },
    { "shared_expert_overlap_dispatcher",
      "moe_shared_expert_overlap only works with the alltoall (core 0.16) or alltoall/flex "
      "dispatcher",
      { TC "1093", TC "1648", TC "1706" },
      shared_overlap_dispatcher },
    { "delay_wgrad_needs_te",
      "delaying wgrad compute is only supported with the transformer_engine implementation",
      { ARGS "1210", ARGS "1823", ARGS "1819" },
      delay_wgrad_without_te },
    { "delay_wgrad_needs_ep_overlap",
      "--delay-wgrad-compute needs --overlap-moe-expert-parallel-comm",
      { TC "1910", TC "2750", TC "2834" },
      delay_wgrad_without_ep_overlap },
    { "delay_wgrad_grad_reduce_needs_te_2_8",
      "overlap_grad_reduce with delay_wgrad_compute needs Transformer Engine >= 2.8",
      { ARGS "1213", ARGS "1826", ARGS "1822" },
      delay_wgrad_grad_reduce_old_te },
    { "tp_comm_overlap_needs_sequence_parallel",
      "TP communication overlap needs sequence parallelism (TP > 1 with TE)",
      { ARGS "916", ARGS "1402", ARGS "1391" },
      tp_comm_overlap_without_sp },
    { "cuda_graphs_need_te",
      "--cuda-graph-impl transformer_engine: CUDA graphs are not supported without TE",
      { "megatron/core/transformer/cuda_graphs.py:1678", "megatron/core/transformer/cuda_graphs.py:2098",
        "megatron/core/transformer/cuda_graphs.py:2112" },
      graphs_without_te },
    { "cuda_graphs_no_full_recompute",
      "full recompute is only supported with a full-iteration CUDA graph",
      { TC "1782", TC "2523", TC "2615" },
      graphs_full_recompute },
    { "cuda_graph_capture_in_window",
      "measure.warmup must reach step cuda_graph_warmup_steps + 1 = 4: Megatron captures TE "
      "CUDA graphs at the start of that training step, which would lie in the first timed step",
      { "megatron/training/training.py:2742", "megatron/training/training.py:3788",
        "megatron/training/training.py:3905" },
      te_capture_in_window },
    { "full_iteration_capture_in_window",
      "measure.warmup must reach step cuda_graph_warmup_steps + 1 = 4: Megatron captures the "
      "full-iteration graph in that training step, which would lie in the first timed step",
      { FULL_CG "163", FULL_CG "208", FULL_CG "208" },
      full_iteration_capture_in_window },
    { "full_iteration_needs_drop_and_pad",
      "a full-iteration CUDA graph needs static shapes: dropless routing copies each step's "
      "token counts to the host and waits for them inside the capture (workload.routing: "
      "drop-and-pad)",
      { DISPATCH "868", DISPATCH "919", DISPATCH "926" },
      full_iteration_dropless },
    { "full_iteration_needs_alltoall",
      "a full-iteration CUDA graph needs the alltoall dispatcher: allgather copies its token "
      "counts to the host on every forward",
      { DISPATCH "295", DISPATCH "317", DISPATCH "319" },
      full_iteration_allgather },
    { "cuda_graphs_attention_dropout_recompute",
      "attention dropout (default 0.1) is not supported with graphed attention recomputation "
      "(core_attn recompute with an attn graph)",
      { TC "1806", TC "2546", TC "2638" },
      graphed_attention_recompute },
    { "low_precision_needs_te",
      "FP8 and FP4 MoE training need Transformer Engine",
      { TC "1602", TC "2297", TC "2389" },
      low_precision_without_te },
    { "fp4_needs_te_2_7",
      "--fp4-format needs Transformer Engine >= 2.7",
      { ARGS "669", ARGS "1074", ARGS "1075" },
      fp4_old_te },
    { "fp8_delayed_no_moe_act_layernorm_recompute",
      "delayed scaling does not support moe_act and layernorm recompute for FP8",
      { TC "1244", TC "1824", TC "1881" },
      fp8_delayed_recompute },
    { "fp8_recompute_needs_te_2_6",
      "moe_act and layernorm recompute for FP8 need Transformer Engine >= 2.6",
      { TC "1249", TC "1829", TC "1886" },
      fp8_recompute_old_te },
    { "fake_process_group_no_flex",
      "the fake process group is not supported with the flex token dispatcher",
      { ARGS "1107", ARGS "1702", ARGS "1691" },
      fake_group_flex },
    { "lr_warmup_below_decay",
      "the LR warm-up must end before the decay does (--lr-decay-iters, else --train-iters)",
      { SCHED "157", SCHED "160", SCHED "160" },
      lr_warmup_past_decay },
    { "min_lr_at_most_lr",
      "--min-lr may not exceed --lr",
      { SCHED "148", SCHED "151", SCHED "151" },
      min_lr_above_lr },
    { "deepep_sms_even",
      "DeepEP's Buffer.set_num_sms asserts an even SM count (deep_ep/buffer.py), which "
      "Megatron's set_deepep_num_sms passes on",
      { A2A "260", A2A "262", A2A "262" },
      deepep_odd_sms },
    { "deepep_no_pad_to_capacity",
      "the flex dispatcher's DeepEP backend does not support padding each expert's input to "
      "its capacity, which drop-and-pad routing does (--moe-pad-expert-input-to-capacity)",
      { TC "1078", TC "1604", TC "1662" },
      deepep_padded },
    { "profile_needs_train_iters",
      "the profiler stops at --profile-step-end, which training must reach",
      { "megatron/training/training.py:2285", "megatron/training/training.py:3197",
        "megatron/training/training.py:3312" },
      profile_past_train_iters },
};

/* ---- the layout enumerator's rules (fit/layouts.c) ---- */

#define UTILS "megatron/core/utils.py:" /* ensure_divisibility, under divide() */
#define BLOCK "megatron/core/transformer/transformer_block.py:" /* get_num_layers_to_build */

/* where[d] cites the check a layout moeflow emits reaches first;
 * why_no_line[d] stands in where Megatron has none (no rule needs it yet). */
struct layout_rule_source {
    const char *where[MOE_DIALECT_COUNT];
    const char *why_no_line[MOE_DIALECT_COUNT];
};

static const struct layout_rule_source layout_sources[MOE_RULE_COUNT] = {
    /* with --num-virtual-stages-per-pipeline-rank validate_args skips this
     * and get_num_layers_to_build asserts it (BLOCK 155 / 150 / 150) */
    [MOE_RULE_LAYERS_PP] = { { ARGS "570", ARGS "963", ARGS "963" } },
    [MOE_RULE_WORLD_DENSE] = { { ARGS "317", ARGS "430", ARGS "430" } },
    [MOE_RULE_HEADS_TP] = { { TC "925", TC "1324", TC "1352" } },
    /* TP a divisor or a multiple of the groups: with more TP ranks than
     * groups each rank holds one KV head, replicated */
    [MOE_RULE_GROUPS_TP] = { { TC "943", TC "1342", TC "1370" } },
    /* divide() in the local TP linear layers (tensor_parallel/layers.py);
     * TE's dense linear layers split the FFN with TE's own check */
    [MOE_RULE_FFN_TP] = { { UTILS "468", UTILS "558", UTILS "592" } },
    [MOE_RULE_SEQ_CP] = { { ARGS "818", ARGS "1296", ARGS "1285" } },
    /* the RoPE embedding's reduce-scatter into the sequence-parallel region */
    [MOE_RULE_SEQ_TP] = { { "megatron/core/tensor_parallel/mappings.py:172",
                            "megatron/core/tensor_parallel/mappings.py:176",
                            "megatron/core/tensor_parallel/mappings.py:176" } },
    /* context parallelism is only supported by TEDotProductAttention */
    [MOE_RULE_CP_IMPL] = { { "megatron/core/transformer/dot_product_attention.py:57",
                             "megatron/core/transformer/dot_product_attention.py:57",
                             "megatron/core/transformer/dot_product_attention.py:57" } },
    [MOE_RULE_GBS] = { { "megatron/core/num_microbatches_calculator.py:340",
                         "megatron/core/num_microbatches_calculator.py:381",
                         "megatron/core/num_microbatches_calculator.py:381" } },
    /* initialize_model_parallel: validate_args checks the dense grid only */
    [MOE_RULE_WORLD_EXPERT] = { { "megatron/core/parallel_state.py:793",
                                  "megatron/core/parallel_state.py:882",
                                  "megatron/core/parallel_state.py:882" } },
    [MOE_RULE_EXPERTS_EP] = { { ARGS "1027", ARGS "1602", ARGS "1591" } },
    /* divide() in the expert linear layers whenever ETP or EP > 1 */
    [MOE_RULE_FFN_ETP] = { { UTILS "468", UTILS "558", UTILS "592" } },
    /* MoELayer: TP > 1 needs sequence parallelism */
    [MOE_RULE_SP] = { { "megatron/core/transformer/moe/moe_layer.py:380",
                        "megatron/core/transformer/moe/moe_layer.py:630",
                        "megatron/core/transformer/moe/moe_layer.py:637" } },
    /* PP > 2 with --no-overlap-p2p-communication, which moeflow never emits */
    [MOE_RULE_VPP_PP] = { { ARGS "575", ARGS "968", ARGS "968" } },
    [MOE_RULE_VPP_LAYERS] = { { BLOCK "174", BLOCK "169", BLOCK "169" } },
};

const char *moe_layout_rule_source(enum moe_rule r, enum moe_dialect d, bool *cited)
{
    const struct layout_rule_source *src;

    if (r == MOE_RULE_OK || (unsigned)r >= MOE_RULE_COUNT || (unsigned)d >= MOE_DIALECT_COUNT)
        return NULL;
    src = &layout_sources[r];
    *cited = src->where[d] != NULL;
    return *cited ? src->where[d] : src->why_no_line[d];
}

const struct moe_megatron_rule *moe_megatron_rules(size_t *n)
{
    *n = sizeof(rules) / sizeof(rules[0]);
    return rules;
}

/* The rules (of this table and of validate_checkpoint.c's citations) that
 * a dialect does not have, each with why: the only NULLs their where[]
 * may hold.  A NULL without a row here is a missing citation. */
static const struct {
    const char *rule;
    enum moe_dialect dialect;
    const char *why;
} absent[] = {
    { "moe_router_needs_te", MOE_DIALECT_CORE_0_19,
      "without TE the import binds te_general_gemm to None and the router multiplies in "
      "PyTorch (megatron/core/transformer/moe/moe_utils.py:1326)" },
    { "moe_router_needs_te", MOE_DIALECT_BRIDGE_PIN,
      "without TE the import binds te_general_gemm to None and the router multiplies in "
      "PyTorch, as in core 0.19" },
    { "deterministic_no_ce_fusion", MOE_DIALECT_CORE_0_19,
      "the check moved to determinism.py (deterministic_required_args)" },
    { "deterministic_no_ce_fusion", MOE_DIALECT_BRIDGE_PIN,
      "the check moved to determinism.py (deterministic_required_args)" },
    { "deterministic_needs_nccl_algo", MOE_DIALECT_CORE_0_19,
      "determinism.py sets NCCL_ALGO itself (deterministic_env_defaults)" },
    { "deterministic_needs_nccl_algo", MOE_DIALECT_BRIDGE_PIN,
      "determinism.py sets NCCL_ALGO itself (deterministic_env_defaults)" },
    { "deterministic_required_args", MOE_DIALECT_CORE_0_16,
      "core 0.16 has no determinism.py: arguments.py checks the fusion itself "
      "(deterministic_no_ce_fusion)" },
    { "deterministic_env_defaults", MOE_DIALECT_CORE_0_16,
      "core 0.16 sets no environment and asserts NCCL_ALGO instead "
      "(deterministic_needs_nccl_algo)" },
};

const char *moe_megatron_rule_absent(const struct moe_megatron_rule *rule, enum moe_dialect d)
{
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
        if (absent[i].dialect == d && strcmp(absent[i].rule, rule->id) == 0)
            return absent[i].why;
    return NULL;
}

const struct moe_megatron_rule *moe_megatron_rule_broken(const struct moe_study *s,
                                                         const struct moe_run *r)
{
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
        if (!moe_megatron_rule_absent(&rules[i], s->software.dialect) && rules[i].broken(s, r))
            return &rules[i];
    return NULL;
}

void moe_megatron_rule_describe(const struct moe_megatron_rule *rule, enum moe_dialect d,
                                char *buf, size_t size)
{
    /* a message: people read it, and a cut one still reads */
    snprintf(buf, size, "Megatron rule %s (%s in %s): %s", rule->id,
             rule->where[d] ? rule->where[d] : "uncited", moe_dialect_name(d), rule->text);
}

const char *moe_megatron_refusal(const struct moe_study *s, const struct moe_run *r, char *buf,
                                 size_t size)
{
    struct moe_layout l = r->cfg.layout;
    enum moe_dialect d = s->software.dialect;
    const struct moe_megatron_rule *rule;
    enum moe_rule lr;
    char why[512];
    const char *where;
    bool cited;

    if ((lr = moe_study_layout_check(s, &l, r->mbs, why, sizeof(why))) != MOE_RULE_OK) {
        where = moe_layout_rule_source(lr, d, &cited);
        /* a message: people read it, and a cut one still reads */
        snprintf(buf, size, "Megatron rule %s (%s in %s): %s", moe_rule_id(lr),
                 where && cited ? where : "-", moe_dialect_name(d), why);
        return moe_rule_id(lr);
    }
    if (!(rule = moe_megatron_rule_broken(s, r)))
        return NULL;
    moe_megatron_rule_describe(rule, d, buf, size);
    return rule->id;
}

int moe_megatron_study_check(const struct moe_study *s, struct moe_error *err)
{
    struct moe_run run;
    char why[768];

    moe_run_from_baseline(&run, s, s->measure.warmup + s->measure.screen_steps);
    if (!moe_megatron_refusal(s, &run, why, sizeof(why)))
        return 0;
    moe_error_set(err, "%s: the baseline cannot run, so no stage can: %s", s->path, why);
    return -1;
}
