/* Numbers from each model's published config (HF config.json / paper). */
#include "config.h"

#include <string.h>

#include "study/presets.h"

static const struct moe_model presets[] = {
    {
        .name = "qwen3-30b-a3b", .num_layers = 48, .hidden = 2048, .ffn_hidden = 6144,
        .moe_ffn_hidden = 768, .num_experts = 128, .topk = 8,
        .router_score = MOE_ROUTER_SOFTMAX, .attention = MOE_ATTN_GQA,
        .num_heads = 32, .num_query_groups = 4, .head_dim = 128, .qk_layernorm = true,
        .vocab = 151936, .swiglu = true, .untie_embeddings = true,
    },
    {
        .name = "qwen3-235b-a22b", .num_layers = 94, .hidden = 4096, .ffn_hidden = 12288,
        .moe_ffn_hidden = 1536, .num_experts = 128, .topk = 8,
        .router_score = MOE_ROUTER_SOFTMAX, .attention = MOE_ATTN_GQA,
        .num_heads = 64, .num_query_groups = 4, .head_dim = 128, .qk_layernorm = true,
        .vocab = 151936, .swiglu = true, .untie_embeddings = true,
    },
    {
        .name = "deepseek-v3", .num_layers = 61, .hidden = 7168, .ffn_hidden = 18432,
        .moe_ffn_hidden = 2048, .num_experts = 256, .topk = 8, .shared_expert_ffn = 2048,
        .first_dense_layers = 3, .mtp_layers = 0, /* MTP is a study choice */
        .router_score = MOE_ROUTER_SIGMOID, .router_groups = 8, .router_group_topk = 4,
        .attention = MOE_ATTN_MLA, .num_heads = 128, .num_query_groups = 128, .head_dim = 128,
        .q_lora_rank = 1536, .kv_lora_rank = 512, .qk_head_dim = 128, .qk_pos_head_dim = 64,
        .v_head_dim = 128, .vocab = 129280, .swiglu = true, .untie_embeddings = true,
    },
    {
        .name = "mixtral-8x7b", .num_layers = 32, .hidden = 4096, .ffn_hidden = 14336,
        .moe_ffn_hidden = 14336, .num_experts = 8, .topk = 2,
        .router_score = MOE_ROUTER_SOFTMAX, .attention = MOE_ATTN_GQA,
        .num_heads = 32, .num_query_groups = 8, .head_dim = 128,
        .vocab = 32000, .swiglu = true, .untie_embeddings = true,
    },
};

#define N_PRESETS (sizeof(presets) / sizeof(presets[0]))

const struct moe_model *moe_preset_find(const char *name)
{
    for (size_t i = 0; i < N_PRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

const char *const *moe_preset_names(void)
{
    static const char *names[N_PRESETS + 1];

    for (size_t i = 0; i < N_PRESETS; i++)
        names[i] = presets[i].name;
    names[N_PRESETS] = NULL;
    return names;
}
