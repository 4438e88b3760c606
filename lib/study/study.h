/* A study: one YAML file that says what to tune, on what, and how to measure
 * it.  moe_study_load() reads it with libyaml, checks every key and value, and
 * keeps the resolved study both as structs and as canonical JSON. */
#ifndef MOEFLOW_STUDY_H
#define MOEFLOW_STUDY_H

#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "core/error.h"
#include "core/model.h"
#include "core/retune.h"
#include "core/stage.h"
#include "core/strv.h"
#include "fit/gpu.h"

/* The most SMs a study may give the flex dispatcher's kernels
 * (baseline.dispatcher_sms, retune.dispatcher_sms): more than any GPU
 * moeflow knows has (B200: 148), so a larger count is a typo. */
#define MOE_DISPATCHER_SMS_MAX 256

/* The longest string a study holds, in bytes: each reaches a job as one
 * argument (or one word of the launcher's), and Linux's execve refuses an
 * argument longer than MAX_ARG_STRLEN (32 pages, 128 KiB).  Longer is
 * refused with this limit named (study_yaml.c), never cut. */
#define MOE_STUDY_STR_MAX 131072
/* The most values a list of a study holds: more than any list's choices
 * (each given once); retune.mbs over it is refused with the limit named. */
#define MOE_STUDY_LIST_MAX 16
/* cluster.env: at most 64 variables, each name at most 128 bytes and each
 * value 4 KiB: every one is written into every candidate's env=() line
 * and sealed in every run's contract, so they are bounded far below the
 * string limit (a script of many candidates stays readable). */
#define MOE_STUDY_ENV_MAX 64
#define MOE_STUDY_ENV_NAME_MAX 128
#define MOE_STUDY_ENV_VALUE_MAX 4096
/* cluster.launcher.extra_args: at most 256 words */
#define MOE_STUDY_ARGS_MAX 256

/* Each enum with its names (core/enum_names.h); the tables are in study.c
 * (the GPU types' in fit/gpu.h).  The name functions below return
 * MOE_ENUM_UNKNOWN ("?") for a value outside the enum. */

#define MOE_DIALECT_LIST(X)                                                                    \
    X(MOE_DIALECT_CORE_0_16, "core-0.16") X(MOE_DIALECT_CORE_0_19, "core-0.19")                \
    X(MOE_DIALECT_BRIDGE_PIN, "bridge-pin")
MOE_ENUM_DECLARE(moe_dialect, MOE_DIALECT_LIST, MOE_DIALECT_COUNT, moe_dialect_names);

#define MOE_DISPATCHER_LIST(X)                                                                 \
    X(MOE_DISPATCH_ALLTOALL, "alltoall") X(MOE_DISPATCH_ALLGATHER, "allgather")                \
    X(MOE_DISPATCH_FLEX_DEEPEP, "flex-deepep") X(MOE_DISPATCH_FLEX_HYBRIDEP, "flex-hybridep")
MOE_ENUM_DECLARE(moe_dispatcher, MOE_DISPATCHER_LIST, MOE_DISPATCHER_COUNT, moe_dispatcher_names);

#define MOE_PRECISION_LIST(X)                                                                  \
    X(MOE_PREC_BF16, "bf16") X(MOE_PREC_FP8_TENSORWISE, "fp8-tensorwise")                      \
    X(MOE_PREC_FP8_DELAYED, "fp8-delayed") X(MOE_PREC_FP8_BLOCKWISE, "fp8-blockwise")          \
    X(MOE_PREC_MXFP8, "mxfp8") X(MOE_PREC_NVFP4, "nvfp4")
MOE_ENUM_DECLARE(moe_precision, MOE_PRECISION_LIST, MOE_PRECISION_COUNT, moe_precision_names);

#define MOE_PROFILER_LIST(X) X(MOE_PROFILER_NSYS, "nsys") X(MOE_PROFILER_PYTORCH, "pytorch")
MOE_ENUM_DECLARE(moe_profiler, MOE_PROFILER_LIST, MOE_PROFILER_COUNT, moe_profiler_names);

#define MOE_RECOMPUTE_LIST(X)                                                                  \
    X(MOE_RECOMPUTE_NONE, "none") X(MOE_RECOMPUTE_SELECTIVE, "selective")                      \
    X(MOE_RECOMPUTE_FULL, "full")
MOE_ENUM_DECLARE(moe_recompute, MOE_RECOMPUTE_LIST, MOE_RECOMPUTE_COUNT, moe_recompute_names);

