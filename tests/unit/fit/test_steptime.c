/* The step-time model's switches, each against what it claims to do
 * (lib/fit/steptime.c): TP comm overlap leaves a quarter, EP overlap hides
 * the all-to-all behind a microbatch's compute, full recompute repeats
 * attention too, recomputing the MoE module reruns its dispatch, the EP
 * overlap runs only where Megatron allows it, all-reduce without the distributed optimizer costs two
 * reduce-scatters, a strided group that spans more than an NVLink domain
 * runs at the NICs' rate, and small grouped GEMMs run below the full rate;
 * drop-and-pad has no sync stall (and, with the local implementation, no
 * dropless token counting on the host); the local implementation's attention
 * scores grow with the square of the sequence; the enumerator's per-grid
 * cache changes nothing.
 * Relations between two predictions, not pinned figures: the calibration
 * (tests/cli/steptime-calibration.sh) pins the figures. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit/steptime_internal.h"
#include "study/presets.h"
#include "unit.h"

struct setup {
    struct moe_model m;
    struct moe_layout l;
    struct moe_workload w;
    struct moe_train t;
    struct moe_perf p;
    int domain;
};

/* Qwen3-30B-A3B on 16 H100: TP 2 x DP 8, EP 4 x EDP 4, one stage. */
static void base(struct setup *s)
{
    const struct moe_model *m = moe_preset_find("qwen3-30b-a3b");

    assert_non_null(m);
    memset(s, 0, sizeof(*s));
    s->m = *m;
    s->l = (struct moe_layout){ .tp = 2, .cp = 1, .pp = 1, .vpp = 1, .ep = 4, .etp = 1,
                                .dp = 8, .edp = 4 };
    s->w = (struct moe_workload){ .seq_len = 4096, .mbs = 1, .gbs = 64 };
    moe_train_defaults(&s->t);
    s->t.recompute.granularity = MOE_RC_NONE;
    assert_int_equal(moe_perf_defaults(MOE_GPU_H100, MOE_IMPL_TE, &s->p), 0);
    s->p.tp_comm_overlap = s->p.ep_overlap = false;
    s->p.overlap_grad_reduce = s->p.overlap_param_gather = false;
    s->domain = 8;
}

static struct moe_step step(const struct setup *s)
{
    struct moe_step out;

    moe_step_time(&s->m, &s->l, &s->w, &s->t, &s->p, s->domain, 1e9, 1e9, &out);
    return out;
}

#define assert_near(a, b) \
    assert_true(fabs((a) - (b)) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-12)

static void tp_comm_overlap_leaves_a_quarter(void **state)
{
    struct setup s;
    struct moe_step off, on;

    (void)state;
    base(&s);
    off = step(&s);
    s.p.tp_comm_overlap = true;
    on = step(&s);
    assert_true(off.tp_ms > 0);
    assert_near(on.tp_ms, 0.25 * off.tp_ms);
}

static void ep_overlap_hides_behind_compute(void **state)
{
    struct setup s;
    struct moe_step off, on;

    (void)state;
    base(&s);
    off = step(&s);
    s.p.ep_overlap = true;
    on = step(&s);
    assert_true(off.ep_ms > 0);
    assert_near(on.ep_ms, off.ep_ms > off.compute_ms ? off.ep_ms - off.compute_ms : 0);
    assert_true(on.ep_ms < off.ep_ms);
}

/* Full recompute repeats every layer's forward, attention included:
 * more than recomputing the MLPs and experts alone. */
static void full_recompute_repeats_attention(void **state)
{
    struct setup s;
    struct moe_step none, mlps, full;

    (void)state;
    base(&s);
    none = step(&s);
    s.t.recompute.granularity = MOE_RC_SELECTIVE;
    s.t.recompute.modules = MOE_RC_MOE | MOE_RC_MLP;
    mlps = step(&s);
    s.t.recompute.granularity = MOE_RC_FULL;
    s.t.recompute.modules = 0;
    full = step(&s);
    assert_true(mlps.compute_ms > none.compute_ms);
    assert_true(full.compute_ms > mlps.compute_ms * (1 + 1e-6));
    assert_true(full.compute_ms < none.compute_ms * 4.0 / 3); /* the head is not repeated */
}

