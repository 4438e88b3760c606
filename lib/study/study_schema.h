/* The study schema as data: which keys each section accepts and what type
 * each value has.  The reader walks the YAML against it, so an unknown key or
 * a wrong type is caught in one place with its position. */
#ifndef MOEFLOW_STUDY_SCHEMA_H
#define MOEFLOW_STUDY_SCHEMA_H

#include <stdbool.h>

/* Every key of a study, spelled here once: MOE_SK_<SECTION>_<KEY> is its
 * dotted path as the reader and its messages name it, MOE_SK_KEY(SECTION,
 * KEY) the key alone, as the schema below, the canonical writer
 * (study_json.c) and the contract (study_contract.c) write it.  A key
 * renamed here is renamed in all of them; doc/moeflow-study.5 and the
 * golden studies then disagree, and test_study and gen-golden.sh fail
 * until they are changed too (the row study-key-rename of
 * tests/mutation/mutations.tsv). */
#define MOE_SK_NAME "name"
#define MOE_SK_MODEL "model"
#define MOE_SK_CLUSTER "cluster"
#define MOE_SK_WORKLOAD "workload"
#define MOE_SK_SOFTWARE "software"
#define MOE_SK_BASELINE "baseline"
#define MOE_SK_MEASURE "measure"
#define MOE_SK_SCALE "scale"
#define MOE_SK_RETUNE "retune"
#define MOE_SK_VALIDATION "validation"

#define MOE_SK_MODEL_PRESET MOE_SK_MODEL ".preset"
#define MOE_SK_MODEL_NUM_LAYERS MOE_SK_MODEL ".num_layers"
#define MOE_SK_MODEL_HIDDEN MOE_SK_MODEL ".hidden"
#define MOE_SK_MODEL_FFN_HIDDEN MOE_SK_MODEL ".ffn_hidden"
#define MOE_SK_MODEL_MOE_FFN_HIDDEN MOE_SK_MODEL ".moe_ffn_hidden"
#define MOE_SK_MODEL_NUM_EXPERTS MOE_SK_MODEL ".num_experts"
#define MOE_SK_MODEL_TOPK MOE_SK_MODEL ".topk"
#define MOE_SK_MODEL_SHARED_EXPERT_FFN MOE_SK_MODEL ".shared_expert_ffn"
#define MOE_SK_MODEL_FIRST_DENSE_LAYERS MOE_SK_MODEL ".first_dense_layers"
#define MOE_SK_MODEL_MTP_LAYERS MOE_SK_MODEL ".mtp_layers"
#define MOE_SK_MODEL_ROUTER_SCORE MOE_SK_MODEL ".router_score"
#define MOE_SK_MODEL_ROUTER_GROUPS MOE_SK_MODEL ".router_groups"
#define MOE_SK_MODEL_ROUTER_GROUP_TOPK MOE_SK_MODEL ".router_group_topk"
#define MOE_SK_MODEL_ATTENTION MOE_SK_MODEL ".attention"
#define MOE_SK_MODEL_NUM_HEADS MOE_SK_MODEL ".num_heads"
#define MOE_SK_MODEL_NUM_QUERY_GROUPS MOE_SK_MODEL ".num_query_groups"
#define MOE_SK_MODEL_HEAD_DIM MOE_SK_MODEL ".head_dim"
#define MOE_SK_MODEL_QK_LAYERNORM MOE_SK_MODEL ".qk_layernorm"
#define MOE_SK_MODEL_Q_LORA_RANK MOE_SK_MODEL ".q_lora_rank"
#define MOE_SK_MODEL_KV_LORA_RANK MOE_SK_MODEL ".kv_lora_rank"
#define MOE_SK_MODEL_QK_HEAD_DIM MOE_SK_MODEL ".qk_head_dim"
#define MOE_SK_MODEL_QK_POS_HEAD_DIM MOE_SK_MODEL ".qk_pos_head_dim"
#define MOE_SK_MODEL_V_HEAD_DIM MOE_SK_MODEL ".v_head_dim"
#define MOE_SK_MODEL_VOCAB MOE_SK_MODEL ".vocab"
#define MOE_SK_MODEL_SWIGLU MOE_SK_MODEL ".swiglu"
#define MOE_SK_MODEL_UNTIE_EMBEDDINGS MOE_SK_MODEL ".untie_embeddings"

