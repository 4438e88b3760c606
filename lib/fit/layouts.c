/* Layout enumeration.  The attention grid (TP, CP -> DP) and the MoE grid
 * (ETP, EP -> EDP) are independent once PP is fixed, so each is checked
 * once per PP and a rejected subtree is counted without being walked. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "fit/fit_internal.h"
#include "fit/layouts.h"
#include "fit/memory_internal.h"
#include "fit/steptime_internal.h"

/* Where Megatron enforces each rule, per dialect, is in study/megatron_rules.c's
 * table (moe_layout_rule_source): fit cannot include study. */
static const char *const rule_ids[MOE_RULE_COUNT] = {
    "ok", "layers%pp", "world=tp*cp*dp*pp", "heads%tp", "query_groups%tp|tp%query_groups", "ffn%tp",
    "seq%2cp", "seq/cp%tp", "cp-needs-te", "gbs%(mbs*dp)", "world=etp*ep*edp*pp",
    "experts%ep", "moe_ffn%etp", "moe-tp-needs-sp", "vpp-needs-pp", "layers%(pp*vpp)",
};

const char *moe_rule_id(enum moe_rule r)
{
    return r < MOE_RULE_COUNT ? rule_ids[r] : "?";
}

static const char *const scale_texts[MOE_SCALE_COUNT] = {
    "last", "fits in memory (no/selective recompute < full < offload)",
    "faster predicted step", "larger DP",
    "TP and EPxETP inside one NVLink domain", "EP preferred over ETP",
    "PP only across nodes", "CP only for long context",
    "faster predicted step (near-tie)", "lighter recompute, less memory",
};

const char *moe_scale_rule_text(enum moe_scale_rule r)
{
    return r < MOE_SCALE_COUNT ? scale_texts[r] : "?";
}

#define WHY(...) (why ? (void)snprintf(why, len, __VA_ARGS__) : (void)0)
#define UNEVEN "an explicit pipeline layout splits them unevenly"

static enum moe_rule check_pp(const struct moe_model *m, const struct moe_layout *l,
                              const struct moe_train *t, char *why, size_t len)
{
    if (l->pp > m->num_layers) {
        WHY("PP=%d is more than the %d layers", l->pp, m->num_layers);
        return MOE_RULE_LAYERS_PP;
    }
    if (!t->uneven_pp && m->num_layers % l->pp != 0) {
        WHY("PP=%d does not divide %d layers; " UNEVEN, l->pp, m->num_layers);
        return MOE_RULE_LAYERS_PP;
    }
    return MOE_RULE_OK;
}

static enum moe_rule check_dense(const struct moe_model *m, struct moe_layout *l,
                                 const struct moe_workload *w, const struct moe_train *t,
                                 int world, char *why, size_t len)
{
    /* in 64 bits: a study's TP, CP and PP go up to 1024 each */
    long long grid = (long long)l->tp * l->cp * l->pp;

    if (world % grid != 0) {
        WHY("TP %d x CP %d x PP %d = %lld does not divide %d GPUs", l->tp, l->cp, l->pp, grid,
            world);
        return MOE_RULE_WORLD_DENSE;
    }
    l->dp = (int)(world / grid);
    if (m->num_heads % l->tp != 0) {
        WHY("TP=%d does not divide %d attention heads", l->tp, m->num_heads);
        return MOE_RULE_HEADS_TP;
    }
    /* Fewer KV heads than TP ranks is allowed: each rank then holds one,
     * replicated (Attention's num_query_groups < world_size branch). */
    if (m->attention == MOE_ATTN_GQA && m->num_query_groups % l->tp != 0 &&
        l->tp % m->num_query_groups != 0) {
        WHY("TP=%d is neither a divisor nor a multiple of %d query groups", l->tp,
            m->num_query_groups);
        return MOE_RULE_GROUPS_TP;
    }
    if (m->ffn_hidden % l->tp != 0 || m->shared_expert_ffn % l->tp != 0) {
        WHY("TP=%d does not divide the FFN size %d / shared-expert size %d", l->tp,
            m->ffn_hidden, m->shared_expert_ffn);
        return MOE_RULE_FFN_TP;
    }
    if (l->cp > 1 && w->seq_len % (2 * l->cp) != 0) {
        WHY("sequence %d is not divisible by 2*CP = %d", w->seq_len, 2 * l->cp);
        return MOE_RULE_SEQ_CP;
    }
    if (l->tp > 1 && t->sequence_parallel && (w->seq_len / l->cp) % l->tp != 0) {
        WHY("sequence shard %d (seq/CP) is not divisible by TP=%d", w->seq_len / l->cp, l->tp);
        return MOE_RULE_SEQ_TP;
    }
    if (l->cp > 1 && t->impl == MOE_IMPL_LOCAL) {
        WHY("CP=%d needs --transformer-impl transformer_engine", l->cp);
        return MOE_RULE_CP_IMPL;
    }
    if (w->gbs % ((long long)w->mbs * l->dp) != 0) {
        WHY("GBS %d is not a multiple of MBS %d x DP %d", w->gbs, w->mbs, l->dp);
        return MOE_RULE_GBS;
    }
    return MOE_RULE_OK;
}

