/* What lib/core shares among its own files (and the tests) beside
 * core/plugin_config.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_PLUGIN_CONFIG_INTERNAL_H
#define MOEFLOW_PLUGIN_CONFIG_INTERNAL_H

#include "core/plugin_config.h"

void moe_plugin_config_defaults(struct moe_plugin_config *cfg);

#endif
