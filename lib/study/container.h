/* The container options of a study's srun steps (pyxis: --container-image,
 * --container-mounts, --container-workdir).  pyxis starts a task in the
 * image's WORKDIR unless told otherwise (NVIDIA/pyxis#119), so every step
 * names its folder, and the study directory is always mounted at its own
 * path: the scripts name its files by absolute path. */
#ifndef MOEFLOW_STUDY_CONTAINER_H
#define MOEFLOW_STUDY_CONTAINER_H

#include <stdbool.h>

#include "core/error.h"
#include "study/study.h"

/* Whether one of mounts (SRC[:DST[:FLAGS]],...) shows dir at its own path:
 * dir is SRC or under it, and DST is absent or equal to SRC. */
bool moe_container_mounts_cover(const char *mounts, const char *dir);

/* " --container-image=... --container-mounts=... --container-workdir=..."
 * with each value shell-quoted, or "" for a study without a container.
 * The mounts are the study's, plus study_dir:study_dir when none covers
 * it; the folder is cluster.container.workdir, else study_dir.  malloc'd;
 * NULL with err when out of memory. */
char *moe_container_srun_options(const struct moe_study *s, const char *study_dir,
                                 struct moe_error *err);

#endif