#define MOE_SK_CLUSTER_GPU MOE_SK_CLUSTER ".gpu"
#define MOE_SK_CLUSTER_GPU_MEMORY_GIB MOE_SK_CLUSTER ".gpu_memory_gib"
#define MOE_SK_CLUSTER_GPUS_PER_NODE MOE_SK_CLUSTER ".gpus_per_node"
#define MOE_SK_CLUSTER_NVLINK_DOMAIN MOE_SK_CLUSTER ".nvlink_domain"
#define MOE_SK_CLUSTER_NODES MOE_SK_CLUSTER ".nodes"
#define MOE_SK_CLUSTER_PARTITION MOE_SK_CLUSTER ".partition"
#define MOE_SK_CLUSTER_ACCOUNT MOE_SK_CLUSTER ".account"
#define MOE_SK_CLUSTER_TIME_LIMIT MOE_SK_CLUSTER ".time_limit"
#define MOE_SK_CLUSTER_QOS MOE_SK_CLUSTER ".qos"
#define MOE_SK_CLUSTER_RESERVATION MOE_SK_CLUSTER ".reservation"
#define MOE_SK_CLUSTER_CONSTRAINT MOE_SK_CLUSTER ".constraint"
/* one key per stage (core/stage.h's names) */
#define MOE_SK_CLUSTER_STAGE_TIME_LIMIT MOE_SK_CLUSTER ".stage_time_limit"
#define MOE_SK_CLUSTER_STAGE_TIME_LIMIT_CONTRACT MOE_SK_CLUSTER_STAGE_TIME_LIMIT ".contract"
#define MOE_SK_CLUSTER_STAGE_TIME_LIMIT_FIT MOE_SK_CLUSTER_STAGE_TIME_LIMIT ".fit"
#define MOE_SK_CLUSTER_STAGE_TIME_LIMIT_SCALE MOE_SK_CLUSTER_STAGE_TIME_LIMIT ".scale"
#define MOE_SK_CLUSTER_STAGE_TIME_LIMIT_PROFILE MOE_SK_CLUSTER_STAGE_TIME_LIMIT ".profile"
#define MOE_SK_CLUSTER_STAGE_TIME_LIMIT_RETUNE MOE_SK_CLUSTER_STAGE_TIME_LIMIT ".retune"
#define MOE_SK_CLUSTER_STAGE_TIME_LIMIT_VALIDATE MOE_SK_CLUSTER_STAGE_TIME_LIMIT ".validate"
#define MOE_SK_CLUSTER_ENV MOE_SK_CLUSTER ".env"
#define MOE_SK_CLUSTER_MAX_ARRAY_SIZE MOE_SK_CLUSTER ".max_array_size"
#define MOE_SK_CLUSTER_EXCLUSIVE MOE_SK_CLUSTER ".exclusive"
#define MOE_SK_CLUSTER_CONTAINER MOE_SK_CLUSTER ".container"
#define MOE_SK_CLUSTER_CONTAINER_IMAGE MOE_SK_CLUSTER_CONTAINER ".image"
#define MOE_SK_CLUSTER_CONTAINER_MOUNTS MOE_SK_CLUSTER_CONTAINER ".mounts"
#define MOE_SK_CLUSTER_CONTAINER_WORKDIR MOE_SK_CLUSTER_CONTAINER ".workdir"
#define MOE_SK_CLUSTER_PLUGIN MOE_SK_CLUSTER ".plugin"
#define MOE_SK_CLUSTER_LAUNCHER MOE_SK_CLUSTER ".launcher"
#define MOE_SK_CLUSTER_LAUNCHER_COMMAND MOE_SK_CLUSTER_LAUNCHER ".command"
#define MOE_SK_CLUSTER_LAUNCHER_EXTRA_ARGS MOE_SK_CLUSTER_LAUNCHER ".extra_args"
#define MOE_SK_CLUSTER_ACHIEVABLE_TFLOPS_BF16 MOE_SK_CLUSTER ".achievable_tflops_bf16"
#define MOE_SK_CLUSTER_ACHIEVABLE_TFLOPS_FP8 MOE_SK_CLUSTER ".achievable_tflops_fp8"
#define MOE_SK_CLUSTER_NVLINK_GBPS MOE_SK_CLUSTER ".nvlink_gbps"
#define MOE_SK_CLUSTER_INTERNODE_GBPS MOE_SK_CLUSTER ".internode_gbps"
#define MOE_SK_CLUSTER_HOST_OVERHEAD_US MOE_SK_CLUSTER ".host_overhead_us"
#define MOE_SK_CLUSTER_HOST_EXPERT_US MOE_SK_CLUSTER ".host_expert_us"
#define MOE_SK_CLUSTER_HOST_ETP_US MOE_SK_CLUSTER ".host_etp_us"
#define MOE_SK_CLUSTER_ROUTE_NS MOE_SK_CLUSTER ".route_ns"

