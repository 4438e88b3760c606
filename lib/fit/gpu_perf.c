/* Default rates and bandwidths per GPU type.  Datasheet peaks (dense, no
 * sparsity) times the share that Megatron reaches on large GEMMs; NVLink
 * per GPU one way; the NIC is one per GPU (ConnectX-7 400 Gb/s, ConnectX-8
 * 800 Gb/s on GB300).  GEMM_SHARE and LINK_SHARE are fitted to Megatron-
 * Bridge's published H100 rows (tests/data/calibration); the other types
 * reuse them, so their rows are an out-of-sample check. */
#include "config.h"

#include <string.h>

#include "fit/steptime.h"

#define GEMM_SHARE 0.60
#define LINK_SHARE 1.00
/* Host time per layer and microbatch: TE's fused kernels; Megatron's local
 * implementation (torch ops, no fused kernels) as measured on 2xH200. */
#define HOST_US_TE 200.0
#define HOST_US_LOCAL 16000.0
/* Routing and permutation per routed token copy: with the thin expert
 * GEMMs, what makes fine-grained MoEs (Qwen3-30B-A3B) reach a third of
 * DeepSeek-V3's TFLOP/s on H100. */
#define ROUTE_NS 320.0

struct gpu_row {
    const char *name;
    double bf16, fp8;         /* dense peak TFLOP/s */
    double nvlink, nic;       /* GB/s per GPU, one way */
};

static const struct gpu_row rows[] = {
    { "h100", 989, 1979, 450, 50 },
    { "h200", 989, 1979, 450, 50 },
    { "b200", 2250, 4500, 900, 50 },
    { "gb200", 2500, 5000, 900, 50 },
    { "gb300", 2500, 5000, 900, 100 },
    { "a100", 312, 312, 300, 25 }, /* no FP8: FP8 runs as BF16 */
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

static const char *const names[] = { "h100", "h200", "b200", "gb200", "gb300", "a100", NULL };

const char *const *moe_perf_gpu_names(void)
{
    return names;
}

int moe_perf_defaults(const char *gpu, enum moe_impl impl, struct moe_perf *out)
{
    const struct gpu_row *r = &rows[0];
    int rc = -1;

    for (size_t i = 0; i < N_ROWS; i++)
        if (gpu && strcmp(gpu, rows[i].name) == 0)
            r = &rows[i], rc = 0;
    *out = (struct moe_perf){
        .tflops_bf16 = r->bf16 * GEMM_SHARE, .tflops_fp8 = r->fp8 * GEMM_SHARE,
        .nvlink_gbps = r->nvlink * LINK_SHARE, .internode_gbps = r->nic * LINK_SHARE,
        .host_us = impl == MOE_IMPL_LOCAL ? HOST_US_LOCAL : HOST_US_TE,
        .route_ns = ROUTE_NS,
        .overlap_grad_reduce = true, .overlap_param_gather = true,
    };
    return rc;
}
