/* One node's hardware as hwloc sees it, loaded once (from this machine or a
 * cached XML), with the node's NVIDIA GPUs found among its PCI devices. */
#ifndef MOEFLOW_NODETOPO_H
#define MOEFLOW_NODETOPO_H

#include <stdbool.h>
#include <stddef.h>

#include <hwloc.h>

#include "core/error.h"

#define MOE_BUSID_MAX 32 /* "0000:18:00.0" */

struct moe_nodetopo {
    hwloc_topology_t topo;
    bool this_system;   /* false for a foreign XML: plan, never bind */
    int ngpus;
    hwloc_obj_t *gpus;  /* NVIDIA display/3D PCI functions in bus order */
    int nminors;        /* 0: minor number i is GPU i (bus order) */
    int *minor_gpu;     /* minor number -> index in gpus, -1 = none */
};

/* xml NULL or "" discovers this machine.  Disallowed CPUs are kept so that
 * logical core indices match Slurm's abstract core numbering. */
int moe_nodetopo_load(struct moe_nodetopo *nt, const char *xml, struct moe_error *err);
void moe_nodetopo_free(struct moe_nodetopo *nt);

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

/* Slurm's abstract core list ("0-3,8") to the PUs of those cores: they are
 * hwloc logical core indices, not OS CPU ids.  An index above
 * MOE_CORE_INDEX_MAX is refused (hwloc would wrap it to another core). */
#define MOE_CORE_INDEX_MAX (1 << 20)
int moe_nodetopo_cores_to_cpuset(const struct moe_nodetopo *nt, const char *cores,
                                 hwloc_bitmap_t out, struct moe_error *err);

#endif
