/* The declared measurement contract of one run, in the sections the
 * contract module (contract/contract.h) compares: environment, hardware,
 * workload, semantics, parallel, tuning, timing, and profiling for the
 * profile stage.  `moeflow gen` writes one per candidate under contracts/. */
#ifndef MOEFLOW_STUDY_CONTRACT_H
#define MOEFLOW_STUDY_CONTRACT_H

#include <jansson.h>

#include "core/strv.h"
#include "study/megatron_args.h"
#include "study/study.h"

/* label: the contract's semantics.class, moe_study_routing_class(). */
json_t *moe_run_contract(const struct moe_study *study, const struct moe_run *run,
                         const char *label);

/* The class the contract records under semantics.class: "benchmark-only"
 * for forced-balance routing, else "training-equivalent".  Routing alone,
 * as when ids were first named: the class is hashed into every candidate's
 * id and the contract's digest, and the committed GPU evidence is filed
 * under those; the data and routing themselves are in the contract beside
 * it, so a reader loses nothing. */
const char *moe_study_routing_class(const struct moe_study *study);

/* The label users see (manifest, report, evidence pack): "benchmark-only"
 * when the study measures with benchmark-only semantics (forced-balance
 * routing, mock data), each reason appended to reasons; else
 * "training-equivalent".  The study schema cannot disable the optimizer or
 * the checkpoint path, so neither is a reason here.  NULL when out of
 * memory. */
const char *moe_study_label(const struct moe_study *study, struct moe_strv *reasons);
/* The contract's profiling block: the study's profiler and profile_steps,
 * as the profile stage and validate's profiling twins declare them. */
json_t *moe_contract_profiling(const struct moe_study *study);

#endif
