/* Waiting for a stage's jobs: squeue until they have left the queue, the
 * stage's --timeout, and a Ctrl-C, each of which ends the wait but not
 * the jobs. */
#ifndef MOEFLOW_RUN_WAIT_H
#define MOEFLOW_RUN_WAIT_H

#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "run_ctx.h"
#include "run_outcome.h"

enum run_waited { RUN_WAITED = 0, RUN_WAIT_INTERRUPTED, RUN_WAIT_TIMED_OUT };

/* Waits until every job of the stage (js's "jobs") has left the queue,
 * printing its progress; said as for run_failed_candidates. */
enum run_waited run_wait_stage(struct run_ctx *c, const struct run_stage_plan *p,
                               const json_t *js, enum run_log_said *said);

/* How long ago since was, as "1h02m05s", "3m20s", "12s", into buf. */
const char *run_elapsed(time_t since, char *buf, size_t len);

#endif
