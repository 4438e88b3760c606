/* The data of the evidence pack's plots, kept in pack.json under "plots"
 * so that every plotted number can be read beside its plot: the step-time
 * plot's two runs, modeled against measured memory and step time per
 * candidate, and each scale round's ranking.  Modeled numbers are
 * moeflow's own (the memory model's predicted_mib, the step-time model's
 * figure in each scale candidate's note); measured ones are the logs'.
 * A plot that cannot be drawn, a candidate that lacks either number and a
 * decision file that is not the documented shape are listed with why:
 * the plots never stop the pack. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/decision_text.h"
#include "analysis/evidence_pack.h"
#include "analysis/evidence_pack_internal.h"
#include "analysis/report_internal.h"
#include "analysis/fit_report.h"
#include "analysis/report_runs.h"
#include "analysis/study_report.h"
#include "core/layout_name.h"
#include "core/contract_keys.h"
#include "core/json_build.h"
#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

/* Bands of the modeled-against-measured plots: the memory model is held
 * to MOE_FIT_ERROR_FLAG_PCT; the step-time model ranks layouts and is
 * calibrated more loosely (doc/moeflow-layouts.1). */
#define STEP_BAND_PCT 25.0
/* A decision's ranking past this many rows is cut (and said so): a bar
 * chart of more layouts is unreadable, and the file is data. */
#define RANKING_MAX 64

/* {"status": status, "why": why}; why may quote a file's text */
static json_t *status_why(struct moe_jb *b, const char *status, const char *why)
{
    json_t *j = json_object();

    moe_jb_str(b, j, "status", status);
    moe_jb_set(b, j, "why", moe_report_text_json(why));
    return moe_jb_done(b, j);
}

static json_t *not_drawn(struct moe_jb *b, const char *why)
{
    return status_why(b, "not drawn", why);
}

static const json_t *get(const json_t *o, const char *k)
{
    return json_object_get(o, k);
}

/* obj[key] = a copy of v, null when there is none ("s:O?"). */
static void copy_opt(struct moe_jb *b, json_t *obj, const char *key, const json_t *v)
{
    moe_jb_set(b, obj, key, v ? json_incref((json_t *)v) : json_null());
}

