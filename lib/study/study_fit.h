/* A study in the memory model's terms: the training settings and the
 * machine that `moeflow fit`, `moeflow layouts` and the scale stage use. */
#ifndef MOEFLOW_STUDY_FIT_H
#define MOEFLOW_STUDY_FIT_H

#include "core/error.h"
#include "fit/fit.h"
#include "fit/memory.h"
#include "study/megatron_args.h"
#include "study/study.h"

int moe_study_fit_inputs(const struct moe_study *s, struct moe_train *t, struct moe_machine *m,
                         struct moe_error *err);

/* The memory model's peak for global rank `rank` of a run (its pipeline
 * stage): what a fit-stage candidate standing in for that rank should
 * measure as Megatron's largest "max allocated". */
int moe_study_run_memory(const struct moe_study *s, const struct moe_run *run, int rank,
                         struct moe_memory *out, struct moe_error *err);

#endif
