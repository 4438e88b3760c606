/* Megatron's prerequisite rules (lib/study/megatron_rules.c): each rule refuses
 * a run built to break it and lets through the nearest run that does not;
 * every citation, of these rules and of the layout enumerator's
 * (fit/layouts.c), names the line of Megatron's source that enforces the
 * rule, read from the committed excerpts (tests/data/megatron/excerpts,
 * checked against ../shared/megatron by tests/cli/megatron-excerpts.sh),
 * and the same citation one line off fails.  The generator skips candidates that break a rule,
 * with the rule named, and refuses a study whose baseline breaks one. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/candidates.h"
#include "study/candidates_internal.h"
#include "study/megatron_args.h"
#include "study/megatron_args_internal.h"
#include "study/megatron_rules.h"
#include "study/megatron_rules_internal.h"
#include "core/readfile.h"
#include "study/study.h"
#include "study/study_internal.h"
#include "study/validate_checkpoint.h"
#include "study/validate_checkpoint_internal.h"
#include "unit.h"

static char srcdir[4096];

/* text with the value after "key: " on its line replaced; frees text. */
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

/* An example study with its software section rewritten; "FILE tp=N" also
 * sets the baseline's TP, "FILE warm" a warm-up past the CUDA-graph capture
 * (step 4: measure.warmup 4, the profile after it), "FILE droppad"
 * drop-and-pad routing (static shapes). */
static void load(const char *file, const char *dialect, const char *te, struct moe_study *s)
{
    char path[4200], buf[1024], *text;
    const char *tp = strstr(file, " tp=");
    struct moe_error e;
    size_t n;

    snprintf(path, sizeof(path), "%s/etc/studies/%.*s", srcdir, (int)strcspn(file, " "), file);
    assert_non_null(text = moe_read_file(path, "study", &n, &e));
    if (dialect)
        text = set_value(text, "megatron: ", dialect);
    if (te)
        text = set_value(text, "transformer_engine: ", te);
    if (tp)
        text = set_value(text, "\n  tp: ", tp + 4);
    if (strstr(file, " warm")) {
        text = set_value(text, "\n  warmup: ", "4");
        text = set_value(text, "\n  profile_steps: ", "[5, 6]");
    }
    if (strstr(file, " droppad"))
        text = set_value(text, "\n  routing: ", "drop-and-pad");
    if (moe_study_load_string(s, path, text, &e) < 0)
        fail_msg("%s", moe_error_format(&e, buf, sizeof(buf)));
    free(text);
}

struct rule_case {
    const char *rule;      /* the rule the run breaks; NULL: none */
    const char *file;
    const char *dialect;   /* NULL: the study's own */
    const char *te;        /* the YAML value, NOTE for none; NULL: the study's */
    void (*tweak)(struct moe_run *);
    /* what the study states (its training semantics); NULL: as loaded */
    void (*state)(struct moe_study *);
};

