/* fit_evidence.h's functions that only lib/analysis (and its unit tests) use. */
#ifndef MOEFLOW_FIT_EVIDENCE_INTERNAL_H
#define MOEFLOW_FIT_EVIDENCE_INTERNAL_H

#include "analysis/fit_evidence.h"

/* Reads line into ev when it is an evidence line (anywhere in it, after a
 * rank prefix or glued to other output); returns true then. */
bool moe_fit_evidence_parse(const char *line, struct moe_fit_evidence *ev);

#endif
