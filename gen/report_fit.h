#ifndef MOEFLOW_REPORT_FIT_H
#define MOEFLOW_REPORT_FIT_H

#include <stdbool.h>

/* moeflow report STUDY_DIR --stage fit [--json]; returns the exit code. */
int moe_report_fit(const char *study, bool json);

#endif
