/* The step-time model.  One microbatch on the busiest pipeline stage has a
 * GPU stream (its compute, routing and the collectives it waits for) and a
 * host stream (the launches, per layer); the CPU runs ahead of the GPU, so
 * the microbatch costs the slower stream plus the stalls where Megatron
 * makes the host wait for the GPU (one device-to-host sync per MoE layer's
 * forward: gpu_perf.c cites them).  A step is that times the microbatches,
 * plus the pipeline bubble, the data-parallel gradient and parameter
 * traffic that backward does not hide and the host's per-step work.
 * Groups follow Megatron's rank order (tp-cp-dp-pp for attention, etp-ep-
 * edp-pp for experts), so a group of n ranks at stride s stays in one
 * NVLink domain when n * s <= domain: the same rule `moeflow place` packs
 * blocks by. */
#include "config.h"

#include "fit/steptime_internal.h"

#define BF16 2.0
#define FP32 4.0
/* What an overlapped collective still costs: TE's userbuffer TP overlap
 * and the CP ring hide most, never all, of it (Megatron-Bridge traces). */
#define OVERLAP_LEFT 0.25

struct group {
    int n, stride;
};

static double link_gbps(const struct moe_perf *p, struct group g, int domain)
{
    return (long)g.n * g.stride <= domain ? p->nvlink_gbps : p->internode_gbps;
}

/* Ring all-gather or reduce-scatter of a buffer of `bytes` on each GPU's
 * side: every GPU sends (n-1)/n of it over the slowest link it uses. */
static double ring_ms(double bytes, struct group g, const struct moe_perf *p, int domain)
{
    if (g.n <= 1 || bytes <= 0)
        return 0;
    return bytes * (g.n - 1) / g.n / (link_gbps(p, g, domain) * 1e6);
}

/* All-to-all: each GPU sends bytes/n to every peer; peers inside the
 * domain go over NVLink, the rest over the NICs, both at once. */
static double alltoall_ms(double bytes, struct group g, const struct moe_perf *p, int domain)
{
    if (g.n <= 1 || bytes <= 0)
        return 0;
    int local = domain / g.stride < g.n ? domain / g.stride : g.n;
    if (local < 1)
        local = 1;
    double per_peer = bytes / g.n, in = per_peer * (local - 1) / (p->nvlink_gbps * 1e6);
    double out = per_peer * (g.n - local) / (p->internode_gbps * 1e6);
    return in > out ? in : out;
}

/* FLOPs the GPUs really run: recompute repeats forwards (1/3 of a layer's
 * forward + backward). */
static void hardware_flops(const struct moe_flops *f, const struct moe_train *t,
                           struct moe_flops *hw)
{
    const struct moe_recompute_plan *r = &t->recompute;

    *hw = *f;
    if (r->granularity == MOE_RC_FULL) {
        hw->attn *= 4.0 / 3, hw->attn_core *= 4.0 / 3;
        hw->dense_mlp *= 4.0 / 3, hw->moe_mlp *= 4.0 / 3;
    } else if (r->granularity == MOE_RC_SELECTIVE) {
        if (r->modules & MOE_RC_MOE)
            hw->moe_mlp *= 4.0 / 3;
        if (r->modules & MOE_RC_MLP)
            hw->dense_mlp *= 4.0 / 3;
    }
}

/* The per-microbatch terms (struct moe_mb_cost, steptime.h) are in ms. */
static double mb_gpu(const struct moe_mb_cost *c)
{
    return c->compute + c->scores + c->route + c->tp + c->cp + c->ep + c->etp + c->pp;
}

/* The host stream hides behind the GPU's until a sync point; the stalls
 * there add to the slower stream. */
static double mb_total(const struct moe_mb_cost *c)
{
    double g = mb_gpu(c);

    return (c->host > g ? c->host : g) + c->sync;
}

/* Rows of one local expert's GEMM per microbatch: the EP group's tokens
 * (gathered over ETP), top-k copies each, spread over the experts.  A
 * grouped GEMM with few rows runs its tiles mostly empty: it reaches half
 * the large-GEMM rate at EXPERT_ROWS_HALF rows. */
#define EXPERT_ROWS_HALF 512.0
static double expert_efficiency(const struct moe_model *m, const struct moe_layout *l,
                                double copies_gpu)
{
    double rows = copies_gpu * l->ep * l->etp / (m->num_experts > 0 ? m->num_experts : 1);

    return rows / (rows + EXPERT_ROWS_HALF);
}

