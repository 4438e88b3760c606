/* trace.h's functions that only lib/analysis (and its unit tests) use:
 * what the Kineto and nsys readers build a trace with. */
#ifndef MOEFLOW_TRACE_INTERNAL_H
#define MOEFLOW_TRACE_INTERNAL_H

#include "analysis/trace.h"

/* The message for a negative return of moe_trace_add_kernel and
 * moe_trace_absorb: "out of memory" or the device bound. */
const char *moe_trace_failure(int rc);

/* Used by the readers.  Names: add (no de-duplication) or intern; both
 * return the name's index, or -1 on allocation failure.  Kernels: 0, or -1
 * or MOE_TRACE_TOO_MANY_DEVICES. */
long moe_trace_add_name(struct moe_trace *t, const char *text);
long moe_trace_intern(struct moe_trace *t, const char *text, size_t len);
int moe_trace_add_kernel(struct moe_trace *t, int device, uint32_t name, int64_t start,
                         int64_t end);

/* A kernel's device id as a reader found it (64 bits in both formats),
 * checked into an int: 0..MOE_TRACE_DEVICE_MAX, else -1 with err saying so
 * (narrowed, 2^32 would be device 0 and its kernels another GPU's). */
int moe_trace_device_id(int64_t raw, const char *kernel, int *out, struct moe_error *err);

/* Records name as a step marker when it is step_prefix followed by a
 * number; other names are ignored.  Returns -1 only on allocation failure. */
int moe_trace_add_marker(struct moe_trace *t, const char *name, int64_t start, int64_t end,
                         int gpu);

/* Moves sub's kernels to the end of t's, mapping sub's names onto t's by
 * text; sub keeps its names and loses its kernels.  Used to join what
 * parallel readers produced. */
int moe_trace_absorb(struct moe_trace *t, struct moe_trace *sub);

/* The Kineto reader, also reachable directly. */
int moe_trace_read_kineto(struct moe_trace *t, const char *path, struct moe_error *err);

/* The nsys reader, also reachable directly (tests/fuzz/fuzz_nsys.c). */
int moe_trace_read_nsys(struct moe_trace *t, const char *path, struct moe_error *err);

#endif
