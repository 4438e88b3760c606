/* The CUDA-graph lines real Megatron writes, and what they prove.
 *
 * Recorded on an H200 (tests/gpu/cuda-graphs/README.md): core 0.19 and the
 * Bridge pin log "Creating 8 CUDA graphs" and "> built 8 cuda graph(s) in
 * ..." for local per-layer graphs, "Capture CUDA graph for training!!!" and
 * "CUDA graph capture done for training!!!" for the full-iteration graph,
 * and never a line about a replay; their traces hold one cudaGraphLaunch per
 * graph run (128 for the layer graphs over two profiled steps, 2 for the
 * full iteration, 0 without graphs).  The Transformer Engine path was not
 * recorded (no TE on that GPU): its two lines are read from the source. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/graph_evidence_internal.h"

enum kind { STARTED, BUILT, CAPTURE_ERROR };

/* One line of Megatron's (or CUDA's) and what it says.  counted: the line
 * carries the number of graphs right after head ("> built 8 cuda graph(s)"),
 * and tail must follow that number. */
struct pattern {
    enum kind kind;
    const char *head;
    int counted;
    const char *tail;
};

static const struct pattern patterns[] = {
    /* local implementation: cuda_graphs.py "creating", "built" (citations below) */
    { STARTED, "Creating ", 1, " CUDA graphs" },
    { BUILT, "> built ", 1, " cuda graph(s) in " },
    /* full iteration: full_cuda_graph.py, for training and for validation */
    { STARTED, "Capture CUDA graph for ", 0, NULL },
    { BUILT, "CUDA graph capture done for ", 0, NULL },
    /* Transformer Engine: TECudaGraphHelper._start_capturing, _finish_capturing */
    { STARTED, "Start CUDA Graphs capture...", 0, NULL },
    { BUILT, "Time spent in CUDA Graphs capture on rank ", 0, NULL },
    /* CUDA's stream-capture errors as torch prints them ("Search for
     * `cudaErrorStreamCaptureInvalidated' in ..."): the recorded dropless
     * runs failed so, their token counts synchronising inside the capture */
    { CAPTURE_ERROR, "cudaErrorStreamCapture", 0, NULL },
    { CAPTURE_ERROR, "cudaErrorCapturedEvent", 0, NULL },
};

/* The number after head at p, and tail right after it; 0 when either is
 * missing (then the line is not this pattern). */
static int counted(const char *p, const char *tail, size_t *n)
{
    char *end;
    unsigned long v;

    if (!isdigit((unsigned char)*p))
        return 0;
    v = strtoul(p, &end, 10);
    if (strncmp(end, tail, strlen(tail)) != 0)
        return 0;
    *n = (size_t)v;
    return 1;
}

/* The first such line, kept for people. */
static void example(char *buf, size_t len, const char *line)
{
    if (!buf[0]) /* cut on purpose: an example line still shows what it is */
        snprintf(buf, len, "%s", line);
}

static void count(struct moe_graph_evidence *ev, enum kind kind, size_t n, const char *line)
{
    switch (kind) {
    case STARTED:
        ev->started++;
        break;
    case BUILT:
        ev->built++;
        /* saturates: a hostile log's "built 2^64" must not wrap the sum */
        ev->graphs = ev->graphs + n < ev->graphs ? (size_t)-1 : ev->graphs + n;
        example(ev->built_example, sizeof(ev->built_example), line);
        break;
    case CAPTURE_ERROR:
        ev->errors++;
        example(ev->error_example, sizeof(ev->error_example), line);
        break;
    }
}

bool moe_graph_evidence_parse(const char *line, struct moe_graph_evidence *ev)
{
    bool any = false;

    for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
        const struct pattern *pt = &patterns[i];
        const char *p = strstr(line, pt->head);
        size_t n = 0;

        if (!p || (pt->counted && !counted(p + strlen(pt->head), pt->tail, &n)))
            continue;
        count(ev, pt->kind, n, line);
        any = true;
    }
    return any;
}

enum moe_graph_level moe_graph_level(const struct moe_graph_evidence *ev, long long launches)
{
    if (launches > 0)
        return MOE_GRAPH_PROVEN;
    /* a completed capture before a later failure still failed the run */
    if (ev->errors)
        return MOE_GRAPH_FAILED;
    if (ev->built)
        return launches == 0 ? MOE_GRAPH_NOT_LAUNCHED : MOE_GRAPH_CAPTURED;
    return ev->started ? MOE_GRAPH_STARTED : MOE_GRAPH_NONE;
}

const char *moe_graph_level_name(enum moe_graph_level level)
{
    switch (level) {
    case MOE_GRAPH_NONE:
        return "none";
    case MOE_GRAPH_STARTED:
        return "capture-started";
    case MOE_GRAPH_FAILED:
        return "capture-failed";
    case MOE_GRAPH_NOT_LAUNCHED:
        return "captured-not-launched";
    case MOE_GRAPH_CAPTURED:
        return "captured";
    case MOE_GRAPH_PROVEN:
        return "proven-by-trace";
    }
    return "none";
}