static double local_experts(const struct moe_model *m, const struct moe_layout *l)
{
    return m->num_experts > 0 && l->ep > 0 ? (double)m->num_experts / l->ep : 0;
}

/* Rows the experts, the permutation and the all-to-all handle per routed
 * token copy: 1 dropless; with drop-and-pad every expert's input is
 * padded to its capacity, capacity_factor times the even share
 * (Megatron-LM core 0.19 token_dispatcher.py:511-534, get_capacity). */
static double capacity(const struct moe_workload *w)
{
    if (w->routing != MOE_ROUTING_DROP_AND_PAD)
        return 1.0;
    return w->capacity_factor > 0 ? w->capacity_factor : 1.0;
}

/* Of the bytes the score tensors pass per element, the forward's share
 * (baddbmm, masked fill, softmax, dropout, bmm: 18 of about 42 counted
 * from the kernels' reads and writes in bf16). */
#define SCORE_FORWARD_SHARE 0.43
/* Megatron's local attention materialises the batch x heads x s x s
 * scores and passes them through elementwise kernels forward and backward
 * (core 0.19 transformer/dot_product_attention.py:194-239: baddbmm, the
 * masked fill and softmax of fusions/fused_softmax.py:299-341, dropout,
 * bmm), full squares despite the causal mask; each GPU of a TP group
 * holds its heads. */
static double scores_ms(const struct moe_model *m, const struct moe_layout *l,
                        const struct moe_workload *w, int layers, const struct moe_perf *p)
{
    double s = w->seq_len / (double)l->cp;

    return 1e-9 * p->score_ps * layers * w->mbs * ((double)m->num_heads / l->tp) * s * s;
}

/* Drop-and-pad knows every split size on the host (the capacity): the
 * dispatcher and the experts never wait for the GPU (token_dispatcher.py
 * :511-534 returns before the syncs of 546-599). */
static bool dispatcher_syncs(const struct moe_workload *w)
{
    return w->routing != MOE_ROUTING_DROP_AND_PAD;
}

static void stage_compute(const struct moe_model *m, const struct moe_layout *l,
                          const struct moe_workload *w, const struct moe_flops *hw,
                          const struct moe_pp_stage *st, bool last, double tok_gpu,
                          const struct moe_perf *p, struct moe_mb_cost *c)
{
    double rate = (p->fp8 ? p->tflops_fp8 : p->tflops_bf16) * 1e9; /* FLOP per ms */
    int layers = st->dense_layers + st->moe_layers;
    double per_tok = layers * (hw->attn - hw->attn_core) + st->dense_layers * hw->dense_mlp +
                     st->moe_layers * (hw->moe_mlp - hw->moe_routed) + (last ? hw->head : 0);
    double cap = capacity(w);
    double routed = st->moe_layers * hw->moe_routed * cap /
                    expert_efficiency(m, l, tok_gpu * m->topk * cap);

    /* every GPU of the TP x CP group (and, on average, of the EP x ETP
     * group) runs an equal share of its microbatch; the core attention
     * stays BF16 under an FP8 recipe (Megatron-LM core 0.19
     * transformer_config.py:619 fp8_dot_product_attention = False, passed
     * to TE as fp8_dpa in extensions/transformer_engine.py:3239) */
    c->experts = tok_gpu * routed / rate;
    c->compute = tok_gpu * ((per_tok + routed) / rate +
                            layers * hw->attn_core / (p->tflops_bf16 * 1e9));
    c->scores = scores_ms(m, l, w, layers, p);
    c->experts_host = 1e-3 * st->moe_layers * p->host_expert_us * local_experts(m, l);
    c->host = c->experts_host + 1e-3 * (p->host_us * (st->dense_layers + st->moe_layers) +
                                        st->moe_layers * (l->etp > 1 ? p->host_etp_us : 0));
    if (!dispatcher_syncs(w)) /* a share of host_us: never more than it (a study sets both) */
        c->host -= 1e-3 * st->moe_layers *
                   (p->host_dropless_us < p->host_us ? p->host_dropless_us : p->host_us);
    c->sync = p->sync_from_streams ? 0 :
              1e-3 * st->moe_layers * (p->sync_us + p->sync_expert_us * local_experts(m, l));
    /* without the syncs the launches the GPU idled for join the host
     * stream, which the GPU's work can hide */
    if (!dispatcher_syncs(w))
        c->host += c->sync, c->sync = 0;
}

