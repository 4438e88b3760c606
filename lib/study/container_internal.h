/* container.h's function that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_CONTAINER_INTERNAL_H
#define MOEFLOW_STUDY_CONTAINER_INTERNAL_H

#include "study/container.h"

/* " --container-image=... --container-mounts=... --container-workdir=..."
 * with each value shell-quoted, or "" for a study without a container.
 * The mounts are the study's, plus study_dir:study_dir when none covers
 * it; the folder is cluster.container.workdir, else study_dir.  malloc'd;
 * NULL with err when out of memory. */
char *moe_container_srun_options(const struct moe_study *s, const char *study_dir,
                                 struct moe_error *err);

#endif
