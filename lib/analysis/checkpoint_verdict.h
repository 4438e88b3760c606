/* validation.checkpoint's verdict: whether a run resumed from Megatron's
 * checkpoint at step N trained steps N+1..N+M as the uninterrupted run
 * did.  Evidence, each measured from the two runs' logs and the checkpoint
 * folder: the resumed run's first iteration is N+1 (the iteration counter
 * was restored); every step's learning rate matches (the schedule was
 * restored); every step's loss matches, exactly under deterministic mode,
 * else within MOE_CKPT_TOLERANCE relative (the largest difference is
 * reported); the resumed run's first loss does not jump (a fresh Adam
 * state shows as one); no skipped or NaN iteration; and the folder's size
 * in bytes.  Verdicts: pass, fail with the first reason, or missing
 * evidence. */
#ifndef MOEFLOW_CHECKPOINT_VERDICT_H
#define MOEFLOW_CHECKPOINT_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "analysis/megatron_log.h"
#include "core/error.h"
#include "core/manifest.h"

/* Relative loss difference allowed when the run could not be made
 * deterministic (doc/moeflow-study.5, VALIDATION). */
#define MOE_CKPT_TOLERANCE 1e-3
/* Megatron prints the learning rate with 7 significant digits: equal
 * schedules print equal numbers; this only absorbs the decimal reading. */
#define MOE_CKPT_LR_TOLERANCE 1e-6
/* Relative: two losses Megatron printed with 7 significant digits (%.6E),
 * averaged here, against the average it printed itself. */
#define MOE_CKPT_PRINT_ROUNDING 1e-6
#define MOE_CKPT_STEPS_MAX 1024

enum moe_ckpt_outcome { MOE_CKPT_PASS, MOE_CKPT_FAIL, MOE_CKPT_MISSING };

/* What the candidate asked of the two runs (its arguments). */
struct moe_ckpt_spec {
    long save_step;          /* N: --save-interval */
    long last_step;          /* N+M: --train-iters */
    bool deterministic;      /* --deterministic-mode */
};

struct moe_ckpt_step {
    long iter;
    double loss_uninterrupted, loss_resumed, lr_uninterrupted, lr_resumed;
    /* Step N+2: Megatron logs a process's first iteration without resetting
     * its loss accumulators (training.py:2594 in core 0.19, 2709 in
     * 2a75ac12, 1797 in core 0.16), so under --log-interval 1 the resumed
     * run prints the mean of steps N+1 and N+2 there; loss_uninterrupted is
     * then that mean of the uninterrupted run's two steps. */
    bool mean_of_two;
};

struct moe_ckpt_verdict {
    enum moe_ckpt_outcome outcome;
    char reason[512];        /* why not pass; empty for pass */
    struct moe_ckpt_spec spec;
    double tolerance;        /* 0 under deterministic mode */
    long resumed_first;      /* the resumed run's first iteration; -1: none */
    long compared_last;      /* last_step, or N + MOE_CKPT_STEPS_MAX when longer */
    struct moe_ckpt_step steps[MOE_CKPT_STEPS_MAX];
    size_t n;                /* steps compared, N+1 .. */
    double max_loss_diff, max_lr_diff;  /* absolute; NAN when nothing compared */
    double loss_jump;        /* resumed loss at N+1 minus uninterrupted loss at N */
    double largest_rise;     /* the uninterrupted run's largest step-to-step rise */
    long skipped, nan_iters; /* summed over both runs' steps N+1..N+M */
    long long dir_bytes;     /* the checkpoint folder; -1: not found */
    bool bytes_recorded;     /* dir_bytes is the job's record: the folder is gone */
};

/* The verdict of the generated study's validate checkpoint candidate: 1
 * with v and its id, 0 when the study has none, -1 with err. */
int moe_ckpt_study(const char *study, struct moe_ckpt_verdict *v, char *id, size_t len,
                   struct moe_error *err);

/* The verdict as report.json's "checkpoint" object; every number in it is
 * measured, a non-finite one null and named in its object's "non_finite".
 * NULL with err naming the key that could not be made. */
json_t *moe_ckpt_verdict_json(const struct moe_ckpt_verdict *v, const char *candidate,
                              struct moe_error *err);

/* The verdict in words, a few lines. */
void moe_ckpt_verdict_print(FILE *out, const struct moe_ckpt_verdict *v, const char *candidate);

#endif
