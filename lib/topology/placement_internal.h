/* What lib/topology shares among its own files (and the tests) beside
 * topology/placement.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_PLACEMENT_INTERNAL_H
#define MOEFLOW_PLACEMENT_INTERNAL_H

#include "topology/placement.h"

/* B = max(TP*CP, ETP*EP). */
int moe_layout_block(const struct moe_layout *l);

#endif
