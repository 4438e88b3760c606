/* What lib/core shares among its own files (and its unit tests) beside
 * core/json_build.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_JSON_BUILD_INTERNAL_H
#define MOEFLOW_JSON_BUILD_INTERNAL_H

#include "core/json_build.h"

/* v as a JSON number; null when v is not finite (the caller records it:
 * moe_jb_num does).  NULL only when out of memory. */
json_t *moe_json_number(double v);

/* "inf", "-inf" or "nan"; NULL for a finite v. */
const char *moe_json_non_finite_name(double v);

#endif
