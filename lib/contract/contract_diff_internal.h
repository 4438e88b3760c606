/* contract_diff.h's functions that only lib/contract (and its unit tests) use. */
#ifndef MOEFLOW_CONTRACT_CONTRACT_DIFF_INTERNAL_H
#define MOEFLOW_CONTRACT_CONTRACT_DIFF_INTERNAL_H

#include "contract/contract_diff.h"

/* The length of path's first segment: up to its first unescaped '.'. */
size_t moe_contract_path_segment(const char *path);

/* True when the change's path is SECTION or lies under "SECTION." */
int moe_contract_change_in(const struct moe_contract_change *change, const char *section);

#endif
