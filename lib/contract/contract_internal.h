/* contract.h's functions that only lib/contract (and its unit tests) use. */
#ifndef MOEFLOW_CONTRACT_CONTRACT_INTERNAL_H
#define MOEFLOW_CONTRACT_CONTRACT_INTERNAL_H

#include "contract/contract.h"

/* Checks the top level: every required section present and an object, no
 * unknown section.  err names the offending section. */
int moe_contract_check_shape(const json_t *doc, struct moe_error *err);

#endif
