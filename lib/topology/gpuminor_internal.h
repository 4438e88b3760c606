/* What lib/topology shares among its own files (and the tests) beside
 * topology/gpuminor.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_GPUMINOR_INTERNAL_H
#define MOEFLOW_GPUMINOR_INTERNAL_H

#include "topology/gpuminor.h"

/* Through libnvidia-ml.so.1; -1 when NVML is not there or fails. */
int moe_gpu_minors_nvml(struct moe_gpu_minor *out, int max);

/* From DIR/gpus/<bus id>/information ("Bus Location:", "Device Minor:").
 * Returns the number found (0 when DIR has none). */
int moe_gpu_minors_proc(const char *dir, struct moe_gpu_minor *out, int max);

#endif
