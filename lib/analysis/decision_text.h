/* One decision of moeflow run's trail (lib/loop/loop.h) in a few words,
 * for the report and the evidence pack alike: what it chose. */
#ifndef MOEFLOW_DECISION_TEXT_H
#define MOEFLOW_DECISION_TEXT_H

#include <jansson.h>

/* "recompute none", "layout tp1.cp1.pp1.vpp1.ep2.etp1", "retune for host",
 * "2 winners", or "nothing: WHY"; a new string. */
json_t *moe_decision_said(const json_t *decision);

#endif
