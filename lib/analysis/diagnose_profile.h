/* The profile stage of a generated study, read for `moeflow diagnose
 * STUDY_DIR --stage profile`: its baseline's kernel traces over the
 * profiled steps (the overlap analysis, overlap.h), and the memory the fit
 * stage measured for the same layout and recompute (fit_report.h).
 *
 * Traces are where the profile stage's profiler writes them, below
 * results/profile: Megatron's PyTorch profiler in torch_profile/rank-N.json.gz
 * (core 0.19, bridge-pin: "{tensorboard_dir}/../torch_profile") or in
 * tensorboard/ (core 0.16: tensorboard_trace_handler), Nsight Systems in
 * results/profile itself, read through the SQLite file `nsys export --type
 * sqlite` writes beside each .nsys-rep. */
#ifndef MOEFLOW_DIAGNOSE_PROFILE_H
#define MOEFLOW_DIAGNOSE_PROFILE_H

#include <jansson.h>

#include "core/error.h"
#include "core/study_dir.h"

#define MOE_PROFILE_RESULTS MOE_STUDY_RESULTS "/profile"

struct moe_profile_evidence {
    char candidate[72];   /* the profile stage's baseline */
    long first, last;     /* the profiled steps (contract.profiling.steps) */
    json_t *overlap;      /* moeflow overlap --json of its traces over those steps */
    json_t *sources;      /* the trace files read, as paths */
    json_t *run;          /* what moe_diagnose reads: name, fit's peak, recompute */
    double capacity_mib;  /* the contract's declared GPU memory; 0 when it has none */
    /* Measured contention (profile_pair_internal.h): how much slower the
     * compute kernels ran beside communication than alone, %; NAN when no
     * kernel name ran both ways.  moeflow run passes it to gen --contention,
     * which decides whether retune screens the dispatcher SM counts. */
    double contention_pct;
    /* The fit run of the same layout and recompute; fit_id[0] == 0: none. */
    char fit_id[72], fit_label[200], fit_verdict[200];
    double fit_measured_mib;  /* from its log; NAN: not measured */
    double fit_predicted_mib; /* the memory model's; NAN: none */
};

/* Fills e from study; -1 with err when the stage has no baseline, no
 * trace, or a .nsys-rep without its SQLite export (err then gives the
 * `nsys export` command to run).  A missing or unmatched fit run is no
 * error: the memory is unknown. */
int moe_profile_evidence_load(const char *study, struct moe_profile_evidence *e,
                              struct moe_error *err);
void moe_profile_evidence_free(struct moe_profile_evidence *e);

#endif