/* Recomputing the MoE module reruns the layer's forward whole (router,
 * dispatch and its sync, experts, combine): one more sync stall, half as
 * much all-to-all again, the measured shares of the routing (0.28) and of
 * the host's launches (0.50); recomputing the MoE activation alone reruns
 * none of it. */
static void moe_recompute_reruns_the_dispatch(void **state)
{
    struct setup s;
    struct moe_step none, act, moe;

    (void)state;
    base(&s);
    none = step(&s);
    s.t.recompute.granularity = MOE_RC_SELECTIVE;
    s.t.recompute.modules = MOE_RC_MOE_ACT;
    act = step(&s);
    s.t.recompute.modules = MOE_RC_MOE;
    moe = step(&s);
    assert_true(none.sync_ms > 0 && none.ep_ms > 0 && none.route_ms > 0);
    assert_near(act.sync_ms, none.sync_ms);
    assert_near(act.ep_ms, none.ep_ms);
    assert_near(moe.sync_ms, 2 * none.sync_ms);
    assert_near(moe.ep_ms, 1.5 * none.ep_ms);
    assert_near(moe.route_ms, 1.28 * none.route_ms);
    assert_near(moe.host_stream_ms, 1.50 * none.host_stream_ms); /* every layer is MoE */
}

/* Megatron refuses the EP overlap at PP > 1 without VPP, with EP 1 and
 * with the MoE layer recomputed; there the switch hides nothing. */
static void ep_overlap_only_where_megatron_runs_it(void **state)
{
    struct setup s;
    struct moe_step off, on;

    (void)state;
    base(&s);
    s.p.ep_overlap = true;
    assert_true(moe_ep_overlap_applies(&s.l, &s.t, &s.p));
    s.l.pp = 2, s.l.dp = 4, s.l.edp = 2;
    assert_false(moe_ep_overlap_applies(&s.l, &s.t, &s.p));
    s.p.ep_overlap = false;
    off = step(&s);
    s.p.ep_overlap = true;
    on = step(&s);
    assert_near(on.ep_ms, off.ep_ms);
    assert_false(on.ep_overlapped);
    s.l.vpp = 2;
    assert_true(moe_ep_overlap_applies(&s.l, &s.t, &s.p));
    assert_true(step(&s).ep_overlapped);
    s.t.recompute.granularity = MOE_RC_SELECTIVE, s.t.recompute.modules = MOE_RC_MOE;
    assert_false(moe_ep_overlap_applies(&s.l, &s.t, &s.p));
    s.t.recompute.granularity = MOE_RC_NONE, s.l.ep = 1;
    assert_false(moe_ep_overlap_applies(&s.l, &s.t, &s.p));
}

/* Without the distributed optimizer the gradients are all-reduced (a
 * reduce-scatter and an all-gather of the gradients) and no parameters are
 * gathered: with BF16 gradients as much as with it, with FP32 gradients
 * 4/3 as much (2 x 4 bytes against 4 + 2). */
static void all_reduce_is_two_reduce_scatters(void **state)
{
    struct setup s;
    struct moe_step dist, plain;

    (void)state;
    base(&s);
    for (int fp32 = 0; fp32 < 2; fp32++) {
        s.t.grads_fp32 = fp32;
        s.t.distributed_optimizer = true;
        dist = step(&s);
        s.t.distributed_optimizer = false;
        plain = step(&s);
        assert_true(dist.dp_ms > 0);
        assert_near(plain.dp_ms, fp32 ? dist.dp_ms * 4 / 3 : dist.dp_ms);
    }
}