static enum moe_rule check_expert(const struct moe_model *m, struct moe_layout *l,
                                  const struct moe_train *t, int world, char *why, size_t len)
{
    long long grid = (long long)l->etp * l->ep * l->pp;
    int experts = m->num_experts > 0 ? m->num_experts : 1;

    if (world % grid != 0) {
        WHY("EP %d x ETP %d x PP %d = %lld does not divide %d GPUs", l->ep, l->etp, l->pp, grid,
            world);
        return MOE_RULE_WORLD_EXPERT;
    }
    l->edp = (int)(world / grid);
    if (experts % l->ep != 0) {
        WHY("EP=%d does not divide %d experts", l->ep, experts);
        return MOE_RULE_EXPERTS_EP;
    }
    if (m->moe_ffn_hidden % l->etp != 0) {
        WHY("ETP=%d does not divide the expert FFN size %d", l->etp, m->moe_ffn_hidden);
        return MOE_RULE_FFN_ETP;
    }
    /* MoELayer refuses TP > 1 without sequence parallelism whatever EP is,
     * and the local implementation's RMSNorm (WrappedTorchNorm) refuses
     * sequence parallelism: without TE an MoE model runs at TP 1 */
    if (l->tp > 1 && !t->sequence_parallel) {
        WHY("TP=%d in an MoE model needs --sequence-parallel%s", l->tp,
            t->impl == MOE_IMPL_LOCAL ? ", which the local implementation's RMSNorm refuses: "
                                        "without Transformer Engine an MoE model runs at TP 1"
                                      : "");
        return MOE_RULE_SP;
    }
    return MOE_RULE_OK;
}

static enum moe_rule check_vpp(const struct moe_model *m, const struct moe_layout *l,
                               const struct moe_train *t, char *why, size_t len)
{
    if (l->vpp > 1 && l->pp == 1) {
        WHY("VPP=%d needs PP > 1", l->vpp);
        return MOE_RULE_VPP_PP;
    }
    long long chunks = (long long)l->pp * l->vpp;
    if (chunks > m->num_layers) {
        WHY("PP %d x VPP %d = %lld is more than the %d layers", l->pp, l->vpp, chunks,
            m->num_layers);
        return MOE_RULE_VPP_LAYERS;
    }
    if (!t->uneven_pp && m->num_layers % chunks != 0) {
        WHY("PP %d x VPP %d = %lld does not divide %d layers; " UNEVEN, l->pp, l->vpp, chunks,
            m->num_layers);
        return MOE_RULE_VPP_LAYERS;
    }
    return MOE_RULE_OK;
}

enum moe_rule moe_layout_check(const struct moe_model *m, struct moe_layout *l,
                               const struct moe_workload *w, const struct moe_train *t,
                               int world, char *why, size_t len)
{
    enum moe_rule r;

    if (why && len)
        why[0] = '\0';
    if (l->vpp < 1)
        l->vpp = 1;
    if ((r = check_pp(m, l, t, why, len)) != MOE_RULE_OK)
        return r;
    if ((r = check_dense(m, l, w, t, world, why, len)) != MOE_RULE_OK)
        return r;
    if ((r = check_expert(m, l, t, world, why, len)) != MOE_RULE_OK)
        return r;
    return check_vpp(m, l, t, why, len);
}

/* ---- enumeration ---- */

struct grid {
    int a, b;        /* (TP, CP) or (ETP, EP) */
    enum moe_rule rule;
    int derived;     /* DP or EDP */
};

/* Stage parameters for the current attention grid, per VPP and stage. */
struct param_memo {
    unsigned stamp;
    double dense, expert; /* expert: with EP = ETP = 1 */
};

