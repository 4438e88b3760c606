/* study_yaml.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_STUDY_YAML_INTERNAL_H
#define MOEFLOW_STUDY_STUDY_YAML_INTERNAL_H

#include "study/study_yaml.h"

/* Where the walk puts the errors it goes on after: each one (list), and
 * the key path of each value in error (bad, an object of paths to true),
 * which the reader's checks then skip. */
struct moe_yaml_errors {
    struct moe_error_list *list;
    json_t *bad;
};

/* Returns the tree (a JSON object) with each key in error left out and
 * its error in errors, or NULL with err set: the text is no YAML, not one
 * mapping, or out of memory.  *positions maps each dotted field path
 * ("baseline.ep") to [line, column], 1-based. */
json_t *moe_study_yaml_parse(const char *name, const char *text, size_t len,
                             const struct moe_field *schema, json_t **positions,
                             struct moe_yaml_errors *errors, struct moe_error *err);

#endif
