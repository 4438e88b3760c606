/* A GPU kernel trace reduced to what the overlap analysis needs: per device,
 * the communication kernels (with their names, for attribution) and the
 * compute intervals, plus the step markers that define windows and the count
 * of CUDA graph launches.  Readers for
 * Kineto JSON (trace_kineto.c) and Nsight Systems SQLite (trace_nsys.c) fill
 * it; overlap.c consumes it.  Kernels are classified once per distinct name
 * as they are read, so per-kernel work stays a few stores. */
#ifndef MOEFLOW_TRACE_H
#define MOEFLOW_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "analysis/intervals.h"

/* Kernel-name globs (fnmatch) that mark communication: NCCL, DeepEP,
 * HybridEP and NVSHMEM dispatch/combine.  NULL-terminated. */
extern const char *const moe_trace_default_comm[];

/* Kernel and marker times outside [0, MOE_TRACE_TIME_MAX] ns, or ending
 * before they start, are not times a profiler writes (nsys counts from the
 * session start, Kineto from the epoch: about 2^60.6 ns today); the readers
 * drop them, so every interval length and GPU-time sum fits in 64 bits, and
 * count the kernels they drop (moe_trace.dropped) so that it can be said. */
#define MOE_TRACE_TIME_MAX ((int64_t)1 << 62)

/* Bounds of the Kineto reader, which holds one JSON value at a time: the
 * longest value (an event, or a top-level member such as deviceProperties;
 * real ones are a few kB), and what a file may unpack to (a profiler
 * writes hundreds of MiB per rank for a few steps; a gzip bomb gives a
 * thousand times its size). */
#define MOE_TRACE_VALUE_MAX ((size_t)16 << 20)
#define MOE_TRACE_VALUE_MAX_TEXT "16 MiB"
#define MOE_TRACE_UNPACKED_MAX (16ULL << 30)
/* ... and, to bound the time as well, at most this many times the bytes of
 * the file inflated so far, past a floor: gzip gives a real trace about
 * 13:1 (tests/data/traces), 32:1 leaves room for repetitive ones, while a
 * bomb gives 1000:1.  The reader's time is linear in the text, at most
 * about 0.25 s per MiB (events of 3 bytes, '{},'; real events of 200 bytes
 * take 20 ms), so a gzip costs at most 32 times that per MiB of the file.
 * A plain file is read at 1:1. */
#define MOE_TRACE_UNPACK_RATIO 32
#define MOE_TRACE_UNPACK_FLOOR (4ULL << 20)

/* One trace file is one process (Kineto) or one node (nsys): a few GPUs.
 * More devices than this is no profiler's output, and each would become a
 * row of the analysis. */
#define MOE_TRACE_DEVICES_MAX 4096
#define MOE_TRACE_DEVICES_MAX_TEXT "4096"

/* What moe_trace_add_kernel and moe_trace_absorb return beyond -1 (out of
 * memory): the trace names more than MOE_TRACE_DEVICES_MAX devices. */
#define MOE_TRACE_TOO_MANY_DEVICES (-2)

/* The marker prefix PyTorch's profiler uses for steps: "ProfilerStep#41". */
#define MOE_TRACE_STEP_PREFIX "ProfilerStep#"

struct moe_kernel {
    int64_t start; /* ns */
    int64_t end;   /* ns, exclusive */
    uint32_t name; /* index into moe_trace.names */
};

struct moe_trace_name {
    char *text;
    int comm; /* 1 when a communication pattern matched */
};

struct moe_trace_device {
    int id; /* device index as the trace spells it */
    struct moe_kernel *comm;
    size_t ncomm, capcomm;
    struct moe_interval *compute;
    size_t ncompute, capcompute;
    uint32_t *compute_names; /* compute[i]'s name, only with moe_trace.compute_names set */
    size_t capcompute_names;
};

struct moe_step_marker {
    long step;
    int64_t start, end;
    int gpu; /* 1 for GPU-side annotations, which track kernels more closely */
};

struct moe_trace {
    /* source and step_prefix are borrowed from moe_trace_init's caller, as
     * comm_patterns is: a copy into a fixed buffer would cut a long path or
     * prefix (and a cut prefix would match other markers). */
    const char *source;
    const char *const *comm_patterns;
    const char *step_prefix;
    struct moe_trace_name *names;
    size_t nnames, capnames;
    uint32_t *slots; /* open-addressing index over names, for interning */
    size_t nslots;
    struct moe_trace_device *devices; /* in order of first appearance */
    size_t ndevices, capdevices;
    uint32_t *devslots; /* open-addressing index over devices by id */
    size_t ndevslots;
    size_t last_device; /* cache: most kernels follow one on the same device */
    struct moe_step_marker *steps;
    size_t nsteps, capsteps;
    size_t dropped;  /* kernels left out for an impossible time */
    /* CUDA runtime calls that launched a CUDA graph (cudaGraphLaunch, with
     * nsys's version suffix or not): Megatron logs no replay, and each
     * replay of a graph it built is one of these calls (graph_evidence.h) */
    size_t graph_launches;
    int threads; /* nsys reader threads; 0 picks by size and CPU count */
    unsigned long long unpacked_max; /* Kineto; 0: MOE_TRACE_UNPACKED_MAX */
    int compute_names; /* 1: keep each compute kernel's name (compute_names), for
                          the per-kernel contention of profile_pair.h; the overlap
                          analysis needs none, and sorts compute without them */
};

/* patterns: NULL for the defaults.  step_prefix: NULL for ProfilerStep#.
 * source, patterns and step_prefix are kept, not copied: they must outlive t. */
void moe_trace_init(struct moe_trace *t, const char *source, const char *const *patterns,
                    const char *step_prefix);
void moe_trace_free(struct moe_trace *t);

/* Reads path, sniffing the format: SQLite (nsys export) or JSON / gzip JSON
 * (Kineto).  Returns 0, or -1 with err set. */
int moe_trace_load(struct moe_trace *t, const char *path, struct moe_error *err);

/* The largest device id a trace may name (trace_internal.h,
 * moe_trace_device_id). */
#define MOE_TRACE_DEVICE_MAX INT32_MAX

#endif
