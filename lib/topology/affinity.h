/* CPU affinity next to each GPU: which PUs each local task of a step should
 * run on.  Pure planning over a loaded topology; the plugin applies it. */
#ifndef MOEFLOW_AFFINITY_H
#define MOEFLOW_AFFINITY_H

#include <stdbool.h>

#include "core/error.h"
#include "topology/nodetopo.h"
#include "core/plugin_config.h"

#define MOE_AFFINITY_WHY_MAX 160

struct moe_affinity_task {
    int gpu;                        /* node GPU index, -1 = none */
    char busid[MOE_BUSID_MAX];      /* "" when gpu < 0 */
    bool bind;                      /* false: leave Slurm's binding alone */
    hwloc_bitmap_t cpuset;          /* PUs to bind to (empty unless bind) */
    hwloc_bitmap_t nodeset;         /* NUMA nodes local to the GPU (may be empty) */
    char why[MOE_AFFINITY_WHY_MAX]; /* reason when !bind */
};

struct moe_affinity_plan {
    enum moe_affinity_mode mode;
    int ntasks;
    struct moe_affinity_task *tasks;
};

/* --moe-affinity=MODE[,verbose][,membind], each word at most once; MODE
 * may be left out ("verbose" alone keeps the admin's default mode). */
struct moe_affinity_opts {
    enum moe_affinity_mode mode;
    bool mode_set;
    bool verbose;
    bool membind;
};

int moe_affinity_opts_parse(const char *s, struct moe_affinity_opts *o, struct moe_error *err);

/* Each local task's node GPU index.  gpus is SLURM_STEP_GPUS if set (node
 * level indices), else CUDA_VISIBLE_DEVICES; task r gets entry r mod n, as
 * Megatron's torch.cuda.set_device(rank % device_count) does.  NULL, "" or
 * "NoDevFiles" give -1 for every task; UUIDs or junk are an error. */
int moe_affinity_task_gpus(const char *gpus, int ntasks, int *task_gpu, struct moe_error *err);

/* allowed: the step's PUs (NULL = every PU of the node).  Tasks that share a
 * GPU locality domain split its allowed physical cores evenly and without
 * overlap in exclusive mode, keeping SMT siblings together (a domain nested
 * in another is served first and its cores leave the outer one); closest
 * gives each the whole domain.  A task the plugin cannot place better than Slurm gets
 * bind = false and a reason.  Returns -1 only on bad input or no memory. */
int moe_affinity_plan(const struct moe_nodetopo *nt, enum moe_affinity_mode mode,
                      hwloc_const_bitmap_t allowed, int ntasks, const int *task_gpu,
                      struct moe_affinity_plan *plan, struct moe_error *err);
void moe_affinity_plan_free(struct moe_affinity_plan *plan);

/* Binds the calling process to t's CPUs (and, with membind, its memory to
 * t's NUMA nodes).  Refuses a topology that is not this machine's and a
 * task the plan left alone. */
int moe_affinity_bind(const struct moe_nodetopo *nt, const struct moe_affinity_task *t,
                      bool membind, struct moe_error *err);

#endif
