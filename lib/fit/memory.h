/* Peak GPU memory of one Megatron-Core training rank, from first principles:
 * what PyTorch and Megatron actually allocate (bf16 params, fp32 main grads,
 * fp32 main params and Adam states, activations saved for backward, the
 * transients at the loss, in attention backward and in the optimizer step). */
#ifndef MOEFLOW_MEMORY_H
#define MOEFLOW_MEMORY_H

#include <stdbool.h>

#include "core/error.h"
#include "core/model.h"

/* --transformer-impl: "local" keeps the unfused s^2 attention scores. */
enum moe_impl { MOE_IMPL_TE = 0, MOE_IMPL_LOCAL };

/* --recompute-modules, one bit each. */
enum moe_recompute_module {
    MOE_RC_CORE_ATTN = 1u << 0,
    MOE_RC_MOE_ACT = 1u << 1,
    MOE_RC_LAYERNORM = 1u << 2,
    MOE_RC_MLP = 1u << 3,
    MOE_RC_MOE = 1u << 4,
    MOE_RC_SHARED_EXPERTS = 1u << 5,
    MOE_RC_MLA_UP_PROJ = 1u << 6,
};
#define MOE_RC_MODULE_COUNT 7

/* Megatron's --recompute-modules names, one per MOE_RC_* bit in bit order,
 * NULL-ended: the study schema's allowed values and the parser below. */
extern const char *const moe_recompute_module_names[];

enum moe_recompute_granularity { MOE_RC_NONE = 0, MOE_RC_SELECTIVE, MOE_RC_FULL };
enum moe_recompute_method { MOE_RC_UNIFORM = 0, MOE_RC_BLOCK };

struct moe_recompute_plan {
    enum moe_recompute_granularity granularity;
    unsigned modules;                 /* selective: MOE_RC_* bits */
    enum moe_recompute_method method; /* full only */
    int num_layers;                   /* full only: --recompute-num-layers */
};

/* CUDA graphs the run captures, as far as memory goes: none, TE's graphs
 * of some modules of each layer, or Megatron's one graph of the whole
 * forward-backward step. */
enum moe_graphs { MOE_GRAPHS_NONE = 0, MOE_GRAPHS_MODULES, MOE_GRAPHS_FULL_ITERATION };
/* which part of a layer TE's module graphs hold: attn the attention, mlp
 * and moe the MLP or MoE part; moe_router and moe_preprocess neither (the
 * router's logits, a few KiB) */
#define MOE_GRAPH_ATTN 1u
#define MOE_GRAPH_FFN 2u

/* The training switches that change memory but are not the model, the
 * layout or the batch shape. */
struct moe_train {
    enum moe_impl impl;
    bool distributed_optimizer;  /* --use-distributed-optimizer */
    bool grads_fp32;             /* main grads in fp32 (Megatron's bf16 default) */
    bool sequence_parallel;      /* applied when TP > 1 */
    bool fp8_inputs;             /* TE with an FP8/FP4 recipe saves its GEMMs' inputs quantized */
    double hidden_dropout;
    double attention_dropout;
    struct moe_recompute_plan recompute;
    bool recompute_fixed;        /* the run's recompute as given: fit never adds more */
    double optimizer_offload;    /* fraction of the optimizer state kept on the host */
    int offload_layers;          /* activation offload: layers per stage whose activations go to host */
    bool uneven_pp;              /* an explicit pipeline layout allows L % (PP*VPP) != 0 */
    enum moe_graphs graphs;
    unsigned graph_parts;        /* MOE_GRAPHS_MODULES: MOE_GRAPH_ATTN, MOE_GRAPH_FFN */
    int microbatches;            /* per step and pipeline: the batches a full-iteration
                                    graph reads before its capture */
};

/* Recipe defaults: TE, distributed optimizer, fp32 grads, SP, no dropout. */
void moe_train_defaults(struct moe_train *t);

/* Megatron's --transformer-impl local run as in data/memory: dropout 0.1. */
void moe_train_local_defaults(struct moe_train *t);

/* Per-GPU bytes on the most loaded pipeline stage. */
struct moe_memory {
    double params_dense, params_expert; /* parameter counts on this rank */
    double weights;                     /* bf16 parameters */
    double grads;                       /* main-grad buffers */
    double optimizer;                   /* fp32 main params + Adam moments, sharded */
    double persistent;                  /* long-lived work buffers */
    double activations;                 /* saved for backward at the peak */
    double transient;                   /* short-lived at the peak moment */
    double optimizer_step;              /* transient of the optimizer step itself */
    /* CUDA-graph memory: the graphs' private pool, which the caching
     * allocator cannot hand back to eager work (memory_graphs.c says what
     * it holds and what was measured); with graphs the total is what the
     * GPU must hold, max allocated plus the pool */
    double graph_pool;                  /* activations and transients captured */
    double graph_static;                /* static inputs and outputs */
    double graphs;                      /* their sum */
    enum moe_graphs graph_kind;         /* the run's (moe_train.graphs) */
    unsigned graph_parts;               /* moe_train.graph_parts */
    double total;                       /* the predicted max allocated (+ graphs) */
    double attn_share;                  /* fraction of layer activations in attention */
    int stage;                          /* pipeline rank that holds the peak */
    int in_flight;                      /* microbatch chunks alive on that stage */
    bool peak_in_optimizer;             /* optimizer step, not forward/backward */
};


/* The peak of one pipeline rank (0 .. PP-1) rather than the busiest
 * (moe_memory_estimate, memory_internal.h): what a fit run standing in for
 * a rank of that stage measures.  layout->dp and ->edp must be set; -1
 * with err when the combination cannot run at all. */
int moe_memory_estimate_stage(const struct moe_model *m, const struct moe_layout *l,
                              const struct moe_workload *w, const struct moe_train *t,
                              int pp_rank, struct moe_memory *out, struct moe_error *err);

/* "core_attn,moe_act" <-> bits; parse returns -1 on an unknown name. */
int moe_recompute_modules_parse(const char *list, unsigned *bits, struct moe_error *err);
const char *moe_recompute_modules_format(unsigned bits, char *buf, unsigned len);

/* What the graph terms of a moe_memory rest on: measured or modeled. */
const char *moe_memory_graphs_label(enum moe_graphs g);

#define MOE_GIB (1024.0 * 1024.0 * 1024.0)
#define MOE_MIB (1024.0 * 1024.0)

#endif
