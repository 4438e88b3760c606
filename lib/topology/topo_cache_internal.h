/* What lib/topology shares among its own files (and its unit tests) beside
 * topology/topo_cache.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_TOPO_CACHE_INTERNAL_H
#define MOEFLOW_TOPO_CACHE_INTERNAL_H

#include "topology/topo_cache.h"

/* 0: nt holds the cached topology, loaded as this system.  -1: no cache to
 * trust (missing, stale, foreign, corrupt, or in an unsafe place); why says
 * which. */
int moe_topo_cache_read(const struct moe_topo_cache *c, const struct moe_topo_cache_key *k,
                        struct moe_nodetopo *nt, struct moe_error *why);

/* Stores nt, a live discovery of this node made for key k, as hwloc XML
 * with the key in the root's infos and a SHA-256 comment after it: written
 * to a temporary file and renamed, mode 0644.  A missing directory is created
 * 0755; one not owned by c->owner or writable by others is refused. */
int moe_topo_cache_write(const struct moe_topo_cache *c, const struct moe_topo_cache_key *k,
                         const struct moe_nodetopo *nt, struct moe_error *err);

/* The node as it is now, from files that cost nothing to read: no hwloc. */
int moe_topo_cache_key_now(const struct moe_topo_cache *c, struct moe_topo_cache_key *k,
                           struct moe_error *err);

#endif
