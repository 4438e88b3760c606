/* scale_rule.h's functions that only lib/loop (and its unit tests) use. */
#ifndef MOEFLOW_LOOP_SCALE_RULE_INTERNAL_H
#define MOEFLOW_LOOP_SCALE_RULE_INTERNAL_H

#include "loop/scale_rule.h"

/* The three term groups of a prediction, in ms. */
void moe_loop_step_groups(const struct moe_step *s, double g[MOE_LOOP_GROUPS]);

/* Judges the measured layouts of l (those with samples), fits the
 * correction and sets each layout's corrected_ms.  0, or -1 with err when
 * no layout has two or more samples. */
int moe_loop_scale_decide(struct moe_loop_layout *l, size_t n, double alpha,
                          struct moe_loop_scale *out, struct moe_error *err);

/* The next round: the unmeasured layouts whose corrected step lies within
 * the corrected model's residual error (at least 10%) of the best
 * corrected step of all, fastest first, at most max into idx.  Returns
 * how many. */
size_t moe_loop_next_round(const struct moe_loop_layout *l, size_t n,
                           const struct moe_loop_scale *s, size_t *idx, size_t max);

#endif