struct builder {
    struct moe_layout_set *s;
    size_t cap_valid, cap_rej;
    bool keep;
    struct moe_train steps[MOE_FIT_MAX_STEPS]; /* the fit ladder */
    int n_steps;
    struct memo *memo;                         /* [vpp][etp][step][stage] */
    struct layer_memo *lmemo;                  /* [etp][step] */
    struct moe_pp_stage stages[MOE_PP_BUSY_MAX * 128]; /* [vpp][busy stage] for this PP */
    int n_stages[128];                         /* [vpp]: busy stages */
    struct param_memo pmemo[MOE_PP_BUSY_MAX * 128]; /* [vpp][busy stage] */
    int memo_nv, memo_ne;
    unsigned stamp;
};

/* Activation halves already computed for the current attention grid. */
struct memo {
    unsigned stamp;
    struct moe_stage_act act;
};

/* Per-layer activations for the current attention grid, per ETP and step. */
struct layer_memo {
    unsigned stamp;
    struct moe_layer_acts acts;
};

static int cmp_entries_with(const struct moe_layout_entry *a, const struct moe_layout_entry *b,
                            const struct moe_layout_set *set);

static void count_valid(struct moe_layout_set *s, const struct moe_layout_entry *e)
{
    if (s->n_valid == 0 || e->mem.total < s->lightest.mem.total)
        s->lightest = *e;
    s->n_valid++;
    s->n_fitting += e->fits;
}

/* Files a VPP alternative under its grid, fastest first; `stored` are
 * already there.  The slowest drops out when the list is full. */
static void add_alt(struct moe_layout_entry *grid, int stored, const struct moe_layout_entry *e)
{
    struct moe_vpp_alt a = { e->layout.vpp, e->fits, e->time.step_ms };
    int i;

    if (stored == MOE_VPP_ALT_MAX) {
        if (a.step_ms >= grid->alt[stored - 1].step_ms)
            return;
        stored--;
    }
    for (i = stored; i > 0 && grid->alt[i - 1].step_ms > a.step_ms; i--)
        grid->alt[i] = grid->alt[i - 1];
    grid->alt[i] = a;
}

/* The VPP values of one grid arrive one after another: the best by the
 * ranking stands for the grid, the others are listed under it. */
static void keep_best_vpp(struct moe_layout_entry *best, const struct moe_layout_entry *e,
                          const struct moe_layout_set *set)
{
    int n = best->n_vpp, stored = n - 1 < MOE_VPP_ALT_MAX ? n - 1 : MOE_VPP_ALT_MAX;

    if (n == 0) {
        *best = *e;
        best->n_vpp = 1;
        return;
    }
    if (cmp_entries_with(e, best, set) >= 0) {
        add_alt(best, stored, e);
    } else {
        struct moe_layout_entry old = *best;
        *best = *e;
        memcpy(best->alt, old.alt, sizeof(old.alt));
        add_alt(best, stored, &old);
    }
    best->n_vpp = n + 1;
}

/* Every grid is kept until the ranking: a near-tie group is led by the
 * fastest grid of all, known only at the end (a few MB: 6,000 grids of
 * DeepSeek-V3 on 4096 GPUs). */
static int push_valid(struct builder *b, const struct moe_layout_entry *e)
{
    struct moe_layout_set *s = b->s;
    struct moe_layout_entry *p;

    s->n_grids++;
    if (!(p = moe_grow_array(s->valid, &b->cap_valid, s->n_ranked + 1, sizeof(*p))))
        return -1;
    s->valid = p;
    s->valid[s->n_ranked++] = *e;
    return 0;
}

static int reject(struct builder *b, const struct moe_layout *l, enum moe_rule r, size_t count)
{
    struct moe_rejected *p;

    b->s->rejected_by[r] += count;
    b->s->considered += count;
    if (!b->keep)
        return 0;
    if (!(p = moe_grow_array(b->s->rejected, &b->cap_rej, b->s->n_rejected + 1, sizeof(*p))))
        return -1;
    b->s->rejected = p;
    b->s->rejected[b->s->n_rejected++] = (struct moe_rejected){ *l, r };
    return 0;
}

static int divisors(int n, int *out, int max)
{
    int k = 0;

    for (int d = 1; d <= n && k < max; d++)
        if (n % d == 0)
            out[k++] = d;
    return k;
}

/* Virtual stage counts tried for a PP: 1..layers/PP, and 2 at PP=1 so
 * that --explain shows the rule. */