/* The DP group of TP 8 x DP 2 strides 8: its 2 GPUs span 16, more than an
 * 8-GPU NVLink domain, so it runs over the NICs; in a 16-GPU domain over
 * NVLink. */
static void strided_group_leaves_nvlink(void **state)
{
    struct setup s;
    struct moe_step d8, d16;

    (void)state;
    base(&s);
    s.l.tp = 8, s.l.dp = 2;
    d8 = step(&s);
    s.domain = 16;
    d16 = step(&s);
    assert_true(s.p.internode_gbps < s.p.nvlink_gbps);
    assert_true(d16.dp_ms > 0);
    assert_true(d8.dp_ms > d16.dp_ms * (1 + 1e-6));
}

/* The same tokens in 2 microbatches of 4 rather than 8 of 1: each expert's
 * GEMM has 4 times the rows and runs nearer the full rate. */
static void small_expert_gemms_run_slower(void **state)
{
    struct setup s;
    struct moe_step mbs1, mbs4;

    (void)state;
    base(&s);
    mbs1 = step(&s);
    s.w.mbs = 4;
    mbs4 = step(&s);
    assert_int_equal(mbs1.microbatches, 8);
    assert_int_equal(mbs4.microbatches, 2);
    assert_true(mbs4.compute_ms < mbs1.compute_ms * (1 - 1e-6));
}

/* Drop-and-pad knows its split sizes on the host: no stall at the
 * dispatcher's sync, the same launches in the host stream instead; with
 * capacity factor 2 the experts' GEMMs and the all-to-all handle twice the
 * rows. */
static void drop_and_pad_has_no_sync_stall(void **state)
{
    struct setup s;
    struct moe_step dropless, drop, drop2;

    (void)state;
    base(&s);
    dropless = step(&s);
    s.w.routing = MOE_ROUTING_DROP_AND_PAD, s.w.capacity_factor = 1.0;
    drop = step(&s);
    assert_true(dropless.sync_ms > 0);
    assert_true(drop.sync_ms == 0);
    assert_near(drop.host_stream_ms, dropless.host_stream_ms + dropless.sync_ms);
    assert_near(drop.ep_ms, dropless.ep_ms);
    s.w.capacity_factor = 2.0;
    drop2 = step(&s);
    assert_near(drop2.ep_ms, 2 * drop.ep_ms);
    assert_true(drop2.compute_ms > drop.compute_ms * (1 + 1e-6));
}

/* With the local implementation drop-and-pad also skips the dropless
 * dispatcher's token counting on the host: the host stream is shorter by
 * host_dropless_us per MoE layer and microbatch, the GPU's work is the
 * same, and the printed terms say so.  TE's host carries no such term. */
static void local_drop_and_pad_skips_the_dropless_host_work(void **state)
{
    struct setup s;
    struct moe_step dropless, drop;
    struct moe_pp_stage st[MOE_PP_BUSY_MAX];

    (void)state;
    base(&s);
    s.w.routing = MOE_ROUTING_DROP_AND_PAD, s.w.capacity_factor = 1.0;
    assert_false(step(&s).dropless_host_skipped); /* TE: the term is 0 */
    assert_int_equal(moe_perf_defaults(MOE_GPU_H100, MOE_IMPL_LOCAL, &s.p), 0);
    s.p.overlap_grad_reduce = s.p.overlap_param_gather = false;
    assert_true(s.p.host_dropless_us > 0);
    drop = step(&s);
    s.w.routing = MOE_ROUTING_DROPLESS;
    dropless = step(&s);
    assert_int_equal(moe_memory_busy_stages(&s.m, &s.l, st), 1); /* PP 1: one stage */
    assert_true(st[0].moe_layers > 0);
    assert_true(drop.dropless_host_skipped);
    assert_false(dropless.dropless_host_skipped);
    assert_near(dropless.host_stream_ms - drop.host_stream_ms,
                1e-3 * s.p.host_dropless_us * st[0].moe_layers * drop.microbatches);
    assert_near(dropless.gpu_stream_ms, drop.gpu_stream_ms);
    /* a study's host_us below the term: the layer's host time goes, no more */
    s.p.host_us = s.p.host_dropless_us / 2;
    dropless = step(&s);
    s.w.routing = MOE_ROUTING_DROP_AND_PAD;
    drop = step(&s);
    assert_near(dropless.host_stream_ms - drop.host_stream_ms,
                1e-3 * s.p.host_us * st[0].moe_layers * drop.microbatches);
}

