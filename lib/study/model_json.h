/* A custom model for fit/layouts as JSON: the fields of struct moe_model
 * under the same names ({"name": "tiny", "num_layers": 8, ...}).  Fields
 * left out start from "base" (a preset name) when given, else zero. */
#ifndef MOEFLOW_MODEL_JSON_H
#define MOEFLOW_MODEL_JSON_H

#include "core/error.h"
#include "core/model.h"

/* -1 with err ("file:line:col: text") on a parse error, an unknown key or
 * a value of the wrong type. */
int moe_model_from_json_file(const char *path, struct moe_model *m, struct moe_error *err);

#endif
