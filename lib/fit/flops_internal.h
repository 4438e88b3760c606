/* Model FLOPs as Megatron counts them (num_floating_point_operations), so
 * that our TFLOP/s per GPU reads like the number in Megatron's log and in
 * Megatron-Bridge's published tables.  Private to lib/fit: the step-time
 * model (steptime.h) is what other folders use. */
#ifndef MOEFLOW_FLOPS_INTERNAL_H
#define MOEFLOW_FLOPS_INTERNAL_H

#include "core/model.h"

/* Forward + backward FLOPs per token, split by where they run: one
 * transformer layer's attention (projections + core attention at this
 * sequence length), one dense MLP, one MoE MLP (routed top-k + shared
 * expert), and the output layer (with the MTP heads). */
struct moe_flops {
    double attn;      /* per layer */
    double attn_core; /* ... of which the core (QK^T, softmax, PV) */
    double dense_mlp; /* per dense layer */
    double moe_mlp;   /* per MoE layer */
    double moe_routed;/* ... of which the routed experts */
    double head;      /* logits (+ MTP), once per token */
};

/* padded_vocab: Megatron pads the vocabulary by 128 * TP. */
void moe_flops_per_token(const struct moe_model *m, int seq_len, long padded_vocab,
                         struct moe_flops *out);

/* The whole model for one token, as num_floating_point_operations()
 * divided by the tokens of the global batch. */
double moe_flops_model_per_token(const struct moe_model *m, const struct moe_flops *f);

#endif
