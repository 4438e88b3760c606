/* The memory model.  Every term names the tensor PyTorch holds; the
 * calibration data (tests/data/memory) pins the sums, never row ids. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/enum_names.h"
#include "core/strbuf.h"
#include "fit/memory_internal.h"

void moe_train_defaults(struct moe_train *t)
{
    memset(t, 0, sizeof(*t));
    t->impl = MOE_IMPL_TE;
    t->distributed_optimizer = true;
    t->grads_fp32 = true;
    t->sequence_parallel = true;
    t->recompute.num_layers = 1;
}

void moe_train_local_defaults(struct moe_train *t)
{
    moe_train_defaults(t);
    t->impl = MOE_IMPL_LOCAL;
    t->hidden_dropout = 0.1;
    t->attention_dropout = 0.1;
    /* the local spec's RMSNorm (WrappedTorchNorm) refuses it, so the
     * generator does not emit --sequence-parallel without TE */
    t->sequence_parallel = false;
}

long moe_padded_vocab(int vocab, int tp)
{
    long mult = 128L * (tp > 0 ? tp : 1);

    return (vocab + mult - 1) / mult * mult;
}

/* Which decoder layers pipeline rank r holds.  Chunk c = v*PP + r; an
 * uneven split (explicit layout) is balanced: the first L % chunks chunks
 * take one layer more.  Closed form: the enumerator calls this a lot. */
static void stage_layers(const struct moe_model *m, const struct moe_layout *l, int r,
                         int *dense, int *moe)
{
    int vpp = l->vpp > 0 ? l->vpp : 1, chunks = l->pp * vpp, n = m->num_layers;
    int base = n / chunks, extra = n % chunks;
    int first_moe = m->num_experts > 0 ? m->first_dense_layers : n;
    int held = vpp * base, d = 0;

    if (extra > r) {
        int k = (extra - r + l->pp - 1) / l->pp;
        held += k < vpp ? k : vpp;
    }
    /* leading dense layers sit in the first few chunks only */
    for (int c = r; c < chunks; c += l->pp) {
        int lo = c * base + (c < extra ? c : extra);
        if (lo >= first_moe)
            break;
        int hi = lo + base + (c < extra);
        d += (first_moe < hi ? first_moe : hi) - lo;
    }
    *dense = d;
    *moe = held - d;
}

/* Attention parameters of one layer: TP-sharded part and replicated part. */
static void attn_params(const struct moe_model *m, double *sharded, double *replicated)
{
    double h = m->hidden, a = m->num_heads;

    if (m->attention == MOE_ATTN_MLA) {
        double qk = m->qk_head_dim + m->qk_pos_head_dim;
        double down = h * (m->kv_lora_rank + m->qk_pos_head_dim) + m->kv_lora_rank;
        double up = m->kv_lora_rank * a * (m->qk_head_dim + m->v_head_dim);

        if (m->q_lora_rank > 0) {
            down += h * m->q_lora_rank + m->q_lora_rank;
            up += (double)m->q_lora_rank * a * qk;
        } else {
            up += h * a * qk;
        }
        *sharded = up + a * m->v_head_dim * h;
        *replicated = down;
        return;
    }
    double q = a * m->head_dim, kv = 2.0 * m->num_query_groups * m->head_dim;
    *sharded = h * (q + kv) + q * h;
    *replicated = m->qk_layernorm ? 2.0 * m->head_dim : 0;
}

static double mlp_params(const struct moe_model *m, double ffn)
{
    return (m->swiglu ? 3.0 : 2.0) * m->hidden * ffn;
}

/* Parameters on pipeline rank r, split into the dense class (sharded by
 * TP, optimizer over DP*CP) and the expert class (EP*ETP, over EDP). */
static void stage_params(const struct moe_model *m, const struct moe_layout *l,
                         const struct moe_pp_stage *st, double *dense, double *expert)
{
    double as, ar, h = m->hidden;
    int nd = st->dense_layers, nm = st->moe_layers, r = st->rank;
    double vocab = (double)moe_padded_vocab(m->vocab, l->tp);

    attn_params(m, &as, &ar);
    double layer_dense = as / l->tp + ar + 2.0 * h;
    *dense = nd * (layer_dense + mlp_params(m, m->ffn_hidden) / l->tp) +
             nm * (layer_dense + mlp_params(m, m->shared_expert_ffn) / l->tp +
                   (double)m->num_experts * h);
    *expert = nm * mlp_params(m, m->moe_ffn_hidden) * m->num_experts / ((double)l->ep * l->etp);
    if (r == 0)
        *dense += vocab * h / l->tp;
    if (r == l->pp - 1) {
        *dense += h; /* final norm */
        if (m->untie_embeddings || l->pp > 1)
            *dense += vocab * h / l->tp; /* output layer, or the tied copy */
    }
}