static double median_of(const json_t *run)
{
    const json_t *v = get(get(run, "measured"), "step_ms_median");

    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The validate run set beside the baseline: the combination when there
 * is one (what validate adopts), else the winner with the fastest
 * measured median. */
static const json_t *winner_of(const json_t *runs, const char **why)
{
    const json_t *best = NULL, *r;
    size_t i;

    json_array_foreach(runs, i, r) {
        const char *role = json_string_value(get(r, "role"));

        if (!role || !isfinite(median_of(r)))
            continue;
        if (strcmp(role, "combination") == 0) {
            *why = "the combination of the winners, measured as its own run";
            return r;
        }
        if (strcmp(role, "winner") == 0 && (!best || median_of(r) < median_of(best)))
            best = r;
    }
    *why = best ? "the winner with the fastest measured median (no combination ran)"
                : "no winner was measured: the baseline alone";
    return best;
}

static json_t *step_time_json(struct moe_jb *b, const json_t *validate)
{
    const json_t *runs = get(validate, "runs"), *base = json_array_get(runs, 0), *win;
    const char *why = NULL, *status = json_string_value(get(validate, "status"));

    json_t *j;

    if (!status || strcmp(status, "ran") != 0)
        return not_drawn(b, "the validate stage did not run (see its section)");
    if (!base || !isfinite(median_of(base)))
        return not_drawn(b, "the validate baseline has no measured step time");
    win = winner_of(runs, &why);
    j = json_object();
    moe_jb_str(b, j, "status", "drawn");
    moe_jb_str(b, j, "file", "step-time.svg");
    copy_opt(b, j, "baseline", get(base, "name"));
    copy_opt(b, j, "winner", win ? get(win, "name") : NULL);
    moe_jb_str(b, j, "winner_why", why);
    copy_opt(b, j, "window", get(validate, "window"));
    moe_jb_str(b, j, "source", "validate.runs[].measured.steps: every logged iteration of each "
               "run");
    return moe_jb_done(b, j);
}

/* ---- modeled against measured ---- */

static json_t *pair_plot(struct moe_jb *b, const char *file, const char *unit, double band,
                         const char *modeled, const char *measured)
{
    json_t *j = json_object();

    moe_jb_str(b, j, "status", "drawn");
    moe_jb_str(b, j, "file", file);
    moe_jb_str(b, j, "unit", unit);
    moe_jb_num(b, j, "band_pct", band);
    moe_jb_str(b, j, "modeled", modeled);
    moe_jb_str(b, j, "measured", measured);
    moe_jb_set(b, j, "points", json_array());
    moe_jb_set(b, j, "skipped", json_array());
    return moe_jb_done(b, j);
}

static void skip_point(struct moe_jb *b, json_t *plot, const char *candidate, const char *why)
{
    json_t *k = json_object();

    moe_jb_str(b, k, "candidate", candidate);
    moe_jb_set(b, k, "why", moe_report_text_json(why));
    moe_jb_append(b, json_object_get(plot, "skipped"), moe_jb_done(b, k));
    moe_jb_within(b, "skipped");
}

/* A point, or why there is none; trusted: the measurement's own evidence
 * holds (a fit run whose routing or fill cannot be shown is drawn apart). */
static void add_point(struct moe_jb *b, json_t *plot, const char *candidate, double modeled,
                      double measured, const char *note, bool trusted)
{
    json_t *p;

    if (!isfinite(modeled)) {
        skip_point(b, plot, candidate, "no modeled value in " MOE_STUDY_MANIFEST);
        return;
    }
    if (!isfinite(measured)) {
        skip_point(b, plot, candidate, note ? note : "no measured value");
        return;
    }
    p = json_object();
    moe_jb_str(b, p, "candidate", candidate);
    moe_jb_num(b, p, "modeled", modeled);
    moe_jb_num(b, p, "measured", measured);
    moe_jb_bool(b, p, "trusted", trusted);
    if (note)
        moe_jb_set(b, p, "verdict", moe_report_text_json(note));
    moe_jb_append(b, json_object_get(plot, "points"), moe_jb_done(b, p));
    moe_jb_within(b, "points");
}

/* The fit stage: predicted_mib against the peak its run measured. */
static json_t *memory_json(struct moe_jb *b, const char *study)
{
    struct moe_fit_report r;
    struct moe_error err;
    json_t *plot;
    char verdict[256];

    moe_error_clear(&err);
    if (moe_fit_report_load(study, &r, &err) < 0) {
        char *why = moe_strdup_printf("the fit stage cannot be read: %s", err.text);

        plot = not_drawn(b, why ? why : "the fit stage cannot be read (out of memory)");
        free(why);
        return plot;
    }
    plot = pair_plot(b, "memory-modeled-vs-measured.svg", "MiB", MOE_FIT_ERROR_FLAG_PCT,
                     MOE_STUDY_MANIFEST
                     " predicted_mib: moeflow's memory model of the rank the fit "
                     "run stands in for",
                     MOE_STUDY_RESULTS
                     "/fit/<id>.log: Megatron's largest max allocated of any rank");
    for (size_t i = 0; plot && i < r.n; i++) {
        const struct moe_fit_row *row = &r.rows[i];

        /* a verdict is a sentence; one cut short still says it */
        moe_fit_row_verdict(row, verdict, sizeof(verdict));
        add_point(b, plot, row->label, row->predicted_mib, row->measured_mib,
                  (row->flags & MOE_FIT_NOT_RUN) ? "not run: no log" : verdict,
                  !(row->flags & (MOE_FIT_FAILED | MOE_FIT_NO_EVIDENCE | MOE_FIT_UNFILLED |
                                  MOE_FIT_COLLAPSED)));
    }
    moe_fit_report_free(&r);
    return plot;
}

/* ---- the scale stage ---- */

/* A scale layout's rank and modeled step, from the note moeflow gen
 * wrote ("rank 2 of 10 grids, predicted 74 ms per step, ..."): manifest
 * .json has no field of its own for them.  0 when the note has none. */
static int note_model(const char *note, long *rank, double *ms)
{
    return note && sscanf(note, "rank %ld of %*d grids, predicted %lf ms per step", rank, ms) == 2
               ? 1
               : 0;
}

/* A layout as the scale stage names it, in the one notation
 * (core/layout_name.h), from a contract's parallel section: the baseline's
 * value is "baseline". */
static char *layout_of(const json_t *contract)
{
    const json_t *p = get(contract, MOE_CONTRACT_PARALLEL);
    static const char *const keys[] = { "tp", "cp", "pp", "vpp", "ep", "etp" };
    struct moe_layout l = { 0 };
    int *parts[] = { &l.tp, &l.cp, &l.pp, &l.vpp, &l.ep, &l.etp };
    char name[MOE_LAYOUT_NAME_MAX];

    for (size_t i = 0; i < 6; i++) {
        const json_t *v = get(p, keys[i]);

        /* a size past the notation's range names no layout of the stage */
        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > MOE_LAYOUT_COMPONENT_MAX)
            return NULL;
        *parts[i] = (int)json_integer_value(v);
    }
    return strdup(moe_layout_name(&l, name, sizeof(name)));
}

