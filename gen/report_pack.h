/* moeflow report STUDY_DIR --pack: the study's evidence pack
 * (analysis/evidence_pack.h), written and named on stdout. */
#ifndef MOEFLOW_REPORT_PACK_H
#define MOEFLOW_REPORT_PACK_H

#include "analysis/report.h"

/* Writes the pack of study into dir (NULL: STUDY_DIR/evidence-pack);
 * returns the exit code. */
int moe_report_pack(const char *study, const char *dir, const struct moe_report_opts *opts);

#endif
