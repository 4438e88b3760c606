/* Step time of one layout, predicted from the model's FLOPs, the bytes each
 * parallel group moves and where that group sits (NVLink domain or across
 * nodes), so that layouts can be ranked by speed and not only by shape.
 * The host and the GPU are two streams: the CPU launches kernels ahead of
 * the GPU, so a microbatch costs the slower of the two plus the stalls at
 * the points where the host waits for the GPU, not their sum. */
#ifndef MOEFLOW_STEPTIME_H
#define MOEFLOW_STEPTIME_H

#include <stdbool.h>

#include "fit/gpu.h"
#include "fit/memory.h"
#include "core/model.h"

/* What one GPU type achieves, and the overlap switches of the run.  Rates
 * are what Megatron reaches on large GEMMs, not the datasheet peak. */
struct moe_perf {
    enum moe_gpu gpu;         /* the type the rates are of (its calibration record too) */
    double tflops_bf16;       /* achievable dense BF16 TFLOP/s per GPU */
    double tflops_fp8;        /* achievable FP8/MXFP8 TFLOP/s per GPU */
    double nvlink_gbps;       /* GB/s per GPU inside an NVLink domain, one way */
    double internode_gbps;    /* GB/s per GPU between domains (one NIC per GPU) */
    double host_us;           /* host time per layer and microbatch, forward + backward */
    double host_expert_us;    /* more per local expert and MoE layer: without grouped
                                 GEMM the experts run one after the other */
    double host_etp_us;       /* more per MoE layer with ETP > 1: the dispatcher's
                                 gather/reduce-scatter of tokens with host-read splits */
    double host_dropless_us;  /* of host_us, what a MoE layer's dropless dispatcher
                                 spends counting tokens per expert and reading the
                                 counts to the host: drop-and-pad skips it */
    double route_ns;          /* GPU time per routed token copy and MoE layer: router,
                                 permute, unpermute, forward + backward */
    double score_ps;          /* GPU time per attention score (batch x heads x s x s)
                                 and layer where the scores are materialised: the
                                 local implementation; 0 with TE's fused attention */
    double sync_us;           /* stall per MoE layer and microbatch at the dispatcher's
                                 device-to-host synchronisation */
    double sync_expert_us;    /* more per local expert: the grouped GEMM's split sizes
                                 read on the host after the sync */
    double step_host_us;      /* host time per layer and step outside the microbatches
                                 (optimizer, grad norm), not hidden by the GPU */
    bool sync_from_streams;   /* the stall at each MoE layer's sync follows from the two
                                 streams (the local implementation), not sync_us */
    bool fp8;                 /* the run computes in FP8 */
    bool overlap_grad_reduce; /* --overlap-grad-reduce */
    bool overlap_param_gather;/* --overlap-param-gather */
    bool tp_comm_overlap;     /* --tp-comm-overlap */
    bool ep_overlap;          /* --overlap-moe-expert-parallel-comm */
    bool cuda_graphs;         /* the run captures modules in CUDA graphs: not a term of
                                 the model (gen/steptime_text.c says why) */
};

/* Defaults for a GPU type (its rates in fit/gpu.h) and the implementation
 * (the local one launches many more kernels).  -1 for a value outside the
 * enum, with out zeroed: no GPU type stands in for another. */
int moe_perf_defaults(enum moe_gpu gpu, enum moe_impl impl, struct moe_perf *out);

/* The prediction, term by term, in milliseconds per training step. */
struct moe_step {
    double compute_ms;    /* model FLOPs (+ recompute) at the achievable rate */
    double tp_ms, cp_ms;  /* exposed tensor- and context-parallel collectives */
    double route_ms;      /* routing and token permutation of the MoE layers */
    double scores_ms;     /* the unfused attention's score tensors (local implementation) */
    double ep_ms, etp_ms; /* exposed expert all-to-all and expert-TP collectives */
    double pp_ms;         /* pipeline send/receive of activations */
    double host_ms;       /* host launch time not hidden behind the GPU's work */
    double sync_ms;       /* stalls at the dispatcher's synchronisation points */
    double step_host_ms;  /* per-step host time (optimizer), outside the microbatches */
    double host_stream_ms;/* the whole host launch stream, hidden or not (not in step_ms) */
    double gpu_stream_ms; /* the GPU's work of the microbatches (not in step_ms) */
    double bubble_ms;     /* pipeline fill and drain */
    double dp_ms;         /* exposed DP/EDP gradient reduce-scatter + param all-gather */
    double step_ms;       /* the sum of the terms above that are in it */
    double model_tflop;   /* Megatron's model FLOPs of one step, in TFLOP */
    double tflops_per_gpu;/* model TFLOP/s per GPU at step_ms */
    int microbatches;     /* per pipeline, per step */
    bool ep_overlapped;   /* ep_ms is what the EP overlap leaves (steptime_internal.h) */
    bool dropless_host_skipped; /* drop-and-pad: host_dropless_us left out per MoE layer */
};

/* Predicts one step.  l->dp and l->edp must be set; params_dense and
 * params_expert are the parameters on the busiest rank (as the memory
 * model counts them), domain the GPUs per NVLink domain. */
void moe_step_time(const struct moe_model *m, const struct moe_layout *l,
                   const struct moe_workload *w, const struct moe_train *t,
                   const struct moe_perf *p, int domain, double params_dense,
                   double params_expert, struct moe_step *out);

#endif
