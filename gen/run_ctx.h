/* What moeflow run's files share: the options, the study being driven
 * (its manifest and run-state.json), one stage as the manifest lays it
 * out, and the few actions the stage driver (cmd_run.c), its helpers
 * (run_submit.c, run_wait.c, run_outcome.c, run_winners.c) and the loop's
 * decisions (run_decide.c) take. */
#ifndef MOEFLOW_RUN_CTX_H
#define MOEFLOW_RUN_CTX_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "core/manifest.h"
#include "core/stage.h"

struct run_args {
    const char *until;
    bool dry;
    bool all;                /* retune screens the whole catalogue */
    int timeout, poll;
};

#define RUN_MAX_CHUNKS 1024

struct run_chunk {
    int offset, count;
    char array[48];
};

/* One stage as the manifest lays it out for submission. */
struct run_stage_plan {
    enum moe_stage stage;
    const char *name, *script;
    bool array;
    struct run_chunk chunks[RUN_MAX_CHUNKS];
    size_t n_chunks;
    const struct moe_manifest_stage *ms;
};

struct run_ctx {
    char *dir;               /* the study, its real path (malloc'd) */
    const char *shown;       /* dir for a terminal (moe_text_visible) */
    char shown_buf[4096];
    struct moe_manifest m;
    json_t *state;
    const struct run_args *a;
    time_t t0;
    time_t deadline;         /* the stage's, from --timeout */
};

/* Set by the signal handler: the run stops at the next safe point. */
extern volatile sig_atomic_t run_interrupted;

/* run-state.json written; MOE_EXIT_OK or the exit code, said. */
int run_save(struct run_ctx *c);

/* After stage st is done: the loop's decision from its evidence and the
 * later stages rebuilt from it (lib/loop/loop.h).  MOE_EXIT_OK; RUN_AGAIN
 * when st runs again (another scale round); else the exit code, said. */
#define RUN_AGAIN (-2)
int run_decide(struct run_ctx *c, enum moe_stage st);

/* --dry-run: what run_decide would do after st. */
void run_decide_dry(const struct run_ctx *c, enum moe_stage st);

#endif
