/* Stage 3's question, "what is the bottleneck?", answered from a report
 * (moeflow report's report.json) and optionally an overlap analysis
 * (moeflow overlap --json), and the retune candidates that match it. */
#ifndef MOEFLOW_DIAGNOSE_H
#define MOEFLOW_DIAGNOSE_H

#include <stddef.h>

#include <jansson.h>

#include "core/error.h"

enum moe_bottleneck {
    MOE_BOTTLENECK_MEMORY = 0,
    MOE_BOTTLENECK_COMMUNICATION,
    MOE_BOTTLENECK_HOST,
    MOE_BOTTLENECK_COMPUTE,
    MOE_BOTTLENECK_COUNT,
};

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

const char *moe_bottleneck_name(enum moe_bottleneck b);
/* "memory", "communication", "host", "compute"; MOE_BOTTLENECK_COUNT if none. */
enum moe_bottleneck moe_bottleneck_parse(const char *s);

/* The retune candidates for b that `moeflow gen --for b` produces, as
 * "VARIABLE: what it changes" (VARIABLE as in candidates.tsv),
 * NULL-terminated. */
const char *const *moe_diagnose_candidates(enum moe_bottleneck b);

/* run: one element of report.json's "runs"; overlap: moeflow overlap's
 * JSON or NULL; capacity_bytes: GPU memory, or 0 when unknown. */
int moe_diagnose(const json_t *run, const json_t *overlap, double capacity_bytes,
                 struct moe_diagnosis *d, struct moe_error *err);

#endif
