/* What lib/core shares among its own files (and its unit tests) beside
 * core/atomic_set.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_ATOMIC_SET_INTERNAL_H
#define MOEFLOW_ATOMIC_SET_INTERNAL_H

#include "core/atomic_set.h"

/* Whether the folder dir holds a journal: a set committed but not all in
 * place.  For readers, which refuse it until a writer recovers it. */
bool moe_atomic_set_pending(const char *dir);

#endif
