/* The ranges come from the study schema (study_schema.c, MOE_SK_MODEL), so a
 * model from JSON or a preset is held to what a study may write. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "study/model_check.h"
#include "study/study_schema.h"

/* KEY names the schema's key (study_schema.h), f the member that holds it */
#define MODEL_INT(KEY, f) { MOE_SK_KEY(MODEL, KEY), offsetof(struct moe_model, f) }
static const struct { const char *key; size_t off; } ints[] = {
    MODEL_INT(NUM_LAYERS, num_layers),
    MODEL_INT(HIDDEN, hidden),
    MODEL_INT(FFN_HIDDEN, ffn_hidden),
    MODEL_INT(MOE_FFN_HIDDEN, moe_ffn_hidden),
    MODEL_INT(NUM_EXPERTS, num_experts),
    MODEL_INT(TOPK, topk),
    MODEL_INT(SHARED_EXPERT_FFN, shared_expert_ffn),
    MODEL_INT(FIRST_DENSE_LAYERS, first_dense_layers),
    MODEL_INT(MTP_LAYERS, mtp_layers),
    MODEL_INT(ROUTER_GROUPS, router_groups),
    MODEL_INT(ROUTER_GROUP_TOPK, router_group_topk),
    MODEL_INT(NUM_HEADS, num_heads),
    MODEL_INT(NUM_QUERY_GROUPS, num_query_groups),
    MODEL_INT(HEAD_DIM, head_dim),
    MODEL_INT(Q_LORA_RANK, q_lora_rank),
    MODEL_INT(KV_LORA_RANK, kv_lora_rank),
    MODEL_INT(QK_HEAD_DIM, qk_head_dim),
    MODEL_INT(QK_POS_HEAD_DIM, qk_pos_head_dim),
    MODEL_INT(V_HEAD_DIM, v_head_dim),
    MODEL_INT(VOCAB, vocab),
};
#undef MODEL_INT

static const struct moe_field *model_keys(void)
{
    for (const struct moe_field *f = moe_study_schema; f->key; f++)
        if (strcmp(f->key, MOE_SK_MODEL) == 0)
            return f->sub;
    return NULL;
}

/* Each integer of the model within its schema range. */
static int ranges(const struct moe_model *m, const char **key, struct moe_error *err)
{
    const struct moe_field *keys = model_keys();

    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        int v = *(const int *)((const char *)m + ints[i].off);

        for (const struct moe_field *f = keys; f && f->key; f++) {
            if (strcmp(f->key, ints[i].key) != 0 || f->type != MOE_F_INT)
                continue;
            if (v < f->min || v > f->max) {
                moe_error_set(err, "%d is out of range %ld..%ld", v, f->min, f->max);
                *key = ints[i].key;
                return -1;
            }
        }
    }
    return 0;
}

static int cross_rules(const struct moe_model *m, const char **key, struct moe_error *err)
{
    const char *k = NULL;

    if (m->topk > m->num_experts)
        moe_error_set(err, "%d is more than num_experts %d", m->topk, m->num_experts), k = "topk";
    else if (m->num_heads % m->num_query_groups)
        moe_error_set(err, "%d does not divide num_heads %d", m->num_query_groups, m->num_heads),
            k = "num_query_groups";
    else if (m->router_groups && m->num_experts % m->router_groups)
        moe_error_set(err, "%d does not divide num_experts %d", m->router_groups,
                      m->num_experts), k = "router_groups";
    else if (m->router_group_topk > m->router_groups)
        moe_error_set(err, "%d is more than router_groups %d", m->router_group_topk,
                      m->router_groups), k = "router_group_topk";
    else if (m->first_dense_layers >= m->num_layers)
        moe_error_set(err, "%d leaves no MoE layer out of %d", m->first_dense_layers,
                      m->num_layers), k = "first_dense_layers";
    else if (m->first_dense_layers && !m->ffn_hidden)
        moe_error_set(err, "dense layers (first_dense_layers %d) need ffn_hidden",
                      m->first_dense_layers), k = "ffn_hidden";
    else if (m->attention == MOE_ATTN_MLA && !m->kv_lora_rank)
        moe_error_set(err, "MLA attention needs kv_lora_rank"), k = "kv_lora_rank";
    *key = k;
    return k ? -1 : 0;
}

int moe_model_check(const struct moe_model *m, const char **key, struct moe_error *err)
{
    *key = NULL;
    if (ranges(m, key, err) < 0 || cross_rules(m, key, err) < 0)
        return -1;
    return 0;
}
