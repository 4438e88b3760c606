/* A bound on YAML nesting, checked before libyaml builds a document.
 * libyaml keeps one pending simple key per open flow collection and looks
 * at all of them for every token, so 100,000 nested '[' (a 200 kB file)
 * took 27 s to parse; no study or NVLink map nests beyond a few levels. */
#ifndef MOEFLOW_YAML_DEPTH_H
#define MOEFLOW_YAML_DEPTH_H

#include <stddef.h>

#include "core/error.h"

#define MOE_YAML_DEPTH_MAX 64

/* 0 when no collection in text nests deeper than MOE_YAML_DEPTH_MAX; -1
 * with err at name:line:col of the first one that does.  A syntax error is
 * left to the loader, which reports it its own way (0). */
int moe_yaml_check_depth(const char *name, const char *text, size_t len,
                         struct moe_error *err);

#endif
