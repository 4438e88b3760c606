/* What lib/fit shares among its own files (and its unit tests) beside
 * fit/memory.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_MEMORY_INTERNAL_H
#define MOEFLOW_MEMORY_INTERNAL_H

#include "fit/memory.h"

/* Padded vocabulary as Megatron pads it: a multiple of 128 * TP. */
long moe_padded_vocab(int vocab, int tp);

/* Estimate the peak.  layout->dp and ->edp must be set.  Returns -1 with
 * err filled when the combination cannot run at all (e.g. zero layers). */
int moe_memory_estimate(const struct moe_model *m, const struct moe_layout *l,
                        const struct moe_workload *w, const struct moe_train *t,
                        struct moe_memory *out, struct moe_error *err);

/* The pieces of an estimate for one pipeline rank (0 or PP-1), so that an
 * enumerator can reuse what does not change: layer counts per (PP, VPP),
 * per-layer activations per (TP, CP, ETP, settings), parameters per grid. */
struct moe_pp_stage {
    int rank, dense_layers, moe_layers;
};
void moe_memory_stage_init(const struct moe_model *m, const struct moe_layout *l, int rank,
                           struct moe_pp_stage *st);

/* The pipeline ranks that can hold the peak (of memory and of work): the
 * first (embeddings, the most microbatches in flight), the last (logits),
 * and, when leading dense layers sit on the first ranks, the rank with the
 * most MoE layers.  Returns how many (1 to MOE_PP_BUSY_MAX). */
#define MOE_PP_BUSY_MAX 3
int moe_memory_busy_stages(const struct moe_model *m, const struct moe_layout *l,
                           struct moe_pp_stage *out);

struct moe_stage_act {
    double saved, transient, attn_share;
    int in_flight;
};

/* Bytes one layer saves for backward per microbatch: attention part, MLP
 * or MoE part, and its input alone (what full recompute keeps); for a
 * dense and a MoE layer, with the selective modules and without.  They
 * depend on TP, CP, ETP and the settings, not on PP, VPP, EP or DP. */
struct moe_layer_act {
    double attn, ffn, input;
};
struct moe_layer_acts {
    struct moe_layer_act dense, moe, dense_full, moe_full;
};
void moe_memory_layer_acts(const struct moe_model *m, const struct moe_layout *l,
                           const struct moe_workload *w, const struct moe_train *t,
                           struct moe_layer_acts *out);

/* la may be NULL (computed here). */
void moe_memory_stage_act(const struct moe_model *m, const struct moe_layout *l,
                          const struct moe_workload *w, const struct moe_train *t,
                          const struct moe_pp_stage *st, const struct moe_layer_acts *la,
                          struct moe_stage_act *out);

/* Parameters on the rank: dense class (TP-sharded or replicated) and
 * routed experts; they do not change along the fit ladder. */
void moe_memory_stage_params(const struct moe_model *m, const struct moe_layout *l,
                             const struct moe_pp_stage *st, double *dense, double *expert);

/* Weights, grads, optimizer state and persistent buffers (total = their
 * sum); then the peak once the activations are known. */
void moe_memory_stage_static(const struct moe_model *m, const struct moe_layout *l,
                             const struct moe_workload *w, const struct moe_train *t,
                             const struct moe_pp_stage *st, double dense, double expert,
                             struct moe_memory *out);
void moe_memory_apply_act(struct moe_memory *o, const struct moe_stage_act *act);

/* CUDA-graph terms (memory_graphs.c): the static buffers of a rank holding
 * layers layers with in_flight microbatches alive, and the pool once the
 * activations are known (sets graph_pool and graphs). */
double moe_memory_graph_static(const struct moe_model *m, const struct moe_layout *l,
                               const struct moe_workload *w, const struct moe_train *t,
                               int layers, int in_flight);
void moe_memory_graph_pool(struct moe_memory *o, const struct moe_stage_act *act);

#endif
