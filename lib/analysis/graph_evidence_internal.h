/* graph_evidence.h's functions that only lib/analysis (and its unit tests)
 * use: reading the lines, the level they add up to, and the Megatron
 * source lines every rule stands on. */
#ifndef MOEFLOW_GRAPH_EVIDENCE_INTERNAL_H
#define MOEFLOW_GRAPH_EVIDENCE_INTERNAL_H

#include <stdbool.h>

#include "analysis/graph_evidence.h"

/* Counts line into ev when it is one of the lines of graph_evidence.h
 * (anywhere in it: tqdm's progress bar glues "create cuda graphs: 0%|"
 * in front of the "Creating" line); returns true then. */
bool moe_graph_evidence_parse(const char *line, struct moe_graph_evidence *ev);

/* What a run shows of its CUDA graphs.  PROVEN: a trace has
 * cudaGraphLaunch calls.  CAPTURED: the log has a completed capture and no
 * trace was read (Megatron logs no replay, so this is all a log can say).
 * NOT_LAUNCHED: captured, but the run's traces have no launch: no graph
 * ran in the profiled steps.  FAILED: a capture error.  STARTED: a capture
 * began and never completed.  NONE: nothing. */
enum moe_graph_level {
    MOE_GRAPH_NONE,
    MOE_GRAPH_STARTED,
    MOE_GRAPH_FAILED,
    MOE_GRAPH_NOT_LAUNCHED,
    MOE_GRAPH_CAPTURED,
    MOE_GRAPH_PROVEN,
};

/* launches: cudaGraphLaunch calls summed over the run's traces; -1 when
 * no trace was read. */
enum moe_graph_level moe_graph_level(const struct moe_graph_evidence *ev, long long launches);

/* "none", "capture-started", "capture-failed", "captured-not-launched",
 * "captured", "proven-by-trace": report.json's in_effect.graph_evidence. */
const char *moe_graph_level_name(enum moe_graph_level level);

/* One Megatron source line a rule here stands on: tree (the tarball's
 * name, megatron-lm-TAG), "path:line" and a piece of that line's text,
 * which test_graph_evidence finds on the line of the committed excerpt
 * (tests/data/megatron/graph-excerpts, checked against the tarballs by
 * tests/cli/graph-evidence.sh). */
struct moe_graph_cite {
    const char *rule;
    const char *tree;
    const char *where;
    const char *text;
};

const struct moe_graph_cite *moe_graph_citations(size_t *n);

#endif