/* The router, the top-k and the permutation before and after the experts
 * are many small kernels whose time follows the number of token copies,
 * not the hidden size; with SP each GPU handles its share of tokens. */
static void stage_route(const struct moe_model *m, const struct moe_workload *w,
                        const struct moe_pp_stage *st, double tok_gpu, const struct moe_perf *p,
                        struct moe_mb_cost *c)
{
    c->route = st->moe_layers * tok_gpu * m->topk * capacity(w) * p->route_ns * 1e-6;
}

/* Bytes of one K/V token row that the CP ring passes on, per GPU. */
static double kv_row(const struct moe_model *m, int tp)
{
    if (m->attention == MOE_ATTN_MLA)
        return BF16 * m->num_heads * (m->qk_head_dim + m->qk_pos_head_dim + m->v_head_dim) / tp;
    return BF16 * 2.0 * m->num_query_groups * m->head_dim / (tp < m->num_query_groups ? tp : m->num_query_groups);
}

static void stage_comm(const struct moe_model *m, const struct moe_layout *l,
                       const struct moe_pp_stage *st, double tok, double cap,
                       const struct moe_perf *p, int domain, struct moe_mb_cost *c)
{
    double h = m->hidden, tok_gpu = tok / ((double)l->tp * l->cp);
    int layers = st->dense_layers + st->moe_layers;
    /* with SP: all-gather + reduce-scatter around attention and around the
     * dense MLP or shared expert, forward and backward */
    int tp_ops = 4 * layers + 4 * (st->dense_layers + (m->shared_expert_ffn ? st->moe_layers : 0));
    double seq_rows = tok / l->cp; /* the TP group's tokens */

    c->tp = tp_ops * ring_ms(seq_rows * h * BF16, (struct group){ l->tp, 1 }, p, domain);
    if (p->tp_comm_overlap)
        c->tp *= OVERLAP_LEFT;
    /* ring attention: CP-1 K/V hops forward, twice that backward; TE
     * overlaps them with the attention kernels */
    c->cp = l->cp > 1 ? OVERLAP_LEFT * 3.0 * layers * (l->cp - 1) * (tok / l->cp) * kv_row(m, l->tp) /
                            (link_gbps(p, (struct group){ l->cp, l->tp }, domain) * 1e6)
                      : 0;
    /* dispatch + combine, forward and backward, top-k copies of each token */
    double routed = tok_gpu * m->topk * cap * h * BF16;
    c->ep = 4.0 * st->moe_layers *
            alltoall_ms(routed, (struct group){ l->ep, l->etp }, p, domain);
    c->etp = 4.0 * st->moe_layers *
             ring_ms(routed * l->etp, (struct group){ l->etp, 1 }, p, domain);
    /* activations to the next stage and gradients back, per virtual chunk
     * (the caller multiplies by VPP) */
    int world = l->tp * l->cp * l->dp * l->pp;
    c->pp = l->pp > 1 ? 2.0 * tok_gpu * h * BF16 /
                            (link_gbps(p, (struct group){ 2, world / l->pp }, domain) * 1e6)
                      : 0;
}

/* Gradient reduce-scatter (all-reduce without the distributed optimizer)
 * and parameter all-gather over DP for dense and EDP for expert weights;
 * the overlap switches hide them behind the last backward / first forward. */
static double dp_exposed(const struct moe_layout *l, const struct moe_train *t,
                         const struct moe_perf *p, int domain, double pd, double pe,
                         double compute_mb)
{
    struct group dp = { l->dp, l->tp * l->cp }, edp = { l->edp, l->etp * l->ep };
    double grad = t->grads_fp32 ? FP32 : BF16;
    double rs = ring_ms(pd * grad, dp, p, domain) + ring_ms(pe * grad, edp, p, domain);
    double ag = ring_ms(pd * BF16, dp, p, domain) + ring_ms(pe * BF16, edp, p, domain);

    if (!t->distributed_optimizer)
        rs *= 2, ag = 0; /* all-reduce = reduce-scatter + all-gather of grads */
    if (p->overlap_grad_reduce)
        rs = rs > compute_mb * 2 / 3 ? rs - compute_mb * 2 / 3 : 0;
    if (p->overlap_param_gather)
        ag = ag > compute_mb / 3 ? ag - compute_mb / 3 : 0;
    return rs + ag;
}

