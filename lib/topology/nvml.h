/* What NVML says about this node's GPUs.  libnvidia-ml is loaded with
 * dlopen() when asked, so nodes, CI machines and the CLI work without it. */
#ifndef MOEFLOW_NVML_H
#define MOEFLOW_NVML_H

#include "core/error.h"

#define MOE_NVML_MAX_GPUS 64

struct moe_nvml_gpu {
    char name[96];      /* "NVIDIA H200" */
    char busid[32];     /* "00000000:06:00.0", NVML's spelling */
    unsigned pci_domain, pci_bus, pci_device;
    int minor;          /* N of /dev/nvidiaN; -1 where NVML cannot say */
    unsigned long long memory_bytes;
};

struct moe_nvml_report {
    char driver[32];    /* "580.159.04" */
    int count;
    struct moe_nvml_gpu gpus[MOE_NVML_MAX_GPUS];
};

/* -1 with err when NVML is absent or fails; the caller decides whether that
 * matters (on a GPU node it does, on a login node it does not). */
int moe_nvml_query(struct moe_nvml_report *report, struct moe_error *err);

#endif
