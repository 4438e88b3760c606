/* Hidden communication from kernel traces (workflow stage 3, "profile").
 *
 * Per GPU over a window: the union C of communication-kernel intervals and
 * the union P of compute-kernel intervals, over all streams; hidden
 * communication |C ∩ P| / |C|; exposed communication |C \ P|; the busy union
 * C ∪ P and the idle gaps around it, a sign of host or launch overhead; and
 * the communication kernels ranked by the exposed time they cover.  Kernel
 * durations are never summed as wall time. */
#ifndef MOEFLOW_OVERLAP_H
#define MOEFLOW_OVERLAP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "analysis/trace.h"

enum moe_window_kind {
    MOE_WINDOW_ALL = 0, /* each GPU from its first kernel to its last */
    MOE_WINDOW_TIME,    /* [lo, hi) ns after the trace's first kernel */
    MOE_WINDOW_STEPS,   /* from the start of step `first` to the end of `last` */
};

struct moe_window {
    enum moe_window_kind kind;
    int64_t lo, hi;
    long first, last;
};

/* "all", "steps=41-50", "steps=7", "time=1.5s-2s" (units ns, us, ms, s;
 * relative to the trace's first kernel). */
int moe_window_parse(const char *text, struct moe_window *w, struct moe_error *err);

/* Kernels shorter than this count as "short": many of them point at launch
 * overhead. */
#define MOE_SHORT_KERNEL_NS 10000

struct moe_overlap_gpu {
    char trace[256];
    int device;
    int64_t lo, hi;        /* the window used, absolute trace time (ns) */
    size_t kernels;        /* kernels inside the window */
    size_t comm_kernels;
    size_t short_kernels;  /* shorter than MOE_SHORT_KERNEL_NS */
    int64_t comm;          /* |C| */
    int64_t compute;       /* |P| */
    int64_t hidden;        /* |C ∩ P| */
    int64_t exposed;       /* |C \ P| */
    int64_t busy;          /* |C ∪ P| */
    int64_t idle;          /* window length - busy */
    size_t gaps;           /* idle stretches in the window */
    int64_t max_gap;
};

struct moe_overlap_kernel {
    char *name;
    int64_t exposed; /* exposed communication time this kernel's runs cover */
    int64_t time;    /* their union-free attribution: clipped run time */
    size_t count;
};

struct moe_overlap {
    struct moe_overlap_gpu *gpus;
    size_t ngpus, capgpus;
    struct moe_overlap_gpu total; /* sums over GPUs (GPU-time, not wall time) */
    struct moe_overlap_kernel *kernels;
    size_t nkernels, capkernels;
};

void moe_overlap_init(struct moe_overlap *o);
void moe_overlap_free(struct moe_overlap *o);

/* Analyses every device of t over w.  Sorts and clips t's arrays in place:
 * whatever reads the compute kernels' names (trace.h) reads them first. */
int moe_overlap_add_trace(struct moe_overlap *o, struct moe_trace *t, const struct moe_window *w,
                          struct moe_error *err);

/* Totals, and the kernel ranking cut to the top_n by exposed time. */
int moe_overlap_finish(struct moe_overlap *o, size_t top_n, struct moe_error *err);

/* Percent hidden; negative when there is no communication at all. */
double moe_overlap_hidden_pct(const struct moe_overlap_gpu *g);

/* The overlap as JSON; NULL with err (may be NULL) naming the key when a
 * value could not be made (out of memory), never an object with a key
 * left out. */
json_t *moe_overlap_to_json(const struct moe_overlap *o, const struct moe_window *w,
                            struct moe_error *err);

#endif
