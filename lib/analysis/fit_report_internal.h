/* fit_report.h's functions that only lib/analysis (and its unit tests) use. */
#ifndef MOEFLOW_FIT_REPORT_INTERNAL_H
#define MOEFLOW_FIT_REPORT_INTERNAL_H

#include <stdbool.h>

#include "analysis/fit_report.h"

/* One row: a sound drop-and-pad run whose dispatches received different
 * rows (fit_shapes.c; the flag MOE_FIT_SHAPES_MOVED). */
bool moe_fit_row_shapes_vary(const struct moe_fit_row *row);

#endif