/* Bytes per element of a GEMM input saved for backward.  Under an FP8 or
 * FP4 recipe TE's linear layers save the input they quantized for the
 * forward GEMM, not the BF16 one (TE 2.x transformer_engine/pytorch/module/
 * linear.py, _Linear.forward, "Cached input tensor": saved_inputmat =
 * inputmat, the quantized input with only its column-wise data kept for
 * the weight gradient); the block scales of MXFP8 (one byte per 32) are
 * left out.  What is not a GEMM's input (norm inputs, Q/K/V for BF16
 * attention, the router's BF16 input, SwiGLU's input, the combine buffer)
 * stays in BF16.  Measured only through the published grids that ran
 * (tests/cli/steptime-calibration.sh: each within its GPU's memory). */
static double gemm_input_bytes(const struct moe_train *t)
{
    return t->fp8_inputs && t->impl == MOE_IMPL_TE ? 1.0 : 2.0;
}

/* Bytes one layer saves for backward for one microbatch, per rank.
 * attn/ffn get the attention and the MLP/MoE parts; full = the layer's
 * input alone (what full recompute keeps). */
static double attention_saved(const struct moe_model *m, const struct moe_layout *l,
                              const struct moe_workload *w, const struct moe_train *t,
                              unsigned rc, double tok, double sp)
{
    double h = m->hidden, a = m->num_heads, tp = l->tp, q = gemm_input_bytes(t);
    double s = (double)w->seq_len / l->cp, b = w->mbs;
    double x = 2 * tok * h / sp;                       /* input of the layer norm */
    double ln_out = (rc & MOE_RC_LAYERNORM) ? 0 : q * tok * h / sp; /* QKV GEMM's input */
    double qkv, ctx, core;

    if (m->attention == MOE_ATTN_MLA) {
        double qk = m->qk_head_dim + m->qk_pos_head_dim;
        double lat = 2 * tok * (2.0 * m->q_lora_rank + 2.0 * m->kv_lora_rank +
                                m->qk_pos_head_dim) / sp;
        double up = 2 * tok * a * (2 * qk + m->v_head_dim) / tp;
        qkv = lat + ((rc & MOE_RC_MLA_UP_PROJ) ? 0 : up);
        ctx = q * tok * a * m->v_head_dim / tp;
    } else {
        double g = m->num_query_groups / tp < 1 ? 1 : m->num_query_groups / tp;
        double kvh = t->impl == MOE_IMPL_LOCAL ? a / tp : g; /* local repeats K/V */
        qkv = 2 * tok * m->head_dim * (a / tp + 2 * kvh);
        ctx = q * tok * a * m->head_dim / tp;
    }
    if (t->impl == MOE_IMPL_LOCAL) {
        /* softmax output; dropout keeps its mask and output too */
        double scores = b * (a / tp) * s * s;
        core = scores * (t->attention_dropout > 0 ? 5 : 2);
    } else {
        core = 4 * b * (a / tp) * s; /* softmax statistics of flash attention */
    }
    if (rc & MOE_RC_CORE_ATTN)
        core = 0;
    double mask = t->hidden_dropout > 0 ? tok * h / sp : 0;
    return x + ln_out + qkv + core + ctx + mask + 2 * tok * h / sp; /* + pre-MLP norm input */
}

