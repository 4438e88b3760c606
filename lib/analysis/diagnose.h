/* Stage 3's question, "what is the bottleneck?", answered from a report
 * (moeflow report's report.json) and optionally an overlap analysis
 * (moeflow overlap --json), and the retune candidates that match it. */
#ifndef MOEFLOW_DIAGNOSE_H
#define MOEFLOW_DIAGNOSE_H

#include <stddef.h>

#include <jansson.h>

#include "core/error.h"
#include "core/retune.h" /* enum moe_bottleneck, its names, the retune catalogue */

/* Thresholds, as fractions.  doc/moeflow-diagnose.1 gives each one's
 * source and the measurements it was checked against. */
#define MOE_DIAG_MEMORY_NEAR 0.90   /* peak allocated / GPU capacity */
#define MOE_DIAG_EXPOSED_COMM 0.10  /* exposed communication / window GPU time */
#define MOE_DIAG_IDLE 0.10          /* idle / window GPU time */
#define MOE_DIAG_SHORT_KERNELS 0.50 /* kernels under 10 us / all kernels */
/* A rank whose own work (its window less its exposed communication, which
 * on the other ranks is mostly waiting for it) exceeds the median rank's by
 * this share is called a straggler; below it the ranks are even. */
#define MOE_DIAG_STRAGGLER 0.05

/* With several GPUs' rows in the overlap analysis: the one the others wait
 * for.  ranks < 2: nothing to compare, the rest unset. */
struct moe_straggler {
    size_t ranks;
    int rank;        /* from the trace's name (rank-N, rankN), else the row's index */
    char trace[256]; /* the row's trace file and device, "rank-0.json.gz:0" */
    double work_ms, median_ms, behind_ms, behind_fraction;
};

struct moe_diagnosis {
    enum moe_bottleneck bottleneck;
    char reason[512];
    /* The measurements behind it; negative when unknown. */
    double memory_fraction, exposed_fraction, idle_fraction, short_fraction, hidden_pct;
    double busy_fraction; /* the busy union / window GPU time */
    /* The overlap analysis's totals in ms of GPU time (summed over GPUs). */
    double window_ms, busy_ms, comm_ms, hidden_ms, exposed_ms, idle_ms, max_gap_ms;
    long gaps;
    struct moe_straggler straggler;
    int full_recompute;
};

/* The retune candidates for b that `moeflow gen --for b` produces: the
 * catalogue's entries (core/retune.h) that target b, in its order, at most
 * max of them into out.  Returns how many there are. */
size_t moe_diagnose_candidates(enum moe_bottleneck b, const struct moe_retune_entry **out,
                               size_t max);

/* run: one element of report.json's "runs"; overlap: moeflow overlap's
 * JSON or NULL; capacity_bytes: GPU memory, or 0 when unknown.
 * Memory first (a run that barely fits cannot be tuned for speed); then
 * of communication and host, each past its threshold, the one with the
 * larger share of the window (exposed against idle), since each one's
 * retune axes can win back at most that share; compute otherwise. */
int moe_diagnose(const json_t *run, const json_t *overlap, double capacity_bytes,
                 struct moe_diagnosis *d, struct moe_error *err);

/* Why e is no candidate for d's bottleneck, in words with the measure that
 * rules its target out ("targets communication; exposed communication is
 * 1.2% of GPU time, under the 10% threshold"); NULL when e targets it. */
const char *moe_diagnose_skip_reason(const struct moe_diagnosis *d,
                                     const struct moe_retune_entry *e, char *buf, size_t len);

#endif
