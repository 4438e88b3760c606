/* Scale -> baseline and the model's correction (scale_rule.h), recorded
 * with its evidence and, when the model was wrong, the next round. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "analysis/report_runs.h"
#include "analysis/study_report.h"
#include "core/layout_name.h"
#include "core/contract_keys.h"
#include "core/json_build.h"
#include "core/study_dir.h"
#include "core/strbuf.h"
#include "core/manifest.h"
#include "fit/layouts.h"
#include "loop/evidence.h"
#include "loop/evidence_internal.h"
#include "loop/loop.h"
#include "loop/loop_internal.h"
#include "loop/scale_rule.h"
#include "loop/scale_rule_internal.h"
#include "study/study.h"
#include "study/study_adopt.h"
#include "study/study_fit.h"

#define SCALE_LAYOUTS_MAX 512

struct scale_ctx {
    const char *study;
    int round;
    struct moe_study s;
    struct moe_loop_layout l[SCALE_LAYOUTS_MAX];
    double *samples[SCALE_LAYOUTS_MAX]; /* owned */
    json_t *run_as[SCALE_LAYOUTS_MAX];  /* the measured ones' candidates, as the manifest held them */
    size_t n;
};

static struct moe_loop_layout *find(struct scale_ctx *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->l[i].name, name) == 0)
            return &c->l[i];
    /* a cut name would be another layout's: one that does not fit is none */
    if (c->n == SCALE_LAYOUTS_MAX || strlen(name) >= sizeof(c->l[0].name))
        return NULL;
    memset(&c->l[c->n], 0, sizeof(c->l[0]));
    /* fits: checked above */
    snprintf(c->l[c->n].name, sizeof(c->l[0].name), "%s", name);
    c->l[c->n].order = SCALE_LAYOUTS_MAX + (int)c->n; /* not ranked: after every ranked one */
    return &c->l[c->n++];
}

/* The study as the scale stage ran it (the fit decision adopted), and
 * every layout the scale rules rank, with the model's terms. */
static int predictions(struct scale_ctx *c, struct moe_error *err)
{
    char *path = moe_path_join(c->study, "study.yaml");
    struct moe_layout_set set;
    struct moe_machine m;
    struct moe_train t;
    json_t *ref = NULL;
    int rc = -1;

    if (!path) {
        moe_error_set(err, "%s: out of memory", c->study);
        return -1;
    }
    rc = moe_study_load(&c->s, path, err);
    free(path);
    if (rc < 0)
        return -1;
    rc = -1;
    if ((ref = moe_loop_in_force(c->study, MOE_STAGE_SCALE, err)) &&
        moe_study_adopt(&c->s, ref, err) == 0 && moe_study_fit_inputs(&c->s, &t, &m, err) == 0 &&
        moe_layouts_enumerate(&c->s.model, &c->s.workload, &t, &m, SCALE_LAYOUTS_MAX / 2, false,
                              &set, err) == 0) {
        for (size_t i = 0; i < set.n_ranked; i++) {
            char name[64];
            struct moe_loop_layout *l;

            moe_layout_name(&set.valid[i].layout, name, sizeof(name));
            if ((l = find(c, name)) && l->order >= SCALE_LAYOUTS_MAX) {
                l->order = (int)i;
                /* a layout the scale stage could not run is no next round */
                if (set.valid[i].fits && set.valid[i].step == 0 &&
                    set.valid[i].layout.tp <= c->s.cluster.nvlink_domain)
                    l->pred = set.valid[i].time;
            }
        }
        moe_layout_set_free(&set);
        rc = 0;
    }
    json_decref(ref);
    return rc;
}

/* The window's step times of one candidate's log. */
static int samples_of(struct scale_ctx *c, const struct moe_study_view *v,
                      const struct moe_study_cand *cand, struct moe_loop_layout *l,
                      struct moe_error *err)
{
    struct moe_report_reader rd = { .first = v->first, .last = v->last };
    struct moe_report_run run;
    double *s;
    size_t k = 0;

