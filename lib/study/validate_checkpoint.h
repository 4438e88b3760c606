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

/* The step the uninterrupted run saves and the resumed run starts after. */
int moe_checkpoint_step(const struct moe_study *s);

/* Appends the checkpoint candidate of the rendered validate plan (its
 * combination, else its first candidate).  -1 with err. */
int moe_validate_add_checkpoint(const struct moe_study *s, struct moe_stage_plan *plan,
                                struct moe_error *err);

/* The plan's checkpoint candidate, or NULL. */
const struct moe_candidate *moe_checkpoint_candidate(const struct moe_candidate *cands, size_t n);

/* The resumed run's arguments from the uninterrupted run's: --save DIR
 * becomes --load DIR, --save-interval N becomes --ckpt-step N.  -1 when c
 * is not a checkpoint candidate or out of memory. */
int moe_checkpoint_resume_argv(const struct moe_candidate *c, struct moe_strv *out);

/* Where Megatron does what this candidate relies on, as the rule table's
 * citations (broken is NULL: nothing is refused here, the citations say
 * why the arguments are what they are).  tests/unit/study/test_megatron_rules.c
 * checks each against the committed excerpts. */
const struct moe_megatron_rule *moe_checkpoint_citations(size_t *n);

#endif