#define C016 "megatron-lm-core_v0.16.0"
#define C019 "megatron-lm-core_v0.19.0"
#define PIN "megatron-lm-2a75ac12"
#define CG "megatron/core/transformer/cuda_graphs.py:"
#define FULL "megatron/core/full_cuda_graph.py:"
#define TRAIN "megatron/training/training.py:"
#define SCHED "megatron/core/pipeline_parallel/schedules.py:"
#define CONF "megatron/core/transformer/transformer_config.py:"

/* What the rules above and report.c's stand on, in each tree.  The log
 * lines: the patterns.  "replays": where Megatron replays a built graph on
 * every later call without logging it, which is why a completed capture
 * is evidence and a missing "replay" line is not a contradiction.  "when":
 * where each implementation captures (fake-megatron prints the lines
 * there): local graphs at the end of the first step's forward-backward
 * (their warm-up runs inside the capture), full-iteration and TE graphs
 * after cuda_graph_warmup_steps (3 by default) steps. */
static const struct moe_graph_cite cites[] = {
    { "local-creating", C016, CG "381", "Creating {len(cls.cudagraph_record)} CUDA graphs" },
    { "local-creating", C019, CG "575", "Creating {len(cls.cudagraph_record)} CUDA graphs" },
    { "local-creating", PIN, CG "581", "Creating {len(cls.cudagraph_record)} CUDA graphs" },
    { "local-built", C016, CG "447", "> built %d cuda graph(s) in " },
    { "local-built", C019, CG "638", "> built %d cuda graph(s) in " },
    { "local-built", PIN, CG "650", "> built %d cuda graph(s) in " },
    { "full-capture", C016, FULL "164", "Capture CUDA graph for {training_str}!!!" },
    { "full-capture", C019, FULL "209", "Capture CUDA graph for {training_str}!!!" },
    { "full-capture", PIN, FULL "209", "Capture CUDA graph for {training_str}!!!" },
    { "full-done", C016, FULL "182", "CUDA graph capture done for {training_str}!!!" },
    { "full-done", C019, FULL "237", "CUDA graph capture done for {training_str}!!!" },
    { "full-done", PIN, FULL "237", "CUDA graph capture done for {training_str}!!!" },
    { "te-start", C016, CG "2195", "Start CUDA Graphs capture..." },
    { "te-start", C019, CG "2668", "Start CUDA Graphs capture..." },
    { "te-start", PIN, CG "2682", "Start CUDA Graphs capture..." },
    { "te-done", C016, CG "2205", "Time spent in CUDA Graphs capture on rank " },
    { "te-done", C019, CG "2692", "Time spent in CUDA Graphs capture on rank " },
    { "te-done", PIN, CG "2706", "Time spent in CUDA Graphs capture on rank " },
    { "local-replays", C016, CG "1553", "out = runner.replay_graph_capture(" },
    { "local-replays", C019, CG "1969", "out = runner.replay_graph_capture(" },
    { "local-replays", PIN, CG "1983", "out = runner.replay_graph_capture(" },
    { "local-replays-fwd", C016, CG "612", "runner.fwd_graph.replay()" },
    { "local-replays-fwd", C019, CG "813", "runner.fwd_graph.replay()" },
    { "local-replays-fwd", PIN, CG "825", "runner.fwd_graph.replay()" },
    { "full-replays", C016, FULL "187", "FullCudaGraphWrapper.cuda_graph[training_str].replay()" },
    { "full-replays", C019, FULL "241", "FullCudaGraphWrapper.cuda_graph[training_str].replay()" },
    { "full-replays", PIN, FULL "241", "FullCudaGraphWrapper.cuda_graph[training_str].replay()" },
    { "local-when", C016, SCHED "698", "create_cudagraphs()" },
    { "local-when", C019, SCHED "862", "create_cudagraphs()" },
    { "local-when", PIN, SCHED "871", "create_cudagraphs()" },
    { "local-warmup-inside", C016, CG "908", "for _ in range(self.num_warmup_steps):" },
    { "local-warmup-inside", C019, CG "1260", "for _ in range(self.num_warmup_steps):" },
    { "local-warmup-inside", PIN, CG "1283", "for _ in range(self.num_warmup_steps):" },
    { "full-when", C016, FULL "163", "if curr_iteration == self.cuda_graph_warmup_steps:" },
    { "full-when", C019, FULL "208", "if curr_iteration == self.cuda_graph_warmup_steps:" },
    { "full-when", PIN, FULL "208", "if curr_iteration == self.cuda_graph_warmup_steps:" },
    { "te-when", C016, TRAIN "2742", "iteration - start_iteration == args.cuda_graph_warmup_steps" },
    { "te-when", C019, TRAIN "3788", "iteration - start_iteration == args.cuda_graph_warmup_steps" },
    { "te-when", PIN, TRAIN "3905", "iteration - start_iteration == args.cuda_graph_warmup_steps" },
    { "warmup-default", C016, CONF "769", "cuda_graph_warmup_steps: int = 3" },
    { "warmup-default", C019, CONF "1023", "cuda_graph_warmup_steps: int = 3" },
    { "warmup-default", PIN, CONF "1030", "cuda_graph_warmup_steps: int = 3" },
};

const struct moe_graph_cite *moe_graph_citations(size_t *n)
{
    *n = sizeof(cites) / sizeof(cites[0]);
    return cites;
}
