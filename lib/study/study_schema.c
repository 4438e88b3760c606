/* The keys a study may hold: the one table of them.  The reader
 * (study.c) asks only for these and for each of them, on every load; the
 * canonical writer (study_json.c) writes each, and doc/moeflow-study.5
 * documents each in its section: tests/unit/test_study.c fails on a key
 * that one of them has and the table lacks, or the other way round. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "fit/memory.h"
#include "study/study.h"
#include "study/study_schema.h"

#define INT(k, lo, hi) { .key = (k), .type = MOE_F_INT, .min = (lo), .max = (hi) }
#define NUM(k) { .key = (k), .type = MOE_F_NUM }
#define STR(k) { .key = (k), .type = MOE_F_STR }
#define BOOL(k) { .key = (k), .type = MOE_F_BOOL }
#define ENUM(k, c) { .key = (k), .type = MOE_F_ENUM, .choices = (c) }
#define MAP(k, s) { .key = (k), .type = MOE_F_MAP, .sub = (s) }
#define END { .key = NULL }
/* A string that lands in an #SBATCH line: only what Slurm takes there. */
#define SBATCH_STR(k, re, what) { .key = (k), .type = MOE_F_STR, .pattern = (re), .allows = (what) }

/* Enum values come from the tables next to each enum (model.h, study.h),
 * the same ones the reader and the JSON writer use. */
static const char *const optimizers[] = { "adam", "sgd", NULL };
/* Megatron's CUDA-graph module names (its --recompute-modules names are
 * fit/memory.h's, which the memory model reads). */
static const char *const graph_modules[] = { "attn", "mlp", "moe", "moe_router",
                                             "moe_preprocess", NULL };

static const struct moe_field model_keys[] = {
    STR("preset"),
    INT("num_layers", 1, 1024), INT("hidden", 1, 1 << 20), INT("ffn_hidden", 0, 1 << 22),
    INT("moe_ffn_hidden", 1, 1 << 22), INT("num_experts", 1, 65536), INT("topk", 1, 1024),
    INT("shared_expert_ffn", 0, 1 << 22), INT("first_dense_layers", 0, 1024),
    INT("mtp_layers", 0, 16), ENUM("router_score", moe_router_score_names),
    INT("router_groups", 0, 65536), INT("router_group_topk", 0, 65536),
    ENUM("attention", moe_attention_names), INT("num_heads", 1, 4096),
    INT("num_query_groups", 1, 4096), INT("head_dim", 1, 4096), BOOL("qk_layernorm"),
    INT("q_lora_rank", 0, 1 << 20), INT("kv_lora_rank", 0, 1 << 20),
    INT("qk_head_dim", 0, 4096), INT("qk_pos_head_dim", 0, 4096), INT("v_head_dim", 0, 4096),
    INT("vocab", 1, 1 << 24), BOOL("swiglu"), BOOL("untie_embeddings"),
    END
};

/* Slurm's names and time formats (sbatch(1): --partition takes a comma
 * list; --time takes M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED). */
#define SLURM_NAME "[a-z0-9_.-]+"
#define NAME_RE "^[a-z0-9][a-z0-9_.+-]{0,62}$"
#define PARTITION_RE "^" SLURM_NAME "(," SLURM_NAME ")*$"
#define ACCOUNT_RE "^" SLURM_NAME "$"
#define TIME_RE "^([0-9]+(-[0-9]+)?(:[0-9]+){0,2}|unlimited|infinite)$"

static const struct moe_field container_keys[] = { STR("image"), STR("mounts"), END };
static const struct moe_field launcher_keys[] = { STR("command"), END };