/* The local implementation materialises the attention scores: their term
 * grows with the square of the sequence, splits over TP, grows with full
 * recompute, and is absent with TE's fused attention. */
static void local_attention_scores_grow_with_the_square(void **state)
{
    struct setup s;
    struct moe_step te, local, longer, full;

    (void)state;
    base(&s);
    te = step(&s);
    assert_true(te.scores_ms == 0);
    assert_int_equal(moe_perf_defaults(MOE_GPU_H100, MOE_IMPL_LOCAL, &s.p), 0);
    s.p.overlap_grad_reduce = s.p.overlap_param_gather = false;
    local = step(&s);
    assert_true(local.scores_ms > 0);
    assert_true(local.step_ms > te.step_ms);
    s.w.seq_len *= 2;
    longer = step(&s);
    assert_near(longer.scores_ms, 4 * local.scores_ms * local.microbatches / longer.microbatches);
    s.w.seq_len /= 2;
    s.t.recompute.granularity = MOE_RC_FULL;
    full = step(&s);
    assert_true(full.scores_ms > local.scores_ms * (1 + 1e-6));
}

/* The local implementation calls each local expert as a module of its own
 * (SequentialMLP): its host stream grows by the same amount per local
 * expert, and EP, which halves the local experts, halves that part. */
static void local_host_grows_per_local_expert(void **state)
{
    struct setup s;
    struct moe_step ep4, ep2, ep8;
    double per_expert;

    (void)state;
    base(&s);
    assert_int_equal(moe_perf_defaults(MOE_GPU_H100, MOE_IMPL_LOCAL, &s.p), 0);
    s.p.overlap_grad_reduce = s.p.overlap_param_gather = false;
    assert_true(s.p.host_expert_us > 0);
    ep4 = step(&s);
    s.l.ep = 2, s.l.edp = 8;
    ep2 = step(&s);
    s.l.ep = 8, s.l.edp = 2;
    ep8 = step(&s);
    per_expert = 1e-3 * s.p.host_expert_us * s.m.num_layers * ep4.microbatches;
    assert_near(ep2.host_stream_ms - ep4.host_stream_ms, per_expert * s.m.num_experts / 4);
    assert_near(ep4.host_stream_ms - ep8.host_stream_ms, per_expert * s.m.num_experts / 8);
}

/* The local implementation's sync stall follows from the two streams: the
 * host waits at each MoE layer's sync for the attention's forward, then
 * the GPU waits for the experts' launches.  Nothing when one stream leads
 * throughout (no host cost for the experts: the GPU's forward leads); the
 * most when the GPU's forward is attention and the host's is experts, and
 * then the step is longer than the slower stream; none with drop-and-pad,
 * which never syncs. */