static void none(struct moe_run *r) { (void)r; }
static void tp2(struct moe_run *r) { r->cfg.layout.tp = 2; }
static void cp2(struct moe_run *r) { r->cfg.layout.cp = 2; }
static void ep1(struct moe_run *r) { r->cfg.layout.ep = 1; }
static void modules(struct moe_run *r, const char *m)
{
    r->cfg.recompute = MOE_RECOMPUTE_SELECTIVE;
    r->cfg.recompute_modules.n = 1;
    r->cfg.recompute_modules.v[0] = m;
}
static void moe_act(struct moe_run *r) { modules(r, "moe_act"); }
static void layernorm(struct moe_run *r) { modules(r, "layernorm"); }
static void ep_overlap(struct moe_run *r) { r->cfg.ep_overlap = true; }
static void ep_overlap_ep1(struct moe_run *r) { ep_overlap(r), ep1(r); }
static void ep_overlap_allgather(struct moe_run *r)
{
    ep_overlap(r);
    r->cfg.dispatcher = MOE_DISPATCH_ALLGATHER;
}
static void ep_overlap_pp2(struct moe_run *r) { ep_overlap(r), r->cfg.layout.pp = 2; }
static void ep_overlap_pp2_vpp2(struct moe_run *r) { ep_overlap_pp2(r), r->cfg.layout.vpp = 2; }
static void ep_overlap_full(struct moe_run *r)
{
    ep_overlap(r);
    r->cfg.recompute = MOE_RECOMPUTE_FULL;
}
static void ep_and_shared_overlap(struct moe_run *r)
{
    ep_overlap(r);
    r->cfg.shared_expert_overlap = true;
}
static void shared_overlap_allgather(struct moe_run *r)
{
    r->cfg.shared_expert_overlap = true;
    r->cfg.dispatcher = MOE_DISPATCH_ALLGATHER;
}
static void shared_overlap_flex(struct moe_run *r)
{
    r->cfg.shared_expert_overlap = true;
    r->cfg.dispatcher = MOE_DISPATCH_FLEX_DEEPEP;
}
static void delay_wgrad(struct moe_run *r) { r->cfg.delay_wgrad = true; }
static void delay_wgrad_ep(struct moe_run *r) { delay_wgrad(r), ep_overlap(r); }
static void delay_wgrad_ep_ogr(struct moe_run *r)
{
    delay_wgrad_ep(r);
    r->cfg.overlap_grad_reduce = true;
}
static void tp_comm(struct moe_run *r) { r->cfg.tp_comm_overlap = true; }
static void tp_comm_tp2(struct moe_run *r) { tp_comm(r), tp2(r); }
static void graph(struct moe_run *r, const char *m)
{
    r->cfg.cuda_graph_modules.v[r->cfg.cuda_graph_modules.n++] = m;
}
static void graph_router(struct moe_run *r) { graph(r, "moe_router"); }
static void graph_router_full(struct moe_run *r)
{
    graph_router(r);
    r->cfg.recompute = MOE_RECOMPUTE_FULL;
}
static void graph_attn_core_attn(struct moe_run *r) { graph(r, "attn"), modules(r, "core_attn"); }
static void graph_attn_moe_act(struct moe_run *r) { graph(r, "attn"), modules(r, "moe_act"); }
static void graph_full(struct moe_run *r) { graph(r, "full_iteration"); }
static void graph_full_recompute(struct moe_run *r)
{
    graph_full(r);
    r->cfg.recompute = MOE_RECOMPUTE_FULL;
}
static void graph_full_allgather(struct moe_run *r)
{
    graph_full(r);
    r->cfg.dispatcher = MOE_DISPATCH_ALLGATHER;
}
static void graph_full_core_attn(struct moe_run *r) { graph_full(r), modules(r, "core_attn"); }
static void fp8(struct moe_run *r) { r->cfg.precision = MOE_PREC_FP8_TENSORWISE; }
static void nvfp4(struct moe_run *r) { r->cfg.precision = MOE_PREC_NVFP4; }
static void fp8_delayed_moe_act(struct moe_run *r)
{
    r->cfg.precision = MOE_PREC_FP8_DELAYED;
    moe_act(r);
}
static void fp8_moe_act(struct moe_run *r) { fp8(r), moe_act(r); }
static void fake_flex(struct moe_run *r)
{
    r->fake_process_group = true;
    r->cfg.dispatcher = MOE_DISPATCH_FLEX_HYBRIDEP;
}
static void fake_alltoall(struct moe_run *r) { r->fake_process_group = true; }
static void deepep_sms(struct moe_run *r, int sms)
{
    r->cfg.dispatcher = MOE_DISPATCH_FLEX_DEEPEP;
    r->cfg.dispatcher_sms = sms;
}
static void deepep_odd(struct moe_run *r) { deepep_sms(r, 23); }
static void deepep_even(struct moe_run *r) { deepep_sms(r, 24); }
/* hybridep's count never reaches DeepEP's Buffer */
static void hybridep_odd(struct moe_run *r)
{
    r->cfg.dispatcher = MOE_DISPATCH_FLEX_HYBRIDEP;
    r->cfg.dispatcher_sms = 23;
}
static void hybridep_even(struct moe_run *r)
{
    r->cfg.dispatcher = MOE_DISPATCH_FLEX_HYBRIDEP;
    r->cfg.dispatcher_sms = 24;
}
/* The study routes drop-and-pad (and pads to capacity, as moeflow does). */
static void drop_and_pad(struct moe_study *s)
{
    s->workload.routing = MOE_ROUTING_DROP_AND_PAD;
    s->workload.capacity_factor = 1.0;
}
/* A cosine schedule from 3e-4 as a study states it; the reader refuses a
 * warm-up past the decay, so these states are set here, not loaded. */
static void cosine(struct moe_study *s, int warmup, int decay, double min_lr)
{
    s->training.lr = 3e-4;
    s->training.lr_schedule = 2;   /* moe_lr_schedule_names: cosine */
    s->training.lr_warmup_iters = warmup;
    s->training.lr_decay_iters = decay;
    s->training.min_lr = min_lr;
}
static void warmup_past_decay(struct moe_study *s) { cosine(s, 100, 100, 0); }
static void warmup_before_decay(struct moe_study *s) { cosine(s, 99, 100, 0); }
/* unset, Megatron decays over --train-iters (8 here) */
static void warmup_past_run(struct moe_study *s) { cosine(s, 8, 0, 0); }
static void min_lr_above(struct moe_study *s) { cosine(s, 0, 100, 4e-4); }
static void min_lr_equal(struct moe_study *s) { cosine(s, 0, 100, 3e-4); }
static void ep_overlap_layout_vpp1(struct moe_run *r) { ep_overlap(r), r->cfg.layout.vpp = 1; }
static void ep_overlap_no_layout_vpp1(struct moe_run *r)
{
    ep_overlap_layout_vpp1(r);
    r->cfg.pipeline_layout = NULL;   /* borrowed from the study: not freed */
}
static void mxfp8(struct moe_run *r) { r->cfg.precision = MOE_PREC_MXFP8; }
static void fp8_delayed_layernorm(struct moe_run *r)
{
    r->cfg.precision = MOE_PREC_FP8_DELAYED;
    layernorm(r);
}
static void fp8_layernorm(struct moe_run *r) { fp8(r), layernorm(r); }
static void profile_at_end(struct moe_run *r)
{
    r->profile = true;
    r->train_iters = 5; /* the tiny study profiles steps 4..5: --profile-step-end 6 */
}
static void profile_one_past(struct moe_run *r)
{
    r->profile = true;
    r->train_iters = 6;
}
static void profile_short(struct moe_run *r)
{
    r->profile = true;
    r->train_iters = 2;
}
static void profile_long(struct moe_run *r)
{
    r->profile = true;
    r->train_iters = 100;
}

