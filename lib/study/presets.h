/* Published MoE architectures, so a study can say "model: qwen3-30b-a3b". */
#ifndef MOEFLOW_PRESETS_H
#define MOEFLOW_PRESETS_H

#include "core/model.h"

/* NULL when the name is unknown; names are lower-case, e.g. "deepseek-v3". */
const struct moe_model *moe_preset_find(const char *name);

/* NULL-terminated list of preset names, for messages and suggestions. */
const char *const *moe_preset_names(void);

#endif
