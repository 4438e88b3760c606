/* The keys a study may hold: the one table of them.  The reader
 * (study.c) asks only for these and for each of them, on every load; the
 * canonical writer (study_json.c) writes each, and doc/moeflow-study.5
 * documents each in its section: tests/unit/study/test_study.c fails on a key
 * that one of them has and the table lacks, or the other way round. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "fit/memory.h"
#include "study/study.h"
#include "study/study_schema.h"
#include "study/study_schema_internal.h"

/* Each field is named by its parent and key (study_schema.h): the key's
 * spelling is the header's, never this table's. */
#define K(p, k) MOE_SK_KEY(p, k)
#define INT(p, k, lo, hi) { .key = K(p, k), .type = MOE_F_INT, .min = (lo), .max = (hi) }
#define NUM(p, k) { .key = K(p, k), .type = MOE_F_NUM }
#define STR(p, k) { .key = K(p, k), .type = MOE_F_STR }
#define BOOL(p, k) { .key = K(p, k), .type = MOE_F_BOOL }
#define ENUM(p, k, c) { .key = K(p, k), .type = MOE_F_ENUM, .choices = (c) }
#define STRLIST(p, k, c) { .key = K(p, k), .type = MOE_F_STRLIST, .choices = (c) }
/* [first, last] */
#define RANGE(p, k, lo, hi)                                                                    \
    { .key = K(p, k), .type = MOE_F_INTLIST, .min = (lo), .max = (hi), .range = true }
#define MAP(p, k, s) { .key = K(p, k), .type = MOE_F_MAP, .sub = (s) }
/* a section: a top-level map */
#define SECTION(k, s) { .key = MOE_SK_##k, .type = MOE_F_MAP, .sub = (s) }
#define END { .key = NULL }
/* A string that lands in an #SBATCH line: only what Slurm takes there. */
#define SBATCH_STR(name, re, what)                                                             \
    { .key = (name), .type = MOE_F_STR, .pattern = (re), .allows = (what) }

/* Enum values come from the tables next to each enum (model.h, study.h),
 * the same ones the reader and the JSON writer use. */
static const char *const optimizers[] = { "adam", "sgd", NULL };
/* Megatron's CUDA-graph module names (its --recompute-modules names are
 * fit/memory.h's, which the memory model reads), and its full_iteration
 * scope, the whole step in one graph (study_internal.h moe_graphs_full_iteration). */
static const char *const graph_modules[] = { "attn", "mlp", "moe", "moe_router",
                                             "moe_preprocess", "full_iteration", NULL };

static const struct moe_field model_keys[] = {
    STR(MODEL, PRESET),
    INT(MODEL, NUM_LAYERS, 1, 1024), INT(MODEL, HIDDEN, 1, 1 << 20),
    INT(MODEL, FFN_HIDDEN, 0, 1 << 22), INT(MODEL, MOE_FFN_HIDDEN, 1, 1 << 22),
    INT(MODEL, NUM_EXPERTS, 1, 65536), INT(MODEL, TOPK, 1, 1024),
    INT(MODEL, SHARED_EXPERT_FFN, 0, 1 << 22), INT(MODEL, FIRST_DENSE_LAYERS, 0, 1024),
    INT(MODEL, MTP_LAYERS, 0, 16), ENUM(MODEL, ROUTER_SCORE, moe_router_score_names),
    INT(MODEL, ROUTER_GROUPS, 0, 65536), INT(MODEL, ROUTER_GROUP_TOPK, 0, 65536),
    ENUM(MODEL, ATTENTION, moe_attention_names), INT(MODEL, NUM_HEADS, 1, 4096),
    INT(MODEL, NUM_QUERY_GROUPS, 1, 4096), INT(MODEL, HEAD_DIM, 1, 4096),
    BOOL(MODEL, QK_LAYERNORM),
    INT(MODEL, Q_LORA_RANK, 0, 1 << 20), INT(MODEL, KV_LORA_RANK, 0, 1 << 20),
    INT(MODEL, QK_HEAD_DIM, 0, 4096), INT(MODEL, QK_POS_HEAD_DIM, 0, 4096),
    INT(MODEL, V_HEAD_DIM, 0, 4096),
    INT(MODEL, VOCAB, 1, 1 << 24), BOOL(MODEL, SWIGLU), BOOL(MODEL, UNTIE_EMBEDDINGS),
    END
};

/* Slurm's names and time formats (sbatch(1): --partition takes a comma
 * list; --time takes M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED). */