static int vpp_candidates(const struct moe_model *m, int pp, int *out, int max)
{
    int k = 0, top = pp == 1 ? 2 : m->num_layers / pp;

    for (int v = 1; v <= top && k < max; v++)
        out[k++] = v;
    return k;
}

/* Attention/MoE share of one layer's activations, to judge CP. */
static bool cp_justified(const struct moe_layout_entry *e)
{
    return e->layout.cp == 1 || e->mem.attn_share >= 0.5;
}

static void judge(struct moe_layout_entry *e, const struct moe_machine *c)
{
    const struct moe_layout *l = &e->layout;
    int dense = l->tp * l->cp, moe = l->etp * l->ep;
    int dom = c->gpus_per_domain > 0 ? c->gpus_per_domain : 8;

    /* EP folds into data parallelism (attention keeps its DP), so it is
     * not model parallelism; TP, CP, PP and ETP split the model. */
    /* Up to the world size squared: in 64 bits (a study has 2^26 GPUs). */
    e->footprint = (long long)dense * l->pp * l->etp;
    e->nvlink_ok = l->tp <= dom && moe <= dom;
    /* Megatron orders ranks tp-cp-(ep)-dp-pp: stages are TP*CP*DP ranks
     * apart, so a stage boundary inside a domain puts PP on NVLink. */
    e->pp_ok = l->pp == 1 || (long)l->tp * l->cp * l->dp >= dom;
    e->cp_ok = cp_justified(e);
}

/* moe_fit_layout for the enumerator: the activation half of each ladder
 * step is computed once per attention grid, VPP and ETP and reused for
 * every EP (it does not depend on EP or EDP). */
static void fit_cached(const struct moe_model *m, const struct moe_layout *l,
                       const struct moe_workload *w, const struct moe_machine *c,
                       struct builder *b, unsigned stamp, int vi, int ei,
                       struct moe_layout_entry *out)
{
    double usable = moe_machine_usable(c);
    int nst = b->n_stages[vi], s;
    double pd[MOE_PP_BUSY_MAX], pe[MOE_PP_BUSY_MAX];
    struct moe_memory stat[MOE_PP_BUSY_MAX];
    const struct moe_stage_act *acts[MOE_PP_BUSY_MAX] = { NULL, NULL, NULL };
    const struct moe_pp_stage *st = &b->stages[vi * MOE_PP_BUSY_MAX];

    for (int k = 0; k < nst; k++) {
        /* dense parameters depend on TP and the stage, experts scale
         * with 1/(EP*ETP): computed once per attention grid and VPP */
        struct param_memo *pm = &b->pmemo[vi * MOE_PP_BUSY_MAX + k];
        if (pm->stamp != stamp) {
            struct moe_layout one = *l;
            one.ep = one.etp = 1;
            moe_memory_stage_params(m, &one, &st[k], &pm->dense, &pm->expert);
            pm->stamp = stamp;
        }
        pd[k] = pm->dense;
        pe[k] = pm->expert / ((double)l->ep * l->etp);
    }
    for (s = 0; s < b->n_steps; s++) {
        const struct moe_train *t = &b->steps[s];
        double worst = 0;
        for (int k = 0; k < nst; k++) {
            size_t at = ((size_t)vi * b->memo_ne + ei) * MOE_FIT_MAX_STEPS + s;
            struct memo *mm = &b->memo[at * MOE_PP_BUSY_MAX + k];
            if (mm->stamp != stamp) {
                struct layer_memo *lm = &b->lmemo[(size_t)ei * MOE_FIT_MAX_STEPS + s];
                if (lm->stamp != stamp) {
                    moe_memory_layer_acts(m, l, w, t, &lm->acts);
                    lm->stamp = stamp;
                }
                moe_memory_stage_act(m, l, w, t, &st[k], &lm->acts, &mm->act);
                mm->stamp = stamp;
            }
            acts[k] = &mm->act;
            /* the state part changes only with optimizer offload */
            if (s == 0 || t->optimizer_offload != b->steps[s - 1].optimizer_offload)
                moe_memory_stage_static(m, l, w, t, &st[k], pd[k], pe[k], &stat[k]);
            double act = mm->act.saved + mm->act.transient;
            double tot = stat[k].total + (act > stat[k].optimizer_step ? act
                                                                        : stat[k].optimizer_step);
            if (tot > worst)
                worst = tot;
        }
        if (worst <= usable || s == b->n_steps - 1)
            break;
    }
    out->step = s;
    for (int k = 0; k < nst; k++) {
        moe_memory_apply_act(&stat[k], acts[k]);
        if (k == 0 || stat[k].total > out->mem.total)
            out->mem = stat[k];
    }
    out->fits = out->mem.total <= usable;
}

