/* Only what decides what is measured goes in: the tuning section holds the
 * retune variables by the names the contract rules group them under
 * (dispatcher + dispatcher_backend are one variable), and the step count
 * of a run is not part of it (screening and validation differ by design). */
#include "config.h"

#include "core/contract_keys.h"
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

static json_t *strlist(const struct moe_strlist *l)
{
    json_t *a = json_array();

    for (int i = 0; i < l->n; i++)
        json_array_append_new(a, json_string(l->v[i]));
    return a;
}

static json_t *tuning(const struct moe_run *r)
{
    const struct moe_baseline *c = &r->cfg;
    const char *type = "alltoall", *backend = "none";

    if (c->dispatcher == MOE_DISPATCH_ALLGATHER)
        type = "allgather";
    if (c->dispatcher == MOE_DISPATCH_FLEX_DEEPEP || c->dispatcher == MOE_DISPATCH_FLEX_HYBRIDEP) {
        type = "flex";
        backend = c->dispatcher == MOE_DISPATCH_FLEX_DEEPEP ? "deepep" : "hybridep";
    }
    /* recompute granularity and modules are one variable: one key. */
    return json_pack("{s:s, s:s, s:b, s:b, s:b, s:b, s:b, s:b, s:{s:s, s:o}, s:o, s:s}",
                     MOE_CONTRACT_DISPATCHER, type, MOE_CONTRACT_DISPATCHER_BACKEND, backend,
                     K(BASELINE, EP_OVERLAP), c->ep_overlap,
                     K(BASELINE, SHARED_EXPERT_OVERLAP), c->shared_expert_overlap,
                     K(BASELINE, DELAY_WGRAD), c->delay_wgrad,
                     K(BASELINE, OVERLAP_GRAD_REDUCE), c->overlap_grad_reduce,
                     K(BASELINE, TP_COMM_OVERLAP), c->tp_comm_overlap,
                     K(BASELINE, MANUAL_GC), c->manual_gc,
                     MOE_CONTRACT_RECOMPUTE, MOE_CONTRACT_GRANULARITY,
                     moe_recompute_name(c->recompute), MOE_CONTRACT_MODULES,
                     strlist(&c->recompute_modules),
                     CK_CUDA_GRAPH_SCOPE, strlist(&c->cuda_graph_modules),
                     K(WORKLOAD, PRECISION), moe_precision_name(c->precision));
}

json_t *moe_run_contract(const struct moe_study *s, const struct moe_run *r, const char *label)
{
    const struct moe_measure *m = &s->measure;
    json_t *doc = json_pack(
        "{s:{s:s, s:s, s:b, s:b, s:b, s:s},"
        " s:{s:s, s:i, s:i, s:i, s:i},"
        " s:{s:s, s:O, s:i, s:i, s:i, s:s, s:s},"
        " s:{s:s, s:s, s:f, s:s},"
        " s:o, s:o,"
        " s:{s:i, s:i, s:i, s:[ii]}}",
        MOE_CONTRACT_ENVIRONMENT, K(SOFTWARE, MEGATRON), megatron_version(s->software.dialect),
        K(SOFTWARE, TRANSFORMER_ENGINE), s->software.transformer_engine,
        K(SOFTWARE, APEX), s->software.apex, K(SOFTWARE, DEEPEP), s->software.deepep,
        K(SOFTWARE, HYBRIDEP), s->software.hybridep, CK_CONTAINER_IMAGE, s->cluster.container_image,
        MOE_CONTRACT_HARDWARE, CK_GPU_MODEL, moe_gpu_name(s->cluster.gpu),
        K(CLUSTER, GPU_MEMORY_GIB), s->cluster.gpu_memory_gib, CK_GPUS, moe_study_world_size(s),
        K(CLUSTER, GPUS_PER_NODE), s->cluster.gpus_per_node,
        K(CLUSTER, NVLINK_DOMAIN), s->cluster.nvlink_domain,
        MOE_CONTRACT_WORKLOAD, CK_MODEL, s->model.name,
        CK_ARCHITECTURE, json_object_get(s->json, MOE_SK_MODEL),
        K(WORKLOAD, SEQ_LEN), s->workload.seq_len, MOE_CONTRACT_MBS, r->mbs,
        K(WORKLOAD, GBS), s->workload.gbs,
        K(WORKLOAD, DATA), s->data_path[0] ? s->data_path : "mock",
        K(WORKLOAD, OPTIMIZER), s->optimizer,
        MOE_CONTRACT_SEMANTICS, K(WORKLOAD, ROUTING), moe_routing_name(s->workload.routing),
        CK_CLASS, label, K(WORKLOAD, CAPACITY_FACTOR), s->workload.capacity_factor,
        CK_ROUTER_DTYPE, "fp32",
        MOE_CONTRACT_PARALLEL, moe_contract_parallel(&r->cfg.layout, r->cfg.pipeline_layout),
        MOE_CONTRACT_TUNING, tuning(r),
        MOE_CONTRACT_TIMING, MOE_CONTRACT_WARMUP, m->warmup, MOE_CONTRACT_SCREEN_STEPS,
        m->screen_steps, MOE_CONTRACT_VALIDATE_STEPS, m->validate_steps, MOE_CONTRACT_WINDOW,
        m->window_first, m->window_last);

    if (doc && r->profile)
        json_object_set_new(doc, MOE_CONTRACT_PROFILING, moe_contract_profiling(s));
    /* only when off, as in the canonical study: default contracts unchanged */
    if (doc && !s->distributed_optimizer)
        json_object_set_new(json_object_get(doc, MOE_CONTRACT_WORKLOAD),
                            K(WORKLOAD, DISTRIBUTED_OPTIMIZER), json_false());
    if (doc && s->grad_reduce_in_bf16)
        json_object_set_new(json_object_get(doc, MOE_CONTRACT_WORKLOAD),
                            K(WORKLOAD, GRAD_REDUCE_IN_BF16), json_true());
    return doc;
}

const char *moe_study_routing_class(const struct moe_study *s)
{
    return s->workload.routing == MOE_ROUTING_FORCE_BALANCE ? "benchmark-only"
                                                            : "training-equivalent";
}

const char *moe_study_label(const struct moe_study *s, struct moe_strv *reasons)
{
    /* Forced balance changes routing and mock data changes what the router
     * and the loss see: neither run's numbers transfer to training. */
    if (s->workload.routing == MOE_ROUTING_FORCE_BALANCE &&
        moe_strv_push(reasons, "forced-balance routing") < 0)
        return NULL;
    if (!s->data_path[0] && moe_strv_push(reasons, "mock data") < 0)
        return NULL;
    return reasons->n ? "benchmark-only" : "training-equivalent";
}

json_t *moe_contract_profiling(const struct moe_study *s)
{
    const struct moe_measure *m = &s->measure;

    return json_pack("{s:s, s:[ii]}", K(MEASURE, PROFILER), moe_profiler_name(m->profiler),
                     CK_PROFILE_STEPS, m->profile_first, m->profile_last);
}
