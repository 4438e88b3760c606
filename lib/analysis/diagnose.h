/* Stage 3's question, "what is the bottleneck?", answered from a report
 * (moeflow report's report.json) and optionally an overlap analysis
 * (moeflow overlap --json), and the retune candidates that match it. */
#ifndef MOEFLOW_DIAGNOSE_H
#define MOEFLOW_DIAGNOSE_H

#include <stddef.h>

#include <jansson.h>

#include "core/error.h"
#include "core/retune.h" /* enum moe_bottleneck, its names, the retune catalogue */

/* Thresholds, as fractions. */
#define MOE_DIAG_MEMORY_NEAR 0.90   /* peak allocated / GPU capacity */
#define MOE_DIAG_EXPOSED_COMM 0.10  /* exposed communication / window GPU time */
#define MOE_DIAG_IDLE 0.10          /* idle / window GPU time */
#define MOE_DIAG_SHORT_KERNELS 0.50 /* kernels under 10 us / all kernels */

struct moe_diagnosis {
    enum moe_bottleneck bottleneck;
    char reason[512];
    /* The measurements behind it; negative when unknown. */
    double memory_fraction, exposed_fraction, idle_fraction, short_fraction, hidden_pct;
    int full_recompute;
};

/* The retune candidates for b that `moeflow gen --for b` produces: the
 * catalogue's entries (core/retune.h) that target b, in its order, at most
 * max of them into out.  Returns how many there are. */
size_t moe_diagnose_candidates(enum moe_bottleneck b, const struct moe_retune_entry **out,
                               size_t max);

/* run: one element of report.json's "runs"; overlap: moeflow overlap's
 * JSON or NULL; capacity_bytes: GPU memory, or 0 when unknown. */
int moe_diagnose(const json_t *run, const json_t *overlap, double capacity_bytes,
                 struct moe_diagnosis *d, struct moe_error *err);

#endif
