/* checkpoint_verdict.h's functions that only lib/analysis (and its unit tests) use. */
#ifndef MOEFLOW_CHECKPOINT_VERDICT_INTERNAL_H
#define MOEFLOW_CHECKPOINT_VERDICT_INTERNAL_H

#include "analysis/checkpoint_verdict.h"

/* The sizes of the regular files under dir, not following links; -1 when
 * dir cannot be read. */
long long moe_ckpt_dir_bytes(const char *dir);

/* The verdict from the two logs (resumed NULL: its log is missing) and
 * the folder's size (-1: missing). */
void moe_ckpt_judge(const struct moe_log *uninterrupted, const struct moe_log *resumed,
                    const struct moe_ckpt_spec *spec, long long dir_bytes,
                    struct moe_ckpt_verdict *v);

#endif
