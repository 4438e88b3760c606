/* The declared measurement contract of one run, in the sections the
 * contract module (contract/contract.h) compares: environment, hardware,
 * workload, semantics, parallel, tuning, timing, and profiling for the
 * profile stage.  `moeflow gen` writes one per candidate under contracts/. */
#ifndef MOEFLOW_STUDY_CONTRACT_H
#define MOEFLOW_STUDY_CONTRACT_H

#include <jansson.h>

#include "study/megatron_args.h"
#include "study/study.h"

json_t *moe_run_contract(const struct moe_study *study, const struct moe_run *run,
                         const char *label);

/* The contract's profiling block: the study's profiler and profile_steps,
 * as the profile stage and validate's profiling twins declare them. */
json_t *moe_contract_profiling(const struct moe_study *study);

#endif
