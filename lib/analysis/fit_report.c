#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/fit_report.h"
#include "analysis/fit_report_internal.h"
#include "analysis/megatron_log.h"
#include "analysis/report_internal.h"
#include "core/json_build.h"
#include "core/contract_keys.h"
#include "core/manifest.h"
#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

/* A candidate id names files under results/: only a SHA-256 in hex may. */
static bool is_digest(const char *s)
{
    size_t n = s ? strspn(s, "0123456789abcdef") : 0;

    return n == 64 && s[n] == '\0';
}

/* The recompute a fit candidate's contract declares: none, full, or the
 * selective modules. */
static void recompute_text(const json_t *contract, char *buf, size_t len)
{
    const json_t *rc = json_object_get(json_object_get(contract, MOE_CONTRACT_TUNING),
                                       MOE_CONTRACT_RECOMPUTE), *mod;
    const char *gran = json_string_value(json_object_get(rc, MOE_CONTRACT_GRANULARITY));
    size_t i, used = 0;

    /* a granularity is one word; the modules that follow stop where buf is full */
    snprintf(buf, len, "%s", gran ? gran : "none");
    if (!gran || strcmp(gran, "selective") != 0)
        return;
    json_array_foreach(json_object_get(rc, MOE_CONTRACT_MODULES), i, mod) {
        int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                         json_string_value(mod) ? json_string_value(mod) : "?");
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
}

static void describe_candidate(const struct moe_candidate *c, struct moe_fit_row *row)
{
    struct moe_layout l;
    char *text = moe_value_text(c->value);
    const char *routing;

    /* a message: the label people read; a long value is shown cut */
    snprintf(row->label, sizeof(row->label), "%s=%s", c->variable ? c->variable : "?",
             text ? text : "?");
    free(text);
    moe_contract_layout(c->contract, &l);
    row->tp = l.tp, row->cp = l.cp, row->pp = l.pp, row->vpp = l.vpp;
    row->ep = l.ep, row->etp = l.etp;
    row->rank = c->rank > 0 ? c->rank : 0, row->world = c->world_size;
    recompute_text(c->contract, row->recompute, sizeof(row->recompute));
    routing = json_string_value(
        json_object_get(json_object_get(c->contract, MOE_CONTRACT_SEMANTICS), "routing"));
    /* a routing class is one short word: a longer one (not moeflow's) shows cut */
    snprintf(row->routing, sizeof(row->routing), "%s", routing ? routing : "?");
    row->predicted_mib = c->predicted_mib;
}

static int read_rc(const char *path)
{
    struct moe_error ignored;
    char *text = moe_read_file(path, "exit status", NULL, &ignored), *end;
    long v;

    if (!text)
        return -1;
    v = strtol(text, &end, 10);
    if (end == text || (*end && *end != '\n') || v < 0 || v > 255)
        v = -1;
    free(text);
    return (int)v;
}

/* The run's figures from its log: the largest max allocated of every rank
 * and line, the evidence line, the last exception. */
static int read_run(const char *study, struct moe_fit_row *row, struct moe_error *err)
{
    char *rc = moe_study_result(study, "fit", row->id, MOE_RESULT_RC);
    char *path = moe_study_result(study, "fit", row->id, MOE_RESULT_LOG);
    struct moe_log log;
    struct stat st;
    int ok;

    if (!rc || !path) {
        moe_error_at(err, study, 0, 0, "out of memory");
        free(rc);
        free(path);
        return -1;
    }
    row->rc = read_rc(rc);
    if (stat(path, &st) != 0) {
        row->flags |= MOE_FIT_NOT_RUN;
        free(rc);
        free(path);
        return 0;
    }
    if (row->rc >= 0 && moe_study_result_rc_stale(study, "fit", row->id))
        row->flags |= MOE_FIT_STALE_RC;
    free(rc);
    moe_log_init(&log);
    if (!S_ISREG(st.st_mode))
        moe_error_at(err, path, 0, 0, "log: not a regular file");
    ok = S_ISREG(st.st_mode) && moe_log_read_file(&log, path, err) == 0;
    free(path);
    if (!ok) {
        moe_log_free(&log);
        return -1;
    }
    for (size_t i = 0; i < log.nmems; i++)
        if (!(row->measured_mib >= log.mems[i].max_allocated / (1024.0 * 1024.0)))
            row->measured_mib = log.mems[i].max_allocated / (1024.0 * 1024.0);
    row->ev = log.fit_evidence;
    /* both are error[200] */
    snprintf(row->error, sizeof(row->error), "%s", log.last_error);
    moe_log_free(&log);
    return 0;
}

