/* Judging what a stage's jobs left behind: each candidate's exit status
 * (results/STAGE/ID.rc, written by its job after its log is whole), a fit
 * rung's out-of-memory end, the failed ones named with their logs, and
 * the report of a stage that is done. */
#ifndef MOEFLOW_RUN_OUTCOME_H
#define MOEFLOW_RUN_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "run_ctx.h"
#include "core/json_build.h"

/* What a failed fit candidate's log says, one a candidate for the stage's
 * run (zeroed: none read yet): its .rc is written after its log is whole,
 * so a log is read once, when the candidate is first seen to fail. */
enum run_log_said { RUN_LOG_UNREAD = 0, RUN_LOG_OUT_OF_MEMORY, RUN_LOG_OTHER };

/* Whether id is one of the ids (NULL: none). */
bool run_listed(const json_t *ids, const char *id);

/* Removes the exit status of each candidate in failed, or of every one
 * when failed is NULL, before they are submitted again: a job that dies
 * before writing its own must not be read as its predecessor. */
void run_forget_exit_status(const struct run_ctx *c, const struct run_stage_plan *p,
                            const json_t *failed);

/* The candidate ids of the stage whose last exit status is not 0 (or
 * missing), into ids; returns how many (0 when every one exited 0).
 * With ids NULL, only those with an exit status are counted.  A fit rung
 * that ran out of memory counts as done, its id into oom (may be NULL);
 * said (p->ms->n entries) keeps what each failed fit log said.  An id that
 * cannot be added is b's failure (b may be NULL when ids and oom are). */
size_t run_failed_candidates(const struct run_ctx *c, const struct run_stage_plan *p,
                             enum run_log_said *said, struct moe_jb *b, json_t *ids, json_t *oom,
                             size_t *done);

/* After the stage's jobs have left the queue: the stage recorded in js
 * (and run-state.json) as done, reported, or as failed, its failed
 * candidates named with their logs; MOE_EXIT_OK, MOE_EXIT_STAGE_FAILED,
 * or the exit code of a state that could not be saved, said. */
int run_judge_stage(struct run_ctx *c, const struct run_stage_plan *p, json_t *js,
                    enum run_log_said *said);

#endif