#define TINY "tiny-moe-2gpu.yaml"
#define DSV3 "deepseek-v3-1024xh100.yaml"
#define Q30 "qwen3-30b-a3b-16xh100.yaml" /* no shared expert */
#define MIXTRAL "mixtral-8x7b-16xh100.yaml" /* TP 2, EP 8 on 16 GPUs */
#define NOTE "none" /* no TE: the local implementation */
#define Q235 "qwen3-235b-a22b-256xh100.yaml" /* PP 8 with an explicit pipeline layout */

static const struct rule_case cases[] = {
    { "moe_router_needs_te", TINY, "core-0.16", NOTE, none, NULL },
    { NULL, TINY, "core-0.19", NOTE, none, NULL },
    { NULL, TINY, "bridge-pin", NOTE, none, NULL },
    { NULL, TINY, "core-0.16", "\"2.9\"", none, NULL },
    /* at TP 1: without TE the study's TP 2 breaks moe-tp-needs-sp, which
     * the study reader refuses */
    { "mla_needs_te", DSV3 " tp=1", NULL, NOTE, none, NULL },
    { NULL, DSV3, NULL, NULL, none, NULL },
    { "cp-needs-te", TINY, NULL, NOTE, cp2, NULL },
    { NULL, TINY, NULL, NULL, cp2, NULL },
    { "moe-tp-needs-sp", TINY, "bridge-pin", NOTE, tp2, NULL },
    { NULL, TINY, "bridge-pin", NULL, tp2, NULL },
    { "recompute_moe_act_needs_grouped_gemm", TINY, NULL, NOTE, moe_act, NULL },
    { NULL, TINY, NULL, NULL, moe_act, NULL },
    { "recompute_layernorm_needs_te", TINY, NULL, NOTE, layernorm, NULL },
    { NULL, TINY, NULL, NULL, layernorm, NULL },
    { "permute_fusion_needs_te_2_1", TINY, NULL, "\"2.0\"", none, NULL },
    { "ep_overlap_needs_ep", TINY, NULL, NULL, ep_overlap_ep1, NULL },
    { NULL, TINY, NULL, NULL, ep_overlap, NULL },
    { "ep_overlap_needs_alltoall_or_flex", TINY, NULL, NULL, ep_overlap_allgather, NULL },
    /* the tiny study's 2 GPUs hold no EP 2 x PP 2: a layout rule, checked first */
    { "world=etp*ep*edp*pp", TINY, NULL, NULL, ep_overlap_pp2, NULL },
    { "ep_overlap_pp_needs_vpp", MIXTRAL, NULL, NULL, ep_overlap_pp2, NULL },
    { NULL, MIXTRAL, NULL, NULL, ep_overlap_pp2_vpp2, NULL },
    /* an explicit pipeline layout sets the virtual stages itself */
    { NULL, Q235, NULL, NULL, ep_overlap_layout_vpp1, NULL },
    { "ep_overlap_pp_needs_vpp", Q235, NULL, NULL, ep_overlap_no_layout_vpp1, NULL },
    { "ep_overlap_no_full_recompute", TINY, NULL, NULL, ep_overlap_full, NULL },
    { "ep_overlap_no_shared_expert_overlap", DSV3, NULL, NULL, ep_and_shared_overlap, NULL },
    { "shared_expert_overlap_dispatcher", DSV3, "core-0.19", NULL, shared_overlap_allgather, NULL },
    { "shared_expert_overlap_dispatcher", DSV3, "core-0.16", NULL, shared_overlap_flex, NULL },
    { NULL, DSV3, "core-0.19", NULL, shared_overlap_flex, NULL },
    { NULL, Q30, "core-0.19", NULL, shared_overlap_allgather, NULL },
    { "delay_wgrad_needs_te", TINY, NULL, NOTE, delay_wgrad_ep, NULL },
    { "delay_wgrad_needs_ep_overlap", TINY, NULL, NULL, delay_wgrad, NULL },
    { NULL, TINY, NULL, NULL, delay_wgrad_ep, NULL },
    { "delay_wgrad_grad_reduce_needs_te_2_8", TINY, NULL, "\"2.7\"", delay_wgrad_ep_ogr, NULL },
    { NULL, TINY, NULL, "\"2.8\"", delay_wgrad_ep_ogr, NULL },
    { "tp_comm_overlap_needs_sequence_parallel", TINY, NULL, NULL, tp_comm, NULL },
    { NULL, TINY, NULL, NULL, tp_comm_tp2, NULL },
    { "moe-tp-needs-sp", TINY, NULL, NOTE, tp_comm_tp2, NULL },
    { "cuda_graphs_need_te", TINY, NULL, NOTE, graph_router, NULL },
    { NULL, TINY " warm", NULL, NULL, graph_router, NULL },
    { "cuda_graphs_no_full_recompute", TINY, NULL, NULL, graph_router_full, NULL },
    /* the tiny study's 2 warm-up steps end before Megatron's capture in step 4 */
    { "cuda_graph_capture_in_window", TINY, NULL, NULL, graph_router, NULL },
    { "full_iteration_capture_in_window", TINY " droppad", NULL, NOTE, graph_full, NULL },
    { NULL, TINY " warm droppad", NULL, NOTE, graph_full, NULL },
    { NULL, TINY " warm droppad", "core-0.16", NULL, graph_full, NULL }, /* 0.16 trains MoE with TE only */
    /* no TE needed, full recompute allowed (a full-iteration graph) */
    { NULL, TINY " warm droppad", NULL, NOTE, graph_full_recompute, NULL },
    { "full_iteration_needs_drop_and_pad", TINY " warm", NULL, NOTE, graph_full, NULL },
    { "full_iteration_needs_alltoall", TINY " warm droppad", NULL, NOTE, graph_full_allgather, NULL },
    { "cuda_graphs_attention_dropout_recompute", TINY " warm", NULL, NULL, graph_attn_core_attn, NULL },
    { "cuda_graphs_attention_dropout_recompute", TINY " warm droppad", NULL, NULL,
      graph_full_core_attn, NULL },
    { NULL, TINY " warm", NULL, NULL, graph_attn_moe_act, NULL },
    { "low_precision_needs_te", TINY, NULL, NOTE, fp8, NULL },
    { NULL, TINY, NULL, NULL, fp8, NULL },
    { "low_precision_needs_te", TINY, NULL, NOTE, nvfp4, NULL },
    { "low_precision_needs_te", TINY, NULL, NOTE, mxfp8, NULL },
    { "fp4_needs_te_2_7", TINY, NULL, "\"2.6\"", nvfp4, NULL },
    { NULL, TINY, NULL, "\"2.7\"", nvfp4, NULL },
    { "fp8_delayed_no_moe_act_layernorm_recompute", TINY, NULL, NULL, fp8_delayed_moe_act, NULL },
    { "fp8_delayed_no_moe_act_layernorm_recompute", TINY, NULL, NULL, fp8_delayed_layernorm, NULL },
    { NULL, TINY, NULL, NULL, fp8_layernorm, NULL },
    { "fp8_recompute_needs_te_2_6", TINY, NULL, "\"2.5\"", fp8_moe_act, NULL },
    { NULL, TINY, NULL, "\"2.6\"", fp8_moe_act, NULL },
    { "fake_process_group_no_flex", TINY, NULL, NULL, fake_flex, NULL },
    { NULL, TINY, NULL, NULL, fake_alltoall, NULL },
    { "profile_needs_train_iters", TINY, NULL, NULL, profile_short, NULL },
    { "profile_needs_train_iters", TINY, NULL, NULL, profile_at_end, NULL },
    { NULL, TINY, NULL, NULL, profile_one_past, NULL },
    { NULL, TINY, NULL, NULL, profile_long, NULL },
    { "lr_warmup_below_decay", TINY, NULL, NULL, none, warmup_past_decay },
    { "lr_warmup_below_decay", TINY, NULL, NULL, none, warmup_past_run },
    { NULL, TINY, NULL, NULL, none, warmup_before_decay },
    { "min_lr_at_most_lr", TINY, NULL, NULL, none, min_lr_above },
    { NULL, TINY, NULL, NULL, none, min_lr_equal },
    { "deepep_sms_even", TINY, NULL, NULL, deepep_odd, NULL },
    { NULL, TINY, NULL, NULL, deepep_even, NULL },
    { NULL, TINY, NULL, NULL, hybridep_odd, NULL },
    { "deepep_no_pad_to_capacity", TINY, NULL, NULL, deepep_even, drop_and_pad },
    { NULL, TINY, NULL, NULL, hybridep_even, drop_and_pad },
    { NULL, TINY, NULL, NULL, deepep_even, NULL },
};

