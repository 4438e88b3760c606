/* validate_checkpoint.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_VALIDATE_CHECKPOINT_INTERNAL_H
#define MOEFLOW_STUDY_VALIDATE_CHECKPOINT_INTERNAL_H

#include "study/validate_checkpoint.h"

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