/* cluster.plugin: whether the cluster has moeflow's SPANK plugin.  auto:
 * gen asks sbatch (its --help lists --moe-stage); required: the scripts use
 * the plugin's --moe-* options; none: the scripts check the contract with
 * `moeflow contract` themselves. */
#define MOE_PLUGIN_MODE_LIST(X)                                                                \
    X(MOE_PLUGIN_AUTO, "auto") X(MOE_PLUGIN_REQUIRED, "required") X(MOE_PLUGIN_NONE, "none")
MOE_ENUM_DECLARE(moe_plugin_mode, MOE_PLUGIN_MODE_LIST, MOE_PLUGIN_MODE_COUNT,
                 moe_plugin_mode_names);


/* Names from a fixed vocabulary (the schema's choices): each v[i] points
 * at a static name, never at a copy. */
struct moe_strlist {
    int n;
    const char *v[MOE_STUDY_LIST_MAX];
};

struct moe_cluster {
    enum moe_gpu gpu;
    int gpu_memory_gib;
    int gpus_per_node;
    int nvlink_domain;            /* GPUs per NVLink domain: 8 for HGX, 72 for NVL72 */
    int nodes;
    /* Every string of a study is its own heap copy, as long as its value
     * (never cut; "" when unset), freed by moe_study_free(). */
    char *partition;
    char *account;
    char *time_limit;
    char *stage_time_limit[MOE_STAGE_COUNT];   /* by stage; "": time_limit */
    char *qos;
    char *reservation;
    char *constraint;
    /* cluster.env: the trainer's NAME=value entries, sorted by NAME; none
     * is a variable moeflow sets itself */
    struct moe_strv env;
    /* cluster.launcher.extra_args: Megatron words after moeflow's own,
     * every flag known to the dialect and none that moeflow emits */
    struct moe_strv extra_args;
    int max_array_size;           /* Slurm MaxArraySize; 0 = unset */
    bool exclusive;               /* timing stages take whole nodes (default) */
    char *container_image;        /* empty: no container */
    char *container_mounts;       /* pyxis --container-mounts: SRC:DST[:FLAGS],... */
    char *container_workdir;      /* absolute; empty: the study directory */
    enum moe_plugin_mode plugin;  /* default MOE_PLUGIN_AUTO */
    char *launcher;               /* trainer command, split on blanks */
    /* step-time model settings; < 0 (unset) = the GPU type's default */
    double tflops_bf16, tflops_fp8, nvlink_gbps, internode_gbps, host_us, host_expert_us,
        host_etp_us, route_ns;
};

struct moe_software {
    enum moe_dialect dialect;
    bool deepep;
    bool hybridep;
    char *transformer_engine;     /* version, e.g. "2.8"; empty: none */
    bool apex;                    /* default: present exactly when TE is */
};

/* Whether an owned string of the study is set: not NULL (a study not
 * loaded) and not empty. */
static inline bool moe_study_str_set(const char *s)
{
    return s && s[0] != '\0';
}

/* The configuration every candidate starts from: a layout plus tuning knobs. */
struct moe_baseline {
    struct moe_layout layout;
    enum moe_dispatcher dispatcher;
    bool ep_overlap;
    bool shared_expert_overlap;
    bool delay_wgrad;
    bool overlap_grad_reduce;
    bool tp_comm_overlap;
    bool manual_gc;
    enum moe_recompute recompute;
    struct moe_strlist recompute_modules;
    struct moe_strlist cuda_graph_modules;   /* empty: no CUDA graphs */
    /* SMs the flex dispatcher's DeepEP/HybridEP kernels take; 0: the
     * backend's default (megatron_args.c says which) */
    int dispatcher_sms;
    enum moe_precision precision;
    /* Megatron layout string; empty = even split.  The study's baseline
     * owns it; a run's copy of the baseline (megatron_args.h) borrows it. */
    char *pipeline_layout;
};

/* The training step (1-based) in which Megatron captures its CUDA graphs:
 * cuda_graph_warmup_steps + 1, with its default of 3 (transformer_config.py
 * cuda_graph_warmup_steps: int = 3), which moeflow never changes.  Where
 * each implementation captures: megatron_rules.c, the capture rules. */
#define MOE_GRAPH_CAPTURE_STEP 4

/* workload.lr_schedule: Megatron's --lr-decay-style values moeflow emits
 * (study_schema.c says why WSD is not one). */