#define MOE_SK_WORKLOAD_SEQ_LEN MOE_SK_WORKLOAD ".seq_len"
#define MOE_SK_WORKLOAD_MBS MOE_SK_WORKLOAD ".mbs"
#define MOE_SK_WORKLOAD_GBS MOE_SK_WORKLOAD ".gbs"
#define MOE_SK_WORKLOAD_DATA MOE_SK_WORKLOAD ".data"
#define MOE_SK_WORKLOAD_OPTIMIZER MOE_SK_WORKLOAD ".optimizer"
#define MOE_SK_WORKLOAD_PRECISION MOE_SK_WORKLOAD ".precision"
#define MOE_SK_WORKLOAD_ROUTING MOE_SK_WORKLOAD ".routing"
#define MOE_SK_WORKLOAD_CAPACITY_FACTOR MOE_SK_WORKLOAD ".capacity_factor"
#define MOE_SK_WORKLOAD_DISTRIBUTED_OPTIMIZER MOE_SK_WORKLOAD ".distributed_optimizer"
#define MOE_SK_WORKLOAD_GRAD_REDUCE_IN_BF16 MOE_SK_WORKLOAD ".grad_reduce_in_bf16"
/* the training semantics a study can state (issue 41): unset, each is a
 * reason the label gives for benchmark-only */
#define MOE_SK_WORKLOAD_LR MOE_SK_WORKLOAD ".lr"
#define MOE_SK_WORKLOAD_LR_SCHEDULE MOE_SK_WORKLOAD ".lr_schedule"
#define MOE_SK_WORKLOAD_LR_WARMUP_ITERS MOE_SK_WORKLOAD ".lr_warmup_iters"
#define MOE_SK_WORKLOAD_LR_DECAY_ITERS MOE_SK_WORKLOAD ".lr_decay_iters"
#define MOE_SK_WORKLOAD_MIN_LR MOE_SK_WORKLOAD ".min_lr"
#define MOE_SK_WORKLOAD_AUX_LOSS_COEFF MOE_SK_WORKLOAD ".aux_loss_coeff"
#define MOE_SK_WORKLOAD_TOKENIZER MOE_SK_WORKLOAD ".tokenizer"

#define MOE_SK_SOFTWARE_MEGATRON MOE_SK_SOFTWARE ".megatron"
#define MOE_SK_SOFTWARE_DEEPEP MOE_SK_SOFTWARE ".deepep"
#define MOE_SK_SOFTWARE_HYBRIDEP MOE_SK_SOFTWARE ".hybridep"
#define MOE_SK_SOFTWARE_TRANSFORMER_ENGINE MOE_SK_SOFTWARE ".transformer_engine"
#define MOE_SK_SOFTWARE_APEX MOE_SK_SOFTWARE ".apex"