static int enumerate_pp(const struct moe_model *m, const struct moe_workload *w,
                        const struct moe_train *t, const struct moe_machine *c, int pp,
                        const int *divs, int nd, struct builder *b, struct moe_error *err)
{
    int vpps[128], nv = vpp_candidates(m, pp, vpps, 128);
    struct grid *dg = calloc((size_t)nd * nd, sizeof(*dg));
    struct grid *eg = calloc((size_t)nd * nd, sizeof(*eg));
    size_t ndg = 0, neg = 0;
    struct moe_layout l = { .pp = pp, .vpp = 1, .tp = 1, .cp = 1, .ep = 1, .etp = 1 };
    int rc = -1;

    if (c->fixed_vpp) {
        int keep = 0;
        for (int k = 0; k < nv; k++)
            if (vpps[k] == c->fixed_vpp)
                vpps[keep++] = vpps[k];
        nv = keep;
    }
    if (!dg || !eg)
        goto out;
    for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++) {
            l.tp = divs[i], l.cp = divs[j];
            dg[ndg].a = l.tp, dg[ndg].b = l.cp;
            dg[ndg].rule = check_dense(m, &l, w, t, c->gpus, NULL, 0);
            dg[ndg].derived = l.dp;
            ndg++;
        }
    for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++) {
            l.tp = 1, l.etp = divs[i], l.ep = divs[j];
            eg[neg].a = l.etp, eg[neg].b = l.ep;
            eg[neg].rule = check_expert(m, &l, t, c->gpus, NULL, 0);
            eg[neg].derived = l.edp;
            neg++;
        }
    for (int v = 0; v < nv; v++) {
        l.vpp = vpps[v];
        b->n_stages[v] = moe_memory_busy_stages(m, &l, &b->stages[MOE_PP_BUSY_MAX * v]);
    }
    for (size_t i = 0; i < ndg; i++) {
        unsigned stamp = ++b->stamp;
        l.tp = dg[i].a, l.cp = dg[i].b, l.dp = dg[i].derived;
        for (size_t j = 0; j < neg; j++) {
            enum moe_rule r = dg[i].rule;
            l.etp = eg[j].a, l.ep = eg[j].b, l.edp = eg[j].derived, l.vpp = 1;
            if (r != MOE_RULE_OK && !b->keep) {
                /* the whole dense row goes with one count */
                if (reject(b, &l, r, neg * (size_t)nv) < 0)
                    goto out;
                break;
            }
            if (r == MOE_RULE_OK) {
                /* TP>1 with EP>1 depends on both grids */
                r = eg[j].rule != MOE_RULE_OK ? eg[j].rule
                                              : check_expert(m, &l, t, c->gpus, NULL, 0);
            }
            struct moe_layout_entry best;
            struct moe_step_cache cache; /* only these two need a value */
            cache.have_flops = false, cache.n = 0;
            best.n_vpp = 0;
            for (int v = 0; v < nv; v++) {
                l.vpp = vpps[v];
                enum moe_rule rv = r != MOE_RULE_OK ? r : check_vpp(m, &l, t, NULL, 0);
                if (rv != MOE_RULE_OK) {
                    if (!b->keep && r != MOE_RULE_OK) {
                        if (reject(b, &l, rv, (size_t)(nv - v)) < 0)
                            goto out;
                        break;
                    }
                    if (reject(b, &l, rv, 1) < 0)
                        goto out;
                    continue;
                }
                /* every field is set below (fit_cached, judge, the step
                 * time); alt is read only up to n_vpp - 1 */
                struct moe_layout_entry e;
                e.layout = l;
                e.decided_by = MOE_SCALE_NONE, e.n_vpp = 0;
                fit_cached(m, &l, w, c, b, stamp, v, (int)(j / (size_t)nd), &e);
                judge(&e, c);
                moe_step_time_cached(m, &e.layout, w, &b->steps[e.step], &c->perf,
                                     c->gpus_per_domain > 0 ? c->gpus_per_domain : 8,
                                     e.mem.params_dense, e.mem.params_expert,
                                     &b->stages[MOE_PP_BUSY_MAX * v], b->n_stages[v], &cache,
                                     &e.time);
                e.step_bucket = 0; /* its near-tie group, set when ranking */
                b->s->considered++;
                count_valid(b->s, &e);
                keep_best_vpp(&best, &e, b->s);
            }
            if (best.n_vpp > 0 && push_valid(b, &best) < 0)
                goto out;
        }
    }
    rc = 0;
