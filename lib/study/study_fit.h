/* A study in the memory model's terms: the training settings and the
 * machine that `moeflow fit`, `moeflow layouts` and the scale stage use. */
#ifndef MOEFLOW_STUDY_FIT_H
#define MOEFLOW_STUDY_FIT_H

#include "core/error.h"
#include "fit/fit.h"
#include "fit/layouts.h"
#include "fit/memory.h"
#include "study/megatron_args.h"
#include "study/study.h"

/* The study as `moeflow fit` and `moeflow layouts` take it: its training
 * settings (implementation, sequence parallelism, recompute, pipeline
 * split) and its machine (world size, NVLink domain, GPU memory and
 * rates; an explicit pipeline layout pins PP and VPP).  -1 with err for a
 * recompute list or a GPU type the memory model does not know. */
int moe_study_fit_inputs(const struct moe_study *s, struct moe_train *t, struct moe_machine *m,
                         struct moe_error *err);

#endif
