/* The vocabulary shared by the study reader, the generator, the memory model,
 * the layout enumerator and the contract: a model's architecture, a parallel
 * layout, and the training shape.  Plain data; no functions live here. */
#ifndef MOEFLOW_MODEL_H
#define MOEFLOW_MODEL_H

#include <stdbool.h>

#define MOE_NAME_MAX 64

enum moe_router_score { MOE_ROUTER_SOFTMAX = 0, MOE_ROUTER_SIGMOID };

enum moe_attention_kind { MOE_ATTN_GQA = 0, MOE_ATTN_MLA };

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

enum moe_routing {
    MOE_ROUTING_DROPLESS = 0,     /* training-equivalent */
    MOE_ROUTING_DROP_AND_PAD,     /* training-equivalent, capacity factor applies */
    MOE_ROUTING_FORCE_BALANCE,    /* benchmark-only */
};

struct moe_workload {
    int seq_len;
    int mbs;                      /* micro-batch size */
    int gbs;                      /* global batch size */
    enum moe_routing routing;
    double capacity_factor;       /* drop-and-pad only; 0 otherwise */
};

#endif
