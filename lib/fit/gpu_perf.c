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
 * implementation (torch ops, no fused kernels, no grouped GEMM) as measured
 * on 2xH200 (tests/gpu/steady.tsv: EP2, EP1, EP1xETP2 and PP2xVPP2 of the
 * tiny model, steps 21-32).  Without grouped GEMM a SequentialMLP runs its
 * local experts one by one, so EP1 pays for 8 experts where EP2 pays for 4;
 * with ETP > 1 the alltoall dispatcher gathers the routed tokens over the
 * ETP group and reduce-scatters them back with split sizes read to the host
 * (core 0.19 megatron/core/transformer/moe/token_dispatcher.py:738-740 and
 * 821-822).  With TE the grouped GEMM runs all local experts at once; the
 * ETP cost there was not measured and is left to the bandwidth term. */
#define HOST_US_TE 200.0
#define HOST_US_LOCAL 13400.0
#define HOST_US_LOCAL_EXPERT 455.0
#define HOST_US_LOCAL_ETP 6800.0
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
        .host_expert_us = impl == MOE_IMPL_LOCAL ? HOST_US_LOCAL_EXPERT : 0,
        .host_etp_us = impl == MOE_IMPL_LOCAL ? HOST_US_LOCAL_ETP : 0,
        .route_ns = ROUTE_NS,
        .overlap_grad_reduce = true, .overlap_param_gather = true,
    };
    return rc;
}