#define MOE_SK_BASELINE_TP MOE_SK_BASELINE ".tp"
#define MOE_SK_BASELINE_CP MOE_SK_BASELINE ".cp"
#define MOE_SK_BASELINE_PP MOE_SK_BASELINE ".pp"
#define MOE_SK_BASELINE_VPP MOE_SK_BASELINE ".vpp"
#define MOE_SK_BASELINE_EP MOE_SK_BASELINE ".ep"
#define MOE_SK_BASELINE_ETP MOE_SK_BASELINE ".etp"
#define MOE_SK_BASELINE_PIPELINE_LAYOUT MOE_SK_BASELINE ".pipeline_layout"
#define MOE_SK_BASELINE_DISPATCHER MOE_SK_BASELINE ".dispatcher"
#define MOE_SK_BASELINE_EP_OVERLAP MOE_SK_BASELINE ".ep_overlap"
#define MOE_SK_BASELINE_SHARED_EXPERT_OVERLAP MOE_SK_BASELINE ".shared_expert_overlap"
#define MOE_SK_BASELINE_DELAY_WGRAD MOE_SK_BASELINE ".delay_wgrad"
#define MOE_SK_BASELINE_OVERLAP_GRAD_REDUCE MOE_SK_BASELINE ".overlap_grad_reduce"
#define MOE_SK_BASELINE_TP_COMM_OVERLAP MOE_SK_BASELINE ".tp_comm_overlap"
#define MOE_SK_BASELINE_MANUAL_GC MOE_SK_BASELINE ".manual_gc"
#define MOE_SK_BASELINE_RECOMPUTE MOE_SK_BASELINE ".recompute"
#define MOE_SK_BASELINE_RECOMPUTE_MODULES MOE_SK_BASELINE ".recompute_modules"
#define MOE_SK_BASELINE_CUDA_GRAPH_MODULES MOE_SK_BASELINE ".cuda_graph_modules"
#define MOE_SK_BASELINE_DISPATCHER_SMS MOE_SK_BASELINE ".dispatcher_sms"

#define MOE_SK_MEASURE_WARMUP MOE_SK_MEASURE ".warmup"
#define MOE_SK_MEASURE_SCREEN_STEPS MOE_SK_MEASURE ".screen_steps"
#define MOE_SK_MEASURE_VALIDATE_STEPS MOE_SK_MEASURE ".validate_steps"
#define MOE_SK_MEASURE_REPORT_WINDOW MOE_SK_MEASURE ".report_window"
#define MOE_SK_MEASURE_PROFILE_STEPS MOE_SK_MEASURE ".profile_steps"
#define MOE_SK_MEASURE_PROFILER MOE_SK_MEASURE ".profiler"
#define MOE_SK_MEASURE_LOG_INTERVAL MOE_SK_MEASURE ".log_interval"

#define MOE_SK_SCALE_TOP_K MOE_SK_SCALE ".top_k"
#define MOE_SK_SCALE_MAX_LAYOUTS MOE_SK_SCALE ".max_layouts"

#define MOE_SK_RETUNE_AXES MOE_SK_RETUNE ".axes"
#define MOE_SK_RETUNE_MBS MOE_SK_RETUNE ".mbs"
#define MOE_SK_RETUNE_DISPATCHER_SMS MOE_SK_RETUNE ".dispatcher_sms"

#define MOE_SK_VALIDATION_CHECKPOINT MOE_SK_VALIDATION ".checkpoint"

/* The last segment of a path: "baseline.ep_overlap" minus "baseline.". */
#define MOE_SK_KEY(parent, key) (&(MOE_SK_##parent##_##key)[sizeof(MOE_SK_##parent)])

/* MOE_F_STRMAP: a mapping of free names to strings (cluster.env); its
 * names are the reader's to check.  MOE_F_ARGS: a list of free strings,
 * in order, repeats allowed (cluster.launcher.extra_args). */
enum moe_ftype { MOE_F_INT, MOE_F_NUM, MOE_F_STR, MOE_F_BOOL, MOE_F_ENUM, MOE_F_STRLIST,
                 MOE_F_INTLIST, MOE_F_MAP, MOE_F_STRMAP, MOE_F_ARGS };

struct moe_field {
    const char *key;
    const struct moe_field *sub;        /* MOE_F_MAP: the nested keys, NULL-key ended */
    const char *const *choices;         /* MOE_F_ENUM, MOE_F_STRLIST: NULL-ended */
    /* MOE_F_STR whose value lands in an #SBATCH line: a POSIX extended
     * regular expression (matched without case) the whole value must
     * match, what it allows in words, and sbatch's own rule on top
     * (core/shquote.h moe_sbatch_quote). */
    const char *pattern;
    /* what the pattern allows in words; on a string without a pattern,
     * its form, told when a list or mapping stands in its place */
    const char *allows;
    long min, max;                      /* MOE_F_INT, MOE_F_INTLIST (max 0 = none) */
    enum moe_ftype type;
    bool range;                         /* MOE_F_INTLIST: [first, last], not a set */
};

/* Every string of a study, key or value, is free of control characters
 * (core/text.h); every list but a [first, last] range holds each value
 * once. */

extern const struct moe_field moe_study_schema[];

#endif
