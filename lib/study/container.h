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

#endif
