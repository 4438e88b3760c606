/* Half-open time intervals [start, end) in nanoseconds, and the set
 * operations the overlap analysis is built from.  Everything is sort-based:
 * O(n log n) to normalise, then linear merges.  Kernel durations are never
 * summed; only lengths of disjoint unions are. */
#ifndef MOEFLOW_INTERVALS_H
#define MOEFLOW_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

struct moe_interval {
    int64_t start;
    int64_t end; /* exclusive */
};

#endif