#define SLURM_NAME "[a-z0-9_.-]+"
#define NAME_RE "^[a-z0-9][a-z0-9_.+-]{0,62}$"
#define PARTITION_RE "^" SLURM_NAME "(," SLURM_NAME ")*$"
#define ACCOUNT_RE "^" SLURM_NAME "$"
#define TIME_RE "^([0-9]+(-[0-9]+)?(:[0-9]+){0,2}|unlimited|infinite)$"
#define TIME_ALLOWS "a Slurm time limit: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or unlimited"
/* --reservation takes a comma list of names, as --partition does;
 * --constraint a feature expression: names joined by & (and), | (or) and
 * , , a node count after *, [ ] for matching or and multiple counts, ( )
 * for grouping (sbatch(1), "-C, --constraint"). */
#define RESERVATION_RE PARTITION_RE
#define CONSTRAINT_RE "^[][a-z0-9_.()&|,*-]+$"

static const struct moe_field container_keys[] = {
    STR(CLUSTER_CONTAINER, IMAGE),
    /* pyxis takes its mounts as one option's value: a YAML list in its
     * place is the likely slip, and the message shows the form */
    { .key = K(CLUSTER_CONTAINER, MOUNTS), .type = MOE_F_STR,
      .allows = "the mounts are one comma-separated string of SRC:DST[:FLAGS] entries, as "
                "pyxis' --container-mounts takes them, e.g. "
                "\"/lustre:/lustre,/scratch/data:/data:ro\"" },
    STR(CLUSTER_CONTAINER, WORKDIR), END
};
static const struct moe_field launcher_keys[] = {
    STR(CLUSTER_LAUNCHER, COMMAND),
    { .key = K(CLUSTER_LAUNCHER, EXTRA_ARGS), .type = MOE_F_ARGS },
    END
};

#define STAGE_TIME(k) SBATCH_STR(K(CLUSTER_STAGE_TIME_LIMIT, k), TIME_RE, TIME_ALLOWS)
static const struct moe_field stage_time_keys[] = {
    STAGE_TIME(CONTRACT), STAGE_TIME(FIT), STAGE_TIME(SCALE), STAGE_TIME(PROFILE),
    STAGE_TIME(RETUNE), STAGE_TIME(VALIDATE), END
};

static const struct moe_field cluster_keys[] = {
    ENUM(CLUSTER, GPU, moe_gpu_names), INT(CLUSTER, GPU_MEMORY_GIB, 1, 4096),
    INT(CLUSTER, GPUS_PER_NODE, 1, 64), INT(CLUSTER, NVLINK_DOMAIN, 1, 1 << 16),
    INT(CLUSTER, NODES, 1, 1 << 20),
    SBATCH_STR(K(CLUSTER, PARTITION), PARTITION_RE,
               "a comma-separated list of Slurm partition names (letters, digits, _ . -)"),
    SBATCH_STR(K(CLUSTER, ACCOUNT), ACCOUNT_RE, "a Slurm account name (letters, digits, _ . -)"),
    SBATCH_STR(K(CLUSTER, TIME_LIMIT), TIME_RE, TIME_ALLOWS),
    MAP(CLUSTER, STAGE_TIME_LIMIT, stage_time_keys),
    SBATCH_STR(K(CLUSTER, QOS), ACCOUNT_RE, "a Slurm QOS name (letters, digits, _ . -)"),
    SBATCH_STR(K(CLUSTER, RESERVATION), RESERVATION_RE,
               "a comma-separated list of Slurm reservation names (letters, digits, _ . -)"),
    SBATCH_STR(K(CLUSTER, CONSTRAINT), CONSTRAINT_RE,
               "a Slurm feature expression: feature names (letters, digits, _ . -) joined by "
               "& | , with *COUNT, [ ] and ( ) as sbatch --constraint takes them"),
    { .key = K(CLUSTER, ENV), .type = MOE_F_STRMAP },
    INT(CLUSTER, MAX_ARRAY_SIZE, 1, 4000001), BOOL(CLUSTER, EXCLUSIVE),
    ENUM(CLUSTER, PLUGIN, moe_plugin_mode_names),
    MAP(CLUSTER, CONTAINER, container_keys), MAP(CLUSTER, LAUNCHER, launcher_keys),
    NUM(CLUSTER, ACHIEVABLE_TFLOPS_BF16), NUM(CLUSTER, ACHIEVABLE_TFLOPS_FP8),
    NUM(CLUSTER, NVLINK_GBPS), NUM(CLUSTER, INTERNODE_GBPS), NUM(CLUSTER, HOST_OVERHEAD_US),
    NUM(CLUSTER, HOST_EXPERT_US), NUM(CLUSTER, HOST_ETP_US), NUM(CLUSTER, ROUTE_NS),
    END
};

/* Megatron's --lr-decay-style choices (the argparse dumps, all three
 * dialects) but WSD, whose decay phase needs --lr-wsd-decay-* flags that
 * moeflow does not emit. */
const char *const moe_lr_schedule_names[] = { "constant", "linear", "cosine",
                                              "inverse-square-root", NULL };

