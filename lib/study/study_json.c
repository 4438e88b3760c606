/* The resolved study as JSON, with the same keys as the YAML schema plus
 * every default filled in.  The generator renders from it and the contract
 * hashes it, so the form must not depend on how the user spelled the file. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/json_build.h"
#include "study/study.h"
#include "study/study_internal.h"
#include "study/study_schema.h"

/* A key by its parent and name (study_schema.h), never spelled here. */
#define K(parent, key) MOE_SK_KEY(parent, key)
/* Written, never read: the preset's name (or "custom") for model.preset,
 * and the data-parallel sizes the layout rules derive. */
#define MODEL_NAME "name"
#define DP "dp"
#define EDP "edp"

static json_t *strlist(struct moe_jb *b, const struct moe_strlist *l)
{
    json_t *a = json_array();

    for (int i = 0; i < l->n; i++)
        moe_jb_append(b, a, json_string(l->v[i]));
    return a;
}

static json_t *model_json(struct moe_jb *b, const struct moe_model *m)
{
    return moe_jb_pack(b,
        "{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:i, s:i, s:s,"
        " s:i, s:i, s:i, s:b, s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:b}",
        MODEL_NAME, m->name, K(MODEL, NUM_LAYERS), m->num_layers, K(MODEL, HIDDEN), m->hidden,
        K(MODEL, FFN_HIDDEN), m->ffn_hidden, K(MODEL, MOE_FFN_HIDDEN), m->moe_ffn_hidden,
        K(MODEL, NUM_EXPERTS), m->num_experts, K(MODEL, TOPK), m->topk,
        K(MODEL, SHARED_EXPERT_FFN), m->shared_expert_ffn,
        K(MODEL, FIRST_DENSE_LAYERS), m->first_dense_layers, K(MODEL, MTP_LAYERS), m->mtp_layers,
        K(MODEL, ROUTER_SCORE), moe_router_score_name(m->router_score),
        K(MODEL, ROUTER_GROUPS), m->router_groups,
        K(MODEL, ROUTER_GROUP_TOPK), m->router_group_topk,
        K(MODEL, ATTENTION), moe_attention_name(m->attention),
        K(MODEL, NUM_HEADS), m->num_heads, K(MODEL, NUM_QUERY_GROUPS), m->num_query_groups,
        K(MODEL, HEAD_DIM), m->head_dim, K(MODEL, QK_LAYERNORM), m->qk_layernorm,
        K(MODEL, Q_LORA_RANK), m->q_lora_rank, K(MODEL, KV_LORA_RANK), m->kv_lora_rank,
        K(MODEL, QK_HEAD_DIM), m->qk_head_dim, K(MODEL, QK_POS_HEAD_DIM), m->qk_pos_head_dim,
        K(MODEL, V_HEAD_DIM), m->v_head_dim, K(MODEL, VOCAB), m->vocab,
        K(MODEL, SWIGLU), m->swiglu, K(MODEL, UNTIE_EMBEDDINGS), m->untie_embeddings);
}

/* The keys added after studies had evidence (issue 40) are written only
 * when set: a study that leaves them out keeps the hash, and the ids of its
 * committed evidence, that it had before they existed. */
static void str_if_set(struct moe_jb *b, json_t *j, const char *key, const char *v)
{
    if (moe_study_str_set(v))
        moe_jb_str(b, j, key, v);
}

/* cluster.env as the study maps it (NAME: value), sorted; NULL for none. */
static json_t *env_json(struct moe_jb *b, const struct moe_strv *env)
{
    json_t *j;

    if (!env->n)
        return NULL;
    j = json_object();
    for (size_t i = 0; i < env->n; i++) {
        const char *eq = strchr(env->v[i], '=');
        char *name = eq ? strndup(env->v[i], (size_t)(eq - env->v[i])) : NULL;

        if (!name && !b->failed) { /* the builder's own way to fail, with its text */
            if (b->err)
                moe_error_set(b->err, "%s: out of memory", K(CLUSTER, ENV));
            b->failed = true;
        }
        if (name)
            moe_jb_str(b, j, name, eq + 1);
        free(name);
    }
    return j;
}

static json_t *stage_limits_json(struct moe_jb *b, const struct moe_cluster *k)
{
    json_t *j = json_object();

    for (int st = 0; st < MOE_STAGE_COUNT; st++)
        str_if_set(b, j, moe_stage_name((enum moe_stage)st), k->stage_time_limit[st]);
    if (json_object_size(j))
        return j;
    json_decref(j);
    return NULL;
}

