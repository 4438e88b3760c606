/* Default rates and bandwidths per GPU type: the table's datasheet peaks
 * (fit/gpu.h) times the share that Megatron reaches on large GEMMs; NVLink
 * and the NIC at line rate.  GEMM_SHARE and LINK_SHARE are fitted to
 * Megatron-Bridge's published H100 rows (tests/data/calibration); the other
 * types reuse them, so their rows are an out-of-sample check. */
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

int moe_perf_defaults(enum moe_gpu gpu, enum moe_impl impl, struct moe_perf *out)
{
    const struct moe_gpu_type *r = moe_gpu_type(gpu);

    if (!r) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    *out = (struct moe_perf){
        .tflops_bf16 = r->bf16_tflops * GEMM_SHARE, .tflops_fp8 = r->fp8_tflops * GEMM_SHARE,
        .nvlink_gbps = r->nvlink_gbps * LINK_SHARE, .internode_gbps = r->nic_gbps * LINK_SHARE,
        .host_us = impl == MOE_IMPL_LOCAL ? HOST_US_LOCAL : HOST_US_TE,
        .host_expert_us = impl == MOE_IMPL_LOCAL ? HOST_US_LOCAL_EXPERT : 0,
        .host_etp_us = impl == MOE_IMPL_LOCAL ? HOST_US_LOCAL_ETP : 0,
        .route_ns = ROUTE_NS,
        .overlap_grad_reduce = true, .overlap_param_gather = true,
    };
    return 0;
}
