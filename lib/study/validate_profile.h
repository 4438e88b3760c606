/* Validate's profiling twins: for the baseline and each winner (and their
 * combination), the same job again under the study's profiler
 * (measure.profiler) over the same profile window (measure.profile_steps),
 * so that a winner's claimed mechanism -- more communication hidden, less
 * exposed -- is shown by a matched A/B profile, not inferred.
 *
 * A twin runs its sibling's arguments plus the profiling switches of the
 * profile stage (moe_megatron_profile_args), in its sibling's environment.
 * Its declared contract is its sibling's with the profiling block and
 * "validation": {"profiling_twin": true}, which the validate rule accepts
 * only when the rest equals a run validate allows (contract_rules.c).  The
 * manifest marks it with twin_of (the sibling's id): a profiler slows the
 * steps it records, so no report takes step time from a twin. */
#ifndef MOEFLOW_VALIDATE_PROFILE_H
#define MOEFLOW_VALIDATE_PROFILE_H

#include "core/error.h"
#include "study/candidates.h"
#include "study/study.h"

#endif
