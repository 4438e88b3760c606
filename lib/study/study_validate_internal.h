/* study_validate.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_STUDY_VALIDATE_INTERNAL_H
#define MOEFLOW_STUDY_STUDY_VALIDATE_INTERNAL_H

#include "study/study_validate.h"

/* baseline: the validate baseline candidate, rendered.  Appends it, each
 * winner alone and their combination to out (a validate stage plan), or
 * returns -1 with err; no winner recorded is an error too.  study_dir's
 * manifest.json is where the winners' retune candidates come back in. */
int moe_validate_from_winners(const char *study_dir, const struct moe_candidate *baseline,
                              struct moe_stage_plan *out, struct moe_error *err);

#endif
