/* megatron_args.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_MEGATRON_ARGS_INTERNAL_H
#define MOEFLOW_STUDY_MEGATRON_ARGS_INTERNAL_H

#include "study/megatron_args.h"

/* A run equal to the study's baseline, for train_iters steps. */
void moe_run_from_baseline(struct moe_run *run, const struct moe_study *study, int train_iters);

/* The whole table. */
const struct moe_megatron_rename *moe_megatron_renames(size_t *n);

/* flag as dialect d spells it: flag itself when it was never renamed;
 * NULL when it was and the table has no spelling for d. */
const char *moe_megatron_flag(const char *flag, enum moe_dialect d);

/* The flag that sets the flex dispatcher's SM count for dispatcher d in
 * dialect: one per backend in core 0.16, --moe-flex-dispatcher-num-sms
 * after; NULL for a dispatcher that takes none. */
const char *moe_megatron_sms_flag(enum moe_dispatcher d, enum moe_dialect dialect);

/* The argument list, in a fixed order, appended to argv; -1 when out of
 * memory, or with err naming the flag and the dialect when a renamed flag
 * has no spelling in the study's dialect (a table test_megatron_args
 * refuses). */
int moe_megatron_argv(const struct moe_study *study, const struct moe_run *run,
                      struct moe_strv *argv, struct moe_error *err);

/* The profiling switches of the study's profiler over its profile_steps
 * (--profile and its step range; with the PyTorch profiler also
 * --use-pytorch-profiler and --tensorboard-dir tensorboard_dir), appended
 * to argv; -1 when out of memory.  The profile stage and validate's
 * profiling twins (study/validate_profile.h) share them, so that both
 * profile the same window the same way. */
int moe_megatron_profile_args(const struct moe_study *study, const char *tensorboard_dir,
                              struct moe_strv *argv);

/* The environment by Megatron's and Megatron-Bridge's rules, as NAME=value
 * entries appended to env; -1 when out of memory. */
int moe_megatron_env(const struct moe_study *study, const struct moe_run *run,
                     struct moe_strv *env);

/* CUDA_DEVICE_MAX_CONNECTIONS: 1 on pre-Blackwell GPUs when TP or CP > 1
 * (their communication must be issued in order) unless EP overlap is on;
 * otherwise 32 for the flex dispatcher and Blackwell, 8 else. */
int moe_cuda_max_connections(const struct moe_study *study, const struct moe_baseline *cfg);

/* One flag of a dialect's parser (megatron_flags.c, generated from the
 * argparse dumps): its argparse dest, and how many values it takes, from
 * min to max (-1: no bound). */
struct moe_megatron_flag_spec {
    const char *flag;
    const char *dest;
    int min, max;
};

/* Every flag dialect d's parser knows, sorted; NULL and *n = 0 outside
 * the enum. */
const struct moe_megatron_flag_spec *moe_megatron_flags(enum moe_dialect d, size_t *n);

/* A flag moeflow emits itself, and the study key that decides it (NULL:
 * the same in every run, no key: moeflow's own choice). */
struct moe_megatron_owned {
    const char *flag;
    const char *key;
};
const struct moe_megatron_owned *moe_megatron_owned_flags(size_t *n);

/* cluster.launcher.extra_args against dialect d: every flag known, with
 * the values its parser takes, none setting what a flag moeflow emits
 * sets (same argparse dest).  -1 with *at the index of the word at fault
 * and err saying why (the closest known flag; the study key to use). */
int moe_megatron_extra_check(enum moe_dialect d, const struct moe_strv *words, size_t *at,
                             struct moe_error *err);

/* The variables moe_megatron_env may set, NULL-ended: a study's
 * cluster.env may set none of them. */
extern const char *const moe_megatron_env_names[];

#endif
