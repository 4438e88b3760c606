/* Prints what lib/topology/nvml.c reads, for comparison with nvidia-smi on a GPU
 * machine (tests/gpu/README.md).  Builds with libc alone:
 *   cc -std=c11 -I<dir with an empty config.h> -Ilib tests/gpu/nvml-probe.c lib/topology/nvml.c lib/core/error.c -ldl */
#include "config.h"

#include <stdio.h>

#include "topology/nvml.h"

int main(void)
{
    struct moe_nvml_report r;
    struct moe_error err;

    moe_error_clear(&err);
    if (moe_nvml_query(&r, &err) != 0) {
        fprintf(stderr, "nvml-probe: %s\n", err.text);
        return 1;
    }
    printf("driver %s\ncount %d\n", r.driver, r.count);
    for (int i = 0; i < r.count; i++)
        printf("gpu %d name=%s busid=%s minor=%d memory_mib=%llu\n", i, r.gpus[i].name,
               r.gpus[i].busid, r.gpus[i].minor, r.gpus[i].memory_bytes >> 20);
    return 0;
}
