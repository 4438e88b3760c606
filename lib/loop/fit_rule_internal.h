/* fit_rule.h's functions that only lib/loop (and its unit tests) use. */
#ifndef MOEFLOW_LOOP_FIT_RULE_INTERNAL_H
#define MOEFLOW_LOOP_FIT_RULE_INTERNAL_H

#include "loop/fit_rule.h"

/* The report's rows grouped into rungs in ladder order, each judged
 * against usable_mib, and the first that fits chosen.  0, or -1 with err
 * for a report with no row or more rungs than the ladder has. */
int moe_loop_fit_decide(const struct moe_fit_report *r, double usable_mib,
                        struct moe_loop_fit *out, struct moe_error *err);

#endif