/* Each case: the rule it names is the first one broken, or none is. */
static void each_rule_refuses_its_case(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct rule_case *c = &cases[i];
        const char *got;
        char why[768];
        struct moe_study s;
        struct moe_run r;

        load(c->file, c->dialect, c->te, &s);
        if (c->state)
            c->state(&s);
        moe_run_from_baseline(&r, &s, 8);
        c->tweak(&r);
        got = moe_megatron_refusal(&s, &r, why, sizeof(why));
        if (!c->rule != !got || (got && strcmp(got, c->rule) != 0))
            fail_msg("case %zu (%s, %s): expected %s, got %s", i, c->file,
                     c->dialect ? c->dialect : "own dialect", c->rule ? c->rule : "none",
                     got ? got : "none");
        moe_study_free(&s);
    }
}

/* Every rule has a case that breaks it. */
static void every_rule_is_tested(void **state)
{
    size_t n;
    const struct moe_megatron_rule *rules = moe_megatron_rules(&n);

    (void)state;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;

        for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++)
            seen |= cases[j].rule && strcmp(cases[j].rule, rules[i].id) == 0;
        if (!seen)
            fail_msg("rule %s has no test case", rules[i].id);
    }
}

static const char *const trees[MOE_DIALECT_COUNT] = {
    "megatron-lm-core_v0.16.0", "megatron-lm-core_v0.19.0", "megatron-lm-2a75ac12",
};