static double ffn_saved(const struct moe_model *m, const struct moe_layout *l,
                        const struct moe_workload *w, const struct moe_train *t, unsigned rc,
                        double tok, double sp, bool moe)
{
    double h = m->hidden, glu = m->swiglu ? 2 : 1, q = gemm_input_bytes(t);
    double mask = t->hidden_dropout > 0 ? tok * h / sp : 0;

    if (!moe) {
        double f = m->ffn_hidden / (double)l->tp;
        double ln_out = (rc & MOE_RC_LAYERNORM) ? 0 : q * tok * h / sp; /* FC1's input */
        double mlp = (rc & MOE_RC_MLP) ? 0 : 2 * tok * f * glu + q * tok * f;
        return ln_out + mlp + mask;
    }
    /* the router's input: its GEMM stays in BF16 */
    double ln_out = (rc & MOE_RC_LAYERNORM) ? 0 : 2 * tok * h / sp;
    double local = tok / sp;
    double cf = (w->routing == MOE_ROUTING_DROP_AND_PAD && w->capacity_factor > 0)
                    ? w->capacity_factor : 1.0;
    double n = local * m->topk * cf * l->etp; /* token copies this rank's experts see */
    double f = m->moe_ffn_hidden / (double)l->etp;
    double router = 8 * local * m->num_experts;       /* fp32 logits and scores */
    double experts = q * n * h                          /* dispatched input: FC1's */
                     + 2 * n * f * glu                  /* fc1 output */
                     + ((rc & MOE_RC_MOE_ACT) ? 0 : q * n * f) /* activation output: FC2's */
                     + 2 * n * h;                       /* combine buffer */
    double shared = 0;
    if (m->shared_expert_ffn > 0 && !(rc & MOE_RC_SHARED_EXPERTS))
        shared = tok * (m->shared_expert_ffn / (double)l->tp) * (2 * glu + q);
    if (rc & MOE_RC_MOE)
        router = experts = shared = 0; /* only the MoE input is kept */
    return ln_out + router + experts + shared + mask;
}

static struct moe_layer_act layer_saved(const struct moe_model *m, const struct moe_layout *l,
                                    const struct moe_workload *w, const struct moe_train *t,
                                    bool moe, bool selective)
{
    struct moe_layer_act a;
    double tok = (double)w->seq_len / l->cp * w->mbs;
    double sp = (l->tp > 1 && t->sequence_parallel) ? l->tp : 1;
    unsigned rc = selective ? t->recompute.modules : 0;

    a.attn = attention_saved(m, l, w, t, rc, tok, sp);
    a.ffn = ffn_saved(m, l, w, t, rc, tok, sp, moe);
    a.input = 2 * tok * m->hidden / sp;
    return a;
}

/* Microbatch chunks alive on pipeline rank r at the end of its warm-up
 * (Megatron's 1F1B and interleaved schedules). */
static int in_flight_chunks(const struct moe_layout *l, const struct moe_workload *w, int r)
{
    int vpp = l->vpp > 0 ? l->vpp : 1;
    long m = w->mbs > 0 && l->dp > 0 ? w->gbs / ((long)w->mbs * l->dp) : 1;

    if (m < 1)
        m = 1;
    if (l->pp == 1)
        return 1;
    if (vpp == 1)
        return (int)(l->pp - r < m ? l->pp - r : m);
    long warm = (long)(l->pp - r - 1) * 2 + (long)(vpp - 1) * l->pp + 1;
    return (int)(warm < m * vpp ? warm : m * vpp);
}

void moe_memory_layer_acts(const struct moe_model *m, const struct moe_layout *l,
                           const struct moe_workload *w, const struct moe_train *t,
                           struct moe_layer_acts *out)
{
    bool sel = t->recompute.granularity == MOE_RC_SELECTIVE;

    out->dense = layer_saved(m, l, w, t, false, sel);
    out->moe = layer_saved(m, l, w, t, true, sel);
    out->dense_full = sel ? layer_saved(m, l, w, t, false, false) : out->dense;
    out->moe_full = sel ? layer_saved(m, l, w, t, true, false) : out->moe;
}