static void local_sync_stall_follows_the_streams(void **state)
{
    struct setup s;
    struct moe_step alternating, gpu_leads, drop;

    (void)state;
    base(&s);
    assert_int_equal(moe_perf_defaults(MOE_GPU_H100, MOE_IMPL_LOCAL, &s.p), 0);
    assert_true(s.p.sync_from_streams && s.p.sync_us == 0);
    s.p.overlap_grad_reduce = s.p.overlap_param_gather = false;
    s.w.seq_len = 16384, s.w.gbs = 8;
    alternating = step(&s);
    assert_true(alternating.sync_ms > 0);
    assert_true(alternating.scores_ms > alternating.host_stream_ms / 4);
    assert_true(alternating.step_ms > alternating.gpu_stream_ms * (1 + 1e-6) &&
                alternating.step_ms > alternating.host_stream_ms * (1 + 1e-6));
    s.p.host_expert_us = 0, s.p.host_us = 1;
    gpu_leads = step(&s);
    assert_true(gpu_leads.sync_ms == 0);
    assert_int_equal(moe_perf_defaults(MOE_GPU_H100, MOE_IMPL_LOCAL, &s.p), 0);
    s.p.overlap_grad_reduce = s.p.overlap_param_gather = false;
    s.w.routing = MOE_ROUTING_DROP_AND_PAD, s.w.capacity_factor = 1.0;
    drop = step(&s);
    assert_true(drop.sync_ms == 0);
}

/* The cache the layout enumerator keeps per grid gives, VPP after VPP,
 * exactly what the uncached model gives: PP 2 with a PP send term, and
 * with the EP overlap, which VPP 1 turns off and VPP 2 on for the same
 * stage layers; for TE and for the local implementation, whose sync stall
 * depends on the PP term. */
static void cache_gives_the_same_step(void **state)
{
    struct setup s;
    struct moe_step_cache cache;
    struct moe_pp_stage st[MOE_PP_BUSY_MAX];

    (void)state;
    base(&s);
    s.l.pp = 2, s.l.dp = 4, s.l.edp = 2;
    for (int overlap = 0; overlap < 4; overlap++) {
        if (overlap == 2) { /* the local implementation, its sync stall from the streams */
            assert_int_equal(moe_perf_defaults(MOE_GPU_H100, MOE_IMPL_LOCAL, &s.p), 0);
            s.w.seq_len = 16384, s.w.gbs = 16;
        }
        s.p.ep_overlap = overlap % 2;
        cache.have_flops = false, cache.n = 0;
        for (int vpp = 1; vpp <= 4; vpp++) {
            struct moe_step plain, cached;
            memset(&plain, 0, sizeof(plain)), memset(&cached, 0, sizeof(cached)); /* padding */
            s.l.vpp = vpp;
            int n = moe_memory_busy_stages(&s.m, &s.l, st);
            moe_step_time_at(&s.m, &s.l, &s.w, &s.t, &s.p, s.domain, 1e9, 1e9, st, n, &plain);
            moe_step_time_cached(&s.m, &s.l, &s.w, &s.t, &s.p, s.domain, 1e9, 1e9, st, n,
                                 &cache, &cached);
            assert_true(plain.pp_ms > 0 && plain.sync_ms > 0);
            assert_memory_equal(&plain, &cached, sizeof(plain));
        }
        assert_true(cache.n >= 1 && cache.n <= MOE_STEP_CACHE_MAX);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tp_comm_overlap_leaves_a_quarter),
        cmocka_unit_test(ep_overlap_hides_behind_compute),
        cmocka_unit_test(full_recompute_repeats_attention),
        cmocka_unit_test(moe_recompute_reruns_the_dispatch),
        cmocka_unit_test(ep_overlap_only_where_megatron_runs_it),
        cmocka_unit_test(all_reduce_is_two_reduce_scatters),
        cmocka_unit_test(strided_group_leaves_nvlink),
        cmocka_unit_test(small_expert_gemms_run_slower),
        cmocka_unit_test(drop_and_pad_has_no_sync_stall),
        cmocka_unit_test(local_drop_and_pad_skips_the_dropless_host_work),
        cmocka_unit_test(local_attention_scores_grow_with_the_square),
        cmocka_unit_test(local_host_grows_per_local_expert),
        cmocka_unit_test(local_sync_stall_follows_the_streams),
        cmocka_unit_test(cache_gives_the_same_step),
    };

    return MOE_RUN_TESTS(tests);
}
