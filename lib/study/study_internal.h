/* study.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_STUDY_INTERNAL_H
#define MOEFLOW_STUDY_STUDY_INTERNAL_H

#include <string.h>

#include "study/study.h"

/* Megatron's --transformer-impl transformer_engine, or local without TE. */
static inline bool moe_software_has_te(const struct moe_software *sw)
{
    return moe_study_str_set(sw->transformer_engine);
}

/* Same, from a string; name is used in messages. */
int moe_study_load_string(struct moe_study *study, const char *name, const char *text,
                          struct moe_error *err);

int moe_study_world_size(const struct moe_study *study);

/* The time limit of stage st's jobs: cluster.stage_time_limit's, else
 * cluster.time_limit. */
const char *moe_study_time_limit(const struct moe_study *study, enum moe_stage st);

/* study_json.c: the resolved study as canonical JSON (new reference);
 * NULL with err naming the key that could not be made. */
json_t *moe_study_to_json(const struct moe_study *study, struct moe_error *err);

/* The study's enum values as the YAML spells them. */
const char *moe_dialect_name(enum moe_dialect d);
const char *moe_dispatcher_name(enum moe_dispatcher d);
const char *moe_recompute_name(enum moe_recompute r);
const char *moe_routing_name(enum moe_routing r);
const char *moe_profiler_name(enum moe_profiler p);
const char *moe_router_score_name(enum moe_router_score r);
const char *moe_attention_name(enum moe_attention_kind a);
bool moe_precision_is_fp8(enum moe_precision p);

/* cuda_graph_modules: [full_iteration]: Megatron's graph of the whole
 * forward-backward step (core 0.16's --cuda-graph-scope full_iteration,
 * core 0.19's --cuda-graph-impl full_iteration) rather than TE's graphs of
 * modules; alone in the list (study.c). */
static inline bool moe_graphs_full_iteration(const struct moe_baseline *b)
{
    return b->cuda_graph_modules.n == 1 && strcmp(b->cuda_graph_modules.v[0], "full_iteration") == 0;
}

#endif
