#ifndef MOEFLOW_REPORT_FIT_H
#define MOEFLOW_REPORT_FIT_H

#include <stdbool.h>

/* moeflow report STUDY_DIR --stage fit [--json]; shown is the directory
 * as the user named it.  Returns the exit code. */
int moe_report_fit(const char *study, const char *shown, bool json);

#endif
