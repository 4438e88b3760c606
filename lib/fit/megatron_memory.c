/* Megatron's theoretical memory formula, re-derived from its definition:
 * parameters of the most loaded pipeline shard at 18 bytes each (6 + 12/DP
 * with the distributed optimizer, DP replaced by EDP for routed experts),
 * plus Korthikanti et al.'s activation estimate (sbh(10 + 24/TP) per layer
 * without SP, sbh(18 + 4 ffn/h)/TP with SP and selective recompute), the
 * embedding input and dropout, the pipeline factors, the output layer when
 * PP == 1, and 5% for temporaries.  It ignores routed tokens, top-k and the
 * s^2 attention scores, which is why it misses real MoE runs. */
#include "config.h"

#include <math.h>

#include "fit/megatron_memory.h"
#include "fit/memory_internal.h"

static double self_attention_params(const struct moe_model *m, double norm)
{
    double h = m->hidden, a = m->num_heads;

    if (m->attention == MOE_ATTN_MLA) {
        double qk = m->qk_head_dim + m->qk_pos_head_dim;
        double q = m->q_lora_rank > 0 ? m->q_lora_rank * (h + a * qk + norm) : h * a * qk;
        return q + m->kv_lora_rank * (h + a * (m->qk_head_dim + m->v_head_dim) + norm) +
               h * m->qk_pos_head_dim + a * m->v_head_dim * h;
    }
    /* Without --group-query-attention Megatron sets query groups = heads. */
    double groups = m->num_query_groups > 0 ? m->num_query_groups : a;
    double ratio = (double)m->head_dim * a / h;
    return 2 * h * h * ((1 + groups / a) * ratio);
}

static double weight_and_optimizer_bytes(const struct moe_model *m, const struct moe_layout *l,
                                         const struct moe_train *t, double *most_loaded)
{
    double h = m->hidden, norm = 1; /* RMSNorm */
    double glu = m->swiglu ? 1.5 : 1;
    bool has_moe = m->num_experts > 0;
    double experts = has_moe ? m->num_experts : 1;
    double n_moe = has_moe ? m->num_layers - m->first_dense_layers : 0;
    double n_dense = m->num_layers - n_moe;
    double mtp = m->mtp_layers, mtp_moe = has_moe ? mtp : 0, mtp_dense = mtp - mtp_moe;
    double pp = l->pp, tp = l->tp;

    double attn = self_attention_params(m, norm);
    double dense_mlp = 2 * h * m->ffn_hidden * glu;
    double shared = 2 * h * m->shared_expert_ffn * glu;
    double routed = has_moe ? 2 * h * m->moe_ffn_hidden * experts * glu : 0;
    double norms = 2 * h * norm;
    double router = has_moe ? h * experts : 0;
    double embedding = h * (double)moe_padded_vocab(m->vocab, l->tp);
    double final_norm = norm * h;

    double tp_block = (attn + dense_mlp) * n_dense + (attn + shared) * n_moe;
    double rep_block = norms * n_dense + (norms + router) * n_moe + final_norm;
    double exp_block = routed * n_moe;
    double tp_mtp = (attn + dense_mlp) * mtp_dense + (attn + shared) * mtp_moe;
    double rep_mtp = norms * mtp_dense + (norms + router) * mtp_moe;
    double exp_mtp = routed * mtp_moe;

    double tp_shard = (tp_block / pp + tp_mtp + embedding) / tp;
    double rep_shard = rep_block / pp + rep_mtp;
    double exp_shard = (exp_block / pp + exp_mtp) / ((double)l->etp * l->ep);
    if (m->untie_embeddings && l->pp == 1)
        tp_shard += embedding / tp;
    *most_loaded = tp_shard + rep_shard + exp_shard;

    double world = (double)l->tp * l->cp * l->dp * l->pp;
    double edp = floor(world / ((double)l->etp * l->ep * l->pp));
    double dense_b = t->distributed_optimizer ? 6 + 12.0 / l->dp : 18;
    double exp_b = t->distributed_optimizer ? 6 + 12.0 / edp : 18;
    return (tp_shard + rep_shard) * dense_b + exp_shard * exp_b;
}

/* Megatron's two pipeline corrections, applied to the running total. */
static double pipeline_factor(const struct moe_layout *l, const struct moe_workload *w)
{
    double pp = l->pp;

    if (l->vpp > 1)
        return 1 + (pp - 1) / (pp * l->vpp);
    if (l->pp > 1) {
        long micro = w->gbs / ((long)w->mbs * l->dp); /* whole microbatches */
        double m = (double)micro;
        return m / pp < 1 ? m / pp : 1;
    }
    return 1;
}

void moe_megatron_memory(const struct moe_model *m, const struct moe_layout *l,
                         const struct moe_workload *w, const struct moe_train *t,
                         struct moe_megatron_memory *out)
{
    double s = w->seq_len, b = w->mbs, h = m->hidden, tp = l->tp, pp = l->pp;
    double v = (double)moe_padded_vocab(m->vocab, l->tp);
    double act;

    double wo = weight_and_optimizer_bytes(m, l, t, &out->params_most_loaded);
    out->with_sp = l->tp > 1 && t->sequence_parallel &&
                   t->recompute.granularity == MOE_RC_SELECTIVE;
    if (out->with_sp) {
        act = s * b * h * (18 + 4 * ((double)m->ffn_hidden / h));
        out->per_layer_activation = act / tp / MOE_MIB;
        act *= m->num_layers;
        act += 8 * s * b * pp + s * b * h * pp;
        act *= pipeline_factor(l, w);
        if (l->pp == 1)
            act += s * b * h * 4 * (1 + v / h);
        act /= tp;
    } else {
        act = s * b * h * (10 + 24 / tp);
        out->per_layer_activation = act / MOE_MIB;
        act *= m->num_layers;
        act += 8 * s * b * pp + s * b * h * pp;
        act *= pipeline_factor(l, w);
        if (l->pp == 1)
            act += (s * b * v / tp + s * b * h) * 2;
        act *= 1.05;
    }
    out->weight_and_optimizer = wo / MOE_MIB;
    out->activation = act / MOE_MIB;
    out->total = out->weight_and_optimizer + out->activation;
}
