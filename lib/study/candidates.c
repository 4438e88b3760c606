/* Each stage's candidates.  Retune follows the catalogue (core/retune.h;
 * moeflow-study(5), STAGES): one change from the baseline each, checked
 * against the study, the dialect and Megatron's validity rules; whatever
 * cannot run is listed as skipped with its reason instead of being emitted
 * broken.  Planning only decides runs; moe_candidates_render writes them
 * out as arguments, environment and contract. */
#include "config.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/candidates.h"
#include "study/candidates_internal.h"
#include "fit/layouts.h"
#include "study/study_fit.h"
#include "study/study_fit_internal.h"
#include "core/json_build.h"
#include "core/strbuf.h"
#include "study/megatron_rules.h"
#include "study/megatron_rules_internal.h"
#include "study/study_contract.h"
#include "study/study_contract_internal.h"
#include "study/megatron_args_internal.h"
#include "study/study_internal.h"
#include "study/study_schema.h"

/* The fit stage's variables are the study keys they change. */
#define FIT_RECOMPUTE MOE_SK_KEY(BASELINE, RECOMPUTE)
#define FIT_MODULES MOE_SK_KEY(BASELINE, RECOMPUTE_MODULES)

struct plan_ctx {
    const struct moe_study *s;
    struct moe_stage_plan *plan;
    bool oom;                     /* an append failed: the build fails */
    int unknown_axis;             /* -1, or an axis no generator here knows: the build fails */
};

/* Axis a has no candidate generator here: the stage fails, naming it. */
static void unknown_axis(struct plan_ctx *c, enum moe_retune_axis a)
{
    c->unknown_axis = (int)a;
}

/* The label users see, with its reasons (moe_study_label); -1 when out of
 * memory. */
static int label_of(const struct moe_study *s, struct moe_candidate *cand)
{
    const char *label = moe_study_label(s, &cand->label_reasons);

    return label ? moe_candidate_set(&cand->label, label) : -1;
}

/* Room for one more element of an array that grows by doubling. */
static int reserve(void **v, size_t *cap, size_t n, size_t size)
{
    void *p = moe_grow_array(*v, cap, n + 1, size);

    if (!p)
        return -1;
    *v = p;
    return 0;
}

