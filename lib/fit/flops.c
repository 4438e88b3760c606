/* Megatron's model-FLOPs formula, term by term.  Source: Megatron-LM
 * core_v0.19.0, megatron/training/training.py, num_floating_point_operations
 * (lines 390-846), its transformer_flops() (549-846).  Each GEMM counts 3 times (forward,
 * wgrad, dgrad) and 2 FLOPs per multiply-add, hence the factor 6. */
#include "config.h"

#include "fit/flops_internal.h"

/* forward_backward_expansion_factor * fma_expansion_factor (training.py:605-607) */
#define FWD_BWD_FMA 6.0

/* MLA token-linear part (training.py:619-666): q LoRA (+ norm), kv LoRA,
 * the RoPE key, the output projection. */
static double mla_linear(const struct moe_model *m)
{
    double h = m->hidden, a = m->num_heads, qk = m->qk_head_dim + m->qk_pos_head_dim;
    double q = m->q_lora_rank ? m->q_lora_rank * (h + a * qk + 1) : h * a * qk;

    return q + m->kv_lora_rank * (h + a * (m->qk_head_dim + m->v_head_dim) + 1) +
           h * m->qk_pos_head_dim + a * m->v_head_dim * h;
}

/* Per layer and token; the core part grows with the sequence (the causal
 * mask halves it, FMA doubles it: training.py:668-678 and 704-710). */
static double attention(const struct moe_model *m, int seq, double *core_flops)
{
    double h = m->hidden, linear, core;

    if (m->attention == MOE_ATTN_MLA) {
        linear = mla_linear(m);
        core = m->num_heads * (m->qk_head_dim + m->qk_pos_head_dim) / 2.0 +
               m->num_heads * m->v_head_dim / 2.0;
    } else {
        double q = (double)m->head_dim * m->num_heads, kv = (double)m->head_dim * m->num_query_groups;
        linear = h * (q + 2 * kv) + q * h;
        core = q; /* q/2 (causal) * 2 (QK^T and PV) */
    }
    *core_flops = FWD_BWD_FMA * core * seq;
    return FWD_BWD_FMA * (linear + core * seq);
}

void moe_flops_per_token(const struct moe_model *m, int seq_len, long padded_vocab,
                         struct moe_flops *out)
{
    double h = m->hidden, gate = m->swiglu ? 3 : 2; /* ffn_expansion_factor, training.py:610 */

    out->attn = attention(m, seq_len, &out->attn_core);
    out->dense_mlp = FWD_BWD_FMA * h * m->ffn_hidden * gate;
    /* routed experts (top-k of them) plus the shared expert (training.py:797-819) */
    out->moe_mlp = FWD_BWD_FMA * h * gate *
                   ((double)m->moe_ffn_hidden * m->topk + m->shared_expert_ffn);
    out->moe_routed = FWD_BWD_FMA * h * gate * (double)m->moe_ffn_hidden * m->topk;
    /* logits for the main head and each MTP head, MTP norms and eh proj
     * (training.py:823-838) */
    out->head = FWD_BWD_FMA * (h * (double)padded_vocab * (m->mtp_layers + 1) +
                               m->mtp_layers * (3 * h + 2 * h * h));
}

double moe_flops_model_per_token(const struct moe_model *m, const struct moe_flops *f)
{
    /* MTP layers count as one more layer of the last layer's kind
     * (training.py:582-585) */
    int moe = m->num_experts > 0 ? m->num_layers - m->first_dense_layers : 0;
    int dense = m->num_layers - moe;

    if (m->num_experts > 0)
        moe += m->mtp_layers;
    else
        dense += m->mtp_layers;
    return (dense + moe) * f->attn + dense * f->dense_mlp + moe * f->moe_mlp + f->head;
}
