/* The fit stage's reconciliation: fit-python/'s evidence line, and `report
 * --stage fit` over a fit stage cut from the fit-truth matrix
 * (tests/data/fit-report/PROVENANCE), expectations read off its lines by
 * hand. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/fit_evidence.h"
#include "analysis/fit_evidence_internal.h"
#include "analysis/fit_report.h"
#include "analysis/fit_report_internal.h"
#include "analysis/megatron_log.h"
#include "analysis/megatron_log_internal.h"
#include "unit.h"

static const char *srcpath(const char *rel)
{
    static char buf[4096];
    const char *dir = getenv("MOEFLOW_SRCDIR");

    snprintf(buf, sizeof(buf), "%s/%s", dir ? dir : ".", rel);
    return buf;
}

#define LINE "moeflow-fake-collectives: torch=2.11.0+cu130 mode=fill " \
             "native=all_gather,all_gather_into_tensor filled=all_to_all_single:192," \
             "reduce_scatter_tensor:8 dispatch_calls=32 rows_min=20128 rows_mean=27688.0 " \
             "rows_max=61824 rows_balanced=24576.0 nonfinite=0"

/* The line as a run prints it, behind a rank prefix too. */
static void evidence_line(void **state)
{
    struct moe_fit_evidence ev = { 0 };

    (void)state;
    assert_true(moe_fit_evidence_parse("[rank0]: " LINE, &ev));
    assert_true(ev.seen);
    assert_string_equal(ev.torch, "2.11.0+cu130");
    assert_string_equal(ev.mode, "fill");
    assert_string_equal(ev.native, "all_gather,all_gather_into_tensor");
    assert_string_equal(ev.filled, "all_to_all_single:192,reduce_scatter_tensor:8");
    assert_int_equal(ev.dispatch_calls, 32);
    assert_int_equal(ev.rows_min, 20128);
    assert_int_equal(ev.rows_max, 61824);
    assert_int_equal(ev.nonfinite, 0);
    assert_true(fabs(moe_fit_evidence_imbalance(&ev) - 27688.0 / 24576.0) < 1e-9);
}

/* The start-up line and broken lines are not evidence; "not installed"
 * is remembered. */
static void evidence_refusals(void **state)
{
    struct moe_fit_evidence ev = { 0 };

    (void)state;
    assert_false(moe_fit_evidence_parse("moeflow-fake-collectives: active, mode fill; torch "
                                        "2.11.0 fills all_gather itself", &ev));
    assert_false(ev.seen);
    assert_false(moe_fit_evidence_parse("iteration 1/ 4 | lm loss: 1.0", &ev));
    /* a negative or non-numeric count is malformed */
    assert_false(moe_fit_evidence_parse(
        "moeflow-fake-collectives: torch=2 mode=fill native=x filled=none dispatch_calls=-1 "
        "rows_min=0 rows_mean=0 rows_max=0 rows_balanced=0 nonfinite=0", &ev));
    assert_false(moe_fit_evidence_parse(
        "moeflow-fake-collectives: torch=2 mode=fill native=x filled=none dispatch_calls=1 "
        "rows_min=0 rows_mean=nan rows_max=0 rows_balanced=0 nonfinite=0", &ev));
    assert_false(ev.seen);
    assert_true(moe_fit_evidence_parse("moeflow-fake-collectives: not installed: "
                                       "ModuleNotFoundError: No module named 'torch'", &ev));
    assert_true(ev.not_installed);
    assert_false(ev.seen);
}

/* A log's last Python exception, with or without torchrun's prefix. */
static void log_exception(void **state)
{
    struct moe_log log;

    (void)state;
    moe_log_init(&log);
    moe_log_feed_line(&log, "  error_injection_type ............ transient_error", 1);
    assert_string_equal(log.last_error, "");
    moe_log_feed_line(&log, "[rank4]: ModuleNotFoundError: No module named "
                            "'megatron.core.datasets.helpers_cpp'", 2);
    assert_string_equal(log.last_error, "ModuleNotFoundError: No module named "
                                        "'megatron.core.datasets.helpers_cpp'");
    moe_log_feed_line(&log, "torch.OutOfMemoryError: CUDA out of memory.", 3);
    assert_string_equal(log.last_error, "torch.OutOfMemoryError: CUDA out of memory.");
    moe_log_free(&log);
}

static const struct moe_fit_row *row_of(const struct moe_fit_report *r, char digit)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].id[0] == digit)
            return &r->rows[i];
    fail_msg("no candidate %c...", digit);
    return NULL;
}

