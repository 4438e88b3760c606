/* validate_profile.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_VALIDATE_PROFILE_INTERNAL_H
#define MOEFLOW_STUDY_VALIDATE_PROFILE_INTERNAL_H

#include "study/validate_profile.h"

/* Appends a profiling twin of every candidate of plan (a validate stage
 * plan, rendered) that is not a twin and has none yet, in plan order, so
 * that the timed runs keep their array indices.  When Megatron would not
 * profile a validate run (a Megatron rule: validate_steps ending before
 * the profile window), no twin is added and plan lists "profiling_twin" as
 * skipped, with the rule.  -1 with err when out of memory. */
int moe_validate_add_twins(const struct moe_study *study, struct moe_stage_plan *plan,
                           struct moe_error *err);

#endif
