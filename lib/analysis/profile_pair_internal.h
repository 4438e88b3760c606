/* profile_pair.c's functions that only lib/analysis (and its unit tests)
 * use: one profiled side, read and set against another. */
#ifndef MOEFLOW_PROFILE_PAIR_INTERNAL_H
#define MOEFLOW_PROFILE_PAIR_INTERNAL_H

#include <jansson.h>

#include "analysis/profile_pair.h"
#include "core/json_build.h"

void moe_profile_side_init(struct moe_profile_side *s);
void moe_profile_side_free(struct moe_profile_side *s);

/* Adds t (read with t->compute_names set) over w: its contention first,
 * then its overlap, which consumes t (overlap.h). */
int moe_profile_side_add_trace(struct moe_profile_side *s, struct moe_trace *t,
                               const struct moe_window *w, struct moe_error *err);

/* Reads every trace of one profiled run: *.json, *.json.gz, *.sqlite in dir
 * and in its torch_profile/ and tensorboard/ folders (where Megatron's
 * PyTorch profiler writes, core/manifest.h), over steps first..last.  0;
 * 1 when dir holds no trace (the twin has not run); -1 with err. */
int moe_profile_side_load(struct moe_profile_side *s, const char *dir, long first, long last,
                          struct moe_error *err);

/* One side as report.json holds it: per GPU and step (steps: the window's
 * length), every figure labelled measured; top: kernel names listed.  NULL with
 * b's failure naming the key that could not be made. */
json_t *moe_profile_side_json(struct moe_jb *b, const struct moe_profile_side *s, long steps,
                              size_t top);

/* How much slower (%) the compute kernels that ran both alone and beside
 * communication ran beside it, over the names that ran both ways; NAN
 * when no name did (nothing measured, which is not 0). */
double moe_profile_side_contention_pct(const struct moe_profile_side *s);

/* A winner's side against the baseline's: both sides, the differences, and
 * the compute kernels both ran (the winner's top by time), each with its
 * mean duration in both. */
json_t *moe_profile_pair_json(struct moe_jb *b, const struct moe_profile_side *baseline,
                              const struct moe_profile_side *winner, long steps, size_t top);

#endif
