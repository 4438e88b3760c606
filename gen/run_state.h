/* run-state.json: what `moeflow run` has done to a study directory, so that
 * a second run resumes instead of resubmitting.  Per stage:
 *   "state"     "submitting" (plan written, jobs being submitted),
 *               "submitted" (every job of the plan is in Slurm),
 *               "done" (every candidate exited 0), "failed"
 *   "plan"      the submissions still to make: {"array": "0-3%2" | null,
 *               "offset": N}; written before the first sbatch, so that an
 *               interrupted submission is finished, not repeated
 *   "jobs"      the submissions made: {"job": "123", "array", "offset"}
 *   "failed"    the candidate ids that did not exit 0 (state "failed")
 *   "out_of_memory"  fit candidates whose run ended in CUDA's out-of-memory
 *               error: the answer that rung exists to give, not a failure
 *   "started", "finished"  seconds since the epoch
 * and at the top "study_hash" (the manifest's: a regenerated study is not
 * this state's) and "winners": "generated" once validate was rebuilt from
 * the recorded winners.  The file is replaced whole (rename), never
 * written in place, so an interrupted moeflow run leaves the old or the
 * new state, never half of one. */
#ifndef MOEFLOW_RUN_STATE_H
#define MOEFLOW_RUN_STATE_H

#include <stddef.h>

#include <jansson.h>

#include "core/error.h"
#include "core/study_dir.h"

#define RUN_STATE_FILE MOE_STUDY_RUN_STATE
/* Array indices one submission names at most: gen splits a stage into
 * chunks of MaxArraySize, and a cluster's MaxArraySize is at most 4000001. */
#define RUN_MAX_INDICES 4096

/* dir/run-state.json, or a fresh state when there is none.  -1 (NULL) with
 * err when it cannot be read, is not a state, or belongs to another study
 * hash. */
json_t *run_state_load(const char *dir, const char *study_hash, struct moe_error *err);
int run_state_save(const char *dir, const json_t *state, struct moe_error *err);

/* The stage's object, made empty when absent (borrowed); NULL when out of
 * memory. */
json_t *run_state_stage(json_t *state, const char *stage);
/* Its "state" string, "" when none. */
const char *run_state_of(const json_t *stage);

/* The array indices an sbatch --array value names ("0-3%2", "1,5,7%1",
 * "4"): ascending as written, at most max; -1 when it is not one that
 * moeflow wrote (a step, a bad range, too many). */
int run_array_indices(const char *spec, int *idx, size_t max);

#endif
