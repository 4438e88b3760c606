/* Step time of one layout, predicted from the model's FLOPs, the bytes each
 * parallel group moves and where that group sits (NVLink domain or across
 * nodes), so that layouts can be ranked by speed and not only by shape.
 * The host and the GPU are two streams: the CPU launches kernels ahead of
 * the GPU, so a microbatch costs the slower of the two plus the stalls at
 * the points where the host waits for the GPU, not their sum. */
#ifndef MOEFLOW_STEPTIME_H
#define MOEFLOW_STEPTIME_H

#include <stdbool.h>

#include "fit/flops.h"
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
    bool ep_overlapped;   /* ep_ms is what the EP overlap leaves (moe_ep_overlap_applies) */
};

/* Whether --ep-overlap hides this grid's all-to-alls: Megatron allows the
 * overlap only with EP > 1, VPP when PP > 1, and no MoE-layer recompute. */
bool moe_ep_overlap_applies(const struct moe_layout *l, const struct moe_train *t,
                            const struct moe_perf *p);

/* Predicts one step.  l->dp and l->edp must be set; params_dense and
 * params_expert are the parameters on the busiest rank (as the memory
 * model counts them), domain the GPUs per NVLink domain. */
void moe_step_time(const struct moe_model *m, const struct moe_layout *l,
                   const struct moe_workload *w, const struct moe_train *t,
                   const struct moe_perf *p, int domain, double params_dense,
                   double params_expert, struct moe_step *out);

/* The same on the given candidate stages (moe_memory_busy_stages), which
 * an enumerator computes once per PP and VPP. */
void moe_step_time_at(const struct moe_model *m, const struct moe_layout *l,
                      const struct moe_workload *w, const struct moe_train *t,
                      const struct moe_perf *p, int domain, double params_dense,
                      double params_expert, const struct moe_pp_stage *stages, int n_stages,
                      struct moe_step *out);

/* Per-microbatch terms of one pipeline stage, in ms. */
struct moe_mb_cost {
    double compute, scores, route, tp, cp, ep, etp, pp, host, sync;
    double experts;      /* the routed experts' share of compute */
    double experts_host; /* the local experts' share of host */
    /* forward, where the local implementation's syncs chop it (0 without) */
    double fwd_host, fwd_gpu, fwd_span;
};

/* What moe_step_time_cached reuses between calls for one grid (TP, CP, PP,
 * EP, ETP, DP, EDP) of one model, workload, machine and rates: the FLOPs
 * per token at that TP, and the per-microbatch terms of each stage
 * composition met, per fit-ladder settings (the VPP values of a grid
 * mostly share them; only the PP send term scales with VPP).  Set n = 0
 * and have_flops = false before the first call for a grid. */
#define MOE_STEP_CACHE_MAX 16
struct moe_step_cache {
    bool have_flops;
    struct moe_flops flops;
    int n;
    struct {
        const struct moe_train *t;
        int dense_layers, moe_layers;
        bool last;
        bool ep_overlap;         /* moe_ep_overlap_applies, which VPP 1 at PP > 1 turns off */
        struct moe_mb_cost cost; /* its pp term per virtual stage */
    } e[MOE_STEP_CACHE_MAX];
};

/* moe_step_time_at with the cache above (NULL: none); the same result. */
void moe_step_time_cached(const struct moe_model *m, const struct moe_layout *l,
                          const struct moe_workload *w, const struct moe_train *t,
                          const struct moe_perf *p, int domain, double params_dense,
                          double params_expert, const struct moe_pp_stage *stages, int n_stages,
                          struct moe_step_cache *cache, struct moe_step *out);

#endif
