/* study_fit.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_STUDY_FIT_INTERNAL_H
#define MOEFLOW_STUDY_STUDY_FIT_INTERNAL_H

#include "study/study_fit.h"

/* The one layout checker (fit/layouts.h) on layout l as the study runs it:
 * its model, world size, workload at micro-batch size mbs, implementation
 * and pipeline split.  Sets l->dp and l->edp; returns the first broken
 * rule, why it is broken into why. */
enum moe_rule moe_study_layout_check(const struct moe_study *s, struct moe_layout *l, int mbs,
                                     char *why, size_t len);

/* The study key the reader names when the baseline breaks layout rule r
 * ("baseline.ep" for EP not dividing the experts); NULL out of range. */
const char *moe_study_rule_key(enum moe_rule r);

/* The memory model's peak for global rank `rank` of a run (its pipeline
 * stage): what a fit-stage candidate standing in for that rank should
 * measure as Megatron's largest "max allocated". */
int moe_study_run_memory(const struct moe_study *s, const struct moe_run *run, int rank,
                         struct moe_memory *out, struct moe_error *err);

#endif
