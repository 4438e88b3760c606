/* Slurm hostlist expressions ("gb[001-018],gc7"), expanded by libslurm's own
 * hostlist functions.  The plugin must not link libslurm: slurmstepd, slurmd,
 * sbatch and srun already carry these symbols (libslurmfull.so), so by
 * default they are looked up at run time in the running process.  Programs
 * linked against libslurm (the CLI, the tests) hand them over with
 * moe_hostlist_bind() instead. */
#ifndef MOEFLOW_HOSTLIST_H
#define MOEFLOW_HOSTLIST_H

#include "core/error.h"

struct moe_hostlist_api {
    void *(*create)(const char *expr);
    char *(*shift)(void *hl);       /* result is released with free() */
    void (*destroy)(void *hl);
};

void moe_hostlist_bind(const struct moe_hostlist_api *api);

/* No cluster has more nodes than this; a longer expansion is a typo (two
 * ranges multiply: gb[009-236][019-236] is 49 704 hosts) and would cost
 * slurmstepd seconds and gigabytes at every step. */
#define MOE_HOSTLIST_MAX 65536

/* names: a malloc'd array of n malloc'd host names, in expression order. */
int moe_hostlist_expand(const char *expr, char ***names, int *n, struct moe_error *err);
void moe_hostlist_free(char **names, int n);

#endif