/* What each rule's cited line must say.  A citation points at the
 * statement that enforces the rule: its line starts an assert, a raise or
 * an if (or elif), and that statement, with its continuation lines, holds
 * the token, taken from the check's own message or condition so that the
 * lines around it do not.  "line" rules cite a line inside an expression
 * (the NameError without TE, the profiler's stop condition): the token is
 * on that line.  tests/data/megatron/excerpts holds the cited lines. */
struct cite_token {
    const char *rule; /* a Megatron rule's id or a layout rule's (moe_rule_id) */
    bool line;
    const char *token;
};

static const struct cite_token tokens[] = {
    { "moe_router_needs_te", false, "te_general_gemm is not None" },
    { "mla_needs_te", false, "when instantiating" },
    { "recompute_moe_act_needs_grouped_gemm", false, "only supported with moe_grouped_gemm" },
    { "recompute_layernorm_needs_te", true, "FP8GlobalStateManager.is_fp8_enabled()" },
    { "permute_fusion_needs_te_2_1", false, "TE >= 2.1.0" },
    { "ep_overlap_needs_ep", false, "only supported with expert model parallelism" },
    { "ep_overlap_needs_alltoall_or_flex", false, "supported with alltoall/flex token dispatcher" },
    { "ep_overlap_pp_needs_vpp", false,
      "If enabling EP A2A overlap, virtual_pipeline_model_parallel_size" },
    { "ep_overlap_no_full_recompute", false, "recompute_granularity != 'full'" },
    { "ep_overlap_no_shared_expert_overlap", false, "not self.moe_shared_expert_overlap" },
    { "shared_expert_overlap_dispatcher", false, "moe_shared_expert_overlap only works with" },
    { "delay_wgrad_needs_te", false,
      "Delaying wgrad compute is only supported with transformer_engine" },
    { "delay_wgrad_needs_ep_overlap", false, "must be enabled when enabling delay_wgrad_compute" },
    { "delay_wgrad_grad_reduce_needs_te_2_8", false, "is_te_min_version(\"2.8.0\")" },
    { "tp_comm_overlap_needs_sequence_parallel", false,
      "overlap can happen only when sequence parallelism" },
    { "cuda_graphs_need_te", false, "CUDA Graphs are not supported without TE" },
    { "cuda_graphs_no_full_recompute", false,
      "full recompute is only supported with full iteration CUDA graph" },
    { "cuda_graph_capture_in_window", true,
      "iteration - start_iteration == args.cuda_graph_warmup_steps" },
    { "full_iteration_capture_in_window", false,
      "curr_iteration == self.cuda_graph_warmup_steps" },
    { "full_iteration_needs_drop_and_pad", false, "not self.drop_and_pad" },
    { "full_iteration_needs_alltoall", true, "self.local_map.sum(dim=0).long().cpu()" },
    { "cuda_graphs_attention_dropout_recompute", false,
      "attention dropout is not supported with graphed attention" },
    { "low_precision_needs_te", false, "supports MoE FP8 training" },
    { "fp4_needs_te_2_7", false, "--fp4-format requires Transformer Engine >= 2.7" },
    { "fp8_delayed_no_moe_act_layernorm_recompute", false,
      "Delayed scaling does not support moe_act and layernorm recompute" },
    { "fp8_recompute_needs_te_2_6", false, "moe_act and layernorm recompute for fp8 needs" },
    { "fake_process_group_no_flex", false,
      "Fake process group is not supported with flex token dispatcher" },
    { "profile_needs_train_iters", true, "iteration == args.profile_step_end" },
    { "lr_warmup_below_decay", true, "self.lr_warmup_steps < self.lr_decay_steps" },
    { "min_lr_at_most_lr", true, "self.max_lr >= self.min_lr" },
    { "deepep_sms_even", true, "Buffer.set_num_sms(num_sms)" },
    { "deepep_no_pad_to_capacity", false,
      "Flex token dispatcher with deepep backend does not support" },
    { "layers%pp", false, "divisible by the pipeline-model-parallel size" },
    { "world=tp*cp*dp*pp", false, "is not divisible by total_model_size" },
    { "heads%tp", false, "num_attention_heads ({self" },
    { "query_groups%tp|tp%query_groups", false, "must be a multiple or divisor" },
    { "ffn%tp", false, "is not divisible by" },
    { "seq%2cp", false, "context_parallel_size * 2" },
    { "seq/cp%tp", false, "divisible by tensor parallel size" },
    { "cp-needs-te", false, "only supported by TEDotProductAttention" },
    { "gbs%(mbs*dp)", false, "is not divisible by micro batch size" },
    { "world=etp*ep*edp*pp", false, "is not divisible by expert_tensor_model_pipeline_parallel" },
    { "experts%ep", false, "multiple of expert model parallel" },
    { "moe_ffn%etp", false, "is not divisible by" },
    { "moe-tp-needs-sp", false, "without also enabling sequence parallelism" },
    { "vpp-needs-pp", false, "When interleaved schedule is used, pipeline-model-parallel size" },
    { "layers%(pp*vpp)", false, "should be divisible by vp_size" },
    /* validation.checkpoint's arguments (study/validate_checkpoint.c) */
    { "checkpoint_final_save", false, "save_interval != 0" },
    { "checkpoint_ckpt_step", false, "ckpt_step" },
    { "checkpoint_torch_adam_torch_dist", false, "len(steps) == 1" },
    { "checkpoint_torch_adam_torch_format", true, "tensors[key]" },
    { "deterministic_no_ce_fusion", false, "Cross Entropy Fusion is currently not deterministic" },
    { "deterministic_needs_nccl_algo", false, "NCCL_ALGO must be one of" },
    { "deterministic_required_args", true,
      "{\"cross_entropy_loss_fusion\": False, \"tp_comm_overlap\": False}" },
    { "deterministic_env_defaults", true, "\"NCCL_ALGO\": \"Ring\"" },
};

