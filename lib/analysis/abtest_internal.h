/* abtest.h's functions that only lib/analysis (and its unit tests) use. */
#ifndef MOEFLOW_ABTEST_INTERNAL_H
#define MOEFLOW_ABTEST_INTERNAL_H

#include "analysis/abtest.h"

/* Two-sided exact p-value of U for samples of m and n values without ties. */
double moe_abtest_exact_p(size_t m, size_t n, double u);

#endif
