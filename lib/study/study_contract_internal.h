/* study_contract.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_STUDY_CONTRACT_INTERNAL_H
#define MOEFLOW_STUDY_STUDY_CONTRACT_INTERNAL_H

#include "core/error.h"
#include "core/json_build.h"
#include "study/study_contract.h"

/* label: the contract's semantics.class, moe_study_routing_class().
 * NULL with err naming the key that could not be made. */
json_t *moe_run_contract(const struct moe_study *study, const struct moe_run *run,
                         const char *label, struct moe_error *err);

/* The class the contract records under semantics.class: "benchmark-only"
 * for forced-balance routing, else "training-equivalent".  Routing alone,
 * as when ids were first named: the class is hashed into every candidate's
 * id and the contract's digest, and the committed GPU evidence is filed
 * under those; the data and routing themselves are in the contract beside
 * it, so a reader loses nothing. */
const char *moe_study_routing_class(const struct moe_study *study);

/* The contract's profiling block: the study's profiler and profile_steps,
 * as the profile stage and validate's profiling twins declare them. */
json_t *moe_contract_profiling(struct moe_jb *b, const struct moe_study *study);

#endif