    if (moe_report_load_study_run(v, cand, cand->label, &rd, &run, err) < 0)
        return -1;
    if (!(s = calloc(run.nseries + 1, sizeof(*s)))) {
        moe_report_run_free(&run);
        moe_error_set(err, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < run.nseries; i++)
        if (run.series[i].iter >= v->first && run.series[i].iter <= v->last)
            s[k++] = run.series[i].step_ms;
    moe_report_run_free(&run);
    c->samples[l - c->l] = s;
    l->samples = s;
    l->n = k;
    snprintf(l->id, sizeof(l->id), "%s", cand->id); /* fits: both id[72] */
    return 0;
}

/* This round's runs: each scale candidate's layout (from its declared
 * contract) and measured steps. */
static int measured_now(struct scale_ctx *c, struct moe_error *err)
{
    struct moe_study_view v;
    struct moe_manifest m;
    int rc = 0;

    if (moe_manifest_load(c->study, &m, err) < 0)
        return -1;
    if (moe_study_view_load(c->study, "scale", &v, err) < 0) {
        moe_manifest_free(&m);
        return -1;
    }
    for (size_t i = 0; rc == 0 && i <= v.n; i++) {
        const struct moe_study_cand *cand = i == 0 ? &v.ref : &v.cands[i - 1];
        const struct moe_candidate *mc = moe_manifest_candidate_by_id(&m, MOE_STAGE_SCALE,
                                                                       cand->id);
        struct moe_layout lay;
        struct moe_loop_layout *l;
        char name[64];

        if (!mc)
            continue;
        moe_contract_layout(mc->contract, &lay);
        moe_layout_name(&lay, name, sizeof(name));
        if (!(l = find(c, name)))
            break;
        l->baseline = i == 0;
        rc = samples_of(c, &v, cand, l, err);
        json_decref(c->run_as[l - c->l]);
        c->run_as[l - c->l] = rc == 0 ? moe_candidate_json(mc, false, err) : NULL;
        if (rc == 0 && !c->run_as[l - c->l]) {
            moe_error_within(err, "%s: scale candidate %s", m.path, cand->id);
            rc = -1;
        }
    }
    moe_study_view_free(&v);
    moe_manifest_free(&m);
    return rc;
}

/* Layouts an earlier round measured, with the samples its decision kept:
 * a later round re-runs its baseline, not every layout. */
static int measured_before(struct scale_ctx *c, struct moe_error *err)
{
    for (int r = 1; r < c->round; r++) {
        json_t *d = moe_loop_decided(c->study, "scale", r, err), *e;
        const json_t *ranking = json_object_get(json_object_get(d, "decision"), "ranking");
        size_t i;

        if (!d && err->text[0])
            return -1;
        json_array_foreach(ranking, i, e) {
            const json_t *sm = json_object_get(e, "samples_ms");
            const char *name = json_string_value(json_object_get(e, "layout"));
            const char *id = json_string_value(json_object_get(e, "candidate"));
            struct moe_loop_layout *l = name ? find(c, name) : NULL;
            size_t k;
            double *s;

            /* an id that does not fit is no candidate's (ids are 64 hex digits) */
            if (!l || l->samples || json_array_size(sm) < 2 || (id && strlen(id) >= sizeof(l->id)) ||
                !(s = calloc(json_array_size(sm), sizeof(*s))))
                continue;
            for (k = 0; k < json_array_size(sm); k++)
                s[k] = json_number_value(json_array_get(sm, k));
            c->samples[l - c->l] = s;
            l->samples = s;
            l->n = k;
            /* fits: checked above */
            snprintf(l->id, sizeof(l->id), "%s", id ? id : "");
            c->run_as[l - c->l] = json_incref(json_object_get(e, "run_as"));
        }
        json_decref(d);
    }
    return 0;
}

/* v rounded to 1/scale; a non-finite v as it is, for the builder's rule
 * (core/json_build.h): NaN, a value not there, is null; an infinity is
 * null and recorded under "non_finite". */
static double rounded(double v, double scale)
{
    return isfinite(v) ? round(v * scale) / scale : v;
}

static json_t *entry(struct moe_jb *b, const struct moe_loop_layout *l, const json_t *run_as)
{
    json_t *j = json_object(), *s = json_array();

    moe_jb_str_opt(b, j, "candidate", l->id[0] ? l->id : NULL);
    moe_jb_str(b, j, "layout", l->name);
    moe_jb_int(b, j, "order", l->order);
    moe_jb_num_opt(b, j, "predicted_ms", l->pred.step_ms > 0 ? rounded(l->pred.step_ms, 10) : NAN);
    moe_jb_num_opt(b, j, "corrected_ms", rounded(l->corrected_ms, 10));
    moe_jb_num_opt(b, j, "measured_ms", rounded(l->median, 100));
    moe_jb_num_opt(b, j, "error_pct", rounded(l->error_pct, 10));
    for (size_t k = 0; l->samples && k < l->n; k++)
        moe_jb_append_num(b, j, "samples_ms", s, l->samples[k]);
    moe_jb_set(b, j, "samples_ms", s);
    moe_jb_bool(b, j, "baseline", l->baseline);
    moe_jb_set(b, j, "run_as", run_as ? json_incref((json_t *)run_as) : json_null());
    return moe_jb_done(b, j);
}

static json_t *ranking(struct moe_jb *b, const struct scale_ctx *c, const size_t *next,
                       size_t n_next)
{
    json_t *out = json_array();

    for (size_t i = 0; i < c->n; i++)
        if (c->l[i].samples)
            moe_jb_append(b, out, entry(b, &c->l[i], c->run_as[i]));
    for (size_t i = 0; i < n_next; i++)
        moe_jb_append(b, out, entry(b, &c->l[next[i]], NULL));
    return out;
}

static json_t *ruled_out(struct moe_jb *jb, const struct scale_ctx *c, const struct moe_loop_scale *d)
{
    json_t *out = json_array();
    const struct moe_loop_layout *b = &c->l[d->best];

    for (size_t i = 0; i < c->n; i++) {
        json_t *o;

        if (!c->l[i].samples || (int)i == d->best)
            continue;
        o = json_object();
        moe_jb_str(jb, o, "layout", c->l[i].name);
        moe_jb_set(jb, o, "why",
                   json_sprintf("median %.1f ms, %+.1f%% against %s", c->l[i].median,
                                100 * (c->l[i].median - b->median) / b->median, b->name));
        moe_jb_append(jb, out, moe_jb_done(jb, o));
    }
    return out;
}

static json_t *correction(struct moe_jb *b, const struct scale_ctx *c, const struct moe_loop_scale *d)
{
    json_t *j = json_object(), *factors = json_object(), *from = json_array();

    for (size_t i = 0; i < c->n; i++)
        if (c->l[i].samples && c->l[i].pred.step_ms > 0)
            moe_jb_append(b, from, json_string(c->l[i].name));
    moe_jb_str(b, j, "is",
               "modeled-from-measured: one factor per group of the step model's terms, "
               "fitted to the measured medians (lib/loop/scale_rule.h)");
    moe_jb_num_opt(b, factors, "gpu", rounded(d->factor[0], 1000));
    moe_jb_num_opt(b, factors, "communication", rounded(d->factor[1], 1000));
    moe_jb_num_opt(b, factors, "host", rounded(d->factor[2], 1000));
    moe_jb_set(b, j, "factors", factors);
    moe_jb_set(b, j, "from_layouts", from);
    moe_jb_num_opt(b, j, "max_error_pct_before", rounded(d->max_error_pct, 10));
    moe_jb_num_opt(b, j, "max_error_pct_after", rounded(d->residual_pct, 10));
    moe_jb_num(b, j, "ridge", MOE_LOOP_RIDGE);
    return j;
}

static json_t *evidence(struct moe_jb *b, const struct scale_ctx *c)
{
    json_t *ev = json_array(), *e;

    for (size_t i = 0; i < c->n; i++) {
        if (!c->l[i].samples || !c->l[i].id[0])
            continue;
        if (!(e = moe_loop_evidence(c->study, "scale", c->l[i].id, b->err))) {
            json_decref(ev);
            return NULL;
        }
        moe_jb_append(b, ev, e);
    }
    return ev;
}

static json_t *scale_doc(const struct scale_ctx *c, const struct moe_loop_scale *d,
                         const size_t *next, size_t n_next, json_t *baseline,
                         struct moe_error *err)
{
    const struct moe_loop_layout *b = &c->l[d->best];
    json_t *doc, *chose, *rerank, *round_next, *ev;
    struct moe_jb jb;