static void cluster_added(struct moe_jb *b, json_t *j, const struct moe_cluster *k)
{
    json_t *v, *launcher = json_object_get(j, K(CLUSTER, LAUNCHER));

    str_if_set(b, j, K(CLUSTER, QOS), k->qos);
    str_if_set(b, j, K(CLUSTER, RESERVATION), k->reservation);
    str_if_set(b, j, K(CLUSTER, CONSTRAINT), k->constraint);
    if ((v = stage_limits_json(b, k)))
        moe_jb_set(b, j, K(CLUSTER, STAGE_TIME_LIMIT), v);
    if ((v = env_json(b, &k->env)))
        moe_jb_set(b, j, K(CLUSTER, ENV), v);
    if (k->extra_args.n) {
        v = json_array();
        for (size_t i = 0; i < k->extra_args.n; i++)
            moe_jb_append(b, v, json_string(k->extra_args.v[i]));
        moe_jb_set(b, launcher, K(CLUSTER_LAUNCHER, EXTRA_ARGS), v);
    }
    if (k->plugin != MOE_PLUGIN_AUTO)
        moe_jb_str(b, j, K(CLUSTER, PLUGIN),
                   moe_enum_name(moe_plugin_mode_names, MOE_PLUGIN_MODE_COUNT, (int)k->plugin));
    if (moe_study_str_set(k->container_workdir))
        moe_jb_str(b, json_object_get(j, K(CLUSTER, CONTAINER)), K(CLUSTER_CONTAINER, WORKDIR),
                   k->container_workdir);
}

static json_t *cluster_json(struct moe_jb *b, const struct moe_cluster *k)
{
    json_t *j = moe_jb_pack(b,
        "{s:s, s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:i, s:b, s:{s:s, s:s}, s:{s:s}}",
        K(CLUSTER, GPU), moe_gpu_name(k->gpu), K(CLUSTER, GPU_MEMORY_GIB), k->gpu_memory_gib,
        K(CLUSTER, GPUS_PER_NODE), k->gpus_per_node, K(CLUSTER, NVLINK_DOMAIN), k->nvlink_domain,
        K(CLUSTER, NODES), k->nodes, K(CLUSTER, PARTITION), k->partition,
        K(CLUSTER, ACCOUNT), k->account, K(CLUSTER, TIME_LIMIT), k->time_limit,
        K(CLUSTER, MAX_ARRAY_SIZE), k->max_array_size, K(CLUSTER, EXCLUSIVE), k->exclusive,
        K(CLUSTER, CONTAINER), K(CLUSTER_CONTAINER, IMAGE), k->container_image,
        K(CLUSTER_CONTAINER, MOUNTS), k->container_mounts,
        K(CLUSTER, LAUNCHER), K(CLUSTER_LAUNCHER, COMMAND), k->launcher);

    if (j)
        cluster_added(b, j, k);
    return j;
}

/* The training semantics, each only when the study states it (issue 41),
 * for the same reason. */
static void training_json(struct moe_jb *b, json_t *j, const struct moe_training *t)
{
    if (t->lr > 0)
        moe_jb_num(b, j, K(WORKLOAD, LR), t->lr);
    if (t->lr_schedule >= 0) {
        moe_jb_str(b, j, K(WORKLOAD, LR_SCHEDULE), moe_lr_schedule_names[t->lr_schedule]);
        moe_jb_int(b, j, K(WORKLOAD, LR_WARMUP_ITERS), t->lr_warmup_iters);
        if (t->lr_decay_iters)
            moe_jb_int(b, j, K(WORKLOAD, LR_DECAY_ITERS), t->lr_decay_iters);
        moe_jb_num(b, j, K(WORKLOAD, MIN_LR), t->min_lr);
    }
    if (t->aux_loss_coeff >= 0)
        moe_jb_num(b, j, K(WORKLOAD, AUX_LOSS_COEFF), t->aux_loss_coeff);
    str_if_set(b, j, K(WORKLOAD, TOKENIZER), t->tokenizer);
}

static json_t *workload_json(struct moe_jb *b, const struct moe_study *s)
{
    const struct moe_workload *w = &s->workload;
    json_t *j = moe_jb_pack(b,
        "{s:i, s:i, s:i, s:s, s:s, s:s, s:s}", K(WORKLOAD, SEQ_LEN), w->seq_len,
        K(WORKLOAD, MBS), w->mbs, K(WORKLOAD, GBS), w->gbs,
        K(WORKLOAD, DATA), moe_study_str_set(s->data_path) ? s->data_path : "mock",
        K(WORKLOAD, OPTIMIZER), s->optimizer,
        K(WORKLOAD, PRECISION), moe_precision_name(s->baseline.precision),
        K(WORKLOAD, ROUTING), moe_routing_name(w->routing));

    if (!j)
        return NULL;
    moe_jb_num(b, j, K(WORKLOAD, CAPACITY_FACTOR), w->capacity_factor);
    /* only when off: a study that leaves the default keeps the hash (and
     * the ids of its committed evidence) it had before the key existed */
    if (!s->distributed_optimizer)
        moe_jb_bool(b, j, K(WORKLOAD, DISTRIBUTED_OPTIMIZER), false);
    if (s->grad_reduce_in_bf16) /* only when on, for the same reason */
        moe_jb_bool(b, j, K(WORKLOAD, GRAD_REDUCE_IN_BF16), true);
    training_json(b, j, &s->training);
    return j;
}

