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

/* Slurm's abstract core list ("0-3,8") to the PUs of those cores: they are
 * hwloc logical core indices, not OS CPU ids.  An index above
 * MOE_CORE_INDEX_MAX is refused (hwloc would wrap it to another core). */
#define MOE_CORE_INDEX_MAX (1 << 20)
int moe_nodetopo_cores_to_cpuset(const struct moe_nodetopo *nt, const char *cores,
                                 hwloc_bitmap_t out, struct moe_error *err);

#endif
