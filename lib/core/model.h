/* The vocabulary shared by the study reader, the generator, the memory model,
 * the layout enumerator and the contract: a model's architecture, a parallel
 * layout, and the training shape.  Plain data; no functions live here. */
#ifndef MOEFLOW_MODEL_H
#define MOEFLOW_MODEL_H

#include <stdbool.h>

#include "core/enum_names.h"

#define MOE_NAME_MAX 64

/* Each enum with its names (core/enum_names.h); the tables are in
 * core/enum_names.c. */
#define MOE_ROUTER_SCORE_LIST(X) X(MOE_ROUTER_SOFTMAX, "softmax") X(MOE_ROUTER_SIGMOID, "sigmoid")
MOE_ENUM_DECLARE(moe_router_score, MOE_ROUTER_SCORE_LIST, MOE_ROUTER_SCORE_COUNT,
                 moe_router_score_names);

#define MOE_ATTENTION_LIST(X) X(MOE_ATTN_GQA, "gqa") X(MOE_ATTN_MLA, "mla")
MOE_ENUM_DECLARE(moe_attention_kind, MOE_ATTENTION_LIST, MOE_ATTENTION_COUNT, moe_attention_names);

struct moe_model {
    char name[MOE_NAME_MAX];      /* preset name or "custom" */
    int num_layers;               /* transformer layers, dense + MoE, without MTP */
    int hidden;                   /* hidden size */
    int ffn_hidden;               /* dense FFN size (dense layers); 0 when none */
    int moe_ffn_hidden;           /* per-expert FFN size */
    int num_experts;              /* routed experts */
    int topk;                     /* routed experts per token */
    int shared_expert_ffn;        /* shared-expert FFN size; 0 = no shared expert */
    int first_dense_layers;       /* leading dense layers (DeepSeek-V3: 3) */
    int mtp_layers;               /* multi-token-prediction layers */
    enum moe_router_score router_score;
    int router_groups;            /* group-limited routing: groups (0 = off) */
    int router_group_topk;        /* ... and groups chosen per token */
    enum moe_attention_kind attention;
    int num_heads;                /* attention heads */
    int num_query_groups;         /* KV heads for GQA (== num_heads for MHA) */
    int head_dim;                 /* kv_channels */
    bool qk_layernorm;
    /* MLA only */
    int q_lora_rank;              /* 0 = no q compression */
    int kv_lora_rank;
    int qk_head_dim;              /* non-positional part */
    int qk_pos_head_dim;          /* rotary part */
    int v_head_dim;
    int vocab;
    bool swiglu;                  /* gated linear unit in FFNs and experts */
    bool untie_embeddings;        /* separate output layer */
};

/* Megatron's parallel folding: attention uses TP x CP x DP x PP, MoE layers
 * use ETP x EP x EDP x PP over the same GPUs. */
struct moe_layout {
    int tp, cp, pp, vpp;          /* vpp = virtual stages per pipeline rank (1 = off) */
    int ep, etp;
    int dp, edp;                  /* derived from the world size */
};

/* dropless and drop-and-pad (where the capacity factor applies) are
 * training-equivalent; force-balance is benchmark-only. */
#define MOE_ROUTING_LIST(X)                                                                    \
    X(MOE_ROUTING_DROPLESS, "dropless") X(MOE_ROUTING_DROP_AND_PAD, "drop-and-pad")            \
    X(MOE_ROUTING_FORCE_BALANCE, "force-balance")
MOE_ENUM_DECLARE(moe_routing, MOE_ROUTING_LIST, MOE_ROUTING_COUNT, moe_routing_names);

struct moe_workload {
    int seq_len;
    int mbs;                      /* micro-batch size */
    int gbs;                      /* global batch size */
    enum moe_routing routing;
    double capacity_factor;       /* drop-and-pad only; 0 otherwise */
};

#endif
