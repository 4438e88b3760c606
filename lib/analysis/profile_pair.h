/* Matched A/B profiles: validate's profiling twins (core/manifest.h,
 * twin_of) side by side, each winner's against the baseline's, profiled
 * by the same profiler over the same steps.  Per side, from its kernel
 * traces: hidden and exposed communication (the overlap analysis,
 * overlap.h), summed kernel time, and the contention effect -- compute
 * kernels that run while communication does take longer than the same
 * kernels alone, so part of what overlap hides it pays back in compute.
 *
 * Contention, per compute kernel name within one side's window: the mean
 * duration of its runs that overlap the union of communication kernels on
 * their GPU (concurrent) against the mean of its runs that do not (alone).
 * Its cost, summed over names run both ways: concurrent runs x (concurrent
 * mean - alone mean).  Everything here is measured, from traces; nothing
 * is modelled. */
#ifndef MOEFLOW_PROFILE_PAIR_H
#define MOEFLOW_PROFILE_PAIR_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "analysis/overlap.h"
#include "analysis/trace.h"
#include "core/error.h"

/* One compute kernel name's runs on one side, split by whether a
 * communication kernel ran beside them. */
struct moe_kernel_timing {
    char *name;
    size_t alone, concurrent;          /* runs */
    int64_t alone_ns, concurrent_ns;   /* their summed (unclipped) durations */
};

/* One profiled run: its traces over one window. */
struct moe_profile_side {
    struct moe_overlap overlap;        /* per GPU and total (overlap.h) */
    size_t traces;
    int64_t kernel_ns;                 /* summed kernel time in the window, comm + compute */
    int64_t compute_kernel_ns;         /* the compute kernels' share */
    struct moe_kernel_timing *kernels; /* compute kernels, by name */
    size_t nkernels, capkernels;
};

/* Reconciles a paired entry of moe_profile_pairs_of_study with the step
 * times of the timed runs it twins (medians over steps first..last, ms;
 * NAN when a run has none): adds "reconciled": each side's GPU busy time
 * (compute kernels plus exposed communication, from the twin) as a share
 * of its timed step, and how much of the step's change the kernels'
 * change explains; "gap" names what does not add up (a twin busier than
 * its timed step).  Both inputs are measured; the twins profile other
 * steps than the timed window, which the entry says.  Entries that are not
 * paired are left alone.  -1 with err (may be NULL) naming the key when
 * out of memory. */
int moe_profile_pair_reconcile(json_t *pair, double baseline_step_ms, double winner_step_ms,
                               long first, long last, struct moe_error *err);

/* The "profile_pairs" of a generated study's validate stage: one entry per
 * winner twin (and the combination's), paired with the baseline's twin, or
 * saying what is missing.  An empty array when the stage has no twins
 * (generated without --winners).  NULL with err when a trace is unreadable
 * or the manifest is. */
json_t *moe_profile_pairs_of_study(const char *study, size_t top, struct moe_error *err);

#endif
