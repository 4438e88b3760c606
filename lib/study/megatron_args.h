/* One concrete run of the trainer: the Megatron argument list and the
 * environment for a configuration derived from a study. */
#ifndef MOEFLOW_MEGATRON_ARGS_H
#define MOEFLOW_MEGATRON_ARGS_H

#include "core/strv.h"
#include "core/study_dir.h"
#include "study/study.h"

/* The profile stage's --tensorboard-dir, relative to the study directory
 * the job runs in.  The PyTorch profiler's traces land in
 * results/profile/torch_profile/rank-N.json.gz (core 0.19, bridge-pin) or
 * in this folder as *.pt.trace.json (core 0.16). */
#define MOE_PYTORCH_PROFILE_DIR MOE_STUDY_RESULTS "/profile/tensorboard"

struct moe_run {
    struct moe_baseline cfg;      /* layout and tuning knobs for this run */
    int mbs;
    int train_iters;
    bool fake_process_group;      /* fit: one GPU standing in for a rank at scale */
    bool profile;                 /* profile: --profile with the study's window */
};

/* A flag Megatron renamed: moeflow's name for it (the newest spelling)
 * and its spelling in each dialect.  Every flag whose spelling depends on
 * the dialect goes through this table; test_megatron_args checks each
 * spelling against that dialect's argparse dump. */
struct moe_megatron_rename {
    const char *flag;
    const char *in[MOE_DIALECT_COUNT];
};

#endif
