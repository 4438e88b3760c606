/* The retune catalogue: the one list of what stage 4 may change, one axis
 * per row, with the variable its candidates name (candidates.tsv's
 * variable column), the bottleneck it targets (moeflow diagnose, moeflow
 * gen --for) and what it changes.  The variable is not always the
 * contract's key: contract verify names a retune run's change by its own
 * key (contract_rules.c moe_contract_variable: tuning.KEY, the dispatcher
 * backend under dispatcher, workload.mbs as mbs), so recompute_modules is
 * tuning.recompute there and cuda_graph_modules tuning.cuda_graph_scope
 * (study_contract.c says why).  The study schema's retune.axes,
 * the candidates' variables and bottlenecks, and diagnose's suggestions
 * all come from MOE_RETUNE_LIST.  Its order is the catalogue's: the
 * default retune.axes and diagnose's lists follow it. */
#ifndef MOEFLOW_CORE_RETUNE_H
#define MOEFLOW_CORE_RETUNE_H

#include <stddef.h>

#include "core/enum_names.h"

/* Stage 3's answer, in the workflow's order. */
#define MOE_BOTTLENECK_LIST(X)                                                                 \
    X(MOE_BOTTLENECK_MEMORY, "memory") X(MOE_BOTTLENECK_COMMUNICATION, "communication")        \
    X(MOE_BOTTLENECK_HOST, "host") X(MOE_BOTTLENECK_COMPUTE, "compute")
/* MOE_BOTTLENECK_COUNT is a value of the enum: moe_bottleneck_parse's "none". */
enum moe_bottleneck { MOE_BOTTLENECK_LIST(MOE_ENUM_ID) MOE_BOTTLENECK_COUNT };
extern const char *const moe_bottleneck_names[];

/* X(id, axis, variable, bottleneck, what it changes).  The bottlenecks are
 * those of Megatron's MoE guide, "Step 3: Enable Performance Features Based
 * on Profiling Bottlenecks" (megatron/core/transformer/moe/README.md:226-273
 * in core 0.16 and 0.19): a larger micro-batch is its CPU-overhead remedy,
 * "Reduce kernel launches" (line 263).  The dispatcher's SM count is the
 * seed's compute remedy "dispatcher kernel tuning" (its stage 3 table):
 * communication kernels that hold SMs slow the compute kernels beside
 * them, the contention candidates.c asks the profile about. */
#define MOE_RETUNE_LIST(X)                                                                     \
    X(MOE_RETUNE_DISPATCHER, "dispatcher", "dispatcher", MOE_BOTTLENECK_COMMUNICATION,         \
      "flex dispatcher with DeepEP or HybridEP")                                               \
    X(MOE_RETUNE_EP_OVERLAP, "ep_overlap", "ep_overlap", MOE_BOTTLENECK_COMMUNICATION,         \
      "overlap of the EP all-to-all with computation")                                         \
    X(MOE_RETUNE_SHARED_EXPERT_OVERLAP, "shared_expert_overlap", "shared_expert_overlap",      \
      MOE_BOTTLENECK_COMMUNICATION, "shared experts overlapped with dispatch")                 \
    X(MOE_RETUNE_DELAY_WGRAD, "delay_wgrad", "delay_wgrad", MOE_BOTTLENECK_COMMUNICATION,      \
      "delayed weight-gradient computation (with EP overlap)")                                 \
    X(MOE_RETUNE_OVERLAP_GRAD_REDUCE, "overlap_grad_reduce", "overlap_grad_reduce",            \
      MOE_BOTTLENECK_COMMUNICATION, "DP gradient reduce-scatter overlapped")                   \
    X(MOE_RETUNE_TP_COMM_OVERLAP, "tp_comm_overlap", "tp_comm_overlap",                        \
      MOE_BOTTLENECK_COMMUNICATION, "TP communication overlapped")                             \
    X(MOE_RETUNE_RECOMPUTE, "recompute", "recompute_modules", MOE_BOTTLENECK_MEMORY,           \
      "selective recompute, one module at a time")                                             \
    X(MOE_RETUNE_PRECISION, "precision", "precision", MOE_BOTTLENECK_COMPUTE,                  \
      "low precision (FP8; MXFP8/NVFP4 on Blackwell), router stays FP32")                      \
    X(MOE_RETUNE_CUDA_GRAPH, "cuda_graph", "cuda_graph_modules", MOE_BOTTLENECK_HOST,          \
      "CUDA graphs, smallest scope first (moe_router, moe_preprocess, attn)")                  \
    X(MOE_RETUNE_MANUAL_GC, "manual_gc", "manual_gc", MOE_BOTTLENECK_HOST,                     \
      "Python garbage collection at fixed intervals")                                          \
    X(MOE_RETUNE_MBS, "mbs", "mbs", MOE_BOTTLENECK_HOST,                                     \
      "a larger micro-batch, fewer kernel launches per sample")                                \
    X(MOE_RETUNE_DISPATCHER_SMS, "dispatcher_sms", "dispatcher_sms", MOE_BOTTLENECK_COMPUTE,   \
      "SMs the DeepEP/HybridEP kernels take from compute, one count at a time")
/* moe_retune_axes: the axis names, NULL-ended (the schema's retune.axes). */
MOE_ENUM_DECLARE(moe_retune_axis, MOE_RETUNE_LIST, MOE_RETUNE_COUNT, moe_retune_axes);

struct moe_retune_entry {
    const char *axis;       /* as retune.axes names it */
    const char *variable;   /* as its candidates name it */
    enum moe_bottleneck bottleneck;
    const char *what;       /* what it changes */
};

/* The row of axis a; NULL outside the enum. */
const struct moe_retune_entry *moe_retune_entry(enum moe_retune_axis a);

/* "memory", ...; NULL outside the enum. */
const char *moe_bottleneck_name(enum moe_bottleneck b);

/* The bottleneck named s; MOE_BOTTLENECK_COUNT if none (s NULL too). */
enum moe_bottleneck moe_bottleneck_parse(const char *s);

#endif
