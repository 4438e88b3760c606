/* Only what decides what is measured goes in: the tuning section holds the
 * retune variables by the names the contract rules group them under
 * (dispatcher + dispatcher_backend are one variable), and the step count
 * of a run is not part of it (screening and validation differ by design). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/contract_keys.h"
#include "core/json_build.h"
#include "core/manifest.h"
#include "study/study_contract.h"
#include "study/study_contract_internal.h"
#include "study/study_schema.h"
#include "study/study_internal.h"

/* A key the contract shares with the study is the study's (study_schema.h);
 * these are the contract's own: what it derives (the GPU count, the
 * routing class) and what it names otherwise.  environment.megatron is
 * software.megatron resolved to the version it names. */
#define K(parent, key) MOE_SK_KEY(parent, key)
#define CK_CONTAINER_IMAGE "container_image"
#define CK_GPU_MODEL "gpu_model"
#define CK_GPUS "gpus"
#define CK_MODEL "model"
#define CK_ARCHITECTURE "architecture"
#define CK_CLASS "class"
#define CK_ROUTER_DTYPE "router_dtype"
#define CK_PROFILE_STEPS "steps"
/* baseline.cuda_graph_modules is Megatron's --cuda-graph-scope (0.16; renamed
 * --cuda-graph-modules in 0.18), and every contract sealed so far holds
 * it under that name: renaming it would change the digest of every sealed
 * contract, and a study's frozen baseline would then differ from its own
 * runs' declared contracts in a key no run changed. */
#define CK_CUDA_GRAPH_SCOPE "cuda_graph_scope"

static const char *megatron_version(enum moe_dialect d)
{
    static const char *const v[] = {
        [MOE_DIALECT_CORE_0_16] = "core_v0.16.0",
        [MOE_DIALECT_CORE_0_19] = "core_v0.19.0",
        [MOE_DIALECT_BRIDGE_PIN] = "bridge-pin-2a75ac12",
    };
    _Static_assert(sizeof(v) / sizeof(v[0]) == MOE_DIALECT_COUNT, "one version per dialect");

    return moe_enum_name(v, MOE_DIALECT_COUNT, (int)d);
}

static json_t *strlist(struct moe_jb *b, const struct moe_strlist *l)
{
    json_t *a = json_array();

    for (int i = 0; i < l->n; i++)
        moe_jb_append(b, a, json_string(l->v[i]));
    return a;
}

static json_t *tuning(struct moe_jb *b, const struct moe_run *r)
{
    const struct moe_baseline *c = &r->cfg;
    const char *type = "alltoall", *backend = "none";

    if (c->dispatcher == MOE_DISPATCH_ALLGATHER)
        type = "allgather";
    if (c->dispatcher == MOE_DISPATCH_FLEX_DEEPEP || c->dispatcher == MOE_DISPATCH_FLEX_HYBRIDEP) {
        type = "flex";
        backend = c->dispatcher == MOE_DISPATCH_FLEX_DEEPEP ? "deepep" : "hybridep";
    }
    json_t *j, *rc;

    /* recompute granularity and modules are one variable: one key. */
    j = moe_jb_pack(b, "{s:s, s:s, s:b, s:b, s:b, s:b, s:b, s:b}",
                     MOE_CONTRACT_DISPATCHER, type, MOE_CONTRACT_DISPATCHER_BACKEND, backend,
                     K(BASELINE, EP_OVERLAP), c->ep_overlap,
                     K(BASELINE, SHARED_EXPERT_OVERLAP), c->shared_expert_overlap,
                     K(BASELINE, DELAY_WGRAD), c->delay_wgrad,
                     K(BASELINE, OVERLAP_GRAD_REDUCE), c->overlap_grad_reduce,
                     K(BASELINE, TP_COMM_OVERLAP), c->tp_comm_overlap,
                     K(BASELINE, MANUAL_GC), c->manual_gc);
    if (!j)
        return NULL;
    rc = json_object();
    moe_jb_str(b, rc, MOE_CONTRACT_GRANULARITY, moe_recompute_name(c->recompute));
    moe_jb_set(b, rc, MOE_CONTRACT_MODULES, strlist(b, &c->recompute_modules));
    moe_jb_set(b, j, MOE_CONTRACT_RECOMPUTE, rc);
    moe_jb_set(b, j, CK_CUDA_GRAPH_SCOPE, strlist(b, &c->cuda_graph_modules));
    moe_jb_str(b, j, K(WORKLOAD, PRECISION), moe_precision_name(c->precision));
    /* only when set: the contracts (and ids) of runs that set none keep
     * their digests; a retune run that sets one changes this one key */
    if (c->dispatcher_sms)
        moe_jb_int(b, j, MOE_CONTRACT_DISPATCHER_SMS, c->dispatcher_sms);
    return j;
}