static void flag_row(struct moe_fit_row *row)
{
    double e = moe_fit_row_error_pct(row);

    if (row->flags & MOE_FIT_NOT_RUN)
        return;
    if (row->rc > 0 || isnan(row->measured_mib))
        row->flags |= MOE_FIT_FAILED;
    if (!row->ev.seen)
        row->flags |= MOE_FIT_NO_EVIDENCE;
    else if (strcmp(row->ev.mode, "fill") != 0)
        row->flags |= MOE_FIT_UNFILLED;
    if (row->ev.seen && (row->ev.nonfinite > 0 ||
                         moe_fit_evidence_imbalance(&row->ev) > MOE_FIT_COLLAPSE_RATIO))
        row->flags |= MOE_FIT_COLLAPSED;
    if (fabs(e) > MOE_FIT_ERROR_FLAG_PCT)
        row->flags |= MOE_FIT_OFF;
    if (moe_fit_row_shapes_vary(row))
        row->flags |= MOE_FIT_SHAPES_MOVED;
}

int moe_fit_report_load(const char *study, struct moe_fit_report *r, struct moe_error *err)
{
    const struct moe_manifest_stage *fit;
    struct moe_manifest m;
    int rc = -1;

    memset(r, 0, sizeof(*r));
    if (moe_manifest_load(study, &m, err) < 0)
        return -1;
    fit = moe_manifest_find(&m, MOE_STAGE_FIT);
    /* the study's name, for people: cut, it still names it */
    snprintf(r->study, sizeof(r->study), "%s", m.study ? m.study : "?");
    if (!fit || fit->n == 0) {
        moe_error_at(err, m.path, 0, 0,
                     "the fit stage has no candidates (see its skipped entries)");
        goto done;
    }
    if (!(r->rows = calloc(fit->n, sizeof(*r->rows)))) {
        moe_error_set(err, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < fit->n; i++) {
        struct moe_fit_row *row = &r->rows[r->n];

        if (!is_digest(fit->cands[i].id)) {
            moe_error_at(err, m.path, 0, 0, "fit candidate %zu: id is not a SHA-256 in hex", i);
            goto done;
        }
        /* an id is 64 hex digits (manifest.c checks them): it fits id[72] */
        snprintf(row->id, sizeof(row->id), "%s", fit->cands[i].id);
        row->measured_mib = NAN;
        describe_candidate(&fit->cands[i], row);
        if (read_run(study, row, err) < 0)
            goto done;
        flag_row(row);
        r->n++;
    }
    rc = 0;
done:
    moe_manifest_free(&m);
    if (rc < 0)
        moe_fit_report_free(r);
    return rc;
}

void moe_fit_report_free(struct moe_fit_report *r)
{
    free(r->rows);
    r->rows = NULL;
    r->n = 0;
}

double moe_fit_row_error_pct(const struct moe_fit_row *row)
{
    if (!(row->measured_mib > 0) || isnan(row->predicted_mib))
        return NAN;
    return (row->predicted_mib - row->measured_mib) / row->measured_mib * 100.0;
}

const char *moe_fit_row_verdict(const struct moe_fit_row *row, char *buf, size_t len)
{
    unsigned f = row->flags;

    if (f & MOE_FIT_NOT_RUN)
        /* a verdict for people (buf: the caller's): cut, it still says it */
        snprintf(buf, len, "not run (no log)");
    else if (f & MOE_FIT_STALE_RC)
        /* before failed: the exit status is another attempt's, not this log's.
         * A verdict for people (buf: the caller's): cut, it still says it */
        snprintf(buf, len, "stale: " MOE_STUDY_RESULTS "/fit/%s" MOE_RESULT_RC " is older than "
                 MOE_STUDY_RESULTS "/fit/%s" MOE_RESULT_LOG " (a later attempt rewrote the log "
                 "and did not finish)", row->id, row->id);
    else if (f & MOE_FIT_FAILED)
        /* a verdict for people (buf: the caller's): cut, it still says it */
        snprintf(buf, len, "failed%s%s", row->error[0] ? ": " : "", row->error);
    else if (f & MOE_FIT_NO_EVIDENCE)
        /* a verdict for people (buf: the caller's): cut, it still says it */
        snprintf(buf, len, "untrusted: no fit-python evidence line%s (is the study directory "
                 "visible in the container, and PYTHONPATH kept?)",
                 row->ev.not_installed ? " (it did not install)" : "");
    else if (f & MOE_FIT_UNFILLED)
        /* a verdict for people (buf: the caller's): cut, it still says it */
        snprintf(buf, len, "untrusted: collectives left unfilled (MOEFLOW_FAKE_COLLECTIVES=%s)",
                 row->ev.mode);
    else if (f & MOE_FIT_COLLAPSED)
        /* a verdict for people (buf: the caller's): cut, it still says it */
        snprintf(buf, len, "untrusted: routing collapsed");
    else if (f & MOE_FIT_OFF)
        /* a verdict for people (buf: the caller's): cut, it still says it */
        snprintf(buf, len, "model off by more than %.0f%%", MOE_FIT_ERROR_FLAG_PCT);
    else
        /* a verdict for people (buf: the caller's): cut, it still says it */
        snprintf(buf, len, "ok");
    if (f & MOE_FIT_SHAPES_MOVED) {
        size_t used = strlen(buf);

        /* its memory figure stands; the shapes are another matter.  A
         * verdict for people (buf: the caller's): cut, it still says it */
        snprintf(buf + used, len - used, "; shapes not static: %ld to %ld rows per dispatch "
                 "under drop-and-pad", row->ev.rows_min, row->ev.rows_max);
    }
    return buf;
}

double moe_fit_report_ratio(const struct moe_fit_report *r, const struct moe_fit_row **from)
{
    const unsigned untrusted = MOE_FIT_NOT_RUN | MOE_FIT_FAILED | MOE_FIT_NO_EVIDENCE |
                               MOE_FIT_UNFILLED | MOE_FIT_COLLAPSED | MOE_FIT_STALE_RC;
    double best = 0;

    if (from)
        *from = NULL;
    for (size_t i = 0; i < r->n; i++) {
        const struct moe_fit_row *row = &r->rows[i];
        double ratio;

        if ((row->flags & untrusted) || !(row->predicted_mib > 0))
            continue;
        ratio = row->measured_mib / row->predicted_mib;
        if (ratio > best) {
            best = ratio;
            if (from)
                *from = row;
        }
    }
    return best;
}

static json_t *evidence_json(struct moe_jb *b, const struct moe_fit_evidence *ev)
{
    json_t *j;

    if (!ev->seen)
        return json_null();
    j = json_object();
    moe_jb_set(b, j, "torch", moe_report_text_json(ev->torch));
    moe_jb_set(b, j, "mode", moe_report_text_json(ev->mode));
    moe_jb_set(b, j, "native", moe_report_text_json(ev->native));
    moe_jb_set(b, j, "filled", moe_report_text_json(ev->filled));
    moe_jb_int(b, j, "dispatch_calls", (json_int_t)ev->dispatch_calls);
    moe_jb_int(b, j, "rows_min", (json_int_t)ev->rows_min);
    moe_jb_num(b, j, "rows_mean", ev->rows_mean);
    moe_jb_int(b, j, "rows_max", (json_int_t)ev->rows_max);
    moe_jb_num(b, j, "rows_balanced", ev->rows_balanced);
    moe_jb_int(b, j, "nonfinite", (json_int_t)ev->nonfinite);
    return moe_jb_done(b, j);
}

static json_t *layout_json(struct moe_jb *b, const struct moe_fit_row *row)
{
    json_t *j = json_object();

    moe_jb_int(b, j, "tp", row->tp);
    moe_jb_int(b, j, "cp", row->cp);
    moe_jb_int(b, j, "pp", row->pp);
    moe_jb_int(b, j, "vpp", row->vpp);
    moe_jb_int(b, j, "ep", row->ep);
    moe_jb_int(b, j, "etp", row->etp);
    return moe_jb_done(b, j);
}

static json_t *row_json(struct moe_jb *b, const struct moe_fit_row *row)
{
    json_t *j = json_object();
    char verdict[400];

    moe_jb_str(b, j, "id", row->id);
    moe_jb_set(b, j, "label", moe_report_text_json(row->label));
    moe_jb_set(b, j, "recompute", moe_report_text_json(row->recompute));
    moe_jb_int(b, j, "rank", row->rank);
    moe_jb_int(b, j, "world_size", row->world);
    moe_jb_set(b, j, "layout", layout_json(b, row));
    /* NaN: not measured, not modeled */
    moe_jb_num_opt(b, j, "measured_mib", row->measured_mib);
    moe_jb_str(b, j, "measured", "max allocated, every rank and line of the run's log");
    moe_jb_num_opt(b, j, "predicted_mib", row->predicted_mib);
    moe_jb_str(b, j, "predicted",
               "modeled: moeflow's memory model for the rank the run stands in for");
    moe_jb_num_opt(b, j, "error_pct", moe_fit_row_error_pct(row));
    moe_jb_set(b, j, "routing", evidence_json(b, &row->ev));
    moe_jb_set(b, j, "routing_class", moe_report_text_json(row->routing));
    moe_jb_set(b, j, "error", moe_report_text_json(row->error));
    /* a verdict is a sentence; one cut short still says it */
    moe_jb_set(b, j, "verdict",
               moe_report_text_json(moe_fit_row_verdict(row, verdict, sizeof(verdict))));
    return moe_jb_done(b, j);
}

json_t *moe_fit_report_json(const struct moe_fit_report *r, struct moe_error *err)
{
    json_t *j = json_object(), *rows = json_array(), *shapes = json_object();
    const struct moe_fit_row *from;
    enum moe_fit_shapes st = moe_fit_report_shapes(r, &from);
    static const char *const names[] = { "unknown", "static", "not static" };
    char text[400];
    struct moe_jb b;

    moe_jb_init(&b, err);
    moe_jb_str(&b, shapes, "verdict", names[st]);
    moe_jb_set(&b, shapes, "why",
               moe_report_text_json(moe_fit_shapes_text(st, from, text, sizeof(text))));
    moe_jb_set(&b, shapes, "candidate", from ? json_string(from->id) : json_null());
    for (size_t i = 0; i < r->n; i++)
        moe_jb_append(&b, rows, row_json(&b, &r->rows[i]));
    /* a row's failure is named "[i].key": the rows are "candidates" */
    moe_jb_within(&b, "candidates");
    moe_jb_set(&b, j, "study", moe_report_text_json(r->study));
    moe_jb_str(&b, j, "stage", "fit");
    moe_jb_num(&b, j, "flag_error_pct", MOE_FIT_ERROR_FLAG_PCT);
    moe_jb_num(&b, j, "collapse_ratio", MOE_FIT_COLLAPSE_RATIO);
    moe_jb_set(&b, j, "candidates", rows);
    moe_jb_set(&b, j, "static_shapes", moe_jb_done(&b, shapes));
    return moe_jb_done(&b, j);
}