/* Activations and transient bytes on one pipeline rank. */
static void stage_activations(const struct moe_model *m, const struct moe_layout *l,
                              const struct moe_workload *w, const struct moe_train *t,
                              const struct moe_pp_stage *st, const struct moe_layer_acts *la,
                              double *saved, double *transient, double *attn_share,
                              int *chunks)
{
    int nd = st->dense_layers, nm = st->moe_layers, r = st->rank;
    int vpp = l->vpp > 0 ? l->vpp : 1;
    double tok = (double)w->seq_len / l->cp * w->mbs;
    double sp = (l->tp > 1 && t->sequence_parallel) ? l->tp : 1;
    bool sel = t->recompute.granularity == MOE_RC_SELECTIVE;
    struct moe_layer_act d = la->dense, e = la->moe, dfull = la->dense_full,
                         efull = la->moe_full;

    int layers = nd + nm;
    *chunks = in_flight_chunks(l, w, r);
    double per_chunk = layers > 0 ? (double)(*chunks) / vpp : 0;
    double kept_d = d.attn + d.ffn, kept_e = e.attn + e.ffn;
    double work = 0; /* recomputed layers alive during one backward */

    if (t->recompute.granularity == MOE_RC_FULL) {
        int k = t->recompute.num_layers > 0 ? t->recompute.num_layers : 1;
        double biggest = nm > 0 ? efull.attn + efull.ffn : dfull.attn + dfull.ffn;
        if (t->recompute.method == MOE_RC_UNIFORM) {
            kept_d = d.input, kept_e = e.input;
            work = biggest * k;
        } else {
            /* block: the first k layers of each chunk keep only their input */
            int per = layers / vpp > 0 ? layers / vpp : 1, kk = k < per ? k : per;
            double frac = (double)kk / per;
            kept_d = frac * d.input + (1 - frac) * (dfull.attn + dfull.ffn);
            kept_e = frac * e.input + (1 - frac) * (efull.attn + efull.ffn);
            work = biggest;
        }
    }
    double mb = nd * kept_d + nm * kept_e; /* one microbatch through all stage layers */
    if (t->offload_layers > 0) {
        int off = t->offload_layers < layers ? t->offload_layers : layers;
        double avg = layers > 0 ? mb / layers : 0;
        mb -= avg * (off > 1 ? off - 1 : 0); /* one layer stays in transit */
    }
    *saved = per_chunk * mb;
    if (r == 0 && t->hidden_dropout > 0)
        *saved += *chunks * tok * m->hidden / sp / vpp; /* embedding dropout mask */
    double at = nm > 0 ? efull.attn : dfull.attn, lf = nm > 0 ? efull.ffn : dfull.ffn;
    *attn_share = at + lf > 0 ? at / (at + lf) : 0;

    /* Transients at the peak.  The loss keeps the bf16 logits and their
     * fp32 copy, which becomes the softmax saved for backward in place
     * (core/tensor_parallel/cross_entropy.py:25, :42, :62, :181); it is
     * gone before the first layer's backward.  There local attention
     * backward holds 3 bytes of s^2 gradients per score more than the MLP
     * part it has just freed, on top of a fully recomputed layer; with
     * core_attn recomputed it also rebuilds the 5 bytes per score it did
     * not keep (softmax output, dropout mask and output).  Both measured
     * on the fit matrix, tests/gpu/fit-matrix.tsv: 2 bytes of gradient
     * left full and core_attn recompute 4-37% under. */
    double loss = 0, g = 0;
    if (r == l->pp - 1) {
        double v = (double)moe_padded_vocab(m->vocab, l->tp);
        loss = 6 * tok * v / l->tp + 4 * tok * m->hidden / sp;
    }
    if (t->impl == MOE_IMPL_LOCAL) {
        double s = (double)w->seq_len / l->cp;
        double scores = w->mbs * (m->num_heads / (double)l->tp) * s * s;
        bool rebuilt = sel && (t->recompute.modules & MOE_RC_CORE_ATTN);
        double kept = t->attention_dropout > 0 ? 5 : 2;
        g = (3 + (rebuilt ? kept : 0)) * scores - lf;
    }
    if (g < 0)
        g = 0;
    *transient = loss > g + work ? loss : g + work;
}

static int check_shape(const struct moe_model *m, const struct moe_layout *l,
                       const struct moe_workload *w, struct moe_error *err)
{
    if (m->num_layers <= 0 || m->hidden <= 0 || m->num_heads <= 0 || m->vocab <= 0) {
        moe_error_set(err, "model '%s': layers, hidden, heads and vocab must be positive",
                      m->name);
        return -1;
    }
    if (l->tp < 1 || l->cp < 1 || l->pp < 1 || l->ep < 1 || l->etp < 1 || l->dp < 1 ||
        l->edp < 1) {
        moe_error_set(err, "layout: every parallel size must be at least 1");
        return -1;
    }
    if (w->seq_len <= 0 || w->mbs <= 0 || w->gbs <= 0) {
        moe_error_set(err, "workload: seq, mbs and gbs must be positive");
        return -1;
    }
    if (l->pp * (l->vpp > 0 ? l->vpp : 1) > m->num_layers) {
        moe_error_set(err, "layout: PP*VPP = %d exceeds %d layers",
                      l->pp * (l->vpp > 0 ? l->vpp : 1), m->num_layers);
        return -1;
    }
    return 0;
}

