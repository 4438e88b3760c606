/* Enforcement at job start: CPU affinity next to each GPU (affinity.c) and
 * rank placement inside NVLink domains (placement.c); their user options
 * are rows of args.c's table.  Planned once per node in user_init, applied per
 * task in task_init; never run in the batch step. */
#ifndef MOEFLOW_SPANK_ENFORCE_H
#define MOEFLOW_SPANK_ENFORCE_H

#include <stdbool.h>

#include <slurm/spank.h>

#include "topology/affinity.h"
#include "topology/placement.h"

/* Valid where moe_option_given() says the option was given. */
struct moe_enforce_opts {
    struct moe_affinity_opts affinity;
    char layout[256];                 /* empty = no --moe-layout */
    enum moe_placement_mode placement;
};

extern struct moe_enforce_opts moe_enforce;

/* Whether this step binds (or reports) its tasks: the admin's mode, or the
 * user's --moe-affinity where allowed.  Valid once the options are read. */
bool moe_affinity_wanted(void);
int moe_affinity_user_init(spank_t sp);
int moe_affinity_task_init(spank_t sp);
int moe_placement_user_init(spank_t sp);
int moe_placement_task_init(spank_t sp);

/* spank_setenv that logs; 0 or -1. */
int moe_enforce_setenv(spank_t sp, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
