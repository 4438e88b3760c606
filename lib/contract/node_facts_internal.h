/* node_facts.h's functions that only lib/contract (and its unit tests) use. */
#ifndef MOEFLOW_CONTRACT_NODE_FACTS_INTERNAL_H
#define MOEFLOW_CONTRACT_NODE_FACTS_INTERNAL_H

#include "contract/node_facts.h"

/* The facts added to contract, under their sections (moe_node_facts_gather
 * makes those); topo and nvml may be NULL (not available on this node). */
int moe_node_facts_apply(json_t *contract, hwloc_topology_t topo,
                         const struct moe_nvml_report *nvml, moe_env_lookup env, void *ctx,
                         struct moe_error *err);

/* SHA-256 over a canonical summary of the node: packages, NUMA nodes, cores,
 * PUs, and each NVIDIA GPU's bus id with the CPUs next to it. */
int moe_topology_digest(hwloc_topology_t topo, char hex[MOE_SHA256_HEX_LEN + 1],
                        struct moe_error *err);

/* Copies the runtime keys (and their sources) that dst lacks from src: at
 * submission from the frozen baseline, at task start from the facts
 * gathered once per node.  -1 when one could not be copied (out of
 * memory): dst then lacks a fact, which the caller must not judge. */
int moe_node_facts_inherit(json_t *dst, const json_t *src);

#endif
