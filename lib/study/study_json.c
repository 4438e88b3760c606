/* The resolved study as JSON, with the same keys as the YAML schema plus
 * every default filled in.  The generator renders from it and the contract
 * hashes it, so the form must not depend on how the user spelled the file. */
#include "config.h"

#include <string.h>

#include "study/study.h"

static json_t *strlist(const struct moe_strlist *l)
{
    json_t *a = json_array();

    for (int i = 0; i < l->n; i++)
        json_array_append_new(a, json_string(l->v[i]));
    return a;
}

static json_t *model_json(const struct moe_model *m)
{
    return json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:i, s:i, s:s,"
                     " s:i, s:i, s:i, s:b, s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:b}",
                     "name", m->name, "num_layers", m->num_layers, "hidden", m->hidden,
                     "ffn_hidden", m->ffn_hidden, "moe_ffn_hidden", m->moe_ffn_hidden,
                     "num_experts", m->num_experts, "topk", m->topk,
                     "shared_expert_ffn", m->shared_expert_ffn,
                     "first_dense_layers", m->first_dense_layers, "mtp_layers", m->mtp_layers,
                     "router_score", moe_router_score_name(m->router_score),
                     "router_groups", m->router_groups, "router_group_topk", m->router_group_topk,
                     "attention", moe_attention_name(m->attention),
                     "num_heads", m->num_heads, "num_query_groups", m->num_query_groups,
                     "head_dim", m->head_dim, "qk_layernorm", m->qk_layernorm,
                     "q_lora_rank", m->q_lora_rank, "kv_lora_rank", m->kv_lora_rank,
                     "qk_head_dim", m->qk_head_dim, "qk_pos_head_dim", m->qk_pos_head_dim,
                     "v_head_dim", m->v_head_dim, "vocab", m->vocab, "swiglu", m->swiglu,
                     "untie_embeddings", m->untie_embeddings);
}

static json_t *cluster_json(const struct moe_cluster *k)
{
    return json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:i, s:b,"
                     " s:{s:s, s:s}, s:{s:s}}",
                     "gpu", moe_gpu_name(k->gpu), "gpu_memory_gib", k->gpu_memory_gib,
                     "gpus_per_node", k->gpus_per_node, "nvlink_domain", k->nvlink_domain,
                     "nodes", k->nodes, "partition", k->partition, "account", k->account,
                     "time_limit", k->time_limit, "max_array_size", k->max_array_size,
                     "exclusive", k->exclusive,
                     "container", "image", k->container_image, "mounts", k->container_mounts,
                     "launcher", "command", k->launcher);
}

static json_t *workload_json(const struct moe_study *s)
{
    const struct moe_workload *w = &s->workload;
    json_t *j = json_pack("{s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:f}", "seq_len", w->seq_len,
                          "mbs", w->mbs, "gbs", w->gbs, "data",
                          moe_study_str_set(s->data_path) ? s->data_path : "mock", "optimizer", s->optimizer,
                          "precision", moe_precision_name(s->baseline.precision), "routing",
                          moe_routing_name(w->routing), "capacity_factor", w->capacity_factor);

    /* only when off: a study that leaves the default keeps the hash (and
     * the ids of its committed evidence) it had before the key existed */
    if (j && !s->distributed_optimizer)
        json_object_set_new(j, "distributed_optimizer", json_false());
    if (j && s->grad_reduce_in_bf16) /* only when on, for the same reason */
        json_object_set_new(j, "grad_reduce_in_bf16", json_true());
    return j;
}

static json_t *baseline_json(const struct moe_baseline *b)
{
    const struct moe_layout *l = &b->layout;

    return json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:b, s:b, s:b, s:b,"
                     " s:b, s:b, s:s, s:o, s:o}",
                     "tp", l->tp, "cp", l->cp, "pp", l->pp, "vpp", l->vpp, "ep", l->ep,
                     "etp", l->etp, "dp", l->dp, "edp", l->edp,
                     "pipeline_layout", b->pipeline_layout,
                     "dispatcher", moe_dispatcher_name(b->dispatcher),
                     "ep_overlap", b->ep_overlap, "shared_expert_overlap",
                     b->shared_expert_overlap, "delay_wgrad", b->delay_wgrad,
                     "overlap_grad_reduce", b->overlap_grad_reduce, "tp_comm_overlap",
                     b->tp_comm_overlap, "manual_gc", b->manual_gc,
                     "recompute", moe_recompute_name(b->recompute),
                     "recompute_modules", strlist(&b->recompute_modules),
                     "cuda_graph_modules", strlist(&b->cuda_graph_modules));
}

static json_t *measure_json(const struct moe_measure *m)
{
    return json_pack("{s:i, s:i, s:i, s:[ii], s:[ii], s:s, s:i}", "warmup", m->warmup,
                     "screen_steps", m->screen_steps, "validate_steps", m->validate_steps,
                     "report_window", m->window_first, m->window_last,
                     "profile_steps", m->profile_first, m->profile_last,
                     "profiler", moe_profiler_name(m->profiler),
                     "log_interval", m->log_interval);
}

static json_t *retune_json(const struct moe_study *s)
{
    json_t *mbs = json_array();

    for (int i = 0; i < s->retune_mbs_n; i++)
        json_array_append_new(mbs, json_integer(s->retune_mbs[i]));
    return json_pack("{s:o, s:o}", "axes", strlist(&s->retune_axes), "mbs", mbs);
}

json_t *moe_study_to_json(const struct moe_study *s)
{
    return json_pack("{s:s, s:o, s:o, s:o, s:{s:s, s:b, s:b, s:s, s:b}, s:o, s:o, s:{s:i, s:i}, s:o,"
                     " s:{s:b}}",
                     "name", s->name, "model", model_json(&s->model),
                     "cluster", cluster_json(&s->cluster), "workload", workload_json(s),
                     "software", "megatron", moe_dialect_name(s->software.dialect),
                     "deepep", s->software.deepep, "hybridep", s->software.hybridep,
                     "transformer_engine", s->software.transformer_engine,
                     "apex", s->software.apex, "baseline", baseline_json(&s->baseline), "measure",
                     measure_json(&s->measure), "scale", "top_k", s->scale_top_k, "max_layouts", s->scale_max_layouts,
                     "retune",
                     retune_json(s), "validation", "checkpoint", s->validate_checkpoint);
}
