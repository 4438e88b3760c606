/* The one check of a model's architecture, whichever way it arrives: a
 * study (a preset, a custom model, or a preset with overrides), or fit's
 * and layouts' --preset and --model-json.  Every number lies in the study
 * schema's range for its key, derived ones included (head_dim from hidden
 * / num_heads, num_query_groups from num_heads), and the cross-field rules
 * hold (topk <= num_experts, ...). */
#ifndef MOEFLOW_MODEL_CHECK_H
#define MOEFLOW_MODEL_CHECK_H

#include "core/error.h"
#include "core/model.h"

/* 0, or -1 with err's text saying what is wrong and *key naming the model
 * key it is about ("topk"), so that a caller can point at it. */
int moe_model_check(const struct moe_model *m, const char **key, struct moe_error *err);

#endif