/* PyTorch takes each cuBLAS workspace from its caching allocator, so it
 * counts in max allocated: 32 MiB on Hopper and Blackwell, one per (handle,
 * stream), and handles are per thread (aten/src/ATen/cuda/
 * CublasHandlePool.cpp: parseChosenWorkspaceSize, setWorkspaceForHandle;
 * cuBLASLt shares it).  Forward runs on the Python thread and backward on
 * the autograd engine's device thread: two workspaces, held for good
 * (tests/gpu: 64.5 MiB in "allocated" beyond the model state on every
 * layout, PP stage and MBS). */
static double cublas_workspaces(void)
{
    return 2 * 32.0 * 1024 * 1024;
}

static void static_bytes(const struct moe_layout *l, const struct moe_train *t, double pd,
                         double pe, struct moe_memory *o)
{
    o->params_dense = pd, o->params_expert = pe;
    o->weights = 2 * (pd + pe);
    o->grads = (t->grads_fp32 ? 4 : 2) * (pd + pe);
    double shard = t->distributed_optimizer ? pd / ((double)l->dp * l->cp) + pe / l->edp : pd + pe;
    o->optimizer = 12 * shard * (1 - t->optimizer_offload);
}

void moe_memory_stage_init(const struct moe_model *m, const struct moe_layout *l, int rank,
                           struct moe_pp_stage *st)
{
    st->rank = rank;
    stage_layers(m, l, rank, &st->dense_layers, &st->moe_layers);
}

int moe_memory_busy_stages(const struct moe_model *m, const struct moe_layout *l,
                           struct moe_pp_stage *out)
{
    int n = 1;
    struct moe_pp_stage moe = { 0, 0, 0 }, st;

    moe_memory_stage_init(m, l, 0, &out[0]);
    if (l->pp == 1)
        return 1;
    moe_memory_stage_init(m, l, l->pp - 1, &out[n++]);
    /* ranks hold fewer layers the later they are, so the first with the
     * most MoE layers is the one to watch */
    for (int r = 1; r < l->pp - 1; r++) {
        moe_memory_stage_init(m, l, r, &st);
        if (st.moe_layers > moe.moe_layers)
            moe = st;
    }
    if (moe.moe_layers > out[0].moe_layers && moe.moe_layers > out[1].moe_layers)
        out[n++] = moe;
    return n;
}

void moe_memory_stage_act(const struct moe_model *m, const struct moe_layout *l,
                          const struct moe_workload *w, const struct moe_train *t,
                          const struct moe_pp_stage *st, const struct moe_layer_acts *la,
                          struct moe_stage_act *out)
{
    struct moe_layer_acts own;

    if (!la) {
        moe_memory_layer_acts(m, l, w, t, &own);
        la = &own;
    }
    stage_activations(m, l, w, t, st, la, &out->saved, &out->transient, &out->attn_share,
                      &out->in_flight);
}

void moe_memory_stage_params(const struct moe_model *m, const struct moe_layout *l,
                             const struct moe_pp_stage *st, double *dense, double *expert)
{
    stage_params(m, l, st, dense, expert);
}

void moe_memory_stage_static(const struct moe_model *m, const struct moe_layout *l,
                             const struct moe_workload *w, const struct moe_train *t,
                             const struct moe_pp_stage *st, double pd, double pe,
                             struct moe_memory *o)
{
    memset(o, 0, sizeof(*o));
    static_bytes(l, t, pd, pe, o);
    if (t->impl == MOE_IMPL_LOCAL) /* Megatron's global buffer for the scores */
        o->persistent = 2.0 * w->mbs * (m->num_heads / (double)l->tp) *
                        ((double)w->seq_len / l->cp) * ((double)w->seq_len / l->cp);
    o->persistent += cublas_workspaces();
    /* torch's foreach Adam (no TE/Apex) takes a sqrt copy of the moments */
    o->optimizer_step = t->impl == MOE_IMPL_LOCAL ? o->optimizer / 3 : 0;
    o->stage = st->rank;
    o->graph_kind = t->graphs, o->graph_parts = t->graph_parts;
    o->graph_static = moe_memory_graph_static(m, l, w, t, st->dense_layers + st->moe_layers,
                                              in_flight_chunks(l, w, st->rank));
    o->graphs = o->graph_static;
    o->total = o->weights + o->grads + o->optimizer + o->persistent + o->graphs;
}