static const struct moe_field cluster_keys[] = {
    ENUM("gpu", moe_gpu_names), INT("gpu_memory_gib", 1, 4096), INT("gpus_per_node", 1, 64),
    INT("nvlink_domain", 1, 1 << 16), INT("nodes", 1, 1 << 20),
    SBATCH_STR("partition", PARTITION_RE, "a comma-separated list of Slurm partition names "
               "(letters, digits, _ . -)"),
    SBATCH_STR("account", ACCOUNT_RE, "a Slurm account name (letters, digits, _ . -)"),
    SBATCH_STR("time_limit", TIME_RE, "a Slurm time limit: M, M:S, H:M:S, D-H, D-H:M, "
               "D-H:M:S or unlimited"), INT("max_array_size", 1, 4000001), BOOL("exclusive"),
    MAP("container", container_keys), MAP("launcher", launcher_keys),
    NUM("achievable_tflops_bf16"), NUM("achievable_tflops_fp8"), NUM("nvlink_gbps"),
    NUM("internode_gbps"), NUM("host_overhead_us"), NUM("host_expert_us"), NUM("host_etp_us"),
    NUM("route_ns"),
    END
};

static const struct moe_field workload_keys[] = {
    INT("seq_len", 1, 1 << 24), INT("mbs", 1, 1 << 16), INT("gbs", 1, 1 << 26), STR("data"),
    ENUM("optimizer", optimizers), ENUM("precision", moe_precision_names), ENUM("routing", moe_routing_names),
    NUM("capacity_factor"), BOOL("distributed_optimizer"), BOOL("grad_reduce_in_bf16"),
    END
};

static const struct moe_field software_keys[] = {
    ENUM("megatron", moe_dialect_names), BOOL("deepep"), BOOL("hybridep"), STR("transformer_engine"),
    BOOL("apex"), END
};

static const struct moe_field baseline_keys[] = {
    INT("tp", 1, 1024), INT("cp", 1, 1024), INT("pp", 1, 1024), INT("vpp", 1, 1024),
    INT("ep", 1, 65536), INT("etp", 1, 1024), STR("pipeline_layout"),
    ENUM("dispatcher", moe_dispatcher_names), BOOL("ep_overlap"), BOOL("shared_expert_overlap"),
    BOOL("delay_wgrad"), BOOL("overlap_grad_reduce"), BOOL("tp_comm_overlap"),
    BOOL("manual_gc"), ENUM("recompute", moe_recompute_names),
    { .key = "recompute_modules", .type = MOE_F_STRLIST, .choices = moe_recompute_module_names },
    { .key = "cuda_graph_modules", .type = MOE_F_STRLIST, .choices = graph_modules },
    END
};

static const struct moe_field measure_keys[] = {
    INT("warmup", 0, 1000000), INT("screen_steps", 1, 1000000),
    INT("validate_steps", 1, 1000000),
    { .key = "report_window", .type = MOE_F_INTLIST, .min = 1, .max = 1000000, .range = true },
    { .key = "profile_steps", .type = MOE_F_INTLIST, .min = 1, .max = 1000000, .range = true },
    ENUM("profiler", moe_profiler_names), INT("log_interval", 1, 1000000),
    END
};

static const struct moe_field scale_keys[] = {
    INT("top_k", 1, 64), INT("max_layouts", 1, 64),
    END
};

static const struct moe_field validation_keys[] = {
    BOOL("checkpoint"),
    END
};

static const struct moe_field retune_keys[] = {
    { .key = "axes", .type = MOE_F_STRLIST, .choices = moe_retune_axes },
    { .key = "mbs", .type = MOE_F_INTLIST, .min = 1, .max = 1 << 16 },
    END
};

const struct moe_field *moe_study_field(const char *path)
{
    const struct moe_field *keys = moe_study_schema;

    while (keys) {
        size_t n = strcspn(path, ".");
        const struct moe_field *f = keys;

        while (f->key && (strlen(f->key) != n || strncmp(f->key, path, n) != 0))
            f++;
        if (!f->key)
            return NULL;
        if (!path[n])
            return f;
        keys = f->type == MOE_F_MAP ? f->sub : NULL;
        path += n + 1;
    }
    return NULL;
}

const struct moe_field moe_study_schema[] = {
    SBATCH_STR("name", NAME_RE, "1 to 63 letters, digits and _ . + -, starting with a letter "
               "or digit (it names the Slurm jobs)"),
    MAP("model", model_keys), MAP("cluster", cluster_keys),
    MAP("workload", workload_keys), MAP("software", software_keys),
    MAP("baseline", baseline_keys), MAP("measure", measure_keys), MAP("scale", scale_keys), MAP("retune", retune_keys),
    MAP("validation", validation_keys),
    END
};