static const struct moe_candidate *manifest_cand(const struct moe_manifest *m, const char *id)
{
    const struct moe_manifest_stage *st = moe_manifest_find(m, MOE_STAGE_SCALE);

    for (size_t i = 0; st && i < st->n; i++)
        if (st->cands[i].id && strcmp(st->cands[i].id, id) == 0)
            return &st->cands[i];
    return NULL;
}

static double run_median(const struct moe_report_run *runs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(runs[i].name, name) == 0)
            return runs[i].step_median;
    return NAN;
}

/* One layout of the scale stage: its modeled rank and step, its measured
 * median over the screening window. */
static json_t *scale_row(struct moe_jb *b, const struct moe_manifest *m,
                         const struct moe_study_cand *c, const struct moe_report_run *runs,
                         size_t n)
{
    const struct moe_candidate *mc = manifest_cand(m, c->id);
    char *layout = !mc                                   ? NULL
                   : mc->variable && strcmp(mc->variable, "layout") == 0 && mc->value
                       ? moe_value_text(mc->value)
                       : layout_of(mc->contract);
    long rank = 0;
    double ms = NAN;
    json_t *row;

    note_model(mc ? mc->note : NULL, &rank, &ms);
    row = json_object();
    moe_jb_str(b, row, "candidate", c->label);
    moe_jb_str(b, row, "id", c->id);
    moe_jb_str(b, row, "layout", layout ? layout : "?");
    moe_jb_set(b, row, "predicted_rank", rank > 0 ? json_integer(rank) : json_null());
    moe_jb_num_opt(b, row, "predicted_ms", ms);
    moe_jb_num_opt(b, row, "measured_ms", run_median(runs, n, c->label));
    free(layout);
    return moe_jb_done(b, row);
}

/* The stage's runs as report reads them; the rows, or NULL with why. */
static json_t *scale_rows(struct moe_jb *b, const char *study, const struct moe_manifest *m,
                          char *why, size_t len)
{
    struct moe_report_reader rd = { 0 };
    struct moe_study_view v;
    struct moe_report_run *runs = NULL;
    struct moe_error err;
    json_t *rows = NULL, *skipped = json_array();
    size_t n = 0;

    moe_error_clear(&err);
    if (moe_study_view_load(study, "scale", &v, &err) < 0) {
        /* %.400s: fits why[512] */
        snprintf(why, len, "the scale stage cannot be read: %.400s", err.text);
        json_decref(skipped);
        return NULL;
    }
    rd.first = v.first;
    rd.last = v.last;
    if ((runs = calloc(v.n + 1, sizeof(*runs))) &&
        moe_report_load_study_run(&v, &v.ref, v.ref.label, &rd, &runs[0], &err) == 0) {
        n = 1 + moe_report_load_candidates(&v, &rd, runs + 1, skipped);
        rows = json_array();
        moe_jb_append(b, rows, scale_row(b, m, &v.ref, runs, n));
        for (size_t i = 0; i < v.n; i++)
            moe_jb_append(b, rows, scale_row(b, m, &v.cands[i], runs, n));
        if (!(rows = moe_jb_done(b, rows)))
            moe_jb_within(b, "scale_rounds[0].rows");
    } else {
        /* %.400s: fits why[512] */
        snprintf(why, len, "no readable log of the scale baseline: %.400s", err.text);
    }
    for (size_t i = 0; i < n; i++)
        moe_report_run_free(&runs[i]);
    free(runs);
    json_decref(skipped);
    moe_study_view_free(&v);
    return rows;
}

static json_t *step_pairs(struct moe_jb *b, const json_t *rows, const char *why)
{
    json_t *plot = pair_plot(b, "step-modeled-vs-measured.svg", "ms", STEP_BAND_PCT,
                             MOE_STUDY_MANIFEST ": the scale candidate's note (moeflow's step-time "
                             "model, rounded to 1 ms)",
                             MOE_STUDY_RESULTS "/scale/<id>.log: median over the screening window");
    const json_t *r;
    size_t i;

    if (!rows) {
        json_decref(plot);
        return not_drawn(b, why);
    }
    json_array_foreach(rows, i, r) {
        const char *c = json_string_value(get(r, "candidate"));
        double modeled = json_number_value(get(r, "predicted_ms"));

        add_point(b, plot, c, json_is_number(get(r, "predicted_ms")) ? modeled : NAN,
                  json_is_number(get(r, "measured_ms")) ? json_number_value(get(r, "measured_ms"))
                                                        : NAN,
                  json_is_number(get(r, "measured_ms")) ? NULL : "no measured step: no log",
                  true);
    }
    return plot;
}

