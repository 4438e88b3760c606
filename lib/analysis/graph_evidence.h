/* What a Megatron log says about its CUDA graphs, from the lines real
 * Megatron writes (core 0.16, core 0.19, the Megatron-Bridge pin): a capture
 * that started, one that completed, one that failed.  Megatron logs no line
 * when it replays a graph: it replays what it built on every later step
 * without a word (graph_evidence.c cites where), so a completed capture is
 * the most a log can say; a kernel trace's cudaGraphLaunch calls
 * (trace.h, moe_trace.graph_launches) are what proves the replays. */
#ifndef MOEFLOW_GRAPH_EVIDENCE_H
#define MOEFLOW_GRAPH_EVIDENCE_H

#include <stddef.h>

struct moe_graph_evidence {
    size_t started; /* capture began: "Creating N CUDA graphs", "Capture CUDA graph for
                       training!!!", "Start CUDA Graphs capture..." */
    size_t built;   /* capture completed: "> built N cuda graph(s)", "CUDA graph capture
                       done for training!!!", "Time spent in CUDA Graphs capture" */
    size_t graphs;  /* the N of the "> built N cuda graph(s)" lines, summed */
    size_t errors;  /* a CUDA stream-capture error (cudaErrorStreamCapture..., ...) */
    char built_example[160]; /* the first completed-capture line, for people */
    char error_example[160]; /* the first capture error line */
};

#endif