    moe_jb_init(&jb, err);
    if (!(ev = evidence(&jb, c))) {
        json_decref(baseline);
        return NULL;
    }
    doc = json_object(), chose = json_object(), rerank = json_object();
    round_next = json_array();
    for (size_t i = 0; i < n_next; i++)
        moe_jb_append(&jb, round_next, json_string(c->l[next[i]].name));
    moe_jb_str(&jb, doc, "stage", "scale");
    moe_jb_int(&jb, doc, "round", c->round);
    moe_jb_str(&jb, doc, "rule", "scale-fastest-measured");
    moe_jb_str(&jb, doc, "question", "which layout do profile, retune and validate run?");
    moe_jb_str(&jb, chose, "candidate", b->id);
    moe_jb_str(&jb, chose, "layout", b->name);
    moe_jb_num_opt(&jb, chose, "median_ms", rounded(b->median, 100));
    moe_jb_str(&jb, chose, "why", d->why);
    moe_jb_set(&jb, chose, "run_as", c->run_as[d->best] ? json_incref(c->run_as[d->best])
                                                         : json_null());
    moe_jb_set(&jb, doc, "chose", chose);
    moe_jb_set(&jb, doc, "ruled_out", ruled_out(&jb, c, d));
    moe_jb_set(&jb, doc, "ranking", ranking(&jb, c, next, n_next));
    moe_jb_set(&jb, doc, "correction", correction(&jb, c, d));
    moe_jb_bool(&jb, rerank, "needed", d->rerank);
    moe_jb_str(&jb, rerank, "why", d->rerank_why);
    moe_jb_int(&jb, rerank, "rounds_max", MOE_LOOP_SCALE_ROUNDS);
    moe_jb_set(&jb, doc, "rerank", rerank);
    moe_jb_set(&jb, doc, "next_round", round_next);
    moe_jb_set(&jb, doc, "evidence", ev);
    moe_jb_set(&jb, doc, "baseline", baseline);
    moe_jb_within(&jb, MOE_STUDY_DECISIONS "/scale");
    return moe_jb_done(&jb, doc);
}

static void ctx_free(struct scale_ctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->samples[i]);
        json_decref(c->run_as[i]);
    }
    moe_study_free(&c->s);
    free(c);
}