/* Whether backward runs the MoE layer's forward again: the MoE module of
 * selective recompute checkpoints the whole layer (core 0.19
 * moe_layer.py:694-709, te_checkpoint / tensor_parallel.checkpoint around
 * custom_forward: router, dispatch with its token-count sync, experts,
 * combine), and full recompute reruns every layer's forward. */
static bool moe_forward_again(const struct moe_train *t)
{
    const struct moe_recompute_plan *r = &t->recompute;

    return r->granularity == MOE_RC_FULL ||
           (r->granularity == MOE_RC_SELECTIVE && (r->modules & MOE_RC_MOE));
}

/* The rerun forward repeats one sync and the forward's two all-to-alls
 * and ETP gathers (of four); its FLOPs are in hardware_flops.  The shares
 * of the routing and of the host's launches it repeats were measured on
 * one H200 (tests/gpu/steady-1gpu.tsv, local implementation, s5-s10: the
 * large and medium models at MBS 1 and 2, with and without the MoE module
 * recomputed).  The large model at MBS 2, where the GPU's work sets the
 * step, gains 315 ms: 178 ms of MoE FLOPs, the rest routing.  The host
 * sets the other three steps.  Both shares are refitted with the local
 * host terms (lib/fit/gpu_perf.c), the routing's to 0.28 and the host's
 * to 0.50: s7-s10 within -17% to +17%.  (A first fit on the large model
 * alone had predicted the medium model's two runs before they ran: 23%
 * and 22% short.) */
#define RERUN_ROUTE_SHARE 0.28
#define RERUN_HOST_SHARE 0.50
static void charge_moe_rerun(const struct moe_pp_stage *st, struct moe_mb_cost *c)
{
    int layers = st->dense_layers + st->moe_layers;

    c->sync *= 2;
    c->ep *= 1.5, c->etp *= 1.5;
    c->route *= 1 + RERUN_ROUTE_SHARE;
    if (layers > 0) /* the host term is per layer: the MoE layers' share reruns */
        c->host += RERUN_HOST_SHARE * c->host * st->moe_layers / layers;
}

/* Megatron runs the EP all-to-all overlap only with EP > 1, VPP when PP > 1,
 * and neither full recompute nor the MoE module recomputed (core 0.19
 * transformer_config.py:2674-2699); elsewhere the switch is refused, so
 * the grid runs without it. */
bool moe_ep_overlap_applies(const struct moe_layout *l, const struct moe_train *t,
                            const struct moe_perf *p)
{
    return p->ep_overlap && l->ep > 1 && (l->pp == 1 || l->vpp > 1) && !moe_forward_again(t);
}

/* The local implementation's stall at each MoE layer's token-count sync
 * (gpu_perf.c cites the syncs).  The host waits there for the GPU to
 * finish the layer's attention and router; then it launches the experts
 * one module at a time, and the GPU waits for them.  So the forward is a
 * chain of intervals, sync to sync, each the experts of one layer and the
 * attention and router of the next: with uniform layers the forward takes
 * max(Hf, max(He, Ge) + Ga), host H and GPU G, f forward, e experts, a the
 * rest.  Backward has no sync and overlaps whole.  The stall is what this
 * adds to the slower stream: nothing where one stream leads throughout,
 * most where the GPU's forward is attention (long sequences) and the host's
 * is experts.  Forward shares: the host's, the main thread's share of the
 * host ops' time in the profiles of s4 and s17 (0.43-0.54,
 * tests/gpu/steady-1gpu/README.md); the GPU's, a third of the FLOPs, 0.43
 * of the score traffic (SCORE_FORWARD_SHARE) and half the routing, split
 * evenly around the sync (permute before, unpermute after). */
#define HOST_FORWARD_SHARE 0.45
#define ROUTE_FORWARD_SHARE 0.5
#define ROUTE_BEFORE_SYNC_SHARE 0.5
static void local_forward(const struct moe_mb_cost *fwd, struct moe_mb_cost *c)
{
    double route_f = fwd->route * ROUTE_FORWARD_SHARE;
    double ge = fwd->experts / 3 + route_f * (1 - ROUTE_BEFORE_SYNC_SHARE) + (fwd->ep + fwd->etp) / 2;
    double ga = (fwd->compute - fwd->experts) / 3 + fwd->scores * SCORE_FORWARD_SHARE +
                route_f * ROUTE_BEFORE_SYNC_SHARE + (fwd->tp + fwd->cp) / 2;
    double he = HOST_FORWARD_SHARE * fwd->experts_host, chain = (he > ge ? he : ge) + ga;

    c->fwd_host = HOST_FORWARD_SHARE * fwd->host;
    c->fwd_gpu = ge + ga;
    c->fwd_span = c->fwd_host > chain ? c->fwd_host : chain;
}

