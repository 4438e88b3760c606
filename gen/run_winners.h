/* After retune: the winners recorded by the statistical rule and validate
 * rebuilt from them, once (state "winners": "generated" or "none"). */
#ifndef MOEFLOW_RUN_WINNERS_H
#define MOEFLOW_RUN_WINNERS_H

#include <stdbool.h>

#include <jansson.h>

#include "run_ctx.h"

/* Whether validate is settled: rebuilt from the winners ("generated"), or
 * retune had no win and validate runs the baseline ("none"). */
bool run_winners_settled(const json_t *state);

/* Records the winners (moeflow report --record-winners) and rebuilds
 * validate from them (moeflow gen --winners), the manifest read again;
 * nothing when settled.  MOE_EXIT_OK, else the exit code, said. */
int run_winners(struct run_ctx *c);

#endif