static void study_rows(void **state)
{
    struct moe_fit_report r;
    struct moe_error e;
    const struct moe_fit_row *w;
    char verdict[400];

    (void)state;
    moe_error_clear(&e);
    if (moe_fit_report_load(srcpath("tests/data/fit-report/study"), &r, &e) < 0)
        fail_msg("%s", e.text);
    assert_int_equal(r.n, 5);
    assert_string_equal(r.study, "m01-e64k6-ep8");

    w = row_of(&r, '1'); /* 8703.19 MiB after iteration 2; predicted 8843.7 */
    assert_true(fabs(w->measured_mib - 8703.19) < 0.01);
    assert_true(fabs(w->predicted_mib - 8843.7) < 1e-9);
    assert_int_equal(w->ep, 8);
    assert_int_equal(w->rank, 0);
    assert_int_equal(w->world, 8);
    assert_string_equal(w->recompute, "none");
    assert_int_equal(w->flags, 0);
    assert_string_equal(moe_fit_row_verdict(w, verdict, sizeof(verdict)), "ok");

    w = row_of(&r, '2'); /* unfilled: 5.30x balanced, 18 non-finite dispatches */
    assert_true(w->flags & MOE_FIT_UNFILLED);
    assert_true(w->flags & MOE_FIT_COLLAPSED);
    assert_true(w->flags & MOE_FIT_OFF);
    assert_int_equal(w->ev.nonfinite, 18);
    assert_int_equal(w->ev.rows_max, 8 * 24576);

    w = row_of(&r, '3');
    assert_int_equal(w->rc, 1);
    assert_true(isnan(w->measured_mib));
    assert_true(w->flags & MOE_FIT_FAILED);
    assert_string_equal(moe_fit_row_verdict(w, verdict, sizeof(verdict)),
                        "failed: ValueError: Please use --moe-router-pre-softmax when topk is 1.");

    w = row_of(&r, '4');
    assert_int_equal(w->flags, MOE_FIT_NO_EVIDENCE | MOE_FIT_OFF);
    assert_string_equal(w->recompute, "core_attn");

    w = row_of(&r, '5');
    assert_int_equal(w->flags, MOE_FIT_NOT_RUN);
    assert_int_equal(w->rc, -1);

    /* dropless: its rows move by design and say nothing of static shapes */
    assert_string_equal(row_of(&r, '1')->routing, "dropless");
    assert_int_equal(moe_fit_report_shapes(&r, &w), MOE_FIT_SHAPES_UNKNOWN);
    assert_null(w);

    /* only the sound run counts: 8703.19 / 8843.7 */
    assert_true(fabs(moe_fit_report_ratio(&r, &w) - 8703.19 / 8843.7) < 1e-6);
    assert_int_equal(w->id[0], '1');
    moe_fit_report_free(&r);
}

/* An .rc older than its log is another attempt's (issue 42): the row is
 * flagged stale, naming both files, and no longer counts for the ratio.
 * The copy's own moments between files are within the slack. */
static void stale_rc(void **state)
{
    char dir[] = "/tmp/moeflow-fitstale-XXXXXX", cmd[4400], path[256], verdict[400];
    const char *id = "1111111111111111111111111111111111111111111111111111111111111111";
    struct moe_fit_report r;
    struct moe_error e;
    struct stat st;
    struct timespec ts[2];
    const struct moe_fit_row *w;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof(cmd), "cp -R '%s/.' '%s'", srcpath("tests/data/fit-report/study"), dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof(path), "%s/results/fit/%s.log", dir, id);
    assert_int_equal(stat(path, &st), 0);
    ts[0] = ts[1] = st.st_mtim;
    ts[0].tv_sec -= 3600, ts[1].tv_sec -= 3600; /* the first attempt, an hour earlier */
    snprintf(path, sizeof(path), "%s/results/fit/%s.rc", dir, id);
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
    moe_error_clear(&e);
    if (moe_fit_report_load(dir, &r, &e) < 0)
        fail_msg("%s", e.text);
    w = row_of(&r, '1');
    assert_true(w->flags & MOE_FIT_STALE_RC);
    assert_int_equal(w->rc, 0);
    snprintf(cmd, sizeof(cmd), "stale: results/fit/%s.rc is older than results/fit/%s.log", id,
             id);
    assert_non_null(strstr(moe_fit_row_verdict(w, verdict, sizeof(verdict)), cmd));
    assert_false(row_of(&r, '3')->flags & MOE_FIT_STALE_RC);
    assert_false(row_of(&r, '4')->flags & MOE_FIT_STALE_RC);
    /* the only sound run was row 1: nothing left to scale by */
    assert_true(moe_fit_report_ratio(&r, &w) == 0);
    moe_fit_report_free(&r);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static struct moe_fit_row shaped(const char *label, const char *routing, long lo, long hi,
                                  long calls, unsigned flags)
{
    struct moe_fit_row row = { .rank = 0, .rc = 0, .flags = flags };

    snprintf(row.label, sizeof(row.label), "%s", label);
    snprintf(row.routing, sizeof(row.routing), "%s", routing);
    snprintf(row.ev.mode, sizeof(row.ev.mode), "fill");
    row.ev.seen = true;
    row.ev.dispatch_calls = calls;
    row.ev.rows_min = lo, row.ev.rows_max = hi;
    return row;
}

