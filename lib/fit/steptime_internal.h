/* What lib/fit shares among its own files (and its unit tests) beside
 * fit/steptime.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_STEPTIME_INTERNAL_H
#define MOEFLOW_STEPTIME_INTERNAL_H

#include "fit/flops_internal.h"
#include "fit/memory_internal.h"
#include "fit/steptime.h"

/* Whether --ep-overlap hides this grid's all-to-alls: Megatron allows the
 * overlap only with EP > 1, VPP when PP > 1, and no MoE-layer recompute. */
bool moe_ep_overlap_applies(const struct moe_layout *l, const struct moe_train *t,
                            const struct moe_perf *p);

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
