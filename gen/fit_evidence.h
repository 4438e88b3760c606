/* What a fit stage measured, applied to a study before its later stages are
 * written: the measured/predicted peak (the scale stage's memory filter)
 * and the static shapes a full-iteration CUDA graph needs.  gen
 * --fit-memory-from, gen --rebuild and moeflow run's baseline check all
 * take it the same way. */
#ifndef MOEFLOW_GEN_FIT_EVIDENCE_H
#define MOEFLOW_GEN_FIT_EVIDENCE_H

#include "analysis/fit_report.h"
#include "study/study.h"

/* Sets s->fit_memory_ratio from the rows a reader can trust (left as it
 * was when none is) and s->fit_static_shapes with its words; returns the
 * row the ratio comes from, or NULL. */
const struct moe_fit_row *moe_gen_take_fit_evidence(struct moe_study *s,
                                                    const struct moe_fit_report *r);

#endif