/* Static shapes (issue 41, lib/analysis/fit_shapes.c): only a sound
 * drop-and-pad run that dispatched speaks for them; one that saw its rows
 * move decides, and names itself. */
static void static_shapes(void **state)
{
    struct moe_fit_row rows[5];
    struct moe_fit_report r = { .rows = rows, .n = 0 };
    const struct moe_fit_row *from;
    char text[400];

    (void)state;
    rows[r.n++] = shaped("baseline=baseline", "dropless", 3000, 5200, 32, 0);
    rows[r.n++] = shaped("ep=1", "drop-and-pad", 0, 0, 0, 0);           /* no dispatch */
    rows[r.n++] = shaped("mbs=2", "drop-and-pad", 900, 4096, 32, MOE_FIT_FAILED);
    assert_int_equal(moe_fit_report_shapes(&r, &from), MOE_FIT_SHAPES_UNKNOWN);
    assert_null(from);
    assert_non_null(strstr(moe_fit_shapes_text(MOE_FIT_SHAPES_UNKNOWN, from, text,
                                               sizeof(text)), "unknown"));

    rows[r.n++] = shaped("ep=2", "drop-and-pad", 4096, 4096, 24, 0);
    assert_int_equal(moe_fit_report_shapes(&r, &from), MOE_FIT_SHAPES_STATIC);
    assert_ptr_equal(from, &rows[3]);
    assert_string_equal(moe_fit_shapes_text(MOE_FIT_SHAPES_STATIC, from, text, sizeof(text)),
                        "static: every drop-and-pad run received the same rows on each "
                        "all-to-all dispatch (4096 rows, 24 dispatches of fit candidate ep=2)");
    assert_false(moe_fit_row_shapes_vary(&rows[0])); /* dropless */
    assert_false(moe_fit_row_shapes_vary(&rows[2])); /* failed */

    rows[r.n++] = shaped("ep=4", "drop-and-pad", 3968, 4096, 24, 0);
    assert_true(moe_fit_row_shapes_vary(&rows[4]));
    assert_int_equal(moe_fit_report_shapes(&r, &from), MOE_FIT_SHAPES_VARY);
    assert_ptr_equal(from, &rows[4]);
    assert_string_equal(moe_fit_shapes_text(MOE_FIT_SHAPES_VARY, from, text, sizeof(text)),
                        "not static: fit candidate ep=4 (rank 0), drop-and-pad, received 3968 "
                        "to 4096 rows per all-to-all dispatch in 24 dispatches");
    /* the row's verdict keeps its memory verdict and adds the shapes */
    rows[4].flags = MOE_FIT_SHAPES_MOVED;
    assert_string_equal(moe_fit_row_verdict(&rows[4], text, sizeof(text)),
                        "ok; shapes not static: 3968 to 4096 rows per dispatch under "
                        "drop-and-pad");
}

/* A manifest whose id could name another file is refused. */
static void bad_id(void **state)
{
    char dir[] = "/tmp/moeflow-fitreport-XXXXXX", path[128];
    struct moe_fit_report r;
    struct moe_error e;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/manifest.json", dir);
    f = fopen(path, "w");
    fputs("{\"study\":\"s\",\"stages\":[{\"stage\":\"fit\",\"candidates\":[{\"id\":"
          "\"../../etc/passwd\"}]}]}", f);
    fclose(f);
    moe_error_clear(&e);
    assert_int_equal(moe_fit_report_load(dir, &r, &e), -1);
    assert_non_null(strstr(e.text, "not a SHA-256"));
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(evidence_line),  cmocka_unit_test(evidence_refusals),
        cmocka_unit_test(log_exception),  cmocka_unit_test(study_rows),
        cmocka_unit_test(bad_id),         cmocka_unit_test(stale_rc),
        cmocka_unit_test(static_shapes),
    };
    return MOE_RUN_TESTS(tests);
}
