/* study_yaml.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_STUDY_YAML_INTERNAL_H
#define MOEFLOW_STUDY_STUDY_YAML_INTERNAL_H

#include "study/study_yaml.h"

/* Returns the tree (a JSON object) or NULL with err set.  *positions maps
 * each dotted field path ("baseline.ep") to [line, column], 1-based. */
json_t *moe_study_yaml_parse(const char *name, const char *text, size_t len,
                             const struct moe_field *schema, json_t **positions,
                             struct moe_error *err);

#endif