out:
    if (rc < 0 && err && !err->text[0])
        moe_error_set(err, "out of memory while enumerating layouts");
    free(dg);
    free(eg);
    return rc;
}

/* Rule 1 with the workflow's order of remedies: fitting as is or with
 * selective recompute beats full recompute, which beats offload. */
static int fit_class(const struct moe_layout_entry *e, const struct moe_train *steps)
{
    const struct moe_train *t = &steps[e->step];

    if (!e->fits)
        return 3;
    if (t->optimizer_offload > 0 || t->offload_layers > 0)
        return 2;
    return t->recompute.granularity == MOE_RC_FULL ? 1 : 0;
}


/* No published or measured step time checks the model on this GPU type
 * (the calibration record's count in fit/gpu.h): its small differences
 * must not override the seed's rules there. */
static bool uncalibrated(enum moe_gpu gpu)
{
    const struct moe_gpu_type *t = moe_gpu_type(gpu);

    return t && t->steptime_rows == 0;
}

/* The one ranking: fitting first (by the workflow's order of remedies),
 * then the predicted step time, and inside a near-tie the seed's rules;
 * last the layout itself, so that the order is total and `--top K` is
 * exactly the first K of the full ranking. */
static int cmp_entries_with(const struct moe_layout_entry *a, const struct moe_layout_entry *b,
                            const struct moe_layout_set *set)
{
    const struct moe_train *steps = set->steps;
    const struct moe_layout *x = &a->layout, *y = &b->layout;

#define KEY(expr_a, expr_b) \
    do { \
        if ((expr_a) != (expr_b)) \
            return (expr_a) < (expr_b) ? -1 : 1; \
    } while (0)
    KEY(fit_class(a, steps), fit_class(b, steps));
    if (!set->rules_first)
        KEY(a->step_bucket, b->step_bucket);
    KEY(-x->dp, -y->dp);
    KEY(!a->nvlink_ok, !b->nvlink_ok);
    KEY(x->etp, y->etp);
    KEY(!a->pp_ok, !b->pp_ok);
    KEY(!a->cp_ok, !b->cp_ok);
    KEY(a->time.step_ms, b->time.step_ms);
    KEY(a->step, b->step);
    KEY(a->mem.total, b->mem.total);
    KEY(x->tp, y->tp);
    KEY(x->cp, y->cp);
    KEY(x->pp, y->pp);
    KEY(x->vpp, y->vpp);
    KEY(x->ep, y->ep);
#undef KEY
    return 0;
}

/* What the index comparator sorts by. */
struct rank_ctx {
    const struct moe_layout_entry *valid;
    const struct moe_layout_set *set;
};

static int cmp_index(const void *pa, const void *pb, void *ctx)
{
    const struct rank_ctx *r = ctx;

    return cmp_entries_with(&r->valid[*(const size_t *)pa], &r->valid[*(const size_t *)pb],
                            r->set);
}

static int cmp_index_by_step(const void *pa, const void *pb, void *ctx)
{
    const struct rank_ctx *r = ctx;
    const struct moe_layout_entry *a = &r->valid[*(const size_t *)pa];
    const struct moe_layout_entry *b = &r->valid[*(const size_t *)pb];
    int fa = fit_class(a, r->set->steps), fb = fit_class(b, r->set->steps);

    if (fa != fb)
        return fa < fb ? -1 : 1;
    return a->time.step_ms < b->time.step_ms ? -1 : a->time.step_ms > b->time.step_ms;
}

/* Near-ties as groups: from the fastest grid of a fit class up, a group
 * holds every grid within MOE_NEAR_TIE of its own fastest, the next group
 * starts at the first grid beyond.  Led by real grids, not by a fixed
 * scale, so that two grids 1% apart never fall on two sides of a bucket's
 * edge (Mixtral on 16 H100s ranked CP2 above CP1 so, issue 25); and a
 * group number per grid keeps the ranking's order transitive. */
static void group_near_ties(struct moe_layout_set *s, size_t *order, struct rank_ctx *ctx)
{
    double lead = 0;
    long group = 0;
    int cls = -1;

    for (size_t i = 0; i < s->n_ranked; i++)
        order[i] = i;
    qsort_r(order, s->n_ranked, sizeof(*order), cmp_index_by_step, ctx);
    for (size_t i = 0; i < s->n_ranked; i++) {
        struct moe_layout_entry *e = &s->valid[order[i]];
        int c = fit_class(e, s->steps);

        if (c != cls || e->time.step_ms > lead * (1 + MOE_NEAR_TIE)) {
            group++;
            lead = e->time.step_ms;
            cls = c;
        }
        e->step_bucket = group;
    }
}

