/* The admin's plugstack.conf arguments, parsed strictly: an unknown key, a
 * repeated key or a bad value is an error that quotes the argument. */
#ifndef MOEFLOW_PLUGIN_CONFIG_H
#define MOEFLOW_PLUGIN_CONFIG_H

#include <limits.h>
#include <stdbool.h>

#include "core/error.h"

enum moe_affinity_mode {
    MOE_AFFINITY_EXCLUSIVE = 0, /* split each GPU's local cores between its tasks */
    MOE_AFFINITY_CLOSEST,       /* the whole locality domain of the task's GPU */
    MOE_AFFINITY_NONE,          /* leave Slurm's binding alone */
};

enum moe_enforce_mode {
    MOE_ENFORCE_STRICT = 0, /* a contract violation fails the submission or step */
    MOE_ENFORCE_WARN,       /* it is reported and the job goes on */
};

struct moe_plugin_config {
    enum moe_affinity_mode affinity;  /* default for jobs that do not ask */
    bool affinity_user_override;      /* may users pick another mode? */
    char hwloc_xml[PATH_MAX];         /* admin's node topology; empty = cache or discover */
    char cache_dir[PATH_MAX];         /* per-boot topology cache; empty = the default */
    char topology[PATH_MAX];          /* NVLink-domain map; empty = none */
    enum moe_enforce_mode enforce;    /* contract checks */
    bool enforce_user_override;       /* may users downgrade to warn? */
    bool auto_freeze;                 /* freeze the baseline on a study's first run */
};

/* argv as SPANK hands it: "key=value" strings. */
int moe_plugin_config_parse(struct moe_plugin_config *cfg, int argc, char *const argv[],
                            struct moe_error *err);

int moe_affinity_mode_parse(const char *s, enum moe_affinity_mode *mode);
const char *moe_affinity_mode_name(enum moe_affinity_mode mode);
int moe_enforce_mode_parse(const char *s, enum moe_enforce_mode *mode);

#endif
