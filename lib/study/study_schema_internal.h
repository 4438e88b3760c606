/* study_schema.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_STUDY_SCHEMA_INTERNAL_H
#define MOEFLOW_STUDY_STUDY_SCHEMA_INTERNAL_H

#include "study/study_schema.h"

/* The field at a dotted path ("cluster.container.image"), a map's too;
 * NULL when the schema has no such key. */
const struct moe_field *moe_study_field(const char *path);

#endif
