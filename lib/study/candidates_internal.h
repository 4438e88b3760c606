/* candidates.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_CANDIDATES_INTERNAL_H
#define MOEFLOW_STUDY_CANDIDATES_INTERNAL_H

#include "study/candidates.h"

int moe_candidates_build(const struct moe_study *study, enum moe_stage stage,
                         struct moe_stage_plan *plan, struct moe_error *err);

/* Renders every candidate that has no contract yet. */
int moe_candidates_render(const struct moe_study *study, struct moe_stage_plan *plan,
                          struct moe_error *err);

/* moeflow gen --for B: keeps the candidates that target bottleneck B (as
 * moeflow diagnose names it) and lists the others as skipped. */
int moe_candidates_keep_bottleneck(struct moe_stage_plan *plan, const char *bottleneck);

/* Lists variable=value as skipped, with reason.  Takes value; -1 when out
 * of memory. */
int moe_stage_plan_skip(struct moe_stage_plan *plan, const char *variable, json_t *value,
                        const char *reason);

/* Appends a copy of c, rendered, with no run; -1 when out of memory. */
int moe_stage_plan_add(struct moe_stage_plan *plan, const struct moe_candidate *c);

#endif
