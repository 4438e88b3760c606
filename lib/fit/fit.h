/* Fit: the cheapest memory-saving step that makes one layout fit a GPU.
 * The ladder follows the workflow: nothing, then selective recompute one
 * module at a time, then full recompute, and offload only at the end. */
#ifndef MOEFLOW_FIT_H
#define MOEFLOW_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "fit/memory.h"
#include "core/model.h"
#include "fit/steptime.h"

/* The machine the layouts are for. */
struct moe_machine {
    int gpus;            /* world size */
    int gpus_per_domain; /* GPUs in one NVLink domain (8 for HGX, 72 for NVL72) */
    double gpu_mem_gib;  /* memory of one GPU */
    double headroom;     /* fraction kept free: fragmentation, NCCL, CUDA context */
    int fixed_pp, fixed_vpp; /* layouts: only this PP / VPP (0 = any), e.g. when an
                                explicit pipeline layout pins them */
    struct moe_perf perf;    /* rates and bandwidths for the step-time model */
    double measured_ratio;   /* > 0: the fit stage's measured/predicted peak, by which
                                the usable memory is divided (measured beats modeled);
                                0: the model alone */
};

/* 8-GPU NVLink domain, 80 GiB, 10% headroom, H100 rates with TE. */
void moe_machine_defaults(struct moe_machine *c);

/* Usable bytes on one GPU after the headroom, divided by measured_ratio
 * when one is set. */
double moe_machine_usable(const struct moe_machine *c);

struct moe_fit {
    bool fits;
    int step;              /* index into the ladder; 0 = as configured */
    struct moe_train train; /* the settings of that step */
    struct moe_memory mem;
};

/* Walks the ladder from the caller's settings and stops at the first step
 * that fits; when none does, out holds the last (smallest) step with
 * fits = false.  -1 only for a shape the memory model rejects (or a
 * recompute module the ladder has no rule for: a new one). */
int moe_fit_layout(const struct moe_model *m, const struct moe_layout *l,
                   const struct moe_workload *w, const struct moe_train *base,
                   const struct moe_machine *c, struct moe_fit *out, struct moe_error *err);

/* The most steps a ladder has (fit_internal.h builds it). */
#define MOE_FIT_MAX_STEPS 16

/* Name of the step taken ("none", "selective", "full", "offload"). */
const char *moe_fit_step_kind(const struct moe_fit *f);

/* "selective recompute moe_act,layernorm: 61.2 GiB <= 72.0 GiB usable". */
const char *moe_fit_describe(const struct moe_fit *f, const struct moe_machine *c, char *buf,
                             size_t len);

#endif
