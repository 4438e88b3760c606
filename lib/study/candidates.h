/* The candidates of each stage: what runs, with which change from the
 * baseline, and why a catalogue entry was skipped. */
#ifndef MOEFLOW_CANDIDATES_H
#define MOEFLOW_CANDIDATES_H

#include <jansson.h>

#include "core/stage.h"
#include "study/study.h"

/* candidates: array of objects with keys stage, variable, value, label
 * ("training-equivalent" | "benchmark-only"), bottleneck, argv, env, nodes,
 * gpus_per_node, tasks_per_node, world_size, rank (fit only), note,
 * predicted_mib (fit only: the memory model's peak for that rank), and id:
 * the SHA-256 of the canonical JSON of all the other keys but predicted_mib
 * (what moeflow expects of a run is not what runs, and a model change must
 * not rename the jobs).
 * skipped: array of {variable, value, reason}. */
struct moe_stage_plan {
    enum moe_stage stage;
    json_t *candidates;
    json_t *skipped;
};

int moe_candidates_build(const struct moe_study *study, enum moe_stage stage,
                         struct moe_stage_plan *plan, struct moe_error *err);

void moe_stage_plan_free(struct moe_stage_plan *plan);

#endif