extern const char *const moe_lr_schedule_names[];

/* What the study states of its real training (issue 41).  Unstated, a run
 * takes Megatron's defaults: peak LR 1e-4 (moeflow's), linear decay over
 * the run's own few steps, no load-balancing loss (coefficient 0) and the
 * null tokenizer; each is then a reason its label gives for
 * benchmark-only (study_contract.c, moe_study_label). */
struct moe_training {
    double lr;                    /* peak LR; 0: not stated (1e-4 runs) */
    int lr_schedule;              /* moe_lr_schedule_names' index; -1: not stated */
    int lr_warmup_iters;          /* 0: none */
    int lr_decay_iters;           /* 0: not stated (Megatron decays over train_iters) */
    double min_lr;                /* Megatron's default 0 */
    double aux_loss_coeff;        /* < 0: not stated (Megatron's default 0 runs) */
    char *tokenizer;              /* HuggingFace name or path; "": null tokenizer */
};

struct moe_measure {
    int warmup;
    int screen_steps;
    int validate_steps;
    int window_first, window_last;
    int profile_first, profile_last;
    enum moe_profiler profiler;
    int log_interval;
};

struct moe_study {
    char *path;
    char *name;
    struct moe_model model;
    struct moe_cluster cluster;
    struct moe_workload workload;
    char *data_path;                         /* empty: mock data */
    char *optimizer;
    bool distributed_optimizer;              /* --use-distributed-optimizer (default) */
    bool grad_reduce_in_bf16;                /* --grad-reduce-in-bf16: main grads in bf16 */
    struct moe_training training;
    struct moe_software software;
    struct moe_baseline baseline;
    struct moe_measure measure;
    struct moe_strlist retune_axes;
    int retune_mbs[MOE_STUDY_LIST_MAX];
    int retune_mbs_n;
    /* retune.dispatcher_sms: the SM counts the dispatcher_sms axis screens */
    int retune_sms[MOE_STUDY_LIST_MAX];
    int retune_sms_n;
    bool retune_sms_set;          /* the study wrote them (else the defaults) */
    int scale_top_k;              /* scale: the first K ranked layouts run, band or not */
    int scale_max_layouts;        /* scale: at most this many layouts besides the baseline */
    bool validate_checkpoint;     /* validate: a checkpoint/resume run as well
                                     (study/validate_checkpoint.h) */
    /* not from the file: `moeflow gen --contention PCT`, how much slower the
     * profile's compute kernels ran beside communication than alone
     * (profile_pair.h's contention); contention_measured false: unknown */
    bool contention_measured;
    double contention_pct;
#define MOE_CONTENTION_MIN_PCT 5.0  /* moeflow's threshold, not Megatron's (candidates.c) */
    double fit_memory_ratio;      /* not from the file: `moeflow gen --fit-memory-from`'s
                                     measured/predicted peak of a fit stage (0: none) */
    /* not from the file: static shapes as that fit stage's drop-and-pad runs
     * showed them (analysis/fit_report.h's moe_fit_report_shapes): 1 static,
     * -1 not static, 0 unknown; fit_shapes_why says it in words */
    int fit_static_shapes;
    char fit_shapes_why[400];
    /* not from the file: the layouts of moeflow run's next scale round (gen
     * --rebuild reads them from the study's last scale decision), run instead
     * of the scale_top_k ranked first */
    struct moe_layout scale_round[MOE_STUDY_LIST_MAX];
    int scale_round_n;
    json_t *json;                 /* canonical form of everything above */
};

/* The step-time settings of cluster (achievable_tflops_bf16 ... route_ns,
 * in struct moe_cluster's order): each one's physical range, inclusive, and
 * its unit.  NULL-key ended. */
struct moe_study_rate {
    const char *key;
    double min, max;
    const char *unit;
};
extern const struct moe_study_rate moe_study_rates[];

/* Reads and checks a study.  On error returns -1 and err names
 * file:line:column, the field path and what is wrong.  Either way study
 * can be passed to moe_study_free(). */
int moe_study_load(struct moe_study *study, const char *path, struct moe_error *err);

/* Same, from len bytes as a file holds them: a NUL byte among them is an
 * error at its line and column (a string would end there, unread). */
int moe_study_load_text(struct moe_study *study, const char *name, const char *text, size_t len,
                        struct moe_error *err);

void moe_study_free(struct moe_study *study);

const char *moe_precision_name(enum moe_precision p);

#endif
