/* Default rates and bandwidths per GPU type: the table's datasheet peaks
 * (fit/gpu.h) times the share that Megatron reaches on large GEMMs; NVLink
 * and the NIC at line rate.  GEMM_SHARE and LINK_SHARE were fitted to
 * Megatron-Bridge's published H100 rows (tests/data/calibration) and every
 * type reuses them; what differs by type comes from its datasheet (fit/gpu.h:
 * peaks, NVLink, NIC, HBM).  The calibration record, rows marked calibrate
 * or out of sample, is tests/calibration/steptime-table.tsv. */
#include "config.h"

#include <string.h>

#include "fit/steptime.h"

#define GEMM_SHARE 0.60
#define LINK_SHARE 1.00
/* The host stream, per layer and microbatch: TE's fused kernels (a few
 * hundred launches per layer, hidden behind the GPU's work on any real
 * model); Megatron's local implementation (torch ops, no fused kernels, no
 * grouped GEMM) fitted on the steady runs on one H200
 * (tests/gpu/steady-1gpu.tsv: s1-s10, three model sizes at MBS 1 and 2,
 * with and without the MoE module recomputed; s14-s17, the medium model
 * with 4, 8, 16 and 32 experts and with top-4) and the 2xH200 lane rows
 * (tests/data/calibration/h200x2-steps.tsv), by least squares on the log
 * errors with every fitted row held within +-24% (a Nelder-Mead search;
 * the unconstrained optimum, 12.1 ms + 1.01 ms per expert, leaves two lane
 * rows at +25% and +35%).  The result per row is
 * tests/calibration/steptime-table.tsv.
 *
 * Each local expert is a module call of its own in SequentialMLP (core
 * 0.19 transformer/moe/experts.py:1350-1364): per expert the forward calls
 * two LinearWithGradAccumulationAndAsyncCommunication and one
 * WeightedSwiGLUFunction, each with its backward.  At a fixed shape the
 * step grows by 35 ms per expert (s16 -> s15: 4 to 32 experts, 524 ->
 * 1499 ms, 32 layer-microbatches), about 1.1 ms per expert and MoE
 * layer-microbatch; fitted with the rest, 0.84 ms.  The profiles of s4 and
 * s17 (2026-12-02) show 57,100 host ops per step (1,784 per
 * layer-microbatch; s12, 16 experts: 2,043) at 15-20 us each and no wait
 * on the GPU.  Doubling top-k at 8 experts (s17) adds 110 ms (16%) that no
 * term here carries: the same op count, but aten::mm's median host time
 * rises from 65 to 94 us.  The host time also grows with the sequence
 * (s21, s3, s20: 998, 1205 and 1521 ms at 1024, 2048 and 4096 tokens),
 * which no term here carries either: a term per token does not identify on
 * the fitted rows.
 *
 * The per-step host term (optimizer, grad norm) refits to 0 once the
 * attention scores are charged.  The large model (16 layers, top-8,
 * sequence 4096) hides its host stream behind the GPU's work at MBS 2.
 * With ETP > 1 the alltoall dispatcher gathers the routed tokens over the
 * ETP group and reduce-scatters them back with split sizes read to the
 * host (core 0.19 megatron/core/transformer/moe/token_dispatcher.py:738
 * and 821). */
#define HOST_US_TE 200.0
#define HOST_US_LOCAL 11800.0
#define HOST_US_LOCAL_EXPERT 840.0
#define HOST_US_LOCAL_ETP 4600.0
#define HOST_STEP_US_LOCAL 0.0
/* Of HOST_US_LOCAL, what each MoE layer's dropless dispatcher costs the
 * host: it sums the routing map per expert, copies the counts to the host
 * on a side stream and waits for them (core 0.19 token_dispatcher.py:536-
 * 599), and SequentialMLP splits the tokens by the counts it read
 * (experts.py:1352).  Drop-and-pad knows every count from the capacity:
 * the dispatcher's preprocess fills CPU tensors and returns (token_
 * dispatcher.py:511-534), so none of it runs.  Fitted on the four drop-
 * and-pad runs on one H200 (tests/gpu/steady-1gpu.tsv, s22-s25: 797, 342,
 * 808 and 2085 ms, first predicted 49% to 74% too slow with this term 0,
 * tests/calibration/register.tsv), by least squares on the log errors of
 * the four: 7.17 ms per MoE layer and microbatch, each within -9% to +7%.
 * Each row alone gives 6.1 to 8.4 ms (8, 8, 16 and 32 experts: no trend
 * with the experts), so the term is per layer.  Held out since: s26-s28
 * (register.tsv); s28, with 4 experts, saved 3.4 ms, so fewer experts may
 * save less. */
