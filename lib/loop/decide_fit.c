/* Fit -> baseline (fit_rule.h), recorded with its evidence. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_build.h"
#include "core/study_dir.h"
#include "core/strbuf.h"
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
    char *path = moe_path_join(study, "study.yaml");
    struct moe_study s;
    struct moe_train t;
    struct moe_machine m;
    int rc;

    if (!path) {
        moe_error_set(err, "%s: out of memory", study);
        return -1;
    }
    rc = moe_study_load(&s, path, err) == 0 && moe_study_fit_inputs(&s, &t, &m, err) == 0 ? 0 : -1;
    free(path);
    if (rc == 0) {
        m.measured_ratio = 0;
        *out = moe_machine_usable(&m) / MIB;
    }
    moe_study_free(&s);
    return rc;
}

/* x rounded to a tenth; NaN (not measured) stays NaN, written as null. */
static double tenth(double x)
{
    return isfinite(x) ? round(x * 10) / 10 : x;
}

static json_t *rung_json(struct moe_jb *b, const struct moe_loop_rung *g)
{
    json_t *j = json_object();

    moe_jb_str(b, j, "recompute", g->recompute);
    moe_jb_num_opt(b, j, "peak_mib", tenth(g->peak_mib));
    moe_jb_str(b, j, "peak_is", "measured");
    moe_jb_str(b, j, "fits", g->fits == 1 ? "yes" : g->fits == 0 ? "no" : "cannot say");
    moe_jb_str(b, j, "why", g->why);
    return moe_jb_done(b, j);
}

static json_t *evidence_of(struct moe_jb *b, const char *study, const struct moe_fit_report *r)
{
    json_t *ev = json_array(), *e;

    for (size_t i = 0; i < r->n; i++) {
        if (!(e = moe_loop_evidence(study, "fit", r->rows[i].id, b->err))) {
            json_decref(ev);
            return NULL;
        }
        moe_jb_append(b, ev, e);
    }
    return ev;
}

/* What was ruled out: the rungs before the chosen one (they do not fit or
 * cannot say) and after it (more recompute than the least that fits). */
static json_t *ruled_out(struct moe_jb *b, const struct moe_loop_fit *f)
{
    json_t *out = json_array();

    for (size_t i = 0; i < f->n; i++) {
        if ((int)i == f->chosen)
            continue;
        moe_jb_append(b, out,
                      moe_jb_pack(b, "{s:s, s:s}", "recompute", f->rungs[i].recompute, "why",
                                  f->chosen >= 0 && (int)i > f->chosen
                                      ? "more recompute than the least that fits"
                                      : f->rungs[i].why));
    }
    return out;
}

static json_t *chose_json(struct moe_jb *b, const struct moe_loop_fit *f)
{
    if (f->chosen < 0)
        return moe_jb_pack(b, "{s:s}", "why",
                           f->none_fits ? "no rung fits"
                                        : "no rung can be trusted: the written recompute stays");
    return moe_jb_pack(b, "{s:s, s:s}", "recompute", f->rungs[f->chosen].recompute, "why",
                       f->rungs[f->chosen].why);
}

static json_t *fit_doc(const char *study, const struct moe_fit_report *r,
                       const struct moe_loop_fit *f, json_t *baseline, struct moe_error *err)
{
    struct moe_jb b;
    json_t *ev, *rungs, *doc;

    moe_jb_init(&b, err);
    if (!(ev = evidence_of(&b, study, r))) {
        json_decref(baseline);
        return NULL;
    }
    doc = json_object(), rungs = json_array();
    for (size_t i = 0; i < f->n; i++)
        moe_jb_append(&b, rungs, rung_json(&b, &f->rungs[i]));
    moe_jb_str(&b, doc, "stage", "fit");
    moe_jb_int(&b, doc, "round", 1);
    moe_jb_str(&b, doc, "rule", "fit-least-recompute");
    moe_jb_str(&b, doc, "question", "which recompute do the later stages run?");
    moe_jb_num(&b, doc, "usable_mib", tenth(f->usable_mib));
    moe_jb_str(&b, doc, "usable_is", "modeled: the GPU's memory less the study's headroom");
    moe_jb_set(&b, doc, "rungs", rungs);
    moe_jb_set(&b, doc, "chose", chose_json(&b, f));
    moe_jb_set(&b, doc, "ruled_out", ruled_out(&b, f));
    moe_jb_set(&b, doc, "evidence", ev);
    if (baseline) /* none when the written recompute stays */
        moe_jb_set(&b, doc, "baseline", baseline);
    moe_jb_within(&b, MOE_STUDY_DECISIONS "/fit");
    return moe_jb_done(&b, doc);
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
        /* a message: people read it, and a cut one still reads */
        snprintf(out->said, sizeof(out->said), "no rung's peak can be trusted (%s): the "
                 "baseline keeps the recompute the study wrote", f.rungs[0].why);
    else if (rc == 0)
        /* a message: people read it, and a cut one still reads */
        snprintf(out->said, sizeof(out->said), "recompute %s: %s%s", f.rungs[f.chosen].recompute,
                 f.rungs[f.chosen].why, out->adopted ? "; it becomes the baseline of every later "
                                                       "stage" : "; the baseline keeps it");
    json_decref(doc);
    moe_fit_report_free(&r);
    return rc;
}
