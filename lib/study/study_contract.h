/* The declared measurement contract of one run, in the sections the
 * contract module (contract/contract.h) compares: environment, hardware,
 * workload, semantics, parallel, tuning, timing, and profiling for the
 * profile stage.  `moeflow gen` writes one per candidate under contracts/. */
#ifndef MOEFLOW_STUDY_CONTRACT_H
#define MOEFLOW_STUDY_CONTRACT_H

#include <jansson.h>

#include "core/strv.h"
#include "study/megatron_args.h"
#include "study/study.h"

/* The label users see (manifest, report, evidence pack): "benchmark-only"
 * when the study measures with benchmark-only semantics (forced-balance
 * routing, mock data, or an LR schedule, aux-loss coefficient or tokenizer
 * it does not state: core/manifest.h's MOE_REASON_*), each reason appended
 * to reasons; else
 * "training-equivalent".  The study schema cannot disable the optimizer or
 * the checkpoint path, so neither is a reason here.  NULL when out of
 * memory. */
const char *moe_study_label(const struct moe_study *study, struct moe_strv *reasons);

#endif