static const struct cite_token *token_of(const char *rule)
{
    for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++)
        if (strcmp(tokens[i].rule, rule) == 0)
            return &tokens[i];
    return NULL;
}

/* One citation: the rule, the dialect and "path:line". */
struct citation {
    const char *rule;
    int dialect;
    char path[256];
    long line;
};

/* The citations of a rule table into out from k on; returns the new k. */
static size_t table_citations(const struct moe_megatron_rule *rules, size_t n,
                              struct citation *out, size_t k, size_t max)
{
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
            const char *w = rules[i].where[d], *colon;

            if (!w || k == max)
                continue;
            assert_non_null(colon = strrchr(w, ':'));
            out[k] = (struct citation){ rules[i].id, d, "", strtol(colon + 1, NULL, 10) };
            snprintf(out[k].path, sizeof(out[k].path), "%.*s", (int)(colon - w), w);
            k++;
        }
    return k;
}

/* Every citation of the tables: the prerequisite rules, what
 * validation.checkpoint's arguments rely on, and the layout enumerator's
 * rules.  Returns how many. */
static size_t all_citations(struct citation *out, size_t max)
{
    const struct moe_megatron_rule *rules;
    size_t n, k;

    rules = moe_megatron_rules(&n);
    k = table_citations(rules, n, out, 0, max);
    rules = moe_checkpoint_citations(&n);
    k = table_citations(rules, n, out, k, max);
    for (int r = MOE_RULE_OK + 1; r < MOE_RULE_COUNT; r++)
        for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
            bool cited;
            const char *w = moe_layout_rule_source((enum moe_rule)r, (enum moe_dialect)d, &cited);
            const char *colon;

            if (!w || !cited || k == max)
                continue;
            assert_non_null(colon = strrchr(w, ':'));
            out[k] = (struct citation){ moe_rule_id((enum moe_rule)r), d, "",
                                        strtol(colon + 1, NULL, 10) };
            snprintf(out[k].path, sizeof(out[k].path), "%.*s", (int)(colon - w), w);
            k++;
        }
    return k;
}

/* tests/data/megatron/excerpts/TREE.txt, read once per tree. */
static char *excerpts[MOE_DIALECT_COUNT];

static const char *excerpt_of(int d)
{
    char path[4400];
    struct moe_error e;

    if (!excerpts[d]) {
        snprintf(path, sizeof(path), "%s/tests/data/megatron/excerpts/%s.txt", srcdir, trees[d]);
        if (!(excerpts[d] = moe_read_file(path, "excerpt", NULL, &e)))
            fail_msg("%s (write it with tests/data/megatron/excerpts.py)", e.text);
    }
    return excerpts[d];
}

/* Line n of path in dialect d's excerpt into buf; false when it is not there. */
static bool excerpt_line(int d, const char *path, long n, char *buf, size_t size)
{
    const char *text = excerpt_of(d), *sec, *end, *p;
    char head[300], key[32];

    snprintf(head, sizeof(head), "\n== %s\n", path);
    if (!(sec = strstr(text, head)))
        return false;
    sec += strlen(head) - 1;
    end = strstr(sec + 1, "\n== ");
    snprintf(key, sizeof(key), "\n%ld\t", n);
    if (!(p = strstr(sec, key)) || (end && p > end))
        return false;
    p += strlen(key);
    snprintf(buf, size, "%.*s", (int)strcspn(p, "\n"), p);
    return true;
}

