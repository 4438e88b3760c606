/* moeflow report STUDY_DIR --stage fit: each fit candidate's measured peak
 * against the memory model's prediction, with fit-python/'s routing
 * evidence (lib/analysis/fit_report.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/layout_name.h"
#include "analysis/fit_report.h"
#include "cli.h"
#include "options.h"
#include "report_fit.h"

static void routing_text(const struct moe_fit_evidence *ev, char *buf, size_t len)
{
    if (!ev->seen)
        /* a message: a table cell */
        snprintf(buf, len, "-");
    else if (ev->dispatch_calls == 0)
        /* a message: a table cell */
        snprintf(buf, len, "no all-to-all dispatch");
    else
        /* a message: a table cell */
        snprintf(buf, len, "%ld dispatches: mean %.2fx, max %.2fx of balanced%s",
                 ev->dispatch_calls, moe_fit_evidence_imbalance(ev),
                 ev->rows_balanced > 0 ? ev->rows_max / ev->rows_balanced : 0,
                 ev->nonfinite ? ", non-finite tokens" : "");
}

static void number(char *buf, size_t len, double v, bool percent)
{
    if (isnan(v))
        /* a message: a table cell */
        snprintf(buf, len, "-");
    else if (percent)
        /* a message: a table cell */
        snprintf(buf, len, "%+.1f%%", v);
    else
        /* a message: a table cell */
        snprintf(buf, len, "%.1f", v);
}

static void print_table(const struct moe_fit_report *r, const char *study)
{
    const struct moe_fit_row *from;
    double ratio = moe_fit_report_ratio(r, &from);
    enum moe_fit_shapes shapes;
    char why[400];

    printf("study %s, stage fit: %zu candidates, each one GPU standing in for a rank of %d "
           "(Megatron's fake process group)\n", r->study, r->n, r->n ? r->rows[0].world : 0);
    printf("%-44s %4s %-26s %3s %12s %13s %7s  %-44s %s\n", "candidate", "rank", "layout", "rc",
           "measured_MiB", "predicted_MiB", "error", "routing (rows per dispatch)", "verdict");
    for (size_t i = 0; i < r->n; i++) {
        const struct moe_fit_row *w = &r->rows[i];
        char layout[96], rc[16], meas[24], pred[24], err[16], routing[96], verdict[400];

        struct moe_layout l = { .tp = w->tp, .cp = w->cp, .pp = w->pp, .vpp = w->vpp,
                                .ep = w->ep, .etp = w->etp };

        moe_layout_name(&l, layout, sizeof(layout));
        if (w->rc < 0)
            /* a message: a table cell */
            snprintf(rc, sizeof(rc), "-");
        else
            /* a message: a table cell */
            snprintf(rc, sizeof(rc), "%d", w->rc);
        number(meas, sizeof(meas), w->measured_mib, false);
        number(pred, sizeof(pred), w->predicted_mib, false);
        number(err, sizeof(err), moe_fit_row_error_pct(w), true);
        routing_text(&w->ev, routing, sizeof(routing));
        printf("%-44.44s %4d %-26s %3s %12s %13s %7s  %-44s %s\n", w->label, w->rank, layout, rc,
               meas, pred, err, routing, moe_fit_row_verdict(w, verdict, sizeof(verdict)));
    }
    printf("measured: the largest \"max allocated\" of every rank and line of the run's log; "
           "predicted (modeled): moeflow's memory model for the rank the run stands in for; "
           "error = (predicted - measured) / measured, flagged beyond +-%.0f%%; routing: rows "
           "an MoE token dispatch received against balanced routing (fit-python/'s evidence), "
           "collapsed beyond %.1fx or with non-finite tokens\n",
           MOE_FIT_ERROR_FLAG_PCT, MOE_FIT_COLLAPSE_RATIO);
    if (ratio > 0)
        printf("measured/predicted at most %.3f (%s, rank %d): moeflow gen --fit-memory-from "
               "%s scales the scale stage's memory filter by it\n", ratio, from->label,
               from->rank, study);
    shapes = moe_fit_report_shapes(r, &from);
    printf("static shapes (measured; a full-iteration CUDA graph needs them): %s%s\n",
           moe_fit_shapes_text(shapes, from, why, sizeof(why)),
           shapes == MOE_FIT_SHAPES_VARY ? "; moeflow gen --fit-memory-from skips full_iteration "
                                           "and refuses a baseline that has it" : "");
}

int moe_report_fit(const char *study, const char *shown, bool json)
{
    struct moe_fit_report r;
    struct moe_error err;

    moe_error_clear(&err);
    if (moe_fit_report_load(study, &r, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    if (json) {
        json_t *doc = moe_fit_report_json(&r, &err);
        int rc;

        if (!doc) {
            moe_error_within(&err, "%s: the fit report could not be built", study);
            moe_fit_report_free(&r);
            return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
        }
        rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS |
                                         JSON_REAL_PRECISION(10)) < 0;
        json_decref(doc);
        putchar('\n');
        moe_fit_report_free(&r);
        return rc ? moe_cli_error(MOE_EXIT_SYSTEM, "moeflow report: cannot write\n")
                  : MOE_EXIT_OK;
    }
    print_table(&r, shown);
    moe_fit_report_free(&r);
    return MOE_EXIT_OK;
}
