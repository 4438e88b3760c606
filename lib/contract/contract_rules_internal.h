/* contract_rules.h's functions that only lib/contract (and its unit tests) use. */
#ifndef MOEFLOW_CONTRACT_CONTRACT_RULES_INTERNAL_H
#define MOEFLOW_CONTRACT_CONTRACT_RULES_INTERNAL_H

#include "contract/contract_rules.h"

/* The tuning variable a changed path belongs to ("dispatcher" for both
 * tuning.dispatcher and tuning.dispatcher_backend), or NULL when the path
 * is not a tuning variable. */
const char *moe_contract_variable(const char *path, char *buf, size_t len);

#endif
