/* GPU types: the one table of them.  The enum and its names (the study's
 * cluster.gpu values, moeflow fit --gpu and its help), a study's default
 * memory, GPUs per node and NVLink domain, the architecture that decides
 * which precisions run, and the step-time model's rates (gpu_perf.c) all
 * come from MOE_GPU_LIST; adding a type is adding a row. */
#ifndef MOEFLOW_FIT_GPU_H
#define MOEFLOW_FIT_GPU_H

#include <stdbool.h>

#include "core/enum_names.h"

enum moe_gpu_arch { MOE_ARCH_AMPERE, MOE_ARCH_HOPPER, MOE_ARCH_BLACKWELL };

/* X(id, name, memory GiB, GPUs per node, NVLink domain, architecture,
 *   dense BF16 and FP8 peak TFLOP/s, NVLink and NIC GB/s per GPU one way,
 *   HBM TB/s, the step-time model's rows within +-25% and rows checked).
 * Peaks from the datasheets (no sparsity); GB200/GB300 NVL72 systems hold
 * 4 GPUs per node and 72 per NVLink domain (NVLink 5: 1.8 TB/s per GPU both
 * ways, 900 one way), HGX boards 8 and 8 (NVLink 4 on Hopper: 900 GB/s both
 * ways); one NIC per GPU: ConnectX-7 400 Gb/s, ConnectX-8 800 Gb/s on GB300.
 * A100 has no FP8: FP8 runs there at the BF16 rate.  MXFP8 runs at the FP8
 * rate on Blackwell (same datasheet line).  HBM bandwidth per GPU: H100 SXM
 * 3.35 TB/s and H200 4.8 TB/s (NVIDIA H100/H200 datasheets), B200 8 TB/s
 * (DGX B200 datasheet: 64 TB/s for 8), GB200 and GB300 8 TB/s (GB200 and
 * GB300 NVL72 product pages: 576 TB/s for 72 GPUs), A100 80 GB SXM
 * 2.04 TB/s.  The router and token permutation are memory-bound, so their
 * time per routed token copy scales with it (fit/gpu_perf.c).  The last
 * two columns count the published (Megatron-Bridge) and measured rows of
 * tests/calibration/steptime-table.tsv for that type, calibration and
 * out-of-sample alike; tests/cli/steptime-calibration.sh fails when they
 * no longer match the table.  A100 has none. */
#define MOE_GPU_LIST(X) \
    X(MOE_GPU_H100, "h100", 80, 8, 8, MOE_ARCH_HOPPER, 989, 1979, 450, 50, 3.35, 5, 7) \
    X(MOE_GPU_H200, "h200", 141, 8, 8, MOE_ARCH_HOPPER, 989, 1979, 450, 50, 4.8, 38, 47) \
    X(MOE_GPU_B200, "b200", 180, 8, 8, MOE_ARCH_BLACKWELL, 2250, 4500, 900, 50, 8.0, 6, 9) \
    X(MOE_GPU_GB200, "gb200", 186, 4, 72, MOE_ARCH_BLACKWELL, 2500, 5000, 900, 50, 8.0, 7, 10) \
    X(MOE_GPU_GB300, "gb300", 268, 4, 72, MOE_ARCH_BLACKWELL, 2500, 5000, 900, 100, 8.0, 6, 7) \
    X(MOE_GPU_A100, "a100", 80, 8, 8, MOE_ARCH_AMPERE, 312, 312, 300, 25, 2.04, 0, 0)
MOE_ENUM_DECLARE(moe_gpu, MOE_GPU_LIST, MOE_GPU_COUNT, moe_gpu_names);

/* The step model's stated error: the calibration record counts the rows
 * it is within this of (tests/calibration/steptime-table.tsv). */
#define MOE_STEPTIME_BAND_PCT 25.0

/* One row of the table. */
struct moe_gpu_type {
    const char *name;
    int memory_gib;
    int gpus_per_node, nvlink_domain;
    enum moe_gpu_arch arch;
    double bf16_tflops, fp8_tflops;  /* dense datasheet peaks */
    double nvlink_gbps, nic_gbps;    /* per GPU, one way */
    double hbm_tbps;                 /* HBM bandwidth per GPU */
    int steptime_within, steptime_rows; /* calibration record: rows within +-25%, rows */
};

/* The row of g; NULL for a value outside the enum. */
const struct moe_gpu_type *moe_gpu_type(enum moe_gpu g);

/* The name of g, MOE_ENUM_UNKNOWN ("?") outside the enum. */
const char *moe_gpu_name(enum moe_gpu g);

bool moe_gpu_is_hopper(enum moe_gpu g);
bool moe_gpu_is_blackwell(enum moe_gpu g);

#endif
