/* Step one of reading a study: YAML text to a Jansson tree, checked against
 * the schema, with every value's position kept for later messages. */
#ifndef MOEFLOW_STUDY_YAML_H
#define MOEFLOW_STUDY_YAML_H

#include <jansson.h>

#include "core/error.h"
#include "study/study_schema.h"

/* Returns the tree (a JSON object) or NULL with err set.  *positions maps
 * each dotted field path ("baseline.ep") to [line, column], 1-based. */
json_t *moe_study_yaml_parse(const char *name, const char *text, size_t len,
                             const struct moe_field *schema, json_t **positions,
                             struct moe_error *err);

#endif
