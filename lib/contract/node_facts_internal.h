/* node_facts.h's functions that only lib/contract (and its unit tests) use. */
#ifndef MOEFLOW_CONTRACT_NODE_FACTS_INTERNAL_H
#define MOEFLOW_CONTRACT_NODE_FACTS_INTERNAL_H

#include "contract/node_facts.h"

/* SHA-256 over a canonical summary of the node: packages, NUMA nodes, cores,
 * PUs, and each NVIDIA GPU's bus id with the CPUs next to it. */
int moe_topology_digest(hwloc_topology_t topo, char hex[MOE_SHA256_HEX_LEN + 1],
                        struct moe_error *err);

#endif