/* The LR schedule and tokenizer as the study states them, each only when
 * stated (issue 41): the contract reader (core/manifest.c) labels a run
 * without them by the defaults it took instead. */
static void training(struct moe_jb *b, json_t *w, const struct moe_training *t)
{
    if (t->lr_schedule >= 0) {
        moe_jb_num(b, w, K(WORKLOAD, LR), t->lr);
        moe_jb_str(b, w, MOE_CONTRACT_LR_SCHEDULE, moe_lr_schedule_names[t->lr_schedule]);
        moe_jb_int(b, w, K(WORKLOAD, LR_WARMUP_ITERS), t->lr_warmup_iters);
        moe_jb_int(b, w, K(WORKLOAD, LR_DECAY_ITERS), t->lr_decay_iters);
        moe_jb_num(b, w, K(WORKLOAD, MIN_LR), t->min_lr);
    }
    if (moe_study_str_set(t->tokenizer))
        moe_jb_str(b, w, MOE_CONTRACT_TOKENIZER, t->tokenizer);
}

/* workload: what the study runs, capacity_factor by the non-finite rule. */
static json_t *workload(struct moe_jb *b, const struct moe_study *s, const struct moe_run *r)
{
    json_t *w = json_object();

    moe_jb_str(b, w, CK_MODEL, s->model.name);
    moe_jb_copy(b, w, CK_ARCHITECTURE, json_object_get(s->json, MOE_SK_MODEL));
    moe_jb_int(b, w, K(WORKLOAD, SEQ_LEN), s->workload.seq_len);
    moe_jb_int(b, w, MOE_CONTRACT_MBS, r->mbs);
    moe_jb_int(b, w, K(WORKLOAD, GBS), s->workload.gbs);
    moe_jb_str(b, w, K(WORKLOAD, DATA), s->data_path[0] ? s->data_path : "mock");
    moe_jb_str(b, w, K(WORKLOAD, OPTIMIZER), s->optimizer);
    /* only when off, as in the canonical study: default contracts unchanged */
    if (!s->distributed_optimizer)
        moe_jb_bool(b, w, K(WORKLOAD, DISTRIBUTED_OPTIMIZER), false);
    if (s->grad_reduce_in_bf16)
        moe_jb_bool(b, w, K(WORKLOAD, GRAD_REDUCE_IN_BF16), true);
    training(b, w, &s->training);
    return w;
}

static json_t *semantics(struct moe_jb *b, const struct moe_study *s, const char *label)
{
    json_t *j = json_object();

    moe_jb_str(b, j, K(WORKLOAD, ROUTING), moe_routing_name(s->workload.routing));
    moe_jb_str(b, j, CK_CLASS, label);
    moe_jb_num(b, j, K(WORKLOAD, CAPACITY_FACTOR), s->workload.capacity_factor);
    moe_jb_str(b, j, CK_ROUTER_DTYPE, "fp32");
    /* only when stated: the load-balancing loss changes the routing */
    if (s->training.aux_loss_coeff >= 0)
        moe_jb_num(b, j, MOE_CONTRACT_AUX_LOSS_COEFF, s->training.aux_loss_coeff);
    return j;
}

/* What the study adds to every run (issue 40): cluster.env in the
 * environment, cluster.launcher.extra_args in the workload, both invariant
 * sections, so a run that differs there is refused and `contract diff`
 * names the value.  Only when set: other contracts keep their digests. */
static void study_additions(struct moe_jb *b, json_t *doc, const struct moe_study *s)
{
    const struct moe_cluster *k = &s->cluster;

    if (k->env.n) {
        json_t *env = json_object();

        for (size_t i = 0; i < k->env.n; i++) {
            const char *eq = strchr(k->env.v[i], '=');
            char name[MOE_STUDY_ENV_NAME_MAX + 1];

            /* fits: the reader refuses a longer name */
            snprintf(name, sizeof(name), "%.*s", (int)(eq - k->env.v[i]), k->env.v[i]);
            moe_jb_str(b, env, name, eq + 1);
        }
        moe_jb_set(b, json_object_get(doc, MOE_CONTRACT_ENVIRONMENT), K(CLUSTER, ENV), env);
    }
    if (k->extra_args.n) {
        json_t *args = json_array();

        for (size_t i = 0; i < k->extra_args.n; i++)
            moe_jb_append(b, args, json_string(k->extra_args.v[i]));
        moe_jb_set(b, json_object_get(doc, MOE_CONTRACT_WORKLOAD),
                   K(CLUSTER_LAUNCHER, EXTRA_ARGS), args);
    }
}