static bool starts_word(const char *s, const char *w)
{
    size_t n = strlen(w);

    return strncmp(s, w, n) == 0 && !(isalnum((unsigned char)s[n]) || s[n] == '_');
}

/* The matcher: line n of c's file enforces c's rule (see tokens[]). */
static bool enforces(const struct citation *c, long n)
{
    const struct cite_token *t = token_of(c->rule);
    char line[1024], stmt[8192] = "";
    const char *s;
    int depth = 0;

    if (!t || n < 1 || !excerpt_line(c->dialect, c->path, n, line, sizeof(line)))
        return false;
    if (t->line)
        return strstr(line, t->token) != NULL;
    s = line + strspn(line, " \t");
    if (!starts_word(s, "assert") && !starts_word(s, "raise") && !starts_word(s, "if") &&
        !starts_word(s, "elif"))
        return false;
    /* the statement: this line and its continuation lines */
    for (long k = n; k < n + 8 && excerpt_line(c->dialect, c->path, k, line, sizeof(line)); k++) {
        size_t len = strlen(line);

        snprintf(stmt + strlen(stmt), sizeof(stmt) - strlen(stmt), "%s\n", line);
        for (const char *q = line; *q; q++)
            depth += (*q == '(' || *q == '[' || *q == '{') - (*q == ')' || *q == ']' || *q == '}');
        if (depth <= 0 && !(len && line[len - 1] == '\\'))
            break;
    }
    return strstr(stmt, t->token) != NULL;
}

#define MAX_CITATIONS 512

/* Every citation names a line of the committed excerpt of its Megatron
 * tree that enforces its rule. */
static void citations_point_at_checks(void **state)
{
    struct citation *c = calloc(MAX_CITATIONS, sizeof(*c));
    size_t n = all_citations(c, MAX_CITATIONS);
    char line[1024];

    (void)state;
    assert_true(n > 100 && n < MAX_CITATIONS);
    for (size_t i = 0; i < n; i++) {
        if (c[i].line <= 0)
            fail_msg("rule %s: %s:%ld is not path:line", c[i].rule, c[i].path, c[i].line);
        if (!excerpt_line(c[i].dialect, c[i].path, c[i].line, line, sizeof(line)))
            fail_msg("rule %s: %s:%ld is not in the excerpt of %s (tests/data/megatron/excerpts.py)",
                     c[i].rule, c[i].path, c[i].line, trees[c[i].dialect]);
        if (!enforces(&c[i], c[i].line))
            fail_msg("rule %s: %s:%ld in %s is not its check: %s", c[i].rule, c[i].path,
                     c[i].line, trees[c[i].dialect], line);
    }
    print_message("# %zu citations, each at its check\n", n);
    free(c);
}

/* The matcher tells a citation from the same citation one line off, for
 * every citation: a check that accepts a neighbouring line proves nothing. */
static void a_citation_one_line_off_fails(void **state)
{
    struct citation *c = calloc(MAX_CITATIONS, sizeof(*c));
    size_t n = all_citations(c, MAX_CITATIONS);

    (void)state;
    for (size_t i = 0; i < n; i++)
        for (long off = -1; off <= 1; off += 2)
            if (enforces(&c[i], c[i].line + off))
                fail_msg("rule %s: %s:%ld in %s, one line off its citation, passes the check",
                         c[i].rule, c[i].path, c[i].line + off, trees[c[i].dialect]);
    free(c);
}

/* Every cited rule has its token, and every token a rule. */
static void every_citation_has_a_token(void **state)
{
    struct citation *c = calloc(MAX_CITATIONS, sizeof(*c));
    size_t n = all_citations(c, MAX_CITATIONS);

    (void)state;
    for (size_t i = 0; i < n; i++)
        if (!token_of(c[i].rule))
            fail_msg("rule %s has no entry in tokens[]", c[i].rule);
    for (size_t t = 0; t < sizeof(tokens) / sizeof(tokens[0]); t++) {
        bool used = false;

        for (size_t i = 0; i < n && !used; i++)
            used = strcmp(c[i].rule, tokens[t].rule) == 0;
        if (!used)
            fail_msg("tokens[] names %s, which cites nothing", tokens[t].rule);
    }
    free(c);
}

/* The generator lists a rule-breaking candidate as skipped, naming the
 * rule and its source, and refuses a study whose baseline breaks one. */
