/* The names in a measurement contract: its sections, and the keys that one
 * module writes and another reads.  What a contract is and how it is
 * checked is lib/contract's (contract/contract.h); its names sit here, in
 * core, because the manifest reader and the analysis read declared
 * contracts too and may include only core (lib/README.md).  Keys that only
 * their writer spells (study/study_contract.c, contract/node_facts.c) stay
 * there. */
#ifndef MOEFLOW_CONTRACT_KEYS_H
#define MOEFLOW_CONTRACT_KEYS_H

#include <jansson.h>

#include "core/model.h"

/* Required sections */
#define MOE_CONTRACT_ENVIRONMENT "environment"
#define MOE_CONTRACT_HARDWARE "hardware"
#define MOE_CONTRACT_WORKLOAD "workload"
#define MOE_CONTRACT_SEMANTICS "semantics"
#define MOE_CONTRACT_PARALLEL "parallel"
#define MOE_CONTRACT_TUNING "tuning"
#define MOE_CONTRACT_TIMING "timing"
/* Optional sections: switches only the profile stage may turn on; the
 * winners a validate run combines; where each value came from; which run
 * this was (the last two annotate and are never compared). */
#define MOE_CONTRACT_PROFILING "profiling"
#define MOE_CONTRACT_VALIDATION "validation"
#define MOE_CONTRACT_SOURCES "sources"
#define MOE_CONTRACT_RUN "run"

/* workload.mbs: a retune axis inside an invariant section */
#define MOE_CONTRACT_MBS "mbs"
/* workload: the training semantics a study states (issue 41), each
 * written only when stated; semantics.aux_loss_coeff likewise.  The
 * manifest reader gives a reason for each one absent (manifest.h). */
#define MOE_CONTRACT_LR_SCHEDULE "lr_schedule"
#define MOE_CONTRACT_TOKENIZER "tokenizer"
#define MOE_CONTRACT_AUX_LOSS_COEFF "aux_loss_coeff"
/* tuning: the flex dispatcher's SM count, only when set */
#define MOE_CONTRACT_DISPATCHER_SMS "dispatcher_sms"
/* tuning: the dispatcher and its backend are one variable; recompute is
 * {granularity, modules}, one variable too */
#define MOE_CONTRACT_DISPATCHER "dispatcher"
#define MOE_CONTRACT_DISPATCHER_BACKEND "dispatcher_backend"
#define MOE_CONTRACT_RECOMPUTE "recompute"
#define MOE_CONTRACT_GRANULARITY "granularity"
#define MOE_CONTRACT_MODULES "modules"
/* timing */
#define MOE_CONTRACT_WARMUP "warmup"
#define MOE_CONTRACT_SCREEN_STEPS "screen_steps"
#define MOE_CONTRACT_VALIDATE_STEPS "validate_steps"
#define MOE_CONTRACT_WINDOW "window"
/* run: the plugin's record of one run */
#define MOE_CONTRACT_RUN_STAGE "stage"
#define MOE_CONTRACT_RUN_CANDIDATE "candidate"
#define MOE_CONTRACT_RUN_ID "id"
/* validation: the digests of the winners a run combines */
#define MOE_CONTRACT_COMBINATION "combination"
/* validation: true on a declared profiling twin, a validate run that
 * profiles its unprofiled sibling over the study's profile window */
#define MOE_CONTRACT_PROFILING_TWIN "profiling_twin"

/* A leaf's path as the diff spells it: MOE_CONTRACT_PATH(MOE_CONTRACT_WORKLOAD,
 * MOE_CONTRACT_MBS) is "workload.mbs". */
#define MOE_CONTRACT_PATH(section, key) section "." key

/* The parallel section of a layout: tp, cp, pp, vpp, ep, etp, dp, edp and
 * the pipeline layout string. */
json_t *moe_contract_parallel(const struct moe_layout *l, const char *pipeline_layout);

/* The layout a contract declares: tp, cp, pp, vpp, ep, etp (a missing or
 * non-integer one reads as 1); dp and edp are left 0, for the caller to
 * derive. */
void moe_contract_layout(const json_t *doc, struct moe_layout *l);

#endif
