/* overlap.h's functions that only lib/analysis (and its unit tests) use. */
#ifndef MOEFLOW_OVERLAP_INTERNAL_H
#define MOEFLOW_OVERLAP_INTERNAL_H

#include "analysis/overlap.h"

/* The absolute [lo, hi) of w in t (trace time, ns); INT64_MIN and
 * INT64_MAX for MOE_WINDOW_ALL, each GPU's own span.  -1 with err when t
 * lacks the window's step markers. */
int moe_window_resolve(const struct moe_trace *t, const struct moe_window *w, int64_t *lo,
                       int64_t *hi, struct moe_error *err);

#endif
