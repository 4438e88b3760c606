/* moeflow run's decisions: after a stage, what the next stages run,
 * decided from that stage's sealed evidence and recorded in the study's
 * trail (decisions/NN-<stage>.json, contract_store.h), which moeflow gen
 * --rebuild, the plugin and moeflow report read back.
 *
 *   fit      the least recompute whose measured peak fits (fit_rule.h)
 *            becomes every later stage's baseline
 *   scale    the statistically fastest measured layout becomes the
 *            baseline of profile, retune and validate; the measured steps
 *            correct the step-time model, and when it was wrong the
 *            layouts it now ranks first are the next round (scale_rule.h)
 *   profile  the bottleneck moeflow diagnose reads from the profile's
 *            traces decides which retune axes run
 *   retune   the winners recorded (moeflow report --record-winners)
 *
 * Each record names the stage, the rule, the evidence (logs and run
 * records with their digests), what it chose and what it ruled out, and
 * says of every number whether it was measured or modeled.  A decision of
 * a stage and round already in the trail is read back, not made again: a
 * moeflow run resumed after a crash decides nothing twice. */
#ifndef MOEFLOW_LOOP_H
#define MOEFLOW_LOOP_H

#include <stdbool.h>

#include <jansson.h>

#include "core/error.h"

/* At most this many scale rounds (the first included). */
#define MOE_LOOP_SCALE_ROUNDS 2

struct moe_loop_outcome {
    char file[4400];         /* the decision's file */
    bool recorded;           /* made now (false: read back from the trail) */
    bool adopted;            /* it adopts a baseline other than the one in force */
    bool next_round;         /* scale: another round runs (gen --rebuild --stage scale) */
    char said[1024];         /* the decision in one line, for the terminal */
};

/* Fit: 0 with out; 1 with err when no rung fits (the study cannot run
 * as written, and the decision saying so is recorded); -1 with err. */
int moe_loop_decide_fit(const char *study, struct moe_loop_outcome *out, struct moe_error *err);

/* Scale round round (from 1): 0 with out, -1 with err. */
int moe_loop_decide_scale(const char *study, int round, struct moe_loop_outcome *out,
                          struct moe_error *err);

/* Profile: diagnosis is moeflow diagnose --json of the profile stage;
 * its "bottleneck" is what retune targets.  0 with out, -1 with err. */
int moe_loop_decide_profile(const char *study, const json_t *diagnosis,
                            struct moe_loop_outcome *out, struct moe_error *err);

/* Retune: the winners the study has recorded.  0 with out, -1 with err. */
int moe_loop_decide_retune(const char *study, struct moe_loop_outcome *out,
                           struct moe_error *err);

#endif
