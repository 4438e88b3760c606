/* What lib/analysis shares among its own files (and the tests) beside
 * analysis/report_runs.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_REPORT_RUNS_INTERNAL_H
#define MOEFLOW_REPORT_RUNS_INTERNAL_H

#include "analysis/report_runs.h"

/* The flags moe_report_requested looks for: test_megatron_args checks
 * each against every dialect that spells it so, and that they cover what
 * the retune axes change. */
const struct moe_report_flag *moe_report_requested_flags(size_t *n);

#endif
