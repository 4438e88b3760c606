/* What only the node knows at job start, added to a contract under keys of
 * their own so that they never contradict what the study declared:
 *   environment.driver, environment.container.<VAR>, hardware.gpu_name,
 *   hardware.node_gpus, hardware.node_topology_digest, hardware.domain_map_digest
 * Each one gets a "sources" entry saying where it came from. */
#ifndef MOEFLOW_NODE_FACTS_H
#define MOEFLOW_NODE_FACTS_H

#include <hwloc.h>
#include <jansson.h>
#include <stddef.h>

#include "contract/contract.h"
#include "core/error.h"
#include "topology/nvml.h"

/* Fills buf with the value of environment variable name; -1 when unset. */
typedef int (*moe_env_lookup)(void *ctx, const char *name, char *buf, size_t len);

/* The facts of this node as a contract of their own sections, for
 * moe_node_facts_inherit: topo, nvml, env and domain_map (the admin's
 * NVLink-domain map, "" or NULL for none) may each be missing.  The
 * plugin gathers them once per node and step; `moeflow contract check`
 * once per call.  NULL with err when out of memory; a fact that cannot be
 * read leaves the facts without it and says why in err (err->text set):
 * the caller reports it, and the check then judges the missing fact. */
json_t *moe_node_facts_gather(hwloc_topology_t topo, const struct moe_nvml_report *nvml,
                              moe_env_lookup env, void *ctx, const char *domain_map,
                              struct moe_error *err);

/* SHA-256 of the admin's NVLink-domain map (the plugstack topology= file). */
int moe_node_facts_domain_map(json_t *contract, const char *path, struct moe_error *err);

#endif