/* Sorts indices, not the entries: entries are large and there can be
 * 10^5 of them. */
static int rank_entries(struct moe_layout_set *s)
{
    struct rank_ctx ctx = { s->valid, s };
    size_t *order;
    struct moe_layout_entry *sorted;

    if (s->n_ranked == 0)
        return 0;
    order = malloc(s->n_ranked * sizeof(*order));
    sorted = malloc(s->n_ranked * sizeof(*sorted));
    if (!order || !sorted) {
        free(order);
        free(sorted);
        return -1;
    }
    group_near_ties(s, order, &ctx);
    for (size_t i = 0; i < s->n_ranked; i++)
        order[i] = i;
    qsort_r(order, s->n_ranked, sizeof(*order), cmp_index, &ctx);
    for (size_t i = 0; i < s->n_ranked; i++)
        sorted[i] = s->valid[order[i]];
    free(order);
    free(s->valid);
    s->valid = sorted;
    return 0;
}

/* The first rule on which a beats b, in the comparator's order. */
static enum moe_scale_rule deciding(const struct moe_layout_entry *a,
                                    const struct moe_layout_entry *b,
                                    const struct moe_layout_set *set)
{
    const struct moe_train *steps = set->steps;

    if (fit_class(a, steps) != fit_class(b, steps))
        return MOE_SCALE_FITS;
    if (!set->rules_first && a->step_bucket != b->step_bucket)
        return MOE_SCALE_STEP_TIME;
    if (a->layout.dp != b->layout.dp)
        return MOE_SCALE_DP;
    if (a->nvlink_ok != b->nvlink_ok)
        return MOE_SCALE_NVLINK;
    if (a->layout.etp != b->layout.etp)
        return MOE_SCALE_EP_OVER_ETP;
    if (a->pp_ok != b->pp_ok)
        return MOE_SCALE_PP_NODES;
    if (a->cp_ok != b->cp_ok)
        return MOE_SCALE_CP_LONG;
    if (a->time.step_ms != b->time.step_ms)
        return MOE_SCALE_NEAR_STEP;
    return MOE_SCALE_CHEAPER_FIT;
}

int moe_layouts_enumerate(const struct moe_model *m, const struct moe_workload *w,
                          const struct moe_train *t, const struct moe_machine *c, size_t top,
                          bool keep_rejected, struct moe_layout_set *out,
                          struct moe_error *err)
{
    int divs[512], nd;
    struct builder b = { .s = out, .keep = keep_rejected };

    memset(out, 0, sizeof(*out));
    if (c->gpus < 1) {
        moe_error_set(err, "--gpus must be at least 1 (got %d)", c->gpus);
        return -1;
    }
    nd = divisors(c->gpus, divs, 512);
    if ((b.n_steps = moe_fit_ladder(m, t, b.steps, MOE_FIT_MAX_STEPS, err)) < 0)
        return -1;
    memcpy(out->steps, b.steps, sizeof(b.steps));
    out->n_steps = b.n_steps;
    out->rules_first = uncalibrated(c->perf.gpu);
    b.memo_nv = 128, b.memo_ne = nd;
    b.memo = calloc((size_t)b.memo_nv * nd * MOE_FIT_MAX_STEPS * MOE_PP_BUSY_MAX,
                    sizeof(*b.memo));
    b.lmemo = calloc((size_t)nd * MOE_FIT_MAX_STEPS, sizeof(*b.lmemo));
    if (!b.memo || !b.lmemo)
        goto oom;
    for (int i = 0; i < nd; i++) {
        struct moe_layout l = { .pp = divs[i], .vpp = 1, .tp = 1, .cp = 1, .ep = 1, .etp = 1 };
        if (c->fixed_pp && divs[i] != c->fixed_pp)
            continue; /* out of scope, not against a rule */
        if (check_pp(m, &l, t, NULL, 0) != MOE_RULE_OK) {
            int vpps[128];
            size_t nv = (size_t)vpp_candidates(m, divs[i] > m->num_layers ? 1 : divs[i], vpps,
                                               128);
            if (reject(&b, &l, MOE_RULE_LAYERS_PP, nv * nd * nd * nd * nd) < 0)
                goto oom;
            continue;
        }
        if (enumerate_pp(m, w, t, c, divs[i], divs, nd, &b, err) < 0) {
            free(b.memo);
            free(b.lmemo);
            moe_layout_set_free(out);
            return -1;
        }
    }
    free(b.memo);
    free(b.lmemo);
    b.memo = NULL, b.lmemo = NULL;
    if (rank_entries(out) < 0)
        goto oom;
    for (size_t i = 0; i < out->n_ranked; i++)
        out->valid[i].decided_by = i + 1 < out->n_ranked
                                       ? deciding(&out->valid[i], &out->valid[i + 1], out)
                                       : MOE_SCALE_NONE;
    if (top > 0 && out->n_ranked > top)
        out->n_ranked = top;
    return 0;
oom:
    free(b.memo);
    free(b.lmemo);
    moe_layout_set_free(out);
    moe_error_set(err, "out of memory while enumerating layouts");
    return -1;
}