static json_t *baseline_json(struct moe_jb *jb, const struct moe_baseline *b)
{
    const struct moe_layout *l = &b->layout;
    json_t *j = moe_jb_pack(jb,
        "{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:b, s:b, s:b, s:b,"
        " s:b, s:b, s:s}",
        K(BASELINE, TP), l->tp, K(BASELINE, CP), l->cp, K(BASELINE, PP), l->pp,
        K(BASELINE, VPP), l->vpp, K(BASELINE, EP), l->ep, K(BASELINE, ETP), l->etp,
        DP, l->dp, EDP, l->edp, K(BASELINE, PIPELINE_LAYOUT), b->pipeline_layout,
        K(BASELINE, DISPATCHER), moe_dispatcher_name(b->dispatcher),
        K(BASELINE, EP_OVERLAP), b->ep_overlap,
        K(BASELINE, SHARED_EXPERT_OVERLAP), b->shared_expert_overlap,
        K(BASELINE, DELAY_WGRAD), b->delay_wgrad,
        K(BASELINE, OVERLAP_GRAD_REDUCE), b->overlap_grad_reduce,
        K(BASELINE, TP_COMM_OVERLAP), b->tp_comm_overlap, K(BASELINE, MANUAL_GC), b->manual_gc,
        K(BASELINE, RECOMPUTE), moe_recompute_name(b->recompute));

    if (!j)
        return NULL;
    moe_jb_set(jb, j, K(BASELINE, RECOMPUTE_MODULES), strlist(jb, &b->recompute_modules));
    moe_jb_set(jb, j, K(BASELINE, CUDA_GRAPH_MODULES), strlist(jb, &b->cuda_graph_modules));
    if (b->dispatcher_sms) /* only when set (issue 41), as above */
        moe_jb_int(jb, j, K(BASELINE, DISPATCHER_SMS), b->dispatcher_sms);
    return j;
}

static json_t *measure_json(struct moe_jb *b, const struct moe_measure *m)
{
    return moe_jb_pack(b,
        "{s:i, s:i, s:i, s:[ii], s:[ii], s:s, s:i}", K(MEASURE, WARMUP), m->warmup,
        K(MEASURE, SCREEN_STEPS), m->screen_steps, K(MEASURE, VALIDATE_STEPS), m->validate_steps,
        K(MEASURE, REPORT_WINDOW), m->window_first, m->window_last,
        K(MEASURE, PROFILE_STEPS), m->profile_first, m->profile_last,
        K(MEASURE, PROFILER), moe_profiler_name(m->profiler),
        K(MEASURE, LOG_INTERVAL), m->log_interval);
}

static json_t *retune_json(struct moe_jb *b, const struct moe_study *s)
{
    json_t *j = json_object(), *mbs = json_array();

    for (int i = 0; i < s->retune_mbs_n; i++)
        moe_jb_append(b, mbs, json_integer(s->retune_mbs[i]));
    moe_jb_set(b, j, K(RETUNE, AXES), strlist(b, &s->retune_axes));
    moe_jb_set(b, j, K(RETUNE, MBS), mbs);
    if (s->retune_sms_set) {
        json_t *sms = json_array();

        for (int i = 0; i < s->retune_sms_n; i++)
            moe_jb_append(b, sms, json_integer(s->retune_sms[i]));
        moe_jb_set(b, j, K(RETUNE, DISPATCHER_SMS), sms);
    }
    return j;
}

static json_t *software_json(struct moe_jb *b, const struct moe_software *sw)
{
    return moe_jb_pack(b, "{s:s, s:b, s:b, s:s, s:b}", K(SOFTWARE, MEGATRON),
                     moe_dialect_name(sw->dialect), K(SOFTWARE, DEEPEP), sw->deepep,
                     K(SOFTWARE, HYBRIDEP), sw->hybridep, K(SOFTWARE, TRANSFORMER_ENGINE),
                     sw->transformer_engine, K(SOFTWARE, APEX), sw->apex);
}

json_t *moe_study_to_json(const struct moe_study *s, struct moe_error *err)
{
    json_t *j = json_object();
    struct moe_jb b;

    moe_jb_init(&b, err);
    moe_jb_str(&b, j, MOE_SK_NAME, s->name);
    moe_jb_set(&b, j, MOE_SK_MODEL, model_json(&b, &s->model));
    moe_jb_set(&b, j, MOE_SK_CLUSTER, cluster_json(&b, &s->cluster));
    moe_jb_set(&b, j, MOE_SK_WORKLOAD, workload_json(&b, s));
    moe_jb_set(&b, j, MOE_SK_SOFTWARE, software_json(&b, &s->software));
    moe_jb_set(&b, j, MOE_SK_BASELINE, baseline_json(&b, &s->baseline));
    moe_jb_set(&b, j, MOE_SK_MEASURE, measure_json(&b, &s->measure));
    moe_jb_set(&b, j, MOE_SK_SCALE,
               moe_jb_pack(&b, "{s:i, s:i}", K(SCALE, TOP_K), s->scale_top_k,
                           K(SCALE, MAX_LAYOUTS), s->scale_max_layouts));
    moe_jb_set(&b, j, MOE_SK_RETUNE, retune_json(&b, s));
    moe_jb_set(&b, j, MOE_SK_VALIDATION,
               moe_jb_pack(&b, "{s:b}", K(VALIDATION, CHECKPOINT), s->validate_checkpoint));
    return moe_jb_done(&b, j);
}
