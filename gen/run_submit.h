/* Submitting one stage's plan with sbatch: the one place moeflow run
 * turns a planned submission (run-state.json's "plan", which is data)
 * into an sbatch command line, so that what --dry-run shows is what runs. */
#ifndef MOEFLOW_RUN_SUBMIT_H
#define MOEFLOW_RUN_SUBMIT_H

#include <jansson.h>

#include "run_ctx.h"
#include "core/json_build.h"

/* The submissions of a new stage (every chunk), or of a failed one (the
 * failed candidates' array indices, chunk by chunk); NULL with b's failure. */
json_t *run_make_plan(struct moe_jb *b, const struct run_stage_plan *p,
                      const json_t *failed);

/* --dry-run: each planned submission's sbatch command line, as
 * run_submit_plan would run it. */
void run_print_planned(const struct run_ctx *c, const struct run_stage_plan *p,
                       const json_t *plan);

/* Submits what the stage's plan (in js) still holds, recording each job
 * id in the state before the next sbatch; MOE_EXIT_OK, else the exit
 * code, said. */
int run_submit_plan(struct run_ctx *c, const struct run_stage_plan *p, json_t *js);

#endif