json_t *moe_run_contract(const struct moe_study *s, const struct moe_run *r, const char *label,
                         struct moe_error *err)
{
    const struct moe_measure *m = &s->measure;
    json_t *doc = json_object();
    struct moe_jb b;

    moe_jb_init(&b, err);
    moe_jb_set(&b, doc, MOE_CONTRACT_ENVIRONMENT,
               moe_jb_pack(&b, "{s:s, s:s, s:b, s:b, s:b, s:s}", K(SOFTWARE, MEGATRON),
                           megatron_version(s->software.dialect),
                           K(SOFTWARE, TRANSFORMER_ENGINE), s->software.transformer_engine,
                           K(SOFTWARE, APEX), s->software.apex, K(SOFTWARE, DEEPEP),
                           s->software.deepep, K(SOFTWARE, HYBRIDEP), s->software.hybridep,
                           CK_CONTAINER_IMAGE, s->cluster.container_image));
    moe_jb_set(&b, doc, MOE_CONTRACT_HARDWARE,
               moe_jb_pack(&b, "{s:s, s:i, s:i, s:i, s:i}", CK_GPU_MODEL,
                           moe_gpu_name(s->cluster.gpu), K(CLUSTER, GPU_MEMORY_GIB),
                           s->cluster.gpu_memory_gib, CK_GPUS, moe_study_world_size(s),
                           K(CLUSTER, GPUS_PER_NODE), s->cluster.gpus_per_node,
                           K(CLUSTER, NVLINK_DOMAIN), s->cluster.nvlink_domain));
    moe_jb_set(&b, doc, MOE_CONTRACT_WORKLOAD, workload(&b, s, r));
    moe_jb_set(&b, doc, MOE_CONTRACT_SEMANTICS, semantics(&b, s, label));
    moe_jb_set(&b, doc, MOE_CONTRACT_PARALLEL,
               moe_contract_parallel(&r->cfg.layout, r->cfg.pipeline_layout));
    moe_jb_set(&b, doc, MOE_CONTRACT_TUNING, tuning(&b, r));
    moe_jb_set(&b, doc, MOE_CONTRACT_TIMING,
               moe_jb_pack(&b, "{s:i, s:i, s:i, s:[ii]}", MOE_CONTRACT_WARMUP, m->warmup,
                           MOE_CONTRACT_SCREEN_STEPS, m->screen_steps,
                           MOE_CONTRACT_VALIDATE_STEPS, m->validate_steps, MOE_CONTRACT_WINDOW,
                           m->window_first, m->window_last));
    if (r->profile)
        moe_jb_set(&b, doc, MOE_CONTRACT_PROFILING, moe_contract_profiling(&b, s));
    study_additions(&b, doc, s);
    moe_jb_within(&b, "contract");
    return moe_jb_done(&b, doc);
}

const char *moe_study_routing_class(const struct moe_study *s)
{
    return s->workload.routing == MOE_ROUTING_FORCE_BALANCE ? "benchmark-only"
                                                            : "training-equivalent";
}

/* Pushes reason when why holds; false when out of memory. */
static bool reason_if(struct moe_strv *reasons, bool why, const char *reason)
{
    return !why || moe_strv_push(reasons, reason) == 0;
}

const char *moe_study_label(const struct moe_study *s, struct moe_strv *reasons)
{
    const struct moe_training *t = &s->training;

    /* Forced balance changes routing and mock data changes what the router
     * and the loss see; the seed's pitfalls add the LR schedule, the
     * load-balancing loss and the tokenizer, which change the routing and
     * the step (issue 41).  A run that takes a default for any of them
     * does not transfer to training, and the label says which. */
    if (!reason_if(reasons, s->workload.routing == MOE_ROUTING_FORCE_BALANCE,
                   MOE_REASON_FORCED_BALANCE) ||
        !reason_if(reasons, !s->data_path[0], MOE_REASON_MOCK_DATA) ||
        !reason_if(reasons, t->lr_schedule < 0, MOE_REASON_NO_LR_SCHEDULE) ||
        !reason_if(reasons, t->aux_loss_coeff < 0, MOE_REASON_NO_AUX_LOSS) ||
        !reason_if(reasons, !moe_study_str_set(t->tokenizer), MOE_REASON_NULL_TOKENIZER))
        return NULL;
    return reasons->n ? "benchmark-only" : "training-equivalent";
}

json_t *moe_contract_profiling(struct moe_jb *b, const struct moe_study *s)
{
    const struct moe_measure *m = &s->measure;

    return moe_jb_pack(b, "{s:s, s:[ii]}", K(MEASURE, PROFILER), moe_profiler_name(m->profiler),
                     CK_PROFILE_STEPS, m->profile_first, m->profile_last);
}