/* Once the stage's terms are final (the PP term scales with VPP). */
static double local_sync_stall(const struct moe_mb_cost *c)
{
    double g = mb_gpu(c), hb = c->host - c->fwd_host, gb = g - c->fwd_gpu;
    double both = c->fwd_span + (hb > gb ? hb : gb), slower = c->host > g ? c->host : g;

    return c->fwd_span > 0 && both > slower ? both - slower : 0;
}

/* overlap: moe_ep_overlap_applies, which the caller keys its cache by. */
static void stage_cost(const struct moe_model *m, const struct moe_layout *l,
                       const struct moe_workload *w, const struct moe_train *t,
                       const struct moe_perf *p, int domain, const struct moe_flops *hw,
                       const struct moe_pp_stage *stage, bool overlap, struct moe_mb_cost *c)
{
    struct moe_pp_stage st = *stage;
    double tok = (double)w->mbs * w->seq_len;

    stage_compute(m, l, w, hw, &st, st.rank == l->pp - 1, tok / ((double)l->tp * l->cp), p, c);
    stage_route(m, w, &st, tok / ((double)l->tp * l->cp), p, c);
    stage_comm(m, l, &st, tok, capacity(w), p, domain, c);
    struct moe_mb_cost forward = *c; /* before the backward's reruns */
    if (moe_forward_again(t))
        charge_moe_rerun(&st, c);
    if (t->recompute.granularity == MOE_RC_FULL) /* attention's forward again */
        c->scores *= 1 + SCORE_FORWARD_SHARE;
    if (overlap) /* hidden behind another microbatch's compute */
        c->ep = c->ep > c->compute ? c->ep - c->compute : 0;
    c->fwd_host = c->fwd_gpu = c->fwd_span = 0;
    if (p->sync_from_streams && st.moe_layers > 0 && dispatcher_syncs(w))
        local_forward(&forward, c);
}

void moe_step_time(const struct moe_model *m, const struct moe_layout *l,
                   const struct moe_workload *w, const struct moe_train *t,
                   const struct moe_perf *p, int domain, double params_dense,
                   double params_expert, struct moe_step *out)
{
    struct moe_pp_stage st[MOE_PP_BUSY_MAX];
    int n = moe_memory_busy_stages(m, l, st);

    moe_step_time_at(m, l, w, t, p, domain, params_dense, params_expert, st, n, out);
}

/* The cache entry of a stage composition, or -1. */
static int cache_find(const struct moe_step_cache *cache, const struct moe_train *t,
                      const struct moe_pp_stage *st, bool last, bool overlap)
{
    for (int i = 0; i < cache->n; i++)
        if (cache->e[i].t == t && cache->e[i].dense_layers == st->dense_layers &&
            cache->e[i].moe_layers == st->moe_layers && cache->e[i].last == last &&
            cache->e[i].ep_overlap == overlap)
            return i;
    return -1;
}

/* The stage's terms from the cache, or computed and filed there; then what
 * depends on VPP: the PP term, and the local sync stall it enters. */
static void cached_stage_cost(const struct moe_model *m, const struct moe_layout *l,
                              const struct moe_workload *w, const struct moe_train *t,
                              const struct moe_perf *p, int domain, const struct moe_flops *hw,
                              const struct moe_pp_stage *st, struct moe_step_cache *cache,
                              struct moe_mb_cost *c)
{
    bool last = st->rank == l->pp - 1, overlap = moe_ep_overlap_applies(l, t, p);
    int vpp = l->vpp > 0 ? l->vpp : 1, i = cache ? cache_find(cache, t, st, last, overlap) : -1;

    if (i >= 0) {
        *c = cache->e[i].cost;
    } else {
        stage_cost(m, l, w, t, p, domain, hw, st, overlap, c);
        if (cache && cache->n < MOE_STEP_CACHE_MAX) {
            cache->e[cache->n].t = t;
            cache->e[cache->n].dense_layers = st->dense_layers;
            cache->e[cache->n].moe_layers = st->moe_layers;
            cache->e[cache->n].last = last;
            cache->e[cache->n].ep_overlap = overlap;
            cache->e[cache->n++].cost = *c;
        }
    }
    c->pp *= vpp;
    if (p->sync_from_streams)
        c->sync = local_sync_stall(c);
}