void moe_memory_apply_act(struct moe_memory *o, const struct moe_stage_act *act)
{
    double base = o->weights + o->grads + o->optimizer + o->persistent;

    o->attn_share = act->attn_share, o->in_flight = act->in_flight;
    o->peak_in_optimizer = o->optimizer_step > act->saved + act->transient;
    if (o->peak_in_optimizer) {
        o->activations = 0;
        o->transient = o->optimizer_step;
    } else {
        o->activations = act->saved, o->transient = act->transient;
    }
    /* the pool stays through the optimizer step too */
    moe_memory_graph_pool(o, act);
    o->total = base + o->activations + o->transient + o->graphs;
}

static void stage_estimate(const struct moe_model *m, const struct moe_layout *l,
                           const struct moe_workload *w, const struct moe_train *t,
                           const struct moe_pp_stage *st, struct moe_memory *o)
{
    struct moe_stage_act act;
    double pd, pe;

    stage_params(m, l, st, &pd, &pe);
    moe_memory_stage_act(m, l, w, t, st, NULL, &act);
    moe_memory_stage_static(m, l, w, t, st, pd, pe, o);
    moe_memory_apply_act(o, &act);
}

int moe_memory_estimate(const struct moe_model *m, const struct moe_layout *l,
                        const struct moe_workload *w, const struct moe_train *t,
                        struct moe_memory *out, struct moe_error *err)
{
    if (check_shape(m, l, w, err) < 0)
        return -1;
    struct moe_pp_stage busy[MOE_PP_BUSY_MAX];
    int n = moe_memory_busy_stages(m, l, busy);
    for (int i = 0; i < n; i++) {
        struct moe_memory o;
        stage_estimate(m, l, w, t, &busy[i], &o);
        if (i == 0 || o.total > out->total)
            *out = o;
    }
    return 0;
}

int moe_memory_estimate_stage(const struct moe_model *m, const struct moe_layout *l,
                              const struct moe_workload *w, const struct moe_train *t,
                              int pp_rank, struct moe_memory *out, struct moe_error *err)
{
    struct moe_pp_stage st;

    if (check_shape(m, l, w, err) < 0)
        return -1;
    if (pp_rank < 0 || pp_rank >= l->pp) {
        moe_error_set(err, "pipeline rank %d outside PP %d", pp_rank, l->pp);
        return -1;
    }
    moe_memory_stage_init(m, l, pp_rank, &st);
    stage_estimate(m, l, w, t, &st, out);
    return 0;
}

const char *const moe_recompute_module_names[] = {
    "core_attn", "moe_act", "layernorm", "mlp", "moe", "shared_experts", "mla_up_proj", NULL,
};
MOE_ENUM_NAMES_CHECK(moe_recompute_module_names, MOE_RC_MODULE_COUNT);
_Static_assert(MOE_RC_MLA_UP_PROJ == 1u << (MOE_RC_MODULE_COUNT - 1),
               "one name per MOE_RC_* bit, the last bit last");

int moe_recompute_modules_parse(const char *list, unsigned *bits, struct moe_error *err)
{
    char buf[256];
    char *save = NULL;

    *bits = 0;
    if (!list || !*list)
        return 0;
    /* a list cut short would drop a module without a word */
    if (moe_fmt_fixed(buf, sizeof(buf), err, "%s", list) != 0)
        return -1;
    for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        int i;
        for (i = 0; i < MOE_RC_MODULE_COUNT; i++)
            if (strcmp(tok, moe_recompute_module_names[i]) == 0)
                break;
        if (i == MOE_RC_MODULE_COUNT) {
            char known[128];
            moe_error_set(err, "unknown recompute module '%s' (one of %s)", tok,
                          moe_recompute_modules_format((1u << MOE_RC_MODULE_COUNT) - 1, known,
                                                       sizeof(known)));
            return -1;
        }
        *bits |= 1u << i;
    }
    return 0;
}

const char *moe_recompute_modules_format(unsigned bits, char *buf, unsigned len)
{
    size_t used = 0;

    if (len == 0)
        return buf;
    buf[0] = '\0';
    for (int i = 0; i < MOE_RC_MODULE_COUNT; i++) {
        if (!(bits & (1u << i)))
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                         moe_recompute_module_names[i]);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    return buf;
}