static json_t *round_json(struct moe_jb *b, const char *source, const char *file,
                          json_int_t round, json_t *rows)
{
    json_t *j = json_object();

    moe_jb_str(b, j, "source", source);
    moe_jb_str(b, j, "file", file);
    moe_jb_str(b, j, "stage", "scale");
    moe_jb_int(b, j, "round", round);
    moe_jb_set(b, j, "rows", rows);
    return moe_jb_done(b, j);
}

/* ---- the decision trail: decisions/NAME.json ---- */

static bool is_number_or_null(const json_t *v)
{
    return !v || json_is_null(v) || json_is_number(v);
}

/* Whether entry is {"candidate": id|null, "layout": text, "predicted_ms",
 * "measured_ms": number|null, "order": integer (optional)}; else why not,
 * in why.  The loop writes a null candidate for a layout a next round is
 * still to run. */
static bool ranking_entry_ok(const json_t *e, size_t i, char *why, size_t len)
{
    const json_t *c = get(e, "candidate"), *o = get(e, "order");

    if (!json_is_object(e) || !(json_is_string(c) || json_is_null(c)) ||
        !json_is_string(get(e, "layout")) || (o && !json_is_integer(o))) {
        /* why[300] holds it: the text is fixed but for a number */
        snprintf(why, len, "ranking[%zu] is not an object with a string (or null) "
                 "\"candidate\", a string \"layout\" and an integer \"order\" if any", i);
        return false;
    }
    if (!is_number_or_null(get(e, "predicted_ms")) || !is_number_or_null(get(e, "measured_ms"))) {
        /* why[300] holds it: the text is fixed but for a number */
        snprintf(why, len, "ranking[%zu]: predicted_ms and measured_ms must be numbers or null",
                 i);
        return false;
    }
    return true;
}

/* Whether d is a decision: {"stage": text, "round": integer >= 1,
 * "ranking": [entry...] (optional)}. */
static bool decision_ok(const json_t *d, char *why, size_t len)
{
    const json_t *rk = get(d, "ranking"), *e;
    size_t i;

    if (!json_is_object(d) || !json_is_string(get(d, "stage")) ||
        !json_is_integer(get(d, "round")) || json_integer_value(get(d, "round")) < 1) {
        /* why[300] holds it: the text is fixed */
        snprintf(why, len, "not an object with a string \"stage\" and an integer \"round\" "
                 "from 1");
        return false;
    }
    if (rk && !json_is_array(rk)) {
        /* why[300] holds it: the text is fixed */
        snprintf(why, len, "\"ranking\" is not an array");
        return false;
    }
    json_array_foreach(rk, i, e)
        if (!ranking_entry_ok(e, i, why, len))
            return false;
    return true;
}

static double number_or_nan(const json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A decision's ranking as rows: its "order" is the predicted rank (else
 * the chart orders by predicted step); a layout not run yet is named by
 * its layout and has no measured step. */
static json_t *decision_rows(struct moe_jb *b, const json_t *ranking, size_t *cut)
{
    json_t *rows = json_array();
    size_t n = json_array_size(ranking), i;
    const json_t *e;

    *cut = n > RANKING_MAX ? n - RANKING_MAX : 0;
    json_array_foreach(ranking, i, e) {
        if (i >= RANKING_MAX)
            break;
        const json_t *c = get(e, "candidate"), *o = get(e, "order");
        json_t *row = json_object();

        /* ranking_entry_ok checked the shape: a string layout, c a string or null */
        moe_jb_copy(b, row, "candidate", (json_t *)(json_is_string(c) ? c : get(e, "layout")));
        moe_jb_copy(b, row, "layout", (json_t *)get(e, "layout"));
        copy_opt(b, row, "predicted_rank", o);
        moe_jb_num_opt(b, row, "predicted_ms", number_or_nan(get(e, "predicted_ms")));
        moe_jb_num_opt(b, row, "measured_ms", number_or_nan(get(e, "measured_ms")));
        moe_jb_append(b, rows, moe_jb_done(b, row));
    }
    return moe_jb_done(b, rows);
}

