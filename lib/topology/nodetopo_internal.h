/* What lib/topology shares among its own files (and its unit tests) beside
 * topology/nodetopo.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_NODETOPO_INTERNAL_H
#define MOEFLOW_NODETOPO_INTERNAL_H

#include "topology/nodetopo.h"

/* An XML of this very machine, held in memory (the per-boot cache of
 * topology/topo_cache.h): loaded as this system, so tasks can be bound.
 * what names it in messages. */
int moe_nodetopo_load_this_xml(struct moe_nodetopo *nt, const char *buf, size_t len,
                               const char *what, struct moe_error *err);

/* The object filters and flags every node topology is loaded with; a cache
 * written with other filters would load differently (0 or -1, errno). */
int moe_nodetopo_filters(hwloc_topology_t topo);

struct moe_gpu_minor;

/* Node GPU (index in gpus) of the device with this minor number (/dev/nvidiaN,
 * Slurm's GPU index); -1 if none. */
int moe_nodetopo_gpu_of_minor(const struct moe_nodetopo *nt, int minor);

/* Replaces the minor-number map (done by moe_nodetopo_load on this system
 * from the driver's /proc files, or NVML). */
int moe_nodetopo_set_minors(struct moe_nodetopo *nt, const struct moe_gpu_minor *m, int n,
                            struct moe_error *err);

/* "dddd:bb:dd.f" of node GPU gpu (0-based, bus order). */
void moe_nodetopo_gpu_busid(const struct moe_nodetopo *nt, int gpu, char *buf, size_t len);

/* The GPU at a PCI bus id in any spelling NVML or sysfs uses
 * ("00000000:18:00.0", "0000:18:00.0", "18:00.0"); -1 if none. */
int moe_nodetopo_gpu_by_busid(const struct moe_nodetopo *nt, const char *busid);

#endif