int moe_loop_decide_scale(const char *study, int round, struct moe_loop_outcome *out,
                          struct moe_error *err)
{
    struct scale_ctx *c = calloc(1, sizeof(*c));
    struct moe_loop_scale d;
    size_t next[MOE_STUDY_LIST_MAX], n_next = 0;
    json_t *baseline = NULL, *doc = NULL;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (!c) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    c->study = study;
    c->round = round;
    if (predictions(c, err) < 0 || measured_now(c, err) < 0 || measured_before(c, err) < 0 ||
        moe_loop_scale_decide(c->l, c->n, MOE_REPORT_ALPHA, &d, err) < 0)
        goto out;
    if (d.rerank && round < MOE_LOOP_SCALE_ROUNDS)
        n_next = moe_loop_next_round(c->l, c->n, &d,  next,
                                     c->s.scale_max_layouts < MOE_STUDY_LIST_MAX
                                         ? (size_t)c->s.scale_max_layouts : MOE_STUDY_LIST_MAX);
    if (!(baseline = moe_loop_run_contract(study, "scale", c->l[d.best].id, err)))
        goto out;
    out->adopted = !c->l[d.best].baseline;
    out->next_round = n_next > 0;
    if ((doc = scale_doc(c, &d, next, n_next, baseline, err)) &&
        moe_loop_record(study, doc, out, err) == 0)
        rc = 0;
    /* a message: people read it, and a cut one still reads */
    snprintf(out->said, sizeof(out->said), "layout %s: %s; step model corrected (gpu x%.2f, "
             "communication x%.2f, host x%.2f; worst error %.0f%% -> %.0f%%)%s%s",
             c->l[d.best].name, d.why, d.factor[0], d.factor[1], d.factor[2], d.max_error_pct,
             d.residual_pct, n_next ? "; another round: " : d.rerank ? "; " : "",
             n_next ? d.rerank_why : d.rerank ? "no further round (the last allowed, or no "
                                                "layout left in the band)" : "");
out:
    json_decref(doc);
    ctx_free(c);
    return rc;
}
