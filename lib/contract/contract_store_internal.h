/* contract_store.h's functions that only lib/contract (and its unit tests) use. */
#ifndef MOEFLOW_CONTRACT_CONTRACT_STORE_INTERNAL_H
#define MOEFLOW_CONTRACT_CONTRACT_STORE_INTERNAL_H

#include "contract/contract_store.h"

/* Loads and checks one contract file (any path); NULL with err. */
json_t *moe_contract_load_file(const char *path, struct moe_error *err);

#endif
