/* diagnose.h's functions that only lib/analysis (and its unit tests) use. */
#ifndef MOEFLOW_DIAGNOSE_INTERNAL_H
#define MOEFLOW_DIAGNOSE_INTERNAL_H

#include "analysis/diagnose.h"

/* The straggler among overlap's "gpus" rows (see struct moe_straggler). */
void moe_diagnose_straggler(const json_t *overlap, struct moe_straggler *s);

#endif
