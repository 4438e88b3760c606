/* What lib/core shares among its own files (and its unit tests) beside
 * core/atomic_file.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_ATOMIC_FILE_INTERNAL_H
#define MOEFLOW_ATOMIC_FILE_INTERNAL_H

#include "core/atomic_file.h"

/* Rule 2's test alone: 0 when name in dirfd is absent or a regular file of
 * the caller's, else -1 with err (naming shown) and errno EEXIST.  For
 * writers that put several files in place together (core/atomic_set.h). */
int moe_atomic_replaceable(int dirfd, const char *name, const char *shown,
                           struct moe_error *err);

/* What st is, when it is not a regular file of the caller's ("a symlink",
 * "a device", "another user's file"...); NULL when it is one. */
const char *moe_atomic_refusal(const struct stat *st);

#endif
