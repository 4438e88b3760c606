/* A baseline adopted by moeflow run's decisions (contract_check.h
 * moe_contract_reference) put back into the study: the stages generated
 * after the decision run on the layout and recompute the evidence chose,
 * everything else as the study file says. */
#ifndef MOEFLOW_STUDY_ADOPT_H
#define MOEFLOW_STUDY_ADOPT_H

#include <jansson.h>

#include "core/error.h"
#include "study/study.h"

/* Sets s's baseline layout (tp, cp, pp, vpp, ep, etp; dp and edp derived)
 * and recompute (granularity and modules) from contract's parallel and
 * tuning sections, checked by the study's layout rules.  s->json (and so
 * the study hash) is left as the file wrote it.  0, or -1 with err naming
 * what the contract holds that the study cannot run. */
int moe_study_adopt(struct moe_study *s, const json_t *contract, struct moe_error *err);

#endif
