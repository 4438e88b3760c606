/* Only what decides what is measured goes in: the tuning section holds the
 * retune variables by the names the contract rules group them under
 * (dispatcher + dispatcher_backend are one variable), and the step count
 * of a run is not part of it (screening and validation differ by design). */
#include "config.h"

#include "core/contract_keys.h"
#include "study/study_contract.h"

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
                     "ep_overlap", c->ep_overlap, "shared_expert_overlap",
                     c->shared_expert_overlap, "delay_wgrad", c->delay_wgrad,
                     "overlap_grad_reduce", c->overlap_grad_reduce, "tp_comm_overlap",
                     c->tp_comm_overlap, "manual_gc", c->manual_gc,
                     MOE_CONTRACT_RECOMPUTE, MOE_CONTRACT_GRANULARITY,
                     moe_recompute_name(c->recompute), MOE_CONTRACT_MODULES,
                     strlist(&c->recompute_modules),
                     "cuda_graph_scope", strlist(&c->cuda_graph_modules),
                     "precision", moe_precision_name(c->precision));
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
        MOE_CONTRACT_ENVIRONMENT, "megatron", megatron_version(s->software.dialect),
        "transformer_engine", s->software.transformer_engine, "apex", s->software.apex,
        "deepep", s->software.deepep,
        "hybridep", s->software.hybridep, "container_image", s->cluster.container_image,
        MOE_CONTRACT_HARDWARE, "gpu_model", moe_gpu_name(s->cluster.gpu), "gpu_memory_gib",
        s->cluster.gpu_memory_gib, "gpus", moe_study_world_size(s), "gpus_per_node",
        s->cluster.gpus_per_node, "nvlink_domain", s->cluster.nvlink_domain,
        MOE_CONTRACT_WORKLOAD, "model", s->model.name, "architecture",
        json_object_get(s->json, "model"), "seq_len", s->workload.seq_len, MOE_CONTRACT_MBS,
        r->mbs, "gbs", s->workload.gbs, "data", s->data_path[0] ? s->data_path : "mock",
        "optimizer", s->optimizer,
        MOE_CONTRACT_SEMANTICS, "routing", moe_routing_name(s->workload.routing), "class", label,
        "capacity_factor", s->workload.capacity_factor, "router_dtype", "fp32",
        MOE_CONTRACT_PARALLEL, moe_contract_parallel(&r->cfg.layout, r->cfg.pipeline_layout),
        MOE_CONTRACT_TUNING, tuning(r),
        MOE_CONTRACT_TIMING, MOE_CONTRACT_WARMUP, m->warmup, MOE_CONTRACT_SCREEN_STEPS,
        m->screen_steps, MOE_CONTRACT_VALIDATE_STEPS, m->validate_steps, MOE_CONTRACT_WINDOW,
        m->window_first, m->window_last);

    if (doc && r->profile)
        json_object_set_new(doc, MOE_CONTRACT_PROFILING, moe_contract_profiling(s));
    /* only when off, as in the canonical study: default contracts unchanged */
    if (doc && !s->distributed_optimizer)
        json_object_set_new(json_object_get(doc, MOE_CONTRACT_WORKLOAD), "distributed_optimizer",
                            json_false());
    if (doc && s->grad_reduce_in_bf16)
        json_object_set_new(json_object_get(doc, MOE_CONTRACT_WORKLOAD), "grad_reduce_in_bf16",
                            json_true());
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

    return json_pack("{s:s, s:[ii]}", "profiler", moe_profiler_name(m->profiler), "steps",
                     m->profile_first, m->profile_last);
}