#define HOST_US_LOCAL_DROPLESS 7170.0
/* Stalls at synchronisation points, per MoE layer and microbatch.  Each
 * dispatcher reads token counts to the host once per MoE layer's forward,
 * and the host waits for the GPU there (Megatron-LM core 0.19,
 * megatron/core/transformer/moe/token_dispatcher.py):
 *   - alltoall: the input/output split sizes of the EP all-to-all are
 *     copied to the host on a side stream (_maybe_dtoh_and_synchronize,
 *     919-950) and the host waits on that event at "before_ep_alltoall"
 *     with EP or TP > 1 (590), at "before_finish" without (599), or already
 *     "before_permutation_1" with token dropping (546);
 *   - allgather: tokens_per_expert .cpu() and .sum().item() in
 *     dispatch_postprocess (317, 323);
 *   - experts: TEGroupedMLP (experts.py:769) and SequentialMLP (1352) read
 *     tokens_per_expert .tolist() for the per-expert splits.
 * Backward reuses the splits and needs no sync.  After the sync the GPU
 * idles while the host launches the dispatch and one GEMM split per local
 * expert: SYNC_US + SYNC_EXPERT_US per local expert, fitted with ROUTE_KB_TE
 * on the H100 rows and the 25.11 B200/GB200/GB300 rows of Megatron-Bridge's
 * published table (tests/calibration/steptime-table.tsv), each row with its
 * recipe's settings, by least squares on the log errors (a Nelder-Mead
 * search from two starts meets at 266 KB, 1327 us and 372 us); the 26.02
 * rows are left out of sample.  The local implementation's stalls follow
 * from its two streams instead (fit/steptime.c local_sync_stall). */
#define SYNC_US_TE 1340.0
#define SYNC_EXPERT_US_TE 370.0
/* Routing and permutation: the router, top-k, permute and unpermute are
 * memory-bound kernels, so their time per routed token copy is an
 * effective number of bytes over the GPU's HBM bandwidth (fit/gpu.h).  The
 * effective bytes are fitted, not counted: they include the many small
 * kernels of the router (ROUTE_KB_TE on the published rows above, 79 ns
 * per copy on H100; ROUTE_KB_LOCAL on the steady 1-GPU runs, 108 ns per
 * copy on H200).  Megatron permutes BF16 tokens (FP8/MXFP8 casts happen in
 * TE's grouped linear after the permutation), so the precision does not
 * change them. */
#define ROUTE_KB_TE 265.0
#define ROUTE_KB_LOCAL 520.0
/* The local implementation's attention scores (fit/steptime.c scores_ms):
 * effective bytes per score element over the HBM bandwidth, measured on
 * s13's profile (tests/gpu/steady-1gpu/profile-s12-s13.txt: 1.49 s of
 * elementwise, softmax, dropout and copy kernels per step for 8 layers x
 * 8 microbatches x 16 heads x 8192^2 scores, 21.6 ps each, 104 bytes at
 * 4.8 TB/s).  Counting the bf16 reads and writes of baddbmm, masked fill,
 * softmax, dropout and bmm gives about 42; the rest is the kernels' extra
 * passes and copies.  Before it was charged, the routing term had taken
 * the scores in (1206 KB per copy). */
#define SCORE_BYTES_LOCAL 104.0

int moe_perf_defaults(enum moe_gpu gpu, enum moe_impl impl, struct moe_perf *out)
{
    const struct moe_gpu_type *r = moe_gpu_type(gpu);

    if (!r) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    *out = (struct moe_perf){
        .gpu = gpu,
        .tflops_bf16 = r->bf16_tflops * GEMM_SHARE, .tflops_fp8 = r->fp8_tflops * GEMM_SHARE,
        .nvlink_gbps = r->nvlink_gbps * LINK_SHARE, .internode_gbps = r->nic_gbps * LINK_SHARE,
        .host_us = impl == MOE_IMPL_LOCAL ? HOST_US_LOCAL : HOST_US_TE,
        .host_expert_us = impl == MOE_IMPL_LOCAL ? HOST_US_LOCAL_EXPERT : 0,
        .host_etp_us = impl == MOE_IMPL_LOCAL ? HOST_US_LOCAL_ETP : 0,
        .host_dropless_us = impl == MOE_IMPL_LOCAL ? HOST_US_LOCAL_DROPLESS : 0,
        .route_ns = (impl == MOE_IMPL_LOCAL ? ROUTE_KB_LOCAL : ROUTE_KB_TE) / r->hbm_tbps,
        .sync_us = impl == MOE_IMPL_LOCAL ? 0 : SYNC_US_TE,
        .sync_expert_us = impl == MOE_IMPL_LOCAL ? 0 : SYNC_EXPERT_US_TE,
        .score_ps = impl == MOE_IMPL_LOCAL ? SCORE_BYTES_LOCAL / r->hbm_tbps : 0,
        .step_host_us = impl == MOE_IMPL_LOCAL ? HOST_STEP_US_LOCAL : 0,
        .sync_from_streams = impl == MOE_IMPL_LOCAL,
        .overlap_grad_reduce = true, .overlap_param_gather = true,
    };
    return 0;
}