static const struct moe_field workload_keys[] = {
    INT(WORKLOAD, SEQ_LEN, 1, 1 << 24), INT(WORKLOAD, MBS, 1, 1 << 16),
    INT(WORKLOAD, GBS, 1, 1 << 26), STR(WORKLOAD, DATA), ENUM(WORKLOAD, OPTIMIZER, optimizers),
    ENUM(WORKLOAD, PRECISION, moe_precision_names), ENUM(WORKLOAD, ROUTING, moe_routing_names),
    NUM(WORKLOAD, CAPACITY_FACTOR), BOOL(WORKLOAD, DISTRIBUTED_OPTIMIZER),
    BOOL(WORKLOAD, GRAD_REDUCE_IN_BF16),
    NUM(WORKLOAD, LR), ENUM(WORKLOAD, LR_SCHEDULE, moe_lr_schedule_names),
    INT(WORKLOAD, LR_WARMUP_ITERS, 0, 1 << 30), INT(WORKLOAD, LR_DECAY_ITERS, 1, 1 << 30),
    NUM(WORKLOAD, MIN_LR), NUM(WORKLOAD, AUX_LOSS_COEFF), STR(WORKLOAD, TOKENIZER),
    END
};

static const struct moe_field software_keys[] = {
    ENUM(SOFTWARE, MEGATRON, moe_dialect_names), BOOL(SOFTWARE, DEEPEP), BOOL(SOFTWARE, HYBRIDEP),
    STR(SOFTWARE, TRANSFORMER_ENGINE), BOOL(SOFTWARE, APEX), END
};

static const struct moe_field baseline_keys[] = {
    INT(BASELINE, TP, 1, 1024), INT(BASELINE, CP, 1, 1024), INT(BASELINE, PP, 1, 1024),
    INT(BASELINE, VPP, 1, 1024), INT(BASELINE, EP, 1, 65536), INT(BASELINE, ETP, 1, 1024),
    STR(BASELINE, PIPELINE_LAYOUT), ENUM(BASELINE, DISPATCHER, moe_dispatcher_names),
    BOOL(BASELINE, EP_OVERLAP), BOOL(BASELINE, SHARED_EXPERT_OVERLAP), BOOL(BASELINE, DELAY_WGRAD),
    BOOL(BASELINE, OVERLAP_GRAD_REDUCE), BOOL(BASELINE, TP_COMM_OVERLAP),
    BOOL(BASELINE, MANUAL_GC), ENUM(BASELINE, RECOMPUTE, moe_recompute_names),
    STRLIST(BASELINE, RECOMPUTE_MODULES, moe_recompute_module_names),
    STRLIST(BASELINE, CUDA_GRAPH_MODULES, graph_modules),
    INT(BASELINE, DISPATCHER_SMS, 0, MOE_DISPATCHER_SMS_MAX),
    END
};

static const struct moe_field measure_keys[] = {
    INT(MEASURE, WARMUP, 0, 1000000), INT(MEASURE, SCREEN_STEPS, 1, 1000000),
    INT(MEASURE, VALIDATE_STEPS, 1, 1000000),
    RANGE(MEASURE, REPORT_WINDOW, 1, 1000000), RANGE(MEASURE, PROFILE_STEPS, 1, 1000000),
    ENUM(MEASURE, PROFILER, moe_profiler_names), INT(MEASURE, LOG_INTERVAL, 1, 1000000),
    END
};

static const struct moe_field scale_keys[] = {
    INT(SCALE, TOP_K, 1, 64), INT(SCALE, MAX_LAYOUTS, 1, 64),
    END
};

static const struct moe_field validation_keys[] = {
    BOOL(VALIDATION, CHECKPOINT),
    END
};

static const struct moe_field retune_keys[] = {
    STRLIST(RETUNE, AXES, moe_retune_axes),
    { .key = K(RETUNE, MBS), .type = MOE_F_INTLIST, .min = 1, .max = 1 << 16 },
    { .key = K(RETUNE, DISPATCHER_SMS), .type = MOE_F_INTLIST, .min = 2,
      .max = MOE_DISPATCHER_SMS_MAX },
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
    SBATCH_STR(MOE_SK_NAME, NAME_RE, "1 to 63 letters, digits and _ . + -, starting with a letter "
               "or digit (it names the Slurm jobs)"),
    SECTION(MODEL, model_keys), SECTION(CLUSTER, cluster_keys),
    SECTION(WORKLOAD, workload_keys), SECTION(SOFTWARE, software_keys),
    SECTION(BASELINE, baseline_keys), SECTION(MEASURE, measure_keys),
    SECTION(SCALE, scale_keys), SECTION(RETUNE, retune_keys), SECTION(VALIDATION, validation_keys),
    END
};
