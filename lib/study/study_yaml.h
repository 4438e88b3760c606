/* Step one of reading a study: YAML text to a Jansson tree, checked against
 * the schema, with every value's position kept for later messages. */
#ifndef MOEFLOW_STUDY_YAML_H
#define MOEFLOW_STUDY_YAML_H

#include <jansson.h>

#include "core/error.h"
#include "study/study_schema.h"

#endif
