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
#include "analysis/fit_report.h"
#include "analysis/report_runs.h"
#include "analysis/study_report.h"
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

static json_t *not_drawn(const char *why)
{
    return json_pack("{s:s, s:s}", "status", "not drawn", "why", why);
}

static const json_t *get(const json_t *o, const char *k)
{
    return json_object_get(o, k);
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

static json_t *step_time_json(const json_t *validate)
{
    const json_t *runs = get(validate, "runs"), *base = json_array_get(runs, 0), *win;
    const char *why = NULL, *status = json_string_value(get(validate, "status"));

    if (!status || strcmp(status, "ran") != 0)
        return not_drawn("the validate stage did not run (see its section)");
    if (!base || !isfinite(median_of(base)))
        return not_drawn("the validate baseline has no measured step time");
    win = winner_of(runs, &why);
    return json_pack("{s:s, s:s, s:O?, s:O?, s:s, s:O?, s:s}", "status", "drawn", "file",
                     "step-time.svg", "baseline", get(base, "name"), "winner",
                     win ? get(win, "name") : NULL, "winner_why", why, "window",
                     get(validate, "window"), "source",
                     "validate.runs[].measured.steps: every logged iteration of each run");
}

/* ---- modeled against measured ---- */

static json_t *pair_plot(const char *file, const char *unit, double band, const char *modeled,
                         const char *measured)
{
    return json_pack("{s:s, s:s, s:s, s:f, s:s, s:s, s:[], s:[]}", "status", "drawn", "file",
                     file, "unit", unit, "band_pct", band, "modeled", modeled, "measured",
                     measured, "points", "skipped");
}

static void skip_point(json_t *plot, const char *candidate, const char *why)
{
    json_array_append_new(json_object_get(plot, "skipped"),
                          json_pack("{s:s, s:s}", "candidate", candidate, "why", why));
}

/* A point, or why there is none; trusted: the measurement's own evidence
 * holds (a fit run whose routing or fill cannot be shown is drawn apart). */
static void add_point(json_t *plot, const char *candidate, double modeled, double measured,
                      const char *note, bool trusted)
{
    if (!isfinite(modeled))
        skip_point(plot, candidate, "no modeled value in " MOE_STUDY_MANIFEST);
    else if (!isfinite(measured))
        skip_point(plot, candidate, note ? note : "no measured value");
    else
        json_array_append_new(json_object_get(plot, "points"),
                              json_pack("{s:s, s:f, s:f, s:b, s:s*}", "candidate", candidate,
                                        "modeled", modeled, "measured", measured, "trusted",
                                        trusted, "verdict", note));
}

/* The fit stage: predicted_mib against the peak its run measured. */
static json_t *memory_json(const char *study)
{
    struct moe_fit_report r;
    struct moe_error err;
    json_t *plot;
    char verdict[256];

    moe_error_clear(&err);
    if (moe_fit_report_load(study, &r, &err) < 0) {
        char why[700];

        snprintf(why, sizeof(why), "the fit stage cannot be read: %s", err.text);
        return not_drawn(why);
    }
    plot = pair_plot("memory-modeled-vs-measured.svg", "MiB", MOE_FIT_ERROR_FLAG_PCT,
                     MOE_STUDY_MANIFEST
                     " predicted_mib: moeflow's memory model of the rank the fit "
                     "run stands in for",
                     MOE_STUDY_RESULTS
                     "/fit/<id>.log: Megatron's largest max allocated of any rank");
    for (size_t i = 0; plot && i < r.n; i++) {
        const struct moe_fit_row *row = &r.rows[i];

        moe_fit_row_verdict(row, verdict, sizeof(verdict));
        add_point(plot, row->label, row->predicted_mib, row->measured_mib,
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

/* A layout as the scale stage names it ("tp1.cp1.pp1.vpp1.ep2.etp1"),
 * from a contract's parallel section: the baseline's value is "baseline". */
static char *layout_of(const json_t *contract)
{
    const json_t *p = get(contract, MOE_CONTRACT_PARALLEL);
    static const char *const keys[] = { "tp", "cp", "pp", "vpp", "ep", "etp" };
    struct moe_strbuf b = { 0 };

    for (size_t i = 0; i < 6; i++) {
        if (!json_is_integer(get(p, keys[i]))) {
            moe_strbuf_free(&b);
            return NULL;
        }
        moe_strbuf_printf(&b, "%s%s%lld", i ? "." : "", keys[i],
                          (long long)json_integer_value(get(p, keys[i])));
    }
    return moe_strbuf_take(&b);
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
static json_t *scale_row(const struct moe_manifest *m, const struct moe_study_cand *c,
                         const struct moe_report_run *runs, size_t n)
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
    row = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "candidate", c->label, "id", c->id,
                    "layout", layout ? layout : "?",
                    "predicted_rank", rank > 0 ? json_integer(rank) : json_null(),
                    "predicted_ms", moe_json_number(ms), "measured_ms",
                    moe_json_number(run_median(runs, n, c->label)));
    free(layout);
    return row;
}

/* The stage's runs as report reads them; the rows, or NULL with why. */
static json_t *scale_rows(const char *study, const struct moe_manifest *m, char *why,
                          size_t len)
{
    struct moe_report_reader rd = { 0 };
    struct moe_study_view v;
    struct moe_report_run *runs = NULL;
    struct moe_error err;
    json_t *rows = NULL, *skipped = json_array();
    size_t n = 0;

    moe_error_clear(&err);
    if (moe_study_view_load(study, "scale", &v, &err) < 0) {
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
        json_array_append_new(rows, scale_row(m, &v.ref, runs, n));
        for (size_t i = 0; rows && i < v.n; i++)
            json_array_append_new(rows, scale_row(m, &v.cands[i], runs, n));
    } else {
        snprintf(why, len, "no readable log of the scale baseline: %.400s", err.text);
    }
    for (size_t i = 0; i < n; i++)
        moe_report_run_free(&runs[i]);
    free(runs);
    json_decref(skipped);
    moe_study_view_free(&v);
    return rows;
}

static json_t *step_pairs(const json_t *rows, const char *why)
{
    json_t *plot = pair_plot("step-modeled-vs-measured.svg", "ms", STEP_BAND_PCT,
                             MOE_STUDY_MANIFEST ": the scale candidate's note (moeflow's step-time "
                             "model, rounded to 1 ms)",
                             MOE_STUDY_RESULTS "/scale/<id>.log: median over the screening window");
    const json_t *r;
    size_t i;

    if (!rows) {
        json_decref(plot);
        return not_drawn(why);
    }
    json_array_foreach(rows, i, r) {
        const char *c = json_string_value(get(r, "candidate"));
        double modeled = json_number_value(get(r, "predicted_ms"));

        add_point(plot, c, json_is_number(get(r, "predicted_ms")) ? modeled : NAN,
                  json_is_number(get(r, "measured_ms")) ? json_number_value(get(r, "measured_ms"))
                                                        : NAN,
                  json_is_number(get(r, "measured_ms")) ? NULL : "no measured step: no log",
                  true);
    }
    return plot;
}

static json_t *round_json(const char *source, const char *file, json_int_t round,
                          json_t *rows)
{
    return json_pack("{s:s, s:s, s:s, s:I, s:o}", "source", source, "file", file, "stage",
                     "scale", "round", round, "rows", rows);
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
        snprintf(why, len, "ranking[%zu] is not an object with a string (or null) "
                 "\"candidate\", a string \"layout\" and an integer \"order\" if any", i);
        return false;
    }
    if (!is_number_or_null(get(e, "predicted_ms")) || !is_number_or_null(get(e, "measured_ms"))) {
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
        snprintf(why, len, "not an object with a string \"stage\" and an integer \"round\" "
                 "from 1");
        return false;
    }
    if (rk && !json_is_array(rk)) {
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
static json_t *decision_rows(const json_t *ranking, size_t *cut)
{
    json_t *rows = json_array();
    size_t n = json_array_size(ranking), i;
    const json_t *e;

    *cut = n > RANKING_MAX ? n - RANKING_MAX : 0;
    json_array_foreach(ranking, i, e) {
        if (i >= RANKING_MAX)
            break;
        const json_t *c = get(e, "candidate"), *o = get(e, "order");

        json_array_append_new(rows, json_pack("{s:O, s:O, s:O, s:o, s:o}", "candidate",
                                              json_is_string(c) ? c : get(e, "layout"), "layout",
                                              get(e, "layout"), "predicted_rank",
                                              o ? o : json_null(), "predicted_ms",
                                              moe_json_number(number_or_nan(get(e, "predicted_ms"))),
                                              "measured_ms",
                                              moe_json_number(number_or_nan(get(e, "measured_ms")))));
    }
    return rows;
}

static void refuse(json_t *refused, const char *file, const char *why)
{
    json_array_append_new(refused, json_pack("{s:s, s:s}", "file", file, "why", why));
}

/* One decision of the trail: a chart of its ranking when it is a scale
 * decision with one, nothing for another stage's, refused by name when its
 * ranking is not the documented shape. */
static void one_decision(const json_t *entry, json_t *rounds, json_t *refused, json_t *trail)
{
    const char *file = json_string_value(get(entry, "file"));
    const json_t *d = get(entry, "decision");
    char why[300], svg[64];
    size_t cut;

    if (!decision_ok(d, why, sizeof(why))) {
        refuse(refused, file ? file : MOE_STUDY_DECISIONS "/", why);
        return;
    }
    json_array_append_new(trail, json_pack("{s:s, s:O, s:O, s:O, s:O*, s:o}", "file", file,
                                           "sha256", get(entry, "digest"), "stage",
                                           get(d, "stage"), "round", get(d, "round"), "rule",
                                           get(d, "rule"), "chose", moe_decision_said(d)));
    if (strcmp(json_string_value(get(d, "stage")), "scale") == 0 && get(d, "ranking")) {
        snprintf(svg, sizeof(svg), "scale-decision-%zu.svg", json_array_size(rounds));
        json_t *r = round_json(file, svg, json_integer_value(get(d, "round")),
                               decision_rows(get(d, "ranking"), &cut));
        if (r && cut)
            json_object_set_new(r, "rows_cut", json_integer((json_int_t)cut));
        json_array_append_new(rounds, r);
    }
}

/* The trail as the contract store accepted it; the pack reads no
 * decision file itself, so its seals are judged once, with owner and
 * mode, as report and the plugin judge them. */
static void decisions(const struct moe_pack_trail *t, json_t *rounds, json_t *refused,
                      json_t *trail)
{
    const json_t *e;
    size_t i;

    if (t && t->error) {
        refuse(refused, MOE_STUDY_DECISIONS "/", t->error);
        return;
    }
    json_array_foreach(t ? t->decisions : NULL, i, e)
        one_decision(e, rounds, refused, trail);
}

json_t *moe_evidence_pack_plots(const char *study, const struct moe_manifest *m,
                                const json_t *validate, const struct moe_pack_trail *t)
{
    char why[512] = "";
    json_t *rows = scale_rows(study, m, why, sizeof(why));
    json_t *rounds = json_array(), *refused = json_array(), *step = step_pairs(rows, why);
    json_t *trail = json_array();

    if (rows)
        json_array_append_new(rounds, round_json(MOE_STUDY_RESULTS
                                                 "/scale: the scale stage's runs, "
                                                 "median over the screening window",
                                                 "scale-round-1.svg", 1, json_incref(rows)));
    decisions(t, rounds, refused, trail);
    json_decref(rows);
    return json_pack("{s:o, s:o, s:o, s:o, s:s?, s:o, s:o}", "step_time", step_time_json(validate),
                     "memory", memory_json(study), "step", step, "scale_rounds", rounds,
                     "scale_rounds_why", rows ? NULL : why, "refused_decisions", refused,
                     "trail", trail);
}
