/* validation.checkpoint: the validate stage's checkpoint/resume candidate.
 * It runs the configuration being validated (the recorded winners'
 * combination when the stage has one, else the one recorded winner, else
 * the baseline) twice, in one
 * batch job, as two srun steps: "uninterrupted" trains validate_steps
 * (N+M) steps and saves at step N with Megatron's own --save and
 * --save-interval (distributed format); "resumed", a fresh process, loads
 * step N of that folder and trains to the same N+M without saving.  N is
 * the step before the report window (half of validate_steps when the
 * window starts at step 1).  doc/moeflow-study.5 (VALIDATION) says why a
 * second step and not a second job, and what deterministic mode needs. */
#ifndef MOEFLOW_VALIDATE_CHECKPOINT_H
#define MOEFLOW_VALIDATE_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/manifest.h"
#include "study/candidates.h"
#include "study/megatron_rules.h"
#include "study/study.h"

#define MOE_CHECKPOINT_VARIABLE MOE_CANDIDATE_CHECKPOINT
/* Below the study directory; the candidate's folder is named by the id of
 * the configuration it checkpoints (its own id hashes its arguments, which
 * hold the folder). */
#define MOE_CHECKPOINT_DIR MOE_CANDIDATE_CHECKPOINT_DIR

#endif
