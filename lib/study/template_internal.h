/* template.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_TEMPLATE_INTERNAL_H
#define MOEFLOW_STUDY_TEMPLATE_INTERNAL_H

#include "study/template.h"

/* Returns a malloc'd string, or NULL with err naming name:line. */
char *moe_template_render(const char *name, const char *text, const json_t *data,
                          struct moe_error *err);

/* Reads the template file, then renders it. */
char *moe_template_render_file(const char *path, const json_t *data, struct moe_error *err);

#endif
