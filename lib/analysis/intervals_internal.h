/* intervals.h's functions that only lib/analysis (and its unit tests) use. */
#ifndef MOEFLOW_INTERVALS_INTERNAL_H
#define MOEFLOW_INTERVALS_INTERNAL_H

#include "analysis/intervals.h"

/* Clips every interval to [lo, hi) and drops the ones that become empty,
 * in place; order is kept.  Returns the new count. */
size_t moe_intervals_clip(struct moe_interval *iv, size_t n, int64_t lo, int64_t hi);

/* Length of [s, e) ∩ u, where u is a union; binary search, then a walk over
 * the pieces that overlap. */
int64_t moe_intervals_cover(const struct moe_interval *u, size_t n, int64_t s, int64_t e);

/* Total length of a disjoint set. */
int64_t moe_intervals_length(const struct moe_interval *u, size_t n);

/* out = a ∪ b for two unions; out needs room for na + nb intervals. */
size_t moe_intervals_merge(const struct moe_interval *a, size_t na,
                           const struct moe_interval *b, size_t nb,
                           struct moe_interval *out);

/* Length of the intersection of two unions (sorted, disjoint). */
int64_t moe_intervals_overlap(const struct moe_interval *a, size_t na,
                              const struct moe_interval *b, size_t nb);

/* Sorts iv by start (skipping the sort when it is already sorted, as
 * profiler exports usually are). */
void moe_intervals_sort(struct moe_interval *iv, size_t n);

/* out = a \ b for two unions; out needs room for na + nb intervals.
 * Returns the count written.  The result is itself a union. */
size_t moe_intervals_subtract(const struct moe_interval *a, size_t na,
                              const struct moe_interval *b, size_t nb,
                              struct moe_interval *out);

/* Turns iv into its union: sorted, disjoint, non-touching intervals, in
 * place.  Empty intervals are dropped.  Returns the new count. */
size_t moe_intervals_union(struct moe_interval *iv, size_t n);

#endif
