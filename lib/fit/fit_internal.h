/* What lib/fit shares among its own files (and its unit tests) beside
 * fit/fit.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_FIT_INTERNAL_H
#define MOEFLOW_FIT_INTERNAL_H

#include "fit/fit.h"

/* The ladder from base: steps[0] = base, then the savings in order.
 * Returns the number of steps (at most max, MOE_FIT_MAX_STEPS in full);
 * -1 with err for a recompute module the ladder has no rule for. */
int moe_fit_ladder(const struct moe_model *m, const struct moe_train *base,
                   struct moe_train *steps, int max, struct moe_error *err);

#endif