static void generator_names_rules(void **state)
{
    struct moe_study s;
    struct moe_stage_plan plan;
    struct moe_error e;
    char *text;
    bool named = false;
    json_t *cands = json_array();

    (void)state;
    load(TINY, NULL, NOTE, &s);
    assert_int_equal(moe_candidates_build(&s, MOE_STAGE_RETUNE, &plan, &e), 0);
    assert_int_equal(moe_candidates_render(&s, &plan, &e), 0);
    for (size_t i = 0; i < plan.n_skipped; i++) {
        const char *why = plan.skipped[i].reason;
        named |= strstr(why, "recompute_layernorm_needs_te") &&
                 strstr(why, "megatron/core/tensor_parallel/random.py:693 in core-0.19");
    }
    assert_true(named);
    /* the candidates as manifest.json holds them */
    for (size_t i = 0; i < plan.n; i++)
        json_array_append_new(cands, moe_candidate_json(&plan.cands[i], false, NULL));
    text = json_dumps(cands, 0);
    json_decref(cands);
    assert_null(strstr(text, "\"layernorm\""));
    assert_non_null(strstr(text, "\"local\""));
    assert_null(strstr(text, "--moe-grouped-gemm"));
    free(text);
    moe_stage_plan_free(&plan);
    assert_int_equal(moe_megatron_study_check(&s, &e), 0);
    moe_study_free(&s);

    load(TINY, "core-0.16", NOTE, &s);
    assert_int_equal(moe_megatron_study_check(&s, &e), -1);
    assert_non_null(strstr(e.text, "moe_router_needs_te"));
    moe_study_free(&s);
}

static void versions_compare_numerically(void **state)
{
    (void)state;
    assert_true(moe_version_cmp("2.10", "2.9") > 0);
    assert_true(moe_version_cmp("2.8", "2.8.0") == 0);
    assert_true(moe_version_cmp("2.7.1", "2.8") < 0);
    assert_true(moe_version_cmp("", "1.0") < 0);
}

/* Every layout rule has, in every dialect, a citation or a reason: a
 * rule added to enum moe_rule without a table entry fails here. */
static void every_layout_rule_has_a_source(void **state)
{
    bool cited;

    (void)state;
    for (int r = MOE_RULE_OK + 1; r < MOE_RULE_COUNT; r++)
        for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
            const char *src = moe_layout_rule_source((enum moe_rule)r, (enum moe_dialect)d, &cited);

            if (!src || !*src)
                fail_msg("layout rule %s has no Megatron source in %s",
                         moe_rule_id((enum moe_rule)r), moe_dialect_name((enum moe_dialect)d));
        }
    assert_null(moe_layout_rule_source(MOE_RULE_OK, MOE_DIALECT_CORE_0_19, &cited));
    assert_null(moe_layout_rule_source(MOE_RULE_COUNT, MOE_DIALECT_CORE_0_19, &cited));
    assert_string_equal(moe_layout_rule_source(MOE_RULE_SP, MOE_DIALECT_CORE_0_19, &cited),
                        "megatron/core/transformer/moe/moe_layer.py:630");
    assert_true(cited);
}

/* Every rule, of the prerequisite table and of validate_checkpoint's
 * citations, cites its check in every dialect of enum moe_dialect or says
 * why that dialect has none, never both: a Megatron release added without
 * its citations fails here rather than switching its rules off. */
static void every_rule_is_cited_in_every_dialect(void **state)
{
    const struct moe_megatron_rule *tables[2];
    size_t sizes[2], absent = 0;

    (void)state;
    tables[0] = moe_megatron_rules(&sizes[0]);
    tables[1] = moe_checkpoint_citations(&sizes[1]);
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < sizes[t]; i++)
            for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
                const struct moe_megatron_rule *r = &tables[t][i];
                const char *why = moe_megatron_rule_absent(r, (enum moe_dialect)d);

                if (!r->where[d] && !why)
                    fail_msg("rule %s has no citation in %s and no reason why it is absent "
                             "there (absent[] in lib/study/megatron_rules.c)",
                             r->id, moe_dialect_name((enum moe_dialect)d));
                if (r->where[d] && why)
                    fail_msg("rule %s cites %s in %s, yet is listed as absent there: %s", r->id,
                             r->where[d], moe_dialect_name((enum moe_dialect)d), why);
                absent += why != NULL;
            }
    /* moe_router_needs_te in two dialects, the four determinism citations */
    assert_int_equal(absent, 8);
}

int main(int argc, char **argv)
{
    const char *src = getenv("MOEFLOW_SRCDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_rule_refuses_its_case),
        cmocka_unit_test(every_rule_is_tested),
        cmocka_unit_test(citations_point_at_checks),
        cmocka_unit_test(a_citation_one_line_off_fails),
        cmocka_unit_test(every_citation_has_a_token),
        cmocka_unit_test(generator_names_rules),
        cmocka_unit_test(versions_compare_numerically),
        cmocka_unit_test(every_layout_rule_has_a_source),
        cmocka_unit_test(every_rule_is_cited_in_every_dialect),
    };

    snprintf(srcdir, sizeof(srcdir), "%s", src ? src : "..");
    /* --citations: every citation, for tests/data/megatron/excerpts.py */
    if (argc > 1 && strcmp(argv[1], "--citations") == 0) {
        struct citation c[MAX_CITATIONS];
        size_t n = all_citations(c, MAX_CITATIONS);

        for (size_t i = 0; i < n; i++)
            printf("%s\t%s\t%ld\t%s\n", trees[c[i].dialect], c[i].path, c[i].line, c[i].rule);
        return 0;
    }
    return MOE_RUN_TESTS(tests);
}