void moe_layout_entry_fit(const struct moe_layout_set *s, const struct moe_layout_entry *e,
                          struct moe_fit *out)
{
    out->fits = e->fits;
    out->step = e->step;
    out->train = s->steps[e->step];
    out->mem = e->mem;
}

void moe_layout_set_free(struct moe_layout_set *s)
{
    free(s->valid);
    free(s->rejected);
    s->valid = NULL, s->rejected = NULL;
    s->n_valid = s->n_ranked = s->n_rejected = 0;
}

const struct moe_layout_entry *moe_layouts_smallest_fit(const struct moe_layout_set *s)
{
    const struct moe_layout_entry *best = NULL;

    /* the ranking is fastest first, so the first of the smallest wins */
    for (size_t i = 0; i < s->n_ranked; i++) {
        const struct moe_layout_entry *e = &s->valid[i];
        if (!e->fits)
            continue;
        if (!best || fit_class(e, s->steps) < fit_class(best, s->steps) ||
            (fit_class(e, s->steps) == fit_class(best, s->steps) &&
             e->footprint < best->footprint))
            best = e;
    }
    return best;
}

const struct moe_layout_entry *moe_layouts_nearest_miss(const struct moe_layout_set *s,
                                                        const struct moe_machine *c,
                                                        char *advice, size_t len)
{
    const struct moe_layout_entry *best = s->n_valid ? &s->lightest : NULL;
    double usable = moe_machine_usable(c);

    if (!best) {
        size_t used = (size_t)snprintf(advice, len, "no valid layout (rejections:");
        for (int r = 1; r < MOE_RULE_COUNT && used < len; r++)
            if (s->rejected_by[r])
                used += (size_t)snprintf(advice + used, len - used, " %s %zu", moe_rule_id(r),
                                         s->rejected_by[r]);
        if (used < len) /* a message: cut, it still reads */
            snprintf(advice + used, len - used,
                     "); use a GPU count whose factors divide the heads, experts, layers and "
                     "GBS/MBS");
        return NULL;
    }
    const struct moe_memory *mm = &best->mem;
    double over = (mm->total - usable) / MOE_GIB;
    double state = (mm->weights + mm->grads + mm->optimizer) / MOE_GIB;
    double act = (mm->activations + mm->transient) / MOE_GIB;
    if (state >= act)
        snprintf(advice, len, /* a message */
                 "%.1f GiB over; model state is %.1f GiB per GPU: add GPUs so that EP/PP can "
                 "grow, or raise --gpu-mem-gib", over, state);
    else
        snprintf(advice, len, /* a message */
                 "%.1f GiB over; activations are %.1f GiB per GPU: lower --mbs or --seq, or "
                 "add GPUs for CP/TP%s", over, act,
                 s->n_steps > 0 && s->steps[0].recompute_fixed
                     ? ", or let fit add recompute (without --fixed-recompute)" : "");
    return best;
}

const char *moe_layout_format_attention(const struct moe_layout *l, char *buf, size_t len)
{
    /* a label for people: cut, it still reads */
    snprintf(buf, len, "Attention: TP%d×CP%d×DP%d×PP%d", l->tp, l->cp, l->dp, l->pp);
    return buf;
}

const char *moe_layout_format_moe(const struct moe_layout *l, char *buf, size_t len)
{
    /* a label for people: cut, it still reads */
    snprintf(buf, len, "MoE: ETP%d×EP%d×EDP%d×PP%d", l->etp, l->ep, l->edp, l->pp);
    return buf;
}
