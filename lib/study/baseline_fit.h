/* Whether a study's baseline can run at all: the memory model's fit
 * ladder (recompute, then offload) on its layout, with the fit stage's
 * measured/predicted ratio where one is set.  `moeflow gen` and `moeflow
 * run` refuse a study whose baseline fits under none of it, naming where
 * it would (fit/fit_where.h): every later stage runs on that baseline.
 * A full-iteration graph of it is refused as well where the fit stage saw
 * shapes that are not static (s->fit_static_shapes < 0). */
#ifndef MOEFLOW_BASELINE_FIT_H
#define MOEFLOW_BASELINE_FIT_H

#include "core/error.h"
#include "study/study.h"

/* 0 when the baseline fits; 1 when it does not, with err's text saying
 * by how much and where it would fit; -1 with err when the model cannot
 * say (a recompute list or GPU type it does not know). */
int moe_study_baseline_fit(const struct moe_study *s, struct moe_error *err);

/* The shapes part alone, for gen --rebuild, which adopts decisions instead
 * of fitting the baseline again: 0, or 1 with err. */
int moe_study_baseline_shapes(const struct moe_study *s, struct moe_error *err);

#endif
