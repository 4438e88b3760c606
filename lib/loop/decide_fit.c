/* Fit -> baseline (fit_rule.h), recorded with its evidence. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/fit_report.h"
#include "contract/contract_check.h"
#include "contract/contract_store.h"
#include "fit/fit.h"
#include "loop/evidence.h"
#include "loop/evidence_internal.h"
#include "loop/fit_rule.h"
#include "loop/fit_rule_internal.h"
#include "loop/loop.h"
#include "loop/loop_internal.h"
#include "study/study.h"
#include "study/study_fit.h"

#define MIB (1024.0 * 1024.0)

/* The GPU less the study's headroom, as the model uses it: modeled, from
 * the study's GPU and headroom; the measured peaks are compared with it. */
static int usable_mib(const char *study, double *out, struct moe_error *err)
{
    char path[4300];
    struct moe_study s;
    struct moe_train t;
    struct moe_machine m;
    int rc;

    snprintf(path, sizeof(path), "%s/study.yaml", study);
    rc = moe_study_load(&s, path, err) == 0 && moe_study_fit_inputs(&s, &t, &m, err) == 0 ? 0 : -1;
    if (rc == 0) {
        m.measured_ratio = 0;
        *out = moe_machine_usable(&m) / MIB;
    }
    moe_study_free(&s);
    return rc;
}

static json_t *rung_json(const struct moe_loop_rung *g)
{
    return json_pack("{s:s, s:o, s:s, s:s, s:s}", "recompute", g->recompute, "peak_mib",
                     isnan(g->peak_mib) ? json_null() : json_real(round(g->peak_mib * 10) / 10),
                     "peak_is", "measured", "fits",
                     g->fits == 1 ? "yes" : g->fits == 0 ? "no" : "cannot say", "why", g->why);
}

static json_t *evidence_of(const char *study, const struct moe_fit_report *r,
                           struct moe_error *err)
{
    json_t *ev = json_array(), *e;

    for (size_t i = 0; i < r->n; i++) {
        if (!(e = moe_loop_evidence(study, "fit", r->rows[i].id, err))) {
            json_decref(ev);
            return NULL;
        }
        json_array_append_new(ev, e);
    }
    return ev;
}

/* What was ruled out: the rungs before the chosen one (they do not fit or
 * cannot say) and after it (more recompute than the least that fits). */
static json_t *ruled_out(const struct moe_loop_fit *f)
{
    json_t *out = json_array();

    for (size_t i = 0; i < f->n; i++) {
        if ((int)i == f->chosen)
            continue;
        json_array_append_new(out, json_pack("{s:s, s:s}", "recompute", f->rungs[i].recompute,
                                             "why", f->chosen >= 0 && (int)i > f->chosen
                                                        ? "more recompute than the least that fits"
                                                        : f->rungs[i].why));
    }
    return out;
}

static json_t *fit_doc(const char *study, const struct moe_fit_report *r,
                       const struct moe_loop_fit *f, json_t *baseline, struct moe_error *err)
{
    json_t *ev = evidence_of(study, r, err), *rungs = json_array();

    if (!ev) {
        json_decref(rungs);
        json_decref(baseline);
        return NULL;
    }
    for (size_t i = 0; i < f->n; i++)
        json_array_append_new(rungs, rung_json(&f->rungs[i]));
    return json_pack("{s:s, s:i, s:s, s:s, s:f, s:s, s:o, s:o, s:o, s:o, s:o*}", "stage", "fit",
                     "round", 1, "rule", "fit-least-recompute", "question",
                     "which recompute do the later stages run?", "usable_mib",
                     round(f->usable_mib * 10) / 10, "usable_is",
                     "modeled: the GPU's memory less the study's headroom", "rungs", rungs,
                     "chose", f->chosen < 0 ? json_pack("{s:s}", "why", f->none_fits
                                                        ? "no rung fits" : "no rung can be trusted: "
                                                          "the written recompute stays")
                                            : json_pack("{s:s, s:s}", "recompute",
                                                        f->rungs[f->chosen].recompute, "why",
                                                        f->rungs[f->chosen].why),
                     "ruled_out", ruled_out(f), "evidence", ev, "baseline", baseline);
}

/* The chosen rung's run record, as the baseline of the stages after fit;
 * whether it differs from the one in force (the frozen baseline). */
static json_t *adopt(const char *study, const struct moe_fit_report *r, const struct moe_loop_fit *f,
                     bool *changed, struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1];
    const struct moe_loop_rung *g = &f->rungs[f->chosen];
    json_t *b = moe_loop_run_contract(study, "fit", r->rows[g->rows[0]].id, err), *frozen;

    if (!b)
        return NULL;
    if (!(frozen = moe_contract_load_frozen(study, digest, err))) {
        json_decref(b);
        return NULL;
    }
    *changed = !json_equal(b, frozen);
    json_decref(frozen);
    return b;
}

int moe_loop_decide_fit(const char *study, struct moe_loop_outcome *out, struct moe_error *err)
{
    struct moe_fit_report r;
    struct moe_loop_fit f;
    double usable;
    json_t *doc = NULL, *baseline = NULL;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (usable_mib(study, &usable, err) < 0 || moe_fit_report_load(study, &r, err) < 0)
        return -1;
    if (moe_loop_fit_decide(&r, usable, &f, err) == 0 &&
        (f.chosen < 0 || (baseline = adopt(study, &r, &f, &out->adopted, err))) &&
        (doc = fit_doc(study, &r, &f, baseline, err)) && moe_loop_record(study, doc, out, err) == 0)
        rc = f.none_fits ? 1 : 0;
    if (rc == 1)
        moe_error_set(err, "no recompute the fit stage measured fits %.0f MiB usable (%s): "
                      "recorded in %s", usable, f.n ? f.rungs[f.n - 1].why : "no rung", out->file);
    else if (rc == 0 && f.chosen < 0)
        snprintf(out->said, sizeof(out->said), "no rung's peak can be trusted (%s): the "
                 "baseline keeps the recompute the study wrote", f.rungs[0].why);
    else if (rc == 0)
        snprintf(out->said, sizeof(out->said), "recompute %s: %s%s", f.rungs[f.chosen].recompute,
                 f.rungs[f.chosen].why, out->adopted ? "; it becomes the baseline of every later "
                                                       "stage" : "; the baseline keeps it");
    json_decref(doc);
    moe_fit_report_free(&r);
    return rc;
}
