/* CUDA-graph memory: what a captured graph keeps that eager training frees.
 *
 * A graph replays fixed addresses, so everything its capture allocates
 * comes from a private memory pool that only its replays use; the caching
 * allocator keeps its own blocks (of the eager steps before the capture)
 * as well.  On top of the eager peak the GPU therefore holds:
 *
 *  - the pool: the working set the capture ran through.  For Megatron's
 *    full-iteration graph that is one forward-backward step: the
 *    activations saved for backward of the microbatches in flight, which
 *    already counts one copy per microbatch that pipeline parallelism
 *    keeps alive, plus the transients at the peak (loss, attention
 *    backward), but not the optimizer step, which runs outside the graph.
 *    Measured: tests/gpu/cuda-graphs.tsv (core 0.19 and bridge-pin, one
 *    H200, without TE) and the lane's run of a study moeflow wrote
 *    (tests/data/gpu/cuda-graphs-lane.tar.xz, with moeflow's expandable
 *    segments); tests/cli/graph-memory.sh derives the error from them.
 *    For TE's graphs of modules, the graphed share of each layer's saved
 *    activations, one copy per microbatch in flight (TE captures a graph
 *    per microbatch and layer chunk).  Modeled only: the device has no TE.
 *  - static buffers: the inputs and outputs each graph reads and writes in
 *    place.  The full-iteration wrapper reads every microbatch's batch
 *    before the capture (full_cuda_graph.py data_read); a module graph has
 *    its input, its output and their gradients.  Modeled: a few MiB,
 *    inside the measured pool's rounding.
 *
 * The pool is what an out-of-memory error counts, not max allocated (a
 * replay allocates nothing), so the total with graphs is the GPU's
 * footprint: max allocated plus the pool. */
#include "config.h"

#include "fit/memory_internal.h"

/* Bytes per token of a batch: tokens, labels and position ids (int64)
 * and the loss mask (fp32). */
#define BATCH_BYTES_PER_TOKEN (3 * 8 + 4)

double moe_memory_graph_static(const struct moe_model *m, const struct moe_layout *l,
                               const struct moe_workload *w, const struct moe_train *t,
                               int layers, int in_flight)
{
    double tok = (double)w->seq_len / l->cp * w->mbs;
    double sp = (l->tp > 1 && t->sequence_parallel) ? l->tp : 1;

    switch (t->graphs) {
    case MOE_GRAPHS_FULL_ITERATION:
        return (t->microbatches > 0 ? t->microbatches : 1) * tok * BATCH_BYTES_PER_TOKEN;
    case MOE_GRAPHS_MODULES:
        /* bf16 input, output and both gradients, per layer and microbatch */
        return (double)layers * in_flight * 4 * 2 * tok * m->hidden / sp;
    case MOE_GRAPHS_NONE:
        break;
    }
    return 0;
}

void moe_memory_graph_pool(struct moe_memory *o, const struct moe_stage_act *act)
{
    switch (o->graph_kind) {
    case MOE_GRAPHS_FULL_ITERATION:
        o->graph_pool = act->saved + act->transient;
        break;
    case MOE_GRAPHS_MODULES:
        o->graph_pool = ((o->graph_parts & MOE_GRAPH_ATTN) ? act->attn_share : 0) * act->saved +
                        ((o->graph_parts & MOE_GRAPH_FFN) ? 1 - act->attn_share : 0) * act->saved;
        break;
    case MOE_GRAPHS_NONE:
        o->graph_pool = 0;
        break;
    }
    o->graphs = o->graph_pool + o->graph_static;
}

const char *moe_memory_graphs_label(enum moe_graphs g)
{
    switch (g) {
    case MOE_GRAPHS_FULL_ITERATION:
        return "measured: full-iteration graphs on one H200, tests/gpu/cuda-graphs.tsv "
               "and tests/data/gpu/cuda-graphs-lane.tar.xz";
    case MOE_GRAPHS_MODULES:
        return "modeled, not measured: TE graphs need Transformer Engine, which the GPU "
               "lane lacks";
    case MOE_GRAPHS_NONE:
        break;
    }
    return "";
}
