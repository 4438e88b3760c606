/* Megatron-Core's process groups for a layout, built the way its
 * RankGenerator builds them: ranks ordered tp-cp-ep-dp-pp (first fastest)
 * for dense groups without ep, and etp-ep-edp-pp for expert groups. */
#ifndef MOEFLOW_RANKGROUPS_H
#define MOEFLOW_RANKGROUPS_H

#include <stddef.h>

#include "core/model.h"

/* Writes the groups in Megatron's printed form, one kind per line:
 * "dense tp [[0, 1], [2, 3]]" ... "expert tp-ep [[0, 1, 2, 3], ...]",
 * after a "world=16 TP=2 ..." header.  Returns the length written, or -1
 * when buf is too small or the layout does not multiply to world. */
int moe_rank_groups_format(const struct moe_layout *l, int world, char *buf, size_t len);

#endif
