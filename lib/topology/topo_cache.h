/* This node's topology, cached once per boot.  Live hwloc discovery costs
 * tens of milliseconds at every job step; loading the node's own XML back
 * costs well under one.  The file feeds the CPU binding of every job, so it
 * is trusted only in a directory and file that the trusted owner (root)
 * owns and nobody else may write, and only when it was written in this boot,
 * by this hwloc, for the GPUs the node has now.  Anything else is a miss:
 * the caller discovers the node live and, as root, writes a new cache. */
#ifndef MOEFLOW_TOPO_CACHE_H
#define MOEFLOW_TOPO_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/error.h"
#include "topology/nodetopo.h"

#define MOE_TOPO_CACHE_DIR "/run/moeflow"
#define MOE_TOPO_CACHE_FILE "topology.xml"
#define MOE_TOPO_CACHE_GPUS_MAX 4096

/* Where the cache lives and where this node's identity is read; tests point
 * them at private copies. */
struct moe_topo_cache {
    const char *dir;          /* MOE_TOPO_CACHE_DIR */
    const char *boot_id_path; /* /proc/sys/kernel/random/boot_id */
    const char *pci_dir;      /* /sys/bus/pci/devices */
    uid_t owner;              /* the only owner trusted: 0 */
};

/* What a cache must have been written for. */
struct moe_topo_cache_key {
    char boot_id[64];
    unsigned long hwloc_api;              /* hwloc_get_api_version() */
    char gpus[MOE_TOPO_CACHE_GPUS_MAX];   /* NVIDIA GPU bus ids, sorted, comma-separated */
};

/* The plugin's settings; dir NULL or "" means MOE_TOPO_CACHE_DIR. */
void moe_topo_cache_defaults(struct moe_topo_cache *c, const char *dir);

enum moe_topo_cache_outcome {
    MOE_TOPO_CACHE_HIT,       /* loaded from the cache */
    MOE_TOPO_CACHE_WRITTEN,   /* discovered live, cache (re)written */
    MOE_TOPO_CACHE_LIVE,      /* discovered live, cache left as it was */
};

/* The cache when it can be trusted, else live discovery; with may_write, a
 * miss rewrites the cache.  note gets why the cache was not used or not
 * written ("" on a hit); cache trouble never fails the load, only hwloc
 * failing does. */
int moe_topo_cache_load(const struct moe_topo_cache *c, bool may_write, struct moe_nodetopo *nt,
                        enum moe_topo_cache_outcome *outcome, char *note, size_t notelen,
                        struct moe_error *err);

#endif
