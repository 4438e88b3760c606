/* loop.h's functions that only lib/loop (and its unit tests) use. */
#ifndef MOEFLOW_LOOP_LOOP_INTERNAL_H
#define MOEFLOW_LOOP_LOOP_INTERNAL_H

#include "loop/loop.h"

/* The last decision of stage (and round, 0: any) in study's trail, or
 * NULL (err untouched); NULL with err when the trail does not load. */
json_t *moe_loop_decided(const char *study, const char *stage, int round, struct moe_error *err);

/* Shared by the deciders: records doc (its "stage" and "round") unless
 * the trail has it already.  0, or -1 with err. */
int moe_loop_record(const char *study, json_t *doc, struct moe_loop_outcome *out,
                    struct moe_error *err);

#endif
