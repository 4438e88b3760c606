/* The step-time prediction as text (term by term, for --explain and fit)
 * and as JSON, shared by `moeflow fit` and `moeflow layouts`. */
#ifndef MOEFLOW_STEPTIME_TEXT_H
#define MOEFLOW_STEPTIME_TEXT_H

#include <stdio.h>

#include <jansson.h>

#include "core/json_build.h"
#include "fit/layouts.h"
#include "fit/steptime.h"

void steptime_print(FILE *out, const struct moe_perf *p, const struct moe_layout *l,
                    const struct moe_step *st);

/* layouts --explain: the first entry's terms. */
void steptime_explain(FILE *out, const struct moe_perf *p, const struct moe_layout_entry *e);

/* The JSON builders set failures on b (core/json_build.h). */
json_t *steptime_json(struct moe_jb *b, const struct moe_step *st);

/* How many published or measured step times the model is within +-25% of
 * on p's GPU type (fit/gpu.h), as a line and as JSON. */
void steptime_confidence(FILE *out, const struct moe_perf *p);
json_t *steptime_confidence_json(struct moe_jb *b, const struct moe_perf *p);

/* What of p's run the model leaves out, as o's "steptime_not_modeled"
 * (nothing set when it leaves nothing out); -1 on a failure. */
int steptime_not_modeled_json(struct moe_jb *b, json_t *o, const struct moe_perf *p);

#endif
