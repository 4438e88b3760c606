/* Which PCI device is /dev/nvidiaN?  Slurm's GPU indices (SLURM_STEP_GPUS,
 * with gres.conf File=/dev/nvidia[0-7] or AutoDetect=nvml) follow the
 * driver's device minor numbers, which need not follow PCI order.  The
 * driver says it in /proc/driver/nvidia/gpus/<bus id>/information, at no
 * cost; NVML (dlopen'ed, optional) is the fallback where /proc hides it. */
#ifndef MOEFLOW_GPUMINOR_H
#define MOEFLOW_GPUMINOR_H

#define MOE_GPU_BUSID_MAX 32

struct moe_gpu_minor {
    int minor;
    char busid[MOE_GPU_BUSID_MAX];
};

#endif