/* The slowest of the candidate stages, whose pace the pipeline runs at. */
static void slowest_stage(const struct moe_model *m, const struct moe_layout *l,
                          const struct moe_workload *w, const struct moe_train *t,
                          const struct moe_perf *p, int domain, const struct moe_flops *f,
                          const struct moe_pp_stage *stages, int n_stages,
                          struct moe_step_cache *cache, struct moe_mb_cost *c)
{
    struct moe_flops hw;
    struct moe_mb_cost other;

    hardware_flops(f, t, &hw);
    cached_stage_cost(m, l, w, t, p, domain, &hw, &stages[0], cache, c);
    for (int i = 1; i < n_stages; i++) {
        cached_stage_cost(m, l, w, t, p, domain, &hw, &stages[i], cache, &other);
        if (mb_total(&other) > mb_total(c))
            *c = other;
    }
}

/* The pipeline runs at the pace of its slowest stage. */
void moe_step_time_at(const struct moe_model *m, const struct moe_layout *l,
                      const struct moe_workload *w, const struct moe_train *t,
                      const struct moe_perf *p, int domain, double params_dense,
                      double params_expert, const struct moe_pp_stage *stages, int n_stages,
                      struct moe_step *out)
{
    moe_step_time_cached(m, l, w, t, p, domain, params_dense, params_expert, stages, n_stages,
                         NULL, out);
}

void moe_step_time_cached(const struct moe_model *m, const struct moe_layout *l,
                          const struct moe_workload *w, const struct moe_train *t,
                          const struct moe_perf *p, int domain, double params_dense,
                          double params_expert, const struct moe_pp_stage *stages, int n_stages,
                          struct moe_step_cache *cache, struct moe_step *out)
{
    struct moe_flops own, *f = cache ? &cache->flops : &own;
    struct moe_mb_cost c;
    int world = l->tp * l->cp * l->dp * l->pp, vpp = l->vpp > 0 ? l->vpp : 1;

    if (!cache || !cache->have_flops) {
        moe_flops_per_token(m, w->seq_len, moe_padded_vocab(m->vocab, l->tp), f);
        if (cache)
            cache->have_flops = true;
    }
    slowest_stage(m, l, w, t, p, domain, f, stages, n_stages, cache, &c);
    double mbs = (double)w->gbs / ((double)w->mbs * l->dp), t_mb = mb_total(&c);
    double g = mb_gpu(&c);
    int layers = 0;
    for (int i = 0; i < n_stages; i++)
        if (stages[i].dense_layers + stages[i].moe_layers > layers)
            layers = stages[i].dense_layers + stages[i].moe_layers;
    out->microbatches = (int)mbs;
    out->ep_overlapped = moe_ep_overlap_applies(l, t, p);
    out->dropless_host_skipped = !dispatcher_syncs(w) && p->host_dropless_us > 0;
    out->compute_ms = mbs * c.compute;
    out->route_ms = mbs * c.route;
    out->scores_ms = mbs * c.scores;
    out->tp_ms = mbs * c.tp, out->cp_ms = mbs * c.cp;
    out->ep_ms = mbs * c.ep, out->etp_ms = mbs * c.etp;
    out->pp_ms = mbs * c.pp;
    out->host_ms = c.host > g ? mbs * (c.host - g) : 0; /* the part the GPU does not hide */
    out->sync_ms = mbs * c.sync;
    out->host_stream_ms = mbs * c.host, out->gpu_stream_ms = mbs * g;
    out->step_host_ms = 1e-3 * p->step_host_us * layers;
    /* 1F1B: PP-1 microbatch slots idle at fill and drain; interleaving
     * VPP chunks makes each slot 1/VPP as long */
    out->bubble_ms = (l->pp - 1) * t_mb / vpp;
    out->dp_ms = dp_exposed(l, t, p, domain, params_dense, params_expert, c.compute);
    out->step_ms = mbs * t_mb + out->bubble_ms + out->dp_ms + out->step_host_ms;
    out->model_tflop = moe_flops_model_per_token(m, f) * w->gbs * w->seq_len / 1e12;
    out->tflops_per_gpu = out->step_ms > 0 ? out->model_tflop / (out->step_ms / 1e3) / world : 0;
}