static void skip(struct plan_ctx *c, const char *variable, json_t *value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

int moe_stage_plan_skip(struct moe_stage_plan *p, const char *variable, json_t *value,
                        const char *reason)
{
    struct moe_skip *k;

    if (reserve((void **)&p->skipped, &p->cap_skipped, p->n_skipped, sizeof(*k)) < 0) {
        json_decref(value);
        return -1;
    }
    k = &p->skipped[p->n_skipped++];
    /* fits: variable is one the study names in its schema (study.c refuses others), short words in variable[64] */
    snprintf(k->variable, sizeof(k->variable), "%s", variable);
    k->value = value;
    /* a message: people read it, and a cut one still reads */
    snprintf(k->reason, sizeof(k->reason), "%s", reason);
    return 0;
}

/* Lists a catalogue entry as skipped, with its reason.  Takes value. */
static void skip(struct plan_ctx *c, const char *variable, json_t *value, const char *fmt, ...)
{
    char reason[sizeof(((struct moe_skip *)0)->reason)];
    va_list ap;

    va_start(ap, fmt);
    /* a message: people read it, and a cut one still reads */
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (moe_stage_plan_skip(c->plan, variable, value, reason) < 0)
        c->oom = true;
}

/* Why Megatron would refuse run, into buf; false when it would not. */
static bool refused(const struct moe_study *s, const struct moe_run *run, char *buf, size_t size)
{
    return moe_megatron_refusal(s, run, buf, size) != NULL;
}

/* A fit candidate's modeled peak ("max allocated" of the rank it stands in
 * for), which `moeflow report --stage fit` reconciles with the measured
 * one. */
static double prediction(const struct moe_study *s, const struct moe_run *run, int rank)
{
    struct moe_memory mem;
    struct moe_error err = { .line = 0 };

    if (moe_study_run_memory(s, run, rank, &mem, &err) != 0)
        return NAN;
    return round(mem.total / MOE_MIB * 10.0) / 10.0;
}

/* A new candidate of the plan's stage that runs run; NULL when out of
 * memory. */
static struct moe_candidate *add(struct moe_stage_plan *p, const struct moe_run *run)
{
    if (p->n == p->cap) {
        /* cands and runs share cap: it counts what both have room for */
        size_t ccap = p->cap, rcap = p->cap;
        struct moe_candidate *c = moe_grow_array(p->cands, &ccap, p->n + 1, sizeof(*c));
        struct moe_run *r;

        if (!c)
            return NULL;
        p->cands = c;
        if (!(r = moe_grow_array(p->runs, &rcap, p->n + 1, sizeof(*r))))
            return NULL;
        p->runs = r;
        p->cap = ccap < rcap ? ccap : rcap;
    }
    moe_candidate_init(&p->cands[p->n]);
    p->cands[p->n].stage = p->stage;
    p->runs[p->n] = *run;
    return &p->cands[p->n++];
}

/* Adds a candidate (1), or lists it as skipped when it breaks one of
 * Megatron's rules (0); shape is nodes x tasks_per_node, rank >= 0 only
 * for fit.  Takes value. */
static int emit(struct plan_ctx *c, const struct moe_run *run, const char *variable,
                json_t *value, const char *bottleneck, int nodes, int tasks_per_node, int rank,
                const char *note)
{
    const struct moe_study *s = c->s;
    struct moe_candidate *cand;
    char why[512];

    if (refused(s, run, why, sizeof(why))) {
        skip(c, variable, value, "%s", why);
        return 0;
    }
    if (!(cand = add(c->plan, run)) || moe_candidate_set(&cand->variable, variable) < 0 ||
        label_of(s, cand) < 0 ||
        moe_candidate_set(&cand->bottleneck, bottleneck) < 0 ||
        moe_candidate_set(&cand->note, note) < 0)
        c->oom = true;
    if (!cand) {
        json_decref(value);
        return 0;
    }
    cand->value = value;
    cand->nodes = nodes;
    cand->tasks_per_node = tasks_per_node;
    cand->world_size = moe_study_world_size(s);
    cand->rank = rank;
    if (rank >= 0)
        cand->predicted_mib = prediction(s, run, rank);
    return 1;
}

static int screen_iters(const struct moe_study *s)
{
    return s->measure.warmup + s->measure.screen_steps;
}

static void emit_baseline(struct plan_ctx *c, const struct moe_run *run, const char *bottleneck)
{
    const struct moe_study *s = c->s;

    emit(c, run, "baseline", json_string("baseline"), bottleneck, s->cluster.nodes,
         s->cluster.gpus_per_node, -1, NULL);
}

/* ---- fit: one GPU stands in for a rank of the full job ---- */

static void fit_variant(struct plan_ctx *c, struct moe_run *run, const char *variable,
                        json_t *value, const char *note)
{
    const struct moe_layout *l = &run->cfg.layout;
    int world = moe_study_world_size(c->s);
    /* The first pipeline stage holds the embedding and the most in-flight
     * micro-batches; the last holds the output layer and the loss. */
    int ranks[2] = { 0, (l->pp - 1) * (world / l->pp) };

    for (int i = 0; i < (l->pp > 1 ? 2 : 1); i++)
        emit(c, run, variable, json_incref(value), "memory", 1, 1, ranks[i], note);
    json_decref(value);
}

/* The strings v[0..n) as a JSON array.  One that cannot be made marks
 * the build failed (c->oom) and gives null for the value, which the failed
 * build never writes. */
static json_t *str_array(struct plan_ctx *c, const char *const *v, int n)
{
    json_t *a = json_array();
    struct moe_jb b;

    moe_jb_init(&b, NULL);
    for (int j = 0; j < n; j++)
        moe_jb_append(&b, a, json_string(v[j]));
    if ((a = moe_jb_done(&b, a)))
        return a;
    c->oom = true;
    return json_null();
}

static json_t *module_list(struct plan_ctx *c, const struct moe_strlist *m)
{
    return str_array(c, m->v, m->n);
}

/* Selective recompute from run's modules, adding one module at a time and
 * leaving out a module this Megatron cannot recompute here; run ends at
 * the last rung emitted. */
static void selective_ladder(struct plan_ctx *c, struct moe_run *run)
{
    static const char *const selective_steps[] = { "moe_act", "layernorm", "core_attn", NULL };
    char why[512];

    for (int i = 0; selective_steps[i]; i++) {
        struct moe_run next = *run;
        struct moe_strlist *m = &next.cfg.recompute_modules;
        bool have = false;

        for (int j = 0; j < m->n; j++)
            have |= strcmp(m->v[j], selective_steps[i]) == 0;
        if (have)
            continue;
        m->v[m->n++] = selective_steps[i];
        next.cfg.recompute = MOE_RECOMPUTE_SELECTIVE;
        if (refused(c->s, &next, why, sizeof(why))) {
            skip(c, FIT_MODULES, module_list(c, m), "%s", why);
            continue;
        }
        *run = next;
        fit_variant(c, run, FIT_MODULES, module_list(c, m), NULL);
    }
}

/* The ladder starts from no recompute, whatever the baseline's: its
 * answer, the least recompute that fits (lib/loop/fit_rule.h), may be less
 * than what the study wrote.  A study that wrote none or full climbs from
 * none (selective one module at a time, then full); one that wrote a
 * selective recompute is measured at none, then at its own and up from
 * there, then full, as before issue 37 (the GPU lane's fit matrix keeps
 * its rungs). */
static void fit_plan(struct plan_ctx *c)
{
    const struct moe_study *s = c->s;
    struct moe_run run, none;
    char why[512];

    moe_run_from_baseline(&run, s, s->measure.warmup + 2);
    run.fake_process_group = true;
    if (refused(s, &run, why, sizeof(why))) {
        /* e.g. DeepEP/HybridEP need real peers, and the contract does not
         * let fit change the dispatcher: nothing can stand in */
        skip(c, "fit", json_string(moe_dispatcher_name(run.cfg.dispatcher)),
             "%s; measure memory in a study whose baseline Megatron's fake process group can "
             "run", why);
        return;
    }
    none = run;
    none.cfg.recompute = MOE_RECOMPUTE_NONE;
    none.cfg.recompute_modules.n = 0;
    if (refused(s, &none, why, sizeof(why)))
        skip(c, FIT_RECOMPUTE, json_string("none"), "%s", why);
    else
        fit_variant(c, &none, FIT_RECOMPUTE, json_string("none"), NULL);
    if (s->baseline.recompute == MOE_RECOMPUTE_SELECTIVE) {
        fit_variant(c, &run, FIT_RECOMPUTE, json_string(moe_recompute_name(run.cfg.recompute)),
                    NULL);
        selective_ladder(c, &run);
    } else {
        selective_ladder(c, &none);
    }
    moe_run_from_baseline(&run, s, s->measure.warmup + 2);
    run.fake_process_group = true;
    run.cfg.recompute = MOE_RECOMPUTE_FULL;
    run.cfg.recompute_modules.n = 0;
    fit_variant(c, &run, FIT_RECOMPUTE, json_string("full"), NULL);
}

/* ---- scale: the baseline and its neighbouring layouts ---- */

/* Why the scale stage does not run layout b: the study's own limits (TP
 * inside the NVLink domain, an explicit pipeline layout written for the
 * baseline's PP and VPP), then Megatron's layout rules, checked by the one
 * layout checker (fit/layouts.h) as the study runs it. */
static const char *layout_problem(const struct moe_study *s, struct moe_baseline *b, char *why,
                                  size_t len)
{
    const struct moe_layout *l = &b->layout;

    if (l->tp > s->cluster.nvlink_domain)
        return "TP would leave the NVLink domain";
    if (moe_study_str_set(b->pipeline_layout) && (l->pp != s->baseline.layout.pp || l->vpp != s->baseline.layout.vpp))
        return "baseline.pipeline_layout is written for the baseline PP and VPP";
    if (moe_study_layout_check(s, &b->layout, s->workload.mbs, why, len) != MOE_RULE_OK)
        return why;
    return NULL;
}

static bool same_layout(const struct moe_layout *a, const struct moe_layout *b)
{
    return a->tp == b->tp && a->cp == b->cp && a->pp == b->pp && a->vpp == b->vpp &&
           a->ep == b->ep && a->etp == b->etp;
}

/* The layout as one value: "tp2.cp1.pp8.vpp4.ep32.etp1". */
static json_t *layout_value(const struct moe_layout *l)
{
    char v[96];

    /* fits: six layout sizes the schema bounds (study_schema.c), 55 bytes at most */
    snprintf(v, sizeof(v), "tp%d.cp%d.pp%d.vpp%d.ep%d.etp%d", l->tp, l->cp, l->pp, l->vpp, l->ep,
             l->etp);
    return json_string(v);
}

/* Ranked layouts looked at for the scale stage, and skip entries kept: the
 * study's own rules (a fixed pipeline layout, EP overlap) can exclude many
 * of the best ones, and listing hundreds of them helps nobody. */
#define SCALE_RANKED_MAX 256
#define SCALE_SKIPS_LISTED 8

/* Why the study runs ranked layout e at no scale stage: a rule of its own
 * baseline, or a fit that needs more than the baseline's recompute; NULL
 * when it may run. */
static const char *scale_excluded(const struct plan_ctx *c, const struct moe_run *base,
                                  const struct moe_layout_set *set,
                                  const struct moe_machine *machine,
                                  const struct moe_layout_entry *e, char *why, size_t len)
{
    struct moe_run r = *base;
    struct moe_fit fit;
    char fitbuf[160];
    const char *broken;

    r.cfg.layout = e->layout;
    broken = layout_problem(c->s, &r.cfg, why, len);
    if (broken)
        return broken;
    moe_layout_entry_fit(set, e, &fit);
    if (fit.fits && fit.step == 0)
        return NULL;
    /* scale may change only the layout: recompute stays the baseline's */
    moe_fit_describe(&fit, machine, fitbuf, sizeof(fitbuf));
    /* a message: people read it, and a cut one still reads */
    snprintf(why, len, "it needs %s; scale keeps the baseline's recompute (fit stage first)",
             fitbuf);
    return why;
}

/* Emits ranked layout `rank`, saying why it runs. */
static void scale_variant(struct plan_ctx *c, const struct moe_run *base,
                          const struct moe_layout_set *set, const struct moe_machine *machine,
                          size_t rank, const char *chosen_by)
{
    const struct moe_layout_entry *e = &set->valid[rank];
    struct moe_run r = *base;
    struct moe_fit fit;
    char note[520], fitbuf[160];

    r.cfg.layout = e->layout;
    moe_layout_entry_fit(set, e, &fit);
    moe_fit_describe(&fit, machine, fitbuf, sizeof(fitbuf));
    /* a message: people read it, and a cut one still reads */
    snprintf(note, sizeof(note), "rank %zu of %zu grids, predicted %.0f ms per step, %.0f "
             "TFLOP/s per GPU (%s); %s; runs as %s", rank + 1, set->n_grids, e->time.step_ms,
             e->time.tflops_per_gpu, moe_scale_rule_text(e->decided_by), fitbuf, chosen_by);
    emit(c, &r, "layout", layout_value(&e->layout), "communication", c->s->cluster.nodes,
         c->s->cluster.gpus_per_node, -1, note);
}

/* A later round of moeflow run runs the layouts its last scale decision
 * named; the first round, those ranked first. */
static bool in_round(const struct moe_study *s, const struct moe_layout *l)
{
    for (int i = 0; i < s->scale_round_n; i++)
        if (same_layout(&s->scale_round[i], l))
            return true;
    return s->scale_round_n == 0;
}

/* The layouts a scale round may run, in rank order, each with why the
 * study excludes it (NULL: it may run). */
struct scale_pick {
    size_t rank[SCALE_RANKED_MAX];
    size_t n;
    double fastest_ms;            /* fastest predicted step among them */
    double band_ms;               /* the model's error band above it; 0: no band */
};

static void scale_eligible(struct plan_ctx *c, const struct moe_run *base,
                           const struct moe_layout_set *set, const struct moe_machine *machine,
                           struct scale_pick *pick)
{
    const struct moe_gpu_type *gpu = moe_gpu_type(machine->perf.gpu);
    int skips = 0;
    char why[400];

    pick->n = 0;
    pick->fastest_ms = 0;
    for (size_t i = 0; i < set->n_ranked && i < SCALE_RANKED_MAX; i++) {
        const struct moe_layout_entry *e = &set->valid[i];
        const char *no;

        if (same_layout(&e->layout, &c->s->baseline.layout) || !in_round(c->s, &e->layout))
            continue;
        no = scale_excluded(c, base, set, machine, e, why, sizeof(why));
        if (no) {
            if (skips++ < SCALE_SKIPS_LISTED)
                skip(c, "layout", layout_value(&e->layout), "%s", no);
            continue;
        }
        if (pick->n == 0 || e->time.step_ms < pick->fastest_ms)
            pick->fastest_ms = e->time.step_ms;
        pick->rank[pick->n++] = i;
    }
    if (skips > SCALE_SKIPS_LISTED)
        skip(c, "layout", json_integer(skips - SCALE_SKIPS_LISTED),
             "more ranked layouts excluded for the reasons above");
    /* Where no calibration row backs the step model (fit/gpu.h), its
     * predictions only break ties of the seed's rules: no band. */
    pick->band_ms = gpu && gpu->steptime_rows > 0
                        ? pick->fastest_ms * (1 + MOE_STEPTIME_BAND_PCT / 100) : 0;
}

/* The first round runs the top_k ranked first and every layout predicted
 * within the model's stated error of the fastest (issue 37: a fixed top_k
 * never reaches a best layout the model ranks #12), at most max_layouts; a
 * later round, exactly the layouts the last decision named. */
static void scale_round(struct plan_ctx *c, const struct moe_run *base,
                        const struct moe_layout_set *set, const struct moe_machine *machine)
{
    const struct moe_study *s = c->s;
    struct scale_pick pick;
    int emitted = 0, cut = 0;
    char by[200];

    scale_eligible(c, base, set, machine, &pick);
    for (size_t k = 0; k < pick.n; k++) {
        const struct moe_layout_entry *e = &set->valid[pick.rank[k]];
        bool first = (int)k < s->scale_top_k, in_band = e->time.step_ms <= pick.band_ms;

        if (s->scale_round_n > 0)
            /* a message: people read it, and a cut one still reads */
            snprintf(by, sizeof(by), "the last scale decision's next round");
        else if (first)
            /* a message: people read it, and a cut one still reads */
            snprintf(by, sizeof(by), "one of the %d ranked first (scale.top_k)", s->scale_top_k);
        else if (in_band)
            /* a message: people read it, and a cut one still reads */
            snprintf(by, sizeof(by), "predicted within the step model's %.0f%% of the fastest "
                     "(%.0f ms)", MOE_STEPTIME_BAND_PCT, pick.fastest_ms);
        else
            continue;
        if (emitted >= s->scale_max_layouts) {
            cut++;
            continue;
        }
        scale_variant(c, base, set, machine, pick.rank[k], by);
        emitted++;
    }
    if (cut)
        skip(c, "layout", json_integer(cut), "more layouts of this round are not run: "
             "scale.max_layouts is %d", s->scale_max_layouts);
}

/* The baseline and the layouts of this round, ranked by the scale rules
 * over every layout Megatron accepts for this GPU count. */
static void scale_plan(struct plan_ctx *c)
{
    const struct moe_study *s = c->s;
    struct moe_layout_set set;
    struct moe_machine machine;
    struct moe_train train;
    struct moe_error err;
    struct moe_run run;

    moe_run_from_baseline(&run, s, screen_iters(s));
    /* A later round measures the baseline again as its own reference.  Its
     * note gives it an id of its own, so its log and .rc never overwrite
     * round 1's, whose digests round 1's sealed decision holds. */
    if (s->scale_round_n > 0)
        emit(c, &run, "baseline", json_string("baseline"), "communication", s->cluster.nodes,
             s->cluster.gpus_per_node, -1, "a later scale round's reference: the baseline "
             "measured again beside the layouts this round runs");
    else
        emit_baseline(c, &run, "communication");
    moe_error_clear(&err);
    if (moe_study_fit_inputs(s, &train, &machine, &err) != 0 ||
        moe_layouts_enumerate(&s->model, &s->workload, &train, &machine,
                              SCALE_RANKED_MAX, false, &set, &err) != 0) {
        skip(c, "layout", json_null(), "no layout ranking: %s", err.text);
        return;
    }
    scale_round(c, &run, &set, &machine);
    moe_layout_set_free(&set);
}

/* ---- retune: the catalogue (core/retune.h) ---- */

static bool axis_on(const struct moe_study *s, enum moe_retune_axis a)
{
    for (int i = 0; i < s->retune_axes.n; i++)
        if (strcmp(s->retune_axes.v[i], moe_retune_entry(a)->axis) == 0)
            return true;
    return false;
}

/* The variable axis a's candidates name. */
static const char *var(enum moe_retune_axis a)
{
    return moe_retune_entry(a)->variable;
}

static void retune_emit(struct plan_ctx *c, const struct moe_run *r, enum moe_retune_axis a,
                        json_t *value)
{
    emit(c, r, var(a), value, moe_bottleneck_name(moe_retune_entry(a)->bottleneck),
         c->s->cluster.nodes, c->s->cluster.gpus_per_node, -1, NULL);
}

static void retune_dispatcher(struct plan_ctx *c, const struct moe_run *base)
{
    const struct moe_study *s = c->s;
    static const enum moe_dispatcher order[] = { MOE_DISPATCH_ALLTOALL, MOE_DISPATCH_FLEX_DEEPEP,
                                                 MOE_DISPATCH_FLEX_HYBRIDEP };

    for (int i = 0; i < 3; i++) {
        struct moe_run r = *base;
        enum moe_dispatcher d = order[i];
        const char *name = moe_dispatcher_name(d);

        if (d == base->cfg.dispatcher)
            continue;
        if (d == MOE_DISPATCH_FLEX_DEEPEP && !s->software.deepep) {
            skip(c, var(MOE_RETUNE_DISPATCHER), json_string(name), "the container has no DeepEP");
            continue;
        }
        if (d == MOE_DISPATCH_FLEX_HYBRIDEP && !s->software.hybridep) {
            skip(c, var(MOE_RETUNE_DISPATCHER), json_string(name), "the container has no HybridEP");
            continue;
        }
        if (base->cfg.layout.ep == 1) {
            skip(c, var(MOE_RETUNE_DISPATCHER), json_string(name),
                 "EP is 1: no token exchange to change");
            continue;
        }
        r.cfg.dispatcher = d;
        retune_emit(c, &r, MOE_RETUNE_DISPATCHER, json_string(name));
    }
}

/* Why turning a boolean switch on measures nothing here, or NULL;
 * what Megatron itself refuses is in megatron_rules.c. */
static const char *overlap_problem(const struct moe_study *s, enum moe_retune_axis a,
                                   const struct moe_baseline *b)
{
    const struct moe_layout *l = &b->layout;

    if (a == MOE_RETUNE_EP_OVERLAP && l->ep == 1)
        return "EP is 1";
    if (a == MOE_RETUNE_SHARED_EXPERT_OVERLAP && !s->model.shared_expert_ffn)
        return "the model has no shared expert";
    if (a == MOE_RETUNE_OVERLAP_GRAD_REDUCE && l->dp == 1 && l->edp == 1)
        return "DP and expert DP are 1: no gradient reduction to overlap";
    if (a == MOE_RETUNE_TP_COMM_OVERLAP && l->tp == 1)
        return "TP is 1";
    return NULL;
}

/* The switch that axis a turns on; NULL for an axis that is not an on/off
 * switch.  Every axis is listed and there is no default, so that -Wswitch
 * names a new axis here instead of it toggling another axis's switch. */
static bool *flag_of(struct moe_baseline *b, enum moe_retune_axis a)
{
    switch (a) {
    case MOE_RETUNE_EP_OVERLAP:
        return &b->ep_overlap;
    case MOE_RETUNE_SHARED_EXPERT_OVERLAP:
        return &b->shared_expert_overlap;
    case MOE_RETUNE_DELAY_WGRAD:
        return &b->delay_wgrad;
    case MOE_RETUNE_OVERLAP_GRAD_REDUCE:
        return &b->overlap_grad_reduce;
    case MOE_RETUNE_TP_COMM_OVERLAP:
        return &b->tp_comm_overlap;
    case MOE_RETUNE_MANUAL_GC:
        return &b->manual_gc;
    case MOE_RETUNE_DISPATCHER:
    case MOE_RETUNE_RECOMPUTE:
    case MOE_RETUNE_PRECISION:
    case MOE_RETUNE_CUDA_GRAPH:
    case MOE_RETUNE_MBS:
    case MOE_RETUNE_DISPATCHER_SMS:
        break;
    }
    return NULL;
}

static void retune_flag(struct plan_ctx *c, const struct moe_run *base, enum moe_retune_axis a)
{
    struct moe_run r = *base;
    bool *flag = flag_of(&r.cfg, a);
    const char *why = overlap_problem(c->s, a, &base->cfg);

    if (!flag) {
        unknown_axis(c, a);
        return;
    }
    if (*flag) {
        skip(c, var(a), json_true(), "already on in the baseline");
        return;
    }
    if (why) {
        skip(c, var(a), json_true(), "%s", why);
        return;
    }
    *flag = true;
    retune_emit(c, &r, a, json_true());
}

static void retune_recompute(struct plan_ctx *c, const struct moe_run *base)
{
    const struct moe_study *s = c->s;
    static const char *const mods[] = { "moe_act", "layernorm", "core_attn", "mla_up_proj",
                                        "mlp", "shared_experts", NULL };

    if (base->cfg.recompute == MOE_RECOMPUTE_FULL) {
        skip(c, var(MOE_RETUNE_RECOMPUTE), json_null(), "the baseline uses full recompute");
        return;
    }
    for (int i = 0; mods[i]; i++) {
        struct moe_run r = *base;
        struct moe_strlist *m = &r.cfg.recompute_modules;
        bool have = false;

        for (int j = 0; j < m->n; j++)
            have |= strcmp(m->v[j], mods[i]) == 0;
        if (have)
            continue;
        if (strcmp(mods[i], "mla_up_proj") == 0 && s->model.attention != MOE_ATTN_MLA) {
            skip(c, var(MOE_RETUNE_RECOMPUTE), json_string(mods[i]), "needs MLA attention");
            continue;
        }
        if (strcmp(mods[i], "mlp") == 0 && !s->model.first_dense_layers) {
            skip(c, var(MOE_RETUNE_RECOMPUTE), json_string(mods[i]),
                 "the model has no dense layer");
            continue;
        }
        if (strcmp(mods[i], "shared_experts") == 0 && !s->model.shared_expert_ffn) {
            skip(c, var(MOE_RETUNE_RECOMPUTE), json_string(mods[i]),
                 "the model has no shared expert");
            continue;
        }
        m->v[m->n++] = mods[i];
        r.cfg.recompute = MOE_RECOMPUTE_SELECTIVE;
        retune_emit(c, &r, MOE_RETUNE_RECOMPUTE, module_list(c, m));
    }
}

static void retune_precision(struct plan_ctx *c, const struct moe_run *base)
{
    const struct moe_study *s = c->s;

    for (int p = MOE_PREC_FP8_TENSORWISE; p <= MOE_PREC_NVFP4; p++) {
        struct moe_run r = *base;
        const char *name = moe_precision_name((enum moe_precision)p);
        bool blackwell_only = p == MOE_PREC_MXFP8 || p == MOE_PREC_NVFP4;

        if ((enum moe_precision)p == base->cfg.precision)
            continue;
        if (blackwell_only && !moe_gpu_is_blackwell(s->cluster.gpu)) {
            skip(c, var(MOE_RETUNE_PRECISION), json_string(name),
                 "needs Blackwell, the study runs on %s",
                 moe_gpu_name(s->cluster.gpu));
            continue;
        }
        if (!blackwell_only && !moe_gpu_is_hopper(s->cluster.gpu)) {
            skip(c, var(MOE_RETUNE_PRECISION), json_string(name),
                 "FP8 recipes are for Hopper here, not %s",
                 moe_gpu_name(s->cluster.gpu));
            continue;
        }
        r.cfg.precision = (enum moe_precision)p;
        retune_emit(c, &r, MOE_RETUNE_PRECISION, json_string(name));
    }
}

/* Smallest scope first: the router, then MoE preprocessing, then attention,
 * then the whole step (full_iteration), which Megatron's rules allow only
 * with static shapes: emit() skips it, naming the rule, for dropless
 * routing or the allgather dispatcher (megatron_rules.c), and so does this
 * when the fit stage's drop-and-pad runs saw the rows per dispatch move
 * (analysis/fit_shapes.c: the measured evidence beats the rule's promise). */
static void retune_graphs(struct plan_ctx *c, const struct moe_run *base)
{
    static const char *const chain[] = { "moe_router", "moe_preprocess", "attn" };
    int have = base->cfg.cuda_graph_modules.n;

    if (moe_graphs_full_iteration(&base->cfg))
        return; /* the largest scope already: nothing to add */
    for (int n = 1; n <= 3; n++) {
        struct moe_run r = *base;
        struct moe_strlist *m = &r.cfg.cuda_graph_modules;

        if (n <= have)
            continue;
        m->n = 0;
        for (int i = 0; i < n; i++)
            m->v[m->n++] = chain[i];
        retune_emit(c, &r, MOE_RETUNE_CUDA_GRAPH, module_list(c, m));
    }
    struct moe_run full = *base;
    full.cfg.cuda_graph_modules.n = 1;
    full.cfg.cuda_graph_modules.v[0] = "full_iteration";
    if (c->s->fit_static_shapes < 0)
        skip(c, var(MOE_RETUNE_CUDA_GRAPH), module_list(c, &full.cfg.cuda_graph_modules),
             "shapes %s (the fit stage's routing evidence)", c->s->fit_shapes_why);
    else
        retune_emit(c, &full, MOE_RETUNE_CUDA_GRAPH,
                    module_list(c, &full.cfg.cuda_graph_modules));
}

static void retune_mbs(struct plan_ctx *c, const struct moe_run *base)
{
    for (int i = 0; i < c->s->retune_mbs_n; i++) {
        struct moe_run r = *base;

        if (c->s->retune_mbs[i] == base->mbs)
            continue;
        r.mbs = c->s->retune_mbs[i];
        retune_emit(c, &r, MOE_RETUNE_MBS, json_integer(r.mbs));
    }
}

/* Why the dispatcher_sms axis screens nothing here, into why; NULL when
 * it screens.  An SM count tunes the flex dispatcher's kernels, so the
 * baseline must run one (moving to flex as well would be a second
 * change) and the container must have its backend.  Then the seed's
 * contention check: fewer SMs for communication help only where compute
 * kernels run slower beside it (profile_pair.h's contention).  With the
 * profile's figure given (moeflow gen --contention) it decides; without
 * one (a study generated before its profile ran) the axis is screened
 * with the whole catalogue, its note saying so. */
static const char *sms_problem(const struct moe_study *s, const struct moe_run *base, char *why,
                               size_t len)
{
    enum moe_dispatcher d = base->cfg.dispatcher;

    if (d != MOE_DISPATCH_FLEX_DEEPEP && d != MOE_DISPATCH_FLEX_HYBRIDEP)
        /* a message: people read it, and a cut one still reads */
        snprintf(why, len, "the baseline dispatcher is %s: an SM count tunes flex-deepep or "
                 "flex-hybridep, and changing the dispatcher too would be a second change",
                 moe_dispatcher_name(d));
    else if (d == MOE_DISPATCH_FLEX_DEEPEP && !s->software.deepep)
        snprintf(why, len, "the container has no DeepEP");
    else if (d == MOE_DISPATCH_FLEX_HYBRIDEP && !s->software.hybridep)
        snprintf(why, len, "the container has no HybridEP");
    else if (s->contention_measured && s->contention_pct < MOE_CONTENTION_MIN_PCT)
        /* a message, as above */
        snprintf(why, len, "the profile's compute kernels ran %.1f%% slower beside "
                 "communication, under %.0f%%: no contention for fewer dispatcher SMs to relieve",
                 s->contention_pct, MOE_CONTENTION_MIN_PCT);
    else
        return NULL;
    return why;
}

/* The SM count the backend takes when the baseline sets none: DeepEP's
 * 20 everywhere, HybridEP's 16 in core 0.16 and DeepEP's 20 after
 * (megatron_args.c moe_megatron_sms_flag cites each). */
static int sms_default(const struct moe_study *s, enum moe_dispatcher d)
{
    return d == MOE_DISPATCH_FLEX_HYBRIDEP && s->software.dialect == MOE_DIALECT_CORE_0_16 ? 16
                                                                                          : 20;
}

static void retune_sms(struct plan_ctx *c, const struct moe_run *base)
{
    const struct moe_study *s = c->s;
    int now = base->cfg.dispatcher_sms ? base->cfg.dispatcher_sms
                                       : sms_default(s, base->cfg.dispatcher);
    char why[300], note[300];

    if (sms_problem(s, base, why, sizeof(why))) {
        skip(c, var(MOE_RETUNE_DISPATCHER_SMS), json_null(), "%s", why);
        return;
    }
    if (s->contention_measured)
        /* a message: people read it, and a cut one still reads */
        snprintf(note, sizeof(note), "measured: the profile's compute kernels ran %.1f%% slower "
                 "beside communication", s->contention_pct);
    else
        snprintf(note, sizeof(note), "contention not measured when generated: screened with the "
                 "whole catalogue (moeflow gen --contention decides)");
    for (int i = 0; i < s->retune_sms_n; i++) {
        struct moe_run r = *base;

        if (s->retune_sms[i] == now)
            continue;
        r.cfg.dispatcher_sms = s->retune_sms[i];
        emit(c, &r, var(MOE_RETUNE_DISPATCHER_SMS), json_integer(s->retune_sms[i]),
             moe_bottleneck_name(moe_retune_entry(MOE_RETUNE_DISPATCHER_SMS)->bottleneck),
             s->cluster.nodes, s->cluster.gpus_per_node, -1, note);
    }
}

/* The candidates of axis a.  Every axis is listed and there is no default,
 * so that -Wswitch names a new axis of the catalogue here; one that still
 * reaches the end fails the stage rather than being left out unseen. */
static void retune_axis(struct plan_ctx *c, const struct moe_run *base, enum moe_retune_axis a)
{
    switch (a) {
    case MOE_RETUNE_DISPATCHER:
        retune_dispatcher(c, base);
        return;
    case MOE_RETUNE_EP_OVERLAP:
    case MOE_RETUNE_SHARED_EXPERT_OVERLAP:
    case MOE_RETUNE_DELAY_WGRAD:
    case MOE_RETUNE_OVERLAP_GRAD_REDUCE:
    case MOE_RETUNE_TP_COMM_OVERLAP:
    case MOE_RETUNE_MANUAL_GC:
        retune_flag(c, base, a);
        return;
    case MOE_RETUNE_RECOMPUTE:
        retune_recompute(c, base);
        return;
    case MOE_RETUNE_PRECISION:
        retune_precision(c, base);
        return;
    case MOE_RETUNE_CUDA_GRAPH:
        retune_graphs(c, base);
        return;
    case MOE_RETUNE_MBS:
        retune_mbs(c, base);
        return;
    case MOE_RETUNE_DISPATCHER_SMS:
        retune_sms(c, base);
        return;
    }
    unknown_axis(c, a);
}

static void retune_plan(struct plan_ctx *c)
{
    const struct moe_study *s = c->s;
    struct moe_run base;
    /* the order candidates are emitted in (manual GC with the other
     * switches, not at its place in the catalogue); an axis of the
     * catalogue missing here fails the stage */
    static const enum moe_retune_axis order[] = {
        MOE_RETUNE_DISPATCHER,  MOE_RETUNE_EP_OVERLAP,          MOE_RETUNE_SHARED_EXPERT_OVERLAP,
        MOE_RETUNE_DELAY_WGRAD, MOE_RETUNE_OVERLAP_GRAD_REDUCE, MOE_RETUNE_TP_COMM_OVERLAP,
        MOE_RETUNE_MANUAL_GC,   MOE_RETUNE_RECOMPUTE,           MOE_RETUNE_PRECISION,
        MOE_RETUNE_CUDA_GRAPH,  MOE_RETUNE_MBS,                 MOE_RETUNE_DISPATCHER_SMS,
    };
    const size_t n = sizeof(order) / sizeof(order[0]);

    for (int a = 0; a < MOE_RETUNE_COUNT; a++) {
        bool listed = false;

        for (size_t i = 0; i < n; i++)
            listed |= order[i] == (enum moe_retune_axis)a;
        if (!listed) {
            unknown_axis(c, (enum moe_retune_axis)a);
            return;
        }
    }
    moe_run_from_baseline(&base, s, screen_iters(s));
    for (size_t i = 0; i < n; i++)
        if (axis_on(s, order[i]))
            retune_axis(c, &base, order[i]);
}

/* The candidates of stage into c->plan; false for a value outside the
 * enum.  Every stage is listed and there is no default, so that -Wswitch
 * names a new stage here. */
static bool plan_stage(struct plan_ctx *c, enum moe_stage stage)
{
    const struct moe_study *s = c->s;
    struct moe_run run;

    switch (stage) {
    case MOE_STAGE_CONTRACT:
        moe_run_from_baseline(&run, s, screen_iters(s));
        emit(c, &run, "baseline", json_string("baseline"), "none", 1, 1, -1,
             "captures versions, hardware and topology of one node");
        return true;
    case MOE_STAGE_FIT:
        fit_plan(c);
        return true;
    case MOE_STAGE_SCALE:
        scale_plan(c);
        return true;
    case MOE_STAGE_PROFILE:
        moe_run_from_baseline(&run, s, screen_iters(s));
        run.profile = true;
        emit_baseline(c, &run, "unknown");
        return true;
    case MOE_STAGE_RETUNE:
        retune_plan(c);
        return true;
    case MOE_STAGE_VALIDATE:
        moe_run_from_baseline(&run, s, s->measure.validate_steps);
        emit_baseline(c, &run, "none");
        return true;
    case MOE_STAGE_NONE:
    case MOE_STAGE_COUNT:
        break;
    }
    return false;
}

int moe_candidates_build(const struct moe_study *s, enum moe_stage stage,
                         struct moe_stage_plan *plan, struct moe_error *err)
{
    struct plan_ctx c;
    const struct moe_retune_entry *e;

    memset(plan, 0, sizeof(*plan));
    plan->stage = stage;
    c = (struct plan_ctx){ s, plan, false, -1 };
    if (!plan_stage(&c, stage)) {
        moe_error_set(err, "no such stage %d", (int)stage);
        moe_stage_plan_free(plan);
        return -1;
    }
    if (!c.oom && c.unknown_axis < 0)
        return 0;
    if (c.oom)
        moe_error_set(err, "%s stage: out of memory", moe_stage_name(stage));
    else if ((e = moe_retune_entry((enum moe_retune_axis)c.unknown_axis)))
        moe_error_set(err, "%s stage: the retune axis %s has no candidate generator "
                      "(lib/study/candidates.c, retune_axis)", moe_stage_name(stage), e->axis);
    else
        moe_error_set(err, "%s stage: no such retune axis %d", moe_stage_name(stage),
                      c.unknown_axis);
    moe_stage_plan_free(plan);
    return -1;
}

/* argv, env, the declared contract, then the id over all of them. */
/* -1 with err for a contract that could not be made; -1 alone when out
 * of memory. */
static int render(const struct moe_study *s, const struct moe_run *run, struct moe_candidate *c,
                  struct moe_error *err)
{
    if (moe_megatron_argv(s, run, &c->argv, err) < 0 || moe_megatron_env(s, run, &c->env) < 0)
        return -1;
    /* The declared contract is part of what the id names; it keeps the
     * routing class, not the label (study_contract.h says why). */
    if (!(c->contract = moe_run_contract(s, run, moe_study_routing_class(s), err)))
        return -1;
    return moe_candidate_hash(c);
}

int moe_candidates_render(const struct moe_study *s, struct moe_stage_plan *plan,
                          struct moe_error *err)
{
    for (size_t i = 0; i < plan->n; i++) {
        struct moe_error why;

        if (plan->cands[i].contract)
            continue;
        moe_error_clear(&why);
        if (render(s, &plan->runs[i], &plan->cands[i], &why) < 0) {
            moe_error_set(err, "%s stage: cannot render candidate %zu: %s",
                          moe_stage_name(plan->stage), i,
                          why.text[0] ? why.text : "out of memory");
            return -1;
        }
    }
    return 0;
}

int moe_candidates_keep_bottleneck(struct moe_stage_plan *plan, const char *bottleneck)
{
    struct plan_ctx c = { NULL, plan, false, -1 };
    size_t kept = 0;

    for (size_t i = 0; i < plan->n; i++) {
        struct moe_candidate *cand = &plan->cands[i];
        const char *b = cand->bottleneck;

        if (b && strcmp(b, bottleneck) == 0) {
            plan->runs[kept] = plan->runs[i];
            plan->cands[kept++] = *cand;
            continue;
        }
        skip(&c, cand->variable ? cand->variable : "", json_incref(cand->value),
             "targets %s, not the diagnosed bottleneck", b ? b : "nothing");
        moe_candidate_free(cand);
    }
    plan->n = kept;
    return c.oom ? -1 : 0;
}

int moe_stage_plan_add(struct moe_stage_plan *plan, const struct moe_candidate *c)
{
    struct moe_run none;
    struct moe_candidate *cand;

    memset(&none, 0, sizeof(none));
    if (!(cand = add(plan, &none)))
        return -1;
    if (moe_candidate_copy(cand, c) < 0) {
        plan->n--;
        return -1;
    }
    return 0;
}

void moe_stage_plan_free(struct moe_stage_plan *plan)
{
    for (size_t i = 0; i < plan->n; i++)
        moe_candidate_free(&plan->cands[i]);
    for (size_t i = 0; i < plan->n_skipped; i++)
        json_decref(plan->skipped[i].value);
    free(plan->cands);
    free(plan->runs);
    free(plan->skipped);
    if (plan->reference)
        moe_candidate_free(plan->reference);
    free(plan->reference);
    memset(plan, 0, sizeof(*plan));
}
