/* The candidates of each stage: what runs, with which change from the
 * baseline, and why a catalogue entry was skipped.  Planning decides each
 * candidate's run and what it is called; rendering turns the run into its
 * arguments, environment, declared contract and id. */
#ifndef MOEFLOW_CANDIDATES_H
#define MOEFLOW_CANDIDATES_H

#include "core/manifest.h"
#include "core/stage.h"
#include "study/megatron_args.h"
#include "study/study.h"

/* cands[i] (core/manifest.h) runs runs[i].  After moe_candidates_build a
 * candidate has everything but argv, env, contract and id; after
 * moe_candidates_render it has those too.  A candidate that arrives
 * rendered (validate's recorded winners) has no run of its own. */
struct moe_stage_plan {
    enum moe_stage stage;
    struct moe_candidate *cands;
    struct moe_run *runs;
    size_t n, cap;
    struct moe_skip *skipped;
    size_t n_skipped, cap_skipped;
    struct moe_candidate *reference; /* retune: core/manifest.h's, owned; NULL: none */
};

int moe_candidates_build(const struct moe_study *study, enum moe_stage stage,
                         struct moe_stage_plan *plan, struct moe_error *err);

/* Renders every candidate that has no contract yet. */
int moe_candidates_render(const struct moe_study *study, struct moe_stage_plan *plan,
                          struct moe_error *err);

/* moeflow gen --for B: keeps the candidates that target bottleneck B (as
 * moeflow diagnose names it) and lists the others as skipped. */
int moe_candidates_keep_bottleneck(struct moe_stage_plan *plan, const char *bottleneck);

/* Lists variable=value as skipped, with reason.  Takes value; -1 when out
 * of memory. */
int moe_stage_plan_skip(struct moe_stage_plan *plan, const char *variable, json_t *value,
                        const char *reason);

/* Appends a copy of c, rendered, with no run; -1 when out of memory. */
int moe_stage_plan_add(struct moe_stage_plan *plan, const struct moe_candidate *c);

void moe_stage_plan_free(struct moe_stage_plan *plan);

#endif
