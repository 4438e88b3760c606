/* The validate stage's evidence: per run, over a fixed window of iterations
 * (default 41-50; the first logged interval is always discarded), step-time
 * statistics, model TFLOP/s/GPU, loss health, skipped/NaN iterations and
 * peak memory; proof from the argument dump (and a profile, when given) that
 * the requested features ran; and A/B verdicts against a baseline. */
#ifndef MOEFLOW_REPORT_H
#define MOEFLOW_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/error.h"
#include "analysis/graph_evidence.h"
#include "analysis/megatron_log.h"
#include "analysis/trace.h"

#define MOE_REPORT_FIRST 41
#define MOE_REPORT_LAST 50

/* A point of the per-iteration step-time series (distinct iterations). */
struct moe_report_point {
    long iter;
    double step_ms;
    double logged;  /* the log's nan, inf or -inf for it (step_ms is NAN then); else 0 */
    size_t record; /* index into moe_log.iters */
};

struct moe_report_run {
    char name[128];
    long first, last;        /* window */
    size_t steps_seen;       /* distinct iterations logged */
    long first_logged, max_iter;
    size_t n;                /* iterations inside the window (first logged excluded) */
    size_t in_window;        /* ... counting those without a usable step time */
    double step_mean, step_median, step_stdev, step_cv; /* ms; cv = stdev / mean */
    double tflops_mean, tflops_median;                   /* NAN when not logged */
    int loss_finite;         /* every window iteration has a finite lm loss */
    double loss_last;        /* NAN: none, or not finite (loss_last_logged says which) */
    double loss_last_logged; /* the log's nan, inf or -inf for it; else 0 */
    long skipped, nan_iters; /* summed over the window's records */
    double peak_bytes;       /* max over ranks of max allocated; NAN without memory lines */
    int peak_rank;
    double theo_total_mb;    /* Megatron's own estimate, for comparison; NAN when absent */
    double theo_total_logged; /* its nan, inf or -inf as logged; else 0 */
    struct moe_report_point *series;
    size_t nseries;
    json_t *in_effect;       /* features as the argument dump shows them */
    json_t *mismatches;      /* array of strings: requested vs what ran */
    json_t *profile;         /* profile evidence, or NULL */
    json_t *warnings;        /* the log's warnings (strings), FILE:LINE: first */
    /* CUDA graphs: the log's capture lines, and the cudaGraphLaunch calls
     * of the run's traces (graph_traces of them; none read: 0) */
    struct moe_graph_evidence graphs;
    size_t graph_traces, graph_launches;
    json_t *graph_flag;      /* the mismatch about graphs in mismatches (borrowed), or NULL */
};

/* KEY=VALUE: an argument the run was asked to run with.  requested: taken
 * from the candidate's own command line (study mode), checked only when
 * the log has an argument dump at all; else given by the user (--expect),
 * whose absence from the dump is itself a mismatch. */
struct moe_report_expect {
    const char *key, *value;
    bool requested;
};

void moe_report_run_free(struct moe_report_run *r);

/* MOE_VERDICT_NOISY: no verdict, the reference's own steps spread more
 * than MOE_REPORT_MAX_REF_CV (a decision never rests on a noisy reference). */
enum moe_verdict { MOE_VERDICT_NO_CHANGE = 0, MOE_VERDICT_WIN, MOE_VERDICT_LOSS,
                   MOE_VERDICT_NOISY };

/* What a verdict needs: significance at alpha (the rank test's p-value
 * below it and the bootstrap interval of the effect excluding 0) and an
 * effect at least min_effect_pct large. */
struct moe_report_opts {
    double alpha;          /* default MOE_REPORT_ALPHA */
    double min_effect_pct; /* default MOE_REPORT_MIN_EFFECT */
};

#define MOE_REPORT_ALPHA 0.05
#define MOE_REPORT_MIN_EFFECT 2.0
/* The largest coefficient of variation of the reference's window steps a
 * verdict rests on.  Steady runs spread 1-8% (tests/gpu/steady-1gpu:
 * s20's twelve window steps span 1256-1579 ms, CV 7%); past 15% the
 * reference's median is uncertain by more than several minimum effects
 * over a 10-step window (about 1.25 x CV / sqrt(10) = 6%), so a rank
 * test's small p-value (outliers, a warm-up step left in) says nothing of
 * the configuration: rerun the reference, interleaved with the candidate. */
#define MOE_REPORT_MAX_REF_CV 0.15

struct moe_report_ab {
    double delta_pct;            /* median step time vs the baseline's; negative is faster */
    double ci_lo_pct, ci_hi_pct; /* its 95% bootstrap interval */
    double p_value;              /* Mann-Whitney U, two-sided */
    int exact;                   /* exact p-value (no ties), else normal approximation */
    size_t n_base, n_cand;
    double alpha, min_effect_pct;
    double ref_cv;               /* the reference's window steps: stdev / mean; NAN: unknown */
    enum moe_verdict verdict;
    char why[160];               /* the reason for the verdict, in words */
};

/* opts NULL: the defaults. */
void moe_report_compare(const struct moe_report_run *base, const struct moe_report_run *cand,
                        const struct moe_report_opts *opts, struct moe_report_ab *ab);

/* Whether the first run is a reference the others are measured against:
 * several runs, or a study stage's own baseline alone.  A single other run
 * has nothing to be compared with, and is not called a baseline. */
bool moe_report_first_is_reference(const struct moe_report_run *runs, size_t n);
const char *moe_verdict_name(enum moe_verdict v);

/* report.json: runs[0] is the baseline.  NULL with err (may be NULL)
 * naming the key when a value could not be made (out of memory, a string
 * that is not UTF-8): never a key left out. */
json_t *moe_report_to_json(const struct moe_report_run *runs, size_t n,
                           const struct moe_report_opts *opts, struct moe_error *err);

/* report_render.c: report.md and the step-time SVG chart, as text
 * (free() it; NULL when out of memory). */
char *moe_report_md(const struct moe_report_run *runs, size_t n,
                    const struct moe_report_opts *opts);
char *moe_report_svg(const struct moe_report_run *runs, size_t n);

#endif
