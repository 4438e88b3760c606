/* NVLink domains: which nodes share one NVLink fabric (an NVL72 rack, or a
 * single HGX node).  Read from moeflow-topology.yaml (moeflow-topology(5)) or
 * from the BlockName= lines of Slurm's topology.conf (block topology). */
#ifndef MOEFLOW_DOMAINS_H
#define MOEFLOW_DOMAINS_H

#include <stddef.h>

#include "core/error.h"

#define MOE_DOMAIN_NAME_MAX 64

struct moe_domain {
    char name[MOE_DOMAIN_NAME_MAX];
    int gpus_per_node;           /* 0 = not given */
    int line, column;            /* where the file declares it (column 0: unknown) */
};

struct moe_domains {
    int ndomains;
    struct moe_domain *domains;
    int nnodes;
    char **nodes;                /* sorted by name for lookup */
    int *node_domain;            /* parallel to nodes */
    size_t domains_cap, nodes_cap; /* allocated elements (node_domain: nodes_cap) */
};

/* Picks the format from the content: a file whose settings are Slurm
 * key=value lines is topology.conf, anything else is read as YAML. */
int moe_domains_load(struct moe_domains *d, const char *path, struct moe_error *err);
void moe_domains_free(struct moe_domains *d);

/* Domain index of a node, -1 when the map does not name it. */
int moe_domains_find(const struct moe_domains *d, const char *node);

#endif