static void refuse(struct moe_jb *b, json_t *refused, const char *file, const char *why)
{
    json_t *j = json_object();

    moe_jb_set(b, j, "file", moe_report_text_json(file));
    moe_jb_set(b, j, "why", moe_report_text_json(why));
    moe_jb_append(b, refused, moe_jb_done(b, j));
    moe_jb_within(b, "refused_decisions");
}

/* The trail's record of a decision the pack read. */
static json_t *trail_entry(struct moe_jb *b, const char *file, const json_t *entry,
                           const json_t *d)
{
    json_t *j = json_object();

    moe_jb_str(b, j, "file", file);
    moe_jb_copy(b, j, "sha256", (json_t *)get(entry, "digest"));
    moe_jb_copy(b, j, "stage", (json_t *)get(d, "stage"));
    moe_jb_copy(b, j, "round", (json_t *)get(d, "round"));
    if (get(d, "rule"))
        moe_jb_copy(b, j, "rule", (json_t *)get(d, "rule"));
    moe_jb_set(b, j, "chose", moe_decision_said(d));
    return moe_jb_done(b, j);
}

/* One decision of the trail: a chart of its ranking when it is a scale
 * decision with one, nothing for another stage's, refused by name when its
 * ranking is not the documented shape. */
static void one_decision(struct moe_jb *b, const json_t *entry, json_t *rounds,
                         json_t *refused, json_t *trail)
{
    const char *file = json_string_value(get(entry, "file"));
    const json_t *d = get(entry, "decision");
    char why[300], svg[64];
    size_t cut;
    json_t *r;

    if (!decision_ok(d, why, sizeof(why))) {
        refuse(b, refused, file ? file : MOE_STUDY_DECISIONS "/", why);
        return;
    }
    moe_jb_append(b, trail, trail_entry(b, file, entry, d));
    moe_jb_within(b, "trail");
    if (strcmp(json_string_value(get(d, "stage")), "scale") != 0 || !get(d, "ranking"))
        return;
    /* svg[64] holds "scale-decision-" and any size_t */
    snprintf(svg, sizeof(svg), "scale-decision-%zu.svg", json_array_size(rounds));
    r = round_json(b, file, svg, json_integer_value(get(d, "round")),
                   decision_rows(b, get(d, "ranking"), &cut));
    if (r && cut)
        moe_jb_int(b, r, "rows_cut", (json_int_t)cut);
    moe_jb_append(b, rounds, r);
    moe_jb_within(b, "scale_rounds");
}

/* The trail as the contract store accepted it; the pack reads no
 * decision file itself, so its seals are judged once, with owner and
 * mode, as report and the plugin judge them. */
static void decisions(struct moe_jb *b, const struct moe_pack_trail *t, json_t *rounds,
                      json_t *refused, json_t *trail)
{
    const json_t *e;
    size_t i;

    if (t && t->error) {
        refuse(b, refused, MOE_STUDY_DECISIONS "/", t->error);
        return;
    }
    json_array_foreach(t ? t->decisions : NULL, i, e)
        one_decision(b, e, rounds, refused, trail);
}

json_t *moe_evidence_pack_plots(struct moe_jb *b, const char *study,
                                const struct moe_manifest *m, const json_t *validate,
                                const struct moe_pack_trail *t)
{
    char why[512] = "";
    json_t *rows = scale_rows(b, study, m, why, sizeof(why));
    json_t *j = json_object(), *rounds = json_array(), *refused = json_array();
    json_t *trail = json_array();

    if (rows)
        moe_jb_append(b, rounds, round_json(b, MOE_STUDY_RESULTS "/scale: the scale stage's runs, "
                                            "median over the screening window",
                                            "scale-round-1.svg", 1, json_incref(rows)));
    decisions(b, t, rounds, refused, trail);
    moe_jb_set(b, j, "step_time", step_time_json(b, validate));
    moe_jb_set(b, j, "memory", memory_json(b, study));
    moe_jb_set(b, j, "step", step_pairs(b, rows, why));
    moe_jb_set(b, j, "scale_rounds", rounds);
    moe_jb_set(b, j, "scale_rounds_why", rows ? json_null() : moe_report_text_json(why));
    moe_jb_set(b, j, "refused_decisions", refused);
    moe_jb_set(b, j, "trail", trail);
    json_decref(rows);
    if (!(j = moe_jb_done(b, j)))
        moe_jb_within(b, "plots");
    return j;
}
