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

void moe_stage_plan_free(struct moe_stage_plan *plan);

#endif
