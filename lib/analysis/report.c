#include "config.h"

#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/abtest.h"
#include "analysis/graph_evidence_internal.h"
#include "analysis/report.h"
#include "analysis/report_internal.h"
#include "core/json_build.h"
#include "core/strbuf.h"
#include "analysis/megatron_log_internal.h"

static int by_iter(const void *pa, const void *pb)
{
    const struct moe_report_point *a = pa, *b = pb;

    if (a->iter != b->iter)
        return (a->iter > b->iter) - (a->iter < b->iter);
    return (a->record > b->record) - (a->record < b->record);
}

/* The series: one point per iteration.  Within a file the last record of an
 * iteration won already (megatron_log.h: the others are superseded); across
 * a run directory's rank logs, which print the same iterations, the first
 * file's wins. */
static int build_series(struct moe_report_run *r, const struct moe_log *log)
{
    size_t k = 0, n = 0;

    r->series = malloc((log->niters + 1) * sizeof(*r->series));
    if (!r->series)
        return -1;
    for (size_t i = 0; i < log->niters; i++) {
        if (log->iters[i].superseded)
            continue;
        r->series[n].iter = log->iters[i].iter;
        r->series[n].step_ms = log->iters[i].step_ms;
        r->series[n].logged = log->iters[i].step_ms_logged;
        r->series[n++].record = i;
    }
    qsort(r->series, n, sizeof(*r->series), by_iter);
    for (size_t i = 0; i < n; i++)
        if (!k || r->series[k - 1].iter != r->series[i].iter)
            r->series[k++] = r->series[i];
    r->nseries = k;
    return 0;
}

static int window_stats(struct moe_report_run *r, const struct moe_log *log, struct moe_error *err)
{
    double *ms = malloc((r->nseries + 1) * sizeof(double));
    double *tf = malloc((r->nseries + 1) * sizeof(double));
    size_t ntf = 0;
    double sum = 0, ss = 0;

    if (!ms || !tf) {
        free(ms);
        free(tf);
        moe_error_set(err, "out of memory");
        return -1;
    }
    r->loss_finite = 1;
    for (size_t i = 0; i < r->nseries; i++) {
        const struct moe_log_iter *it;

        /* The first logged interval holds compilation and warm-up. */
        if (r->series[i].iter == r->first_logged || r->series[i].iter < r->first ||
            r->series[i].iter > r->last)
            continue;
        it = &log->iters[r->series[i].record];
        r->in_window++;
        if (!isnan(it->step_ms)) {
            ms[r->n++] = it->step_ms;
            sum += it->step_ms;
        }
        if (!isnan(it->tflops))
            tf[ntf++] = it->tflops;
        if (!it->has_loss || !isfinite(it->loss))
            r->loss_finite = 0;
        r->loss_last = it->loss;
        r->loss_last_logged = it->loss_logged;
        /* Each count is bounded (megatron_log.c); the sums saturate. */
        if (__builtin_add_overflow(r->skipped, it->skipped, &r->skipped))
            r->skipped = LONG_MAX;
        if (__builtin_add_overflow(r->nan_iters, it->nan_iters, &r->nan_iters))
            r->nan_iters = LONG_MAX;
    }
    if (r->n == 0) {
        free(ms);
        free(tf);
        return 0;
    }
    r->step_mean = sum / (double)r->n;
    for (size_t i = 0; i < r->n; i++)
        ss += (ms[i] - r->step_mean) * (ms[i] - r->step_mean); // NOLINT: ms[0..n) filled above
    /* Sample standard deviation: the window is a sample of the run. */
    r->step_stdev = r->n > 1 ? sqrt(ss / (double)(r->n - 1)) : 0.0;
    r->step_cv = r->step_mean > 0 ? r->step_stdev / r->step_mean : NAN;
    r->step_median = moe_median(ms, r->n);
    r->tflops_mean = NAN;
    r->tflops_median = NAN;
    if (ntf) {
        double t = 0;

        for (size_t i = 0; i < ntf; i++)
            t += tf[i];
        r->tflops_mean = t / (double)ntf;
        r->tflops_median = moe_median(tf, ntf);
    }
    free(ms);
    free(tf);
    return 0;
}

static void peak_memory(struct moe_report_run *r, const struct moe_log *log)
{
    r->peak_bytes = NAN;
    r->peak_rank = -1;
    for (size_t i = 0; i < log->nmems; i++) {
        if (isnan(log->mems[i].max_allocated))
            continue;
        if (isnan(r->peak_bytes) || log->mems[i].max_allocated > r->peak_bytes) {
            r->peak_bytes = log->mems[i].max_allocated;
            r->peak_rank = log->mems[i].rank;
        }
    }
}

/* The argument-dump keys that prove what ran. */
static const char *const proof_keys[] = {
    "moe_token_dispatcher_type", "moe_flex_dispatcher_backend", "moe_enable_deepep",
    "fp8", "fp8_recipe", "fp4", "bf16", "fp16",
    "cuda_graph_impl", "cuda_graph_scope", "cuda_graph_modules", "enable_cuda_graph",
    "external_cuda_graph", "overlap_grad_reduce", "overlap_param_gather",
    "overlap_moe_expert_parallel_comm", "moe_shared_expert_overlap", "delay_wgrad_compute",
    "tp_comm_overlap", "recompute_granularity", "recompute_modules",
    "expert_model_parallel_size", "tensor_model_parallel_size", "pipeline_model_parallel_size",
    "micro_batch_size", "global_batch_size", NULL,
};

static int is_off(const char *v)
{
    return !v || strcmp(v, "None") == 0 || strcmp(v, "False") == 0 || strcmp(v, "none") == 0 ||
           strcmp(v, "[]") == 0 || strcmp(v, "0") == 0;
}

/* The dispatcher that ran: alltoall/allgather, or flex with its backend. */
static const char *dispatcher_backend(const struct moe_log *log)
{
    const char *type = moe_log_arg(log, "moe_token_dispatcher_type");

    if (!type)
        return NULL;
    if (strcmp(type, "flex") != 0)
        return type;
    if (!is_off(moe_log_arg(log, "moe_enable_deepep")))
        return "deepep";
    return moe_log_arg(log, "moe_flex_dispatcher_backend");
}

static int graphs_requested(const struct moe_report_run *r)
{
    json_t *impl = json_object_get(r->in_effect, "cuda_graph_impl");

    return (json_is_string(impl) && !is_off(json_string_value(impl))) ||
           !is_off(json_string_value(json_object_get(r->in_effect, "enable_cuda_graph"))) ||
           !is_off(json_string_value(json_object_get(r->in_effect, "external_cuda_graph")));
}

json_t *moe_report_text_json(const char *s)
{
    json_t *v;
    char *copy;

    if (!s || (v = json_string(s)))
        return s ? v : NULL;
    if (!(copy = strdup(s)))
        return NULL;
    for (char *p = copy; *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    v = json_string(copy);
    free(copy);
    return v;
}

static int flag(struct moe_jb *b, struct moe_report_run *r, const char *text)
{
    int rc = moe_jb_append(b, r->mismatches, moe_report_text_json(text));

    moe_jb_within(b, "mismatches");
    return rc;
}

/* v as a list of words: a Python list "['moe_act', 'layernorm']" and the
 * command line's "moe_act layernorm" read the same. */
static void words(const char *v, char *out, size_t len)
{
    size_t n = 0;

    for (; *v && n + 1 < len; v++) {
        if (strchr("[]',\"", *v))
            continue;
        if (*v == ' ' && (n == 0 || out[n - 1] == ' '))
            continue;
        out[n++] = *v;
    }
    while (n && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

static int same_value(const char *ran, const char *asked)
{
    char a[512], b[512];

    words(ran, a, sizeof(a));
    words(asked, b, sizeof(b));
    return strcmp(a, b) == 0;
}

/* in_effect: what the argument dump says ran; -1 with b's error naming
 * the key (an argument value that is not UTF-8, out of memory). */
static int in_effect(struct moe_jb *b, struct moe_report_run *r, const struct moe_log *log,
                     const char *be)
{
    json_t *j = json_object();

    for (const char *const *k = proof_keys; *k; k++) {
        const char *v = moe_log_arg(log, *k);

        if (v)
            moe_jb_set(b, j, *k, moe_report_text_json(v));
    }
    if (be)
        moe_jb_str(b, j, "dispatcher", be);
    moe_jb_int(b, j, "graph_capture_lines", (json_int_t)log->graphs.started);
    moe_jb_int(b, j, "graph_built_lines", (json_int_t)log->graphs.built);
    moe_jb_int(b, j, "graphs_built", (json_int_t)log->graphs.graphs);
    moe_jb_int(b, j, "graph_capture_errors", (json_int_t)log->graphs.errors);
    if (!(r->in_effect = moe_jb_done(b, j))) {
        moe_jb_within(b, "in_effect");
        return -1;
    }
    return 0;
}

/* What contradicts a request for CUDA graphs at each level; NULL: nothing.
 * Megatron logs no replay (graph_evidence.c cites where it replays), so a
 * completed capture without a trace is no contradiction. */
static char *graph_mismatch(const struct moe_report_run *r, enum moe_graph_level level)
{
    switch (level) {
    case MOE_GRAPH_NONE:
        return moe_strdup_printf("CUDA graphs requested, but the log has no capture line "
                                 "(Megatron writes '> built N cuda graph(s)', 'CUDA graph "
                                 "capture done for training!!!' or 'Time spent in CUDA Graphs "
                                 "capture') and no trace shows a cudaGraphLaunch");
    case MOE_GRAPH_STARTED:
        return moe_strdup_printf("CUDA graph capture started (%zu lines), but the log never "
                                 "shows it completed and no trace shows a cudaGraphLaunch",
                                 r->graphs.started);
    case MOE_GRAPH_FAILED:
        return moe_strdup_printf("CUDA graph capture failed: %s", r->graphs.error_example);
    case MOE_GRAPH_NOT_LAUNCHED:
        return moe_strdup_printf("the log shows CUDA graphs captured (%zu lines), but the "
                                 "run's %zu trace(s) have no cudaGraphLaunch: no graph ran in "
                                 "the profiled steps", r->graphs.built, r->graph_traces);
    case MOE_GRAPH_CAPTURED:
    case MOE_GRAPH_PROVEN:
        break;
    }
    return NULL;
}

/* Drops the graph mismatch an earlier verdict made: a trace read later
 * can prove what the log alone could not. */
static void drop_graph_flag(struct moe_report_run *r)
{
    for (size_t i = 0; r->graph_flag && i < json_array_size(r->mismatches); i++)
        if (json_array_get(r->mismatches, i) == r->graph_flag) {
            json_array_remove(r->mismatches, i);
            break;
        }
    r->graph_flag = NULL;
}

/* in_effect.graph_evidence (and graph_launches once a trace was read), and
 * the mismatch when graphs were requested and the evidence contradicts
 * it; again after each trace. */
static int graph_verdict(struct moe_jb *b, struct moe_report_run *r)
{
    long long launches = r->graph_traces ? (long long)r->graph_launches : -1;
    enum moe_graph_level level = moe_graph_level(&r->graphs, launches);
    char *text;
    int rc;

    moe_jb_str(b, r->in_effect, "graph_evidence", moe_graph_level_name(level));
    if (r->graph_traces)
        moe_jb_int(b, r->in_effect, "graph_launches", (json_int_t)r->graph_launches);
    if (b->failed) {
        moe_jb_within(b, "in_effect");
        return -1;
    }
    drop_graph_flag(r);
    if (!graphs_requested(r) || !(text = graph_mismatch(r, level)))
        return 0;
    rc = flag(b, r, text);
    free(text);
    if (rc == 0)
        r->graph_flag = json_array_get(r->mismatches, json_array_size(r->mismatches) - 1);
    return rc;
}

static int proof(struct moe_jb *b, struct moe_report_run *r, const struct moe_log *log,
                 const struct moe_report_expect *expect, size_t nexpect)
{
    const char *be = dispatcher_backend(log);
    char *text;

    if (!(r->mismatches = json_array()) || in_effect(b, r, log, be) < 0)
        return moe_jb_done(b, NULL) ? 0 : -1;
    for (size_t i = 0; i < nexpect; i++) {
        const char *v = strcmp(expect[i].key, "dispatcher") == 0 ? be
                                                                 : moe_log_arg(log, expect[i].key);

        if (expect[i].requested && log->nargs == 0)
            continue; /* no dump at all (not rank 0's log): nothing to hold it against */
        if (!v)
            text = moe_strdup_printf("requested %s=%s, but the log has no %s in its argument "
                                     "dump", expect[i].key, expect[i].value, expect[i].key);
        else if (!same_value(v, expect[i].value))
            text = moe_strdup_printf("requested %s=%s, ran with %s=%s", expect[i].key,
                                     expect[i].value, expect[i].key, v);
        else
            continue;
        if (flag(b, r, text) < 0) { /* a NULL text is named there too */
            free(text);
            return -1;
        }
        free(text);
    }
    r->graphs = log->graphs;
    return graph_verdict(b, r);
}

/* The log's warnings, each "FILE:LINE: text", and how many more it had. */
static int warnings(struct moe_jb *b, struct moe_report_run *r, const struct moe_log *log)
{
    json_t *w = json_array();

    for (size_t i = 0; i < log->nwarnings; i++)
        moe_jb_append(b, w, moe_report_text_json(log->warnings[i].text));
    if (log->warnings_total > log->nwarnings)
        moe_jb_append(b, w, json_sprintf("... and %zu more warnings",
                                         log->warnings_total - log->nwarnings));
    if (!(r->warnings = moe_jb_done(b, w))) {
        moe_jb_within(b, "warnings");
        return -1;
    }
    return 0;
}

int moe_report_run_init(struct moe_report_run *r, const char *name, const struct moe_log *log,
                        long first, long last, const struct moe_report_expect *expect,
                        size_t nexpect, struct moe_error *err)
{
    struct moe_jb b;
    int n;

    memset(r, 0, sizeof(*r));
    moe_jb_init(&b, err);
    n = snprintf(r->name, sizeof(r->name), "%s", name);
    if (n < 0 || (size_t)n >= sizeof(r->name)) {
        moe_error_at(err, name, 0, 0, "a run's name is at most %zu bytes", sizeof(r->name) - 1);
        return -1;
    }
    if (warnings(&b, r, log) < 0)
        return -1;
    r->first = first;
    r->last = last;
    /* every way out with an error frees what was built (the warnings leaked) */
    if (log->niters == 0) {
        moe_error_at(err, name, 0, 0, "no Megatron iteration lines in the log");
        moe_report_run_free(r);
        return -1;
    }
    if (build_series(r, log) < 0) {
        moe_error_at(err, name, 0, 0, "out of memory");
        moe_report_run_free(r);
        return -1;
    }
    r->steps_seen = r->nseries;
    r->first_logged = r->series[0].iter;
    r->max_iter = r->series[r->nseries - 1].iter;
    if (r->max_iter < last) {
        moe_error_at(err, name, 0, 0,
                     "window %ld-%ld: the run only reached iteration %ld (%zu iterations logged)",
                     first, last, r->max_iter, r->steps_seen);
        moe_report_run_free(r);
        return -1;
    }
    if (window_stats(r, log, err) < 0 || r->n == 0) {
        if (r->n == 0 && r->in_window > 0)
            moe_error_at(err, name, 0, 0,
                         "window %ld-%ld: %zu iterations logged inside it, none with a usable "
                         "step time (%zu warnings about the log)", first, last, r->in_window,
                         log->warnings_total);
        else if (r->n == 0)
            moe_error_at(err, name, 0, 0,
                         "window %ld-%ld: no logged iteration inside it besides the first "
                         "logged one (%ld)", first, last, r->first_logged);
        moe_report_run_free(r);
        return -1;
    }
    peak_memory(r, log);
    r->theo_total_mb = log->theo_total_mb;
    r->theo_total_logged = log->theo_total_logged;
    if (proof(&b, r, log, expect, nexpect) < 0) {
        moe_report_run_free(r);
        return -1;
    }
    return 0;
}

/* FP8 GEMMs show in kernel names as e4m3/e5m2 or fp8 (cuBLASLt, CUTLASS,
 * TE); the backend's dispatch/combine kernels by namespace. */
int moe_report_run_profile(struct moe_report_run *r, const struct moe_trace *t,
                           struct moe_error *err)
{
    static const char *const fp8_globs[] = { "*[Ff][Pp]8*", "*e4m3*", "*E4M3*", "*e5m2*",
                                             "*E5M2*", NULL };
    const char *be = json_string_value(json_object_get(r->in_effect, "dispatcher"));
    const char *fp8 = json_string_value(json_object_get(r->in_effect, "fp8"));
    const char *glob = NULL;
    size_t nfp8 = 0, nbackend = 0;
    json_t *p = json_object();
    struct moe_jb b;
    int rc = 0;

    moe_jb_init(&b, err);
    if (be && strcmp(be, "deepep") == 0)
        glob = "*deep_ep*";
    else if (be && strcmp(be, "hybridep") == 0)
        glob = "*hybrid_ep*";
    else if (be && (strcmp(be, "alltoall") == 0 || strcmp(be, "allgather") == 0))
        glob = "*nccl*";
    for (size_t i = 0; i < t->nnames; i++) {
        for (const char *const *g = fp8_globs; *g; g++) {
            if (fnmatch(*g, t->names[i].text, 0) == 0) {
                nfp8++;
                break;
            }
        }
        if (glob && fnmatch(glob, t->names[i].text, 0) == 0)
            nbackend++;
    }
    moe_jb_set(&b, p, "trace", moe_report_text_json(t->source));
    moe_jb_int(&b, p, "fp8_kernel_names", (json_int_t)nfp8);
    moe_jb_int(&b, p, "graph_launches", (json_int_t)t->graph_launches);
    if (glob) {
        moe_jb_str(&b, p, "dispatcher_kernel_glob", glob);
        moe_jb_int(&b, p, "dispatcher_kernel_names", (json_int_t)nbackend);
    }
    if (!(p = moe_jb_done(&b, p))) {
        moe_jb_within(&b, "profile");
        return -1;
    }
    if (!is_off(fp8) && nfp8 == 0)
        rc = flag(&b, r, "FP8 requested, but the profile has no FP8 GEMM kernels");
    if (rc == 0 && glob && nbackend == 0) {
        char *text = moe_strdup_printf("dispatcher %s requested, but the profile has no %s "
                                       "kernels", be, glob);

        rc = flag(&b, r, text);
        free(text);
    }
    json_decref(r->profile);
    r->profile = p;
    r->graph_traces++;
    r->graph_launches += t->graph_launches;
    if (rc == 0)
        rc = graph_verdict(&b, r);
    return rc;
}

void moe_report_run_free(struct moe_report_run *r)
{
    free(r->series);
    json_decref(r->in_effect);
    json_decref(r->mismatches);
    json_decref(r->profile);
    json_decref(r->warnings);
    memset(r, 0, sizeof(*r));
}

/* The step times of r's window (the first logged iteration excluded), in
 * iteration order; returns how many, at most max. */
static size_t moe_report_window_samples(const struct moe_report_run *r, double *out, size_t max)
{
    size_t k = 0;

    for (size_t i = 0; i < r->nseries && k < max; i++) {
        const struct moe_report_point *p = &r->series[i];

        if (p->iter == r->first_logged || p->iter < r->first || p->iter > r->last ||
            isnan(p->step_ms))
            continue;
        out[k++] = p->step_ms;
    }
    return k;
}

/* stdev / mean of v (n >= 2), NAN otherwise. */
static double sample_cv(const double *v, size_t n)
{
    double mean = 0, var = 0;

    if (n < 2)
        return NAN;
    for (size_t i = 0; i < n; i++)
        mean += v[i] / (double)n;
    for (size_t i = 0; i < n; i++)
        var += (v[i] - mean) * (v[i] - mean) / (double)(n - 1);
    return mean > 0 ? sqrt(var) / mean : NAN;
}

void moe_report_compare(const struct moe_report_run *base, const struct moe_report_run *cand,
                        const struct moe_report_opts *opts, struct moe_report_ab *ab)
{
    struct moe_report_opts def = { MOE_REPORT_ALPHA, MOE_REPORT_MIN_EFFECT };
    double *a = malloc((base->nseries + 1) * sizeof(double));
    double *b = malloc((cand->nseries + 1) * sizeof(double));
    struct moe_abtest t;
    struct moe_error err;
    int significant;

    if (!opts)
        opts = &def;
    memset(ab, 0, sizeof(*ab));
    ab->alpha = opts->alpha;
    ab->min_effect_pct = opts->min_effect_pct;
    ab->delta_pct = 100.0 * (cand->step_median - base->step_median) / base->step_median;
    ab->ci_lo_pct = ab->ci_hi_pct = ab->p_value = ab->ref_cv = NAN;
    ab->verdict = MOE_VERDICT_NO_CHANGE;
    moe_error_clear(&err);
    if (!a || !b) {
        /* why[160] holds each fixed text with its numbers */
        snprintf(ab->why, sizeof(ab->why), "out of memory");
        goto out;
    }
    ab->n_base = moe_report_window_samples(base, a, base->nseries);
    ab->n_cand = moe_report_window_samples(cand, b, cand->nseries);
    if (moe_abtest_run(a, ab->n_base, b, ab->n_cand, MOE_ABTEST_SEED, &t, &err) < 0) {
        /* %.140s: fits why[160] */
        snprintf(ab->why, sizeof(ab->why), "no test: %.140s", err.text);
        goto out;
    }
    ab->ref_cv = sample_cv(a, ab->n_base);
    ab->delta_pct = t.effect_pct;
    ab->ci_lo_pct = t.ci_lo_pct;
    ab->ci_hi_pct = t.ci_hi_pct;
    ab->p_value = t.p_value;
    ab->exact = t.exact;
    significant = t.p_value < opts->alpha && (t.ci_hi_pct < 0 || t.ci_lo_pct > 0);
    if (ab->ref_cv > MOE_REPORT_MAX_REF_CV) {
        ab->verdict = MOE_VERDICT_NOISY;
        /* why[160] holds each fixed text with its numbers */
        snprintf(ab->why, sizeof(ab->why), "the reference's steps spread too much to decide "
                 "(CV %.0f%% > %.0f%%): rerun it, interleaved with the candidate",
                 100 * ab->ref_cv, 100 * MOE_REPORT_MAX_REF_CV);
    } else if (!significant)
        /* why[160] holds each fixed text with its numbers */
        snprintf(ab->why, sizeof(ab->why), "not significant (p=%.3g%s, interval %s 0)",
                 t.p_value, t.p_value < opts->alpha ? "" : " >= alpha",
                 t.ci_lo_pct <= 0 && t.ci_hi_pct >= 0 ? "includes" : "excludes");
    else if (fabs(t.effect_pct) < opts->min_effect_pct)
        /* why[160] holds each fixed text with its numbers */
        snprintf(ab->why, sizeof(ab->why), "significant, but |%+.2f%%| is below the %.2f%% "
                 "minimum effect", t.effect_pct, opts->min_effect_pct);
    else {
        ab->verdict = t.effect_pct < 0 ? MOE_VERDICT_WIN : MOE_VERDICT_LOSS;
        /* why[160] holds each fixed text with its numbers */
        snprintf(ab->why, sizeof(ab->why), "significant (p=%.3g) and at least the %.2f%% "
                 "minimum effect", t.p_value, opts->min_effect_pct);
    }
out:
    free(a);
    free(b);
}

const char *moe_verdict_name(enum moe_verdict v)
{
    switch (v) {
    case MOE_VERDICT_WIN:
        return "win";
    case MOE_VERDICT_LOSS:
        return "loss";
    case MOE_VERDICT_NOISY:
        return "inconclusive";
    case MOE_VERDICT_NO_CHANGE:
        break;
    }
    return "no change";
}

/* The A/B of r against base, as report.json's "ab". */
static json_t *ab_json(struct moe_jb *b, const struct moe_report_run *base,
                       const struct moe_report_run *r, const struct moe_report_opts *opts)
{
    struct moe_report_ab ab;
    json_t *j = json_object(), *ci = json_array();

    moe_report_compare(base, r, opts, &ab);
    moe_jb_set(b, j, "baseline", moe_report_text_json(base->name));
    moe_jb_num_opt(b, j, "baseline_cv", ab.ref_cv);
    moe_jb_num_opt(b, j, "delta_pct", ab.delta_pct);
    moe_jb_append_num_opt(b, j, "ci95_pct", ci, ab.ci_lo_pct);
    moe_jb_append_num_opt(b, j, "ci95_pct", ci, ab.ci_hi_pct);
    moe_jb_set(b, j, "ci95_pct", ci);
    moe_jb_num_opt(b, j, "p_value", ab.p_value);
    moe_jb_str(b, j, "test",
               ab.exact ? "Mann-Whitney U, exact" : "Mann-Whitney U, normal approximation");
    moe_jb_int(b, j, "n_baseline", (json_int_t)ab.n_base);
    moe_jb_int(b, j, "n_candidate", (json_int_t)ab.n_cand);
    moe_jb_num(b, j, "alpha", ab.alpha);
    moe_jb_num(b, j, "min_effect_pct", ab.min_effect_pct);
    moe_jb_str(b, j, "verdict", moe_verdict_name(ab.verdict));
    moe_jb_str(b, j, "why", ab.why);
    return moe_jb_done(b, j);
}

json_t *moe_report_point_json(struct moe_jb *b, json_t *owner, const char *key,
                              const struct moe_report_point *p)
{
    json_t *pair = json_array();
    char *name = moe_strdup_printf("%s[%zu]", key, json_array_size(json_object_get(owner, key)));

    moe_jb_append(b, pair, json_integer((json_int_t)p->iter));
    /* the log's nan or inf is recorded; any other NaN is "no time" */
    if (!isfinite(p->logged))
        moe_jb_append_num(b, owner, name ? name : key, pair, p->logged);
    else
        moe_jb_append_num_opt(b, owner, name ? name : key, pair, p->step_ms);
    free(name);
    return moe_jb_done(b, pair);
}

/* series: [iteration, ms] of each logged iteration, under owner[key]. */
int moe_report_series_json(struct moe_jb *b, json_t *owner, const char *key,
                           const struct moe_report_run *r)
{
    json_t *series = json_array();

    if (moe_jb_set(b, owner, key, series) < 0)
        return -1;
    for (size_t i = 0; i < r->nseries; i++)
        if (moe_jb_append(b, series, moe_report_point_json(b, owner, key, &r->series[i])) < 0) {
            moe_jb_within(b, key);
            return -1;
        }
    return 0;
}

static json_t *run_json(struct moe_jb *b, const struct moe_report_run *r,
                        const struct moe_report_run *base, const struct moe_report_opts *opts)
{
    json_t *j = json_object();

    /* a run is named by its file, whose name need not be UTF-8: shown as
     * its log text is, never the run dropped */
    moe_jb_set(b, j, "name", moe_report_text_json(r->name));
    moe_jb_set(b, j, "window", moe_jb_pack(b, "[I,I]", (json_int_t)r->first, (json_int_t)r->last));
    moe_jb_int(b, j, "steps_seen", (json_int_t)r->steps_seen);
    moe_jb_int(b, j, "last_iteration", r->max_iter);
    moe_jb_int(b, j, "window_iterations", (json_int_t)r->n);
    moe_jb_num(b, j, "step_ms_mean", r->step_mean);
    moe_jb_num(b, j, "step_ms_median", r->step_median);
    moe_jb_num(b, j, "step_ms_stdev", r->step_stdev);
    moe_jb_num_opt(b, j, "step_cv", r->step_cv);
    moe_jb_num_opt(b, j, "tflops_per_gpu_mean", r->tflops_mean);
    moe_jb_num_opt(b, j, "tflops_per_gpu_median", r->tflops_median);
    moe_jb_bool(b, j, "loss_finite", r->loss_finite);
    /* the log's nan or inf is recorded; no loss at all is a plain null */
    if (!isfinite(r->loss_last_logged))
        moe_jb_num(b, j, "loss_last", r->loss_last_logged);
    else
        moe_jb_num_opt(b, j, "loss_last", r->loss_last);
    moe_jb_int(b, j, "skipped_iterations", r->skipped);
    moe_jb_int(b, j, "nan_iterations", r->nan_iters);
    moe_jb_num_opt(b, j, "peak_max_allocated_mib", r->peak_bytes / 1048576.0);
    moe_jb_set(b, j, "peak_rank", r->peak_rank >= 0 ? json_integer(r->peak_rank) : json_null());
    if (!isfinite(r->theo_total_logged))
        moe_jb_num(b, j, "theoretical_total_mb", r->theo_total_logged);
    else
        moe_jb_num_opt(b, j, "theoretical_total_mb", r->theo_total_mb);
    moe_jb_copy(b, j, "in_effect", r->in_effect);
    moe_jb_copy(b, j, "mismatches", r->mismatches);
    moe_jb_set(b, j, "warnings", r->warnings ? json_incref(r->warnings) : json_array());
    if (r->profile)
        moe_jb_copy(b, j, "profile", r->profile);
    /* the nested builds below would take an earlier key's failure for
     * theirs and grow its path */
    if (b->failed)
        return moe_jb_done(b, j);
    moe_report_series_json(b, j, "step_ms_series", r);
    if (base && base != r)
        moe_jb_set(b, j, "ab", ab_json(b, base, r, opts));
    return moe_jb_done(b, j);
}

json_t *moe_report_to_json(const struct moe_report_run *runs, size_t n,
                           const struct moe_report_opts *opts, struct moe_error *err)
{
    json_t *root = json_object(), *arr = json_array();
    struct moe_jb b;

    moe_jb_init(&b, err);
    for (size_t i = 0; i < n; i++)
        if (moe_jb_append(&b, arr, run_json(&b, &runs[i], &runs[0], opts)) < 0)
            break;
    moe_jb_within(&b, "runs");
    moe_jb_set(&b, root, "runs", arr);
    moe_jb_set(&b, root, "baseline", n ? moe_report_text_json(runs[0].name) : json_null());
    moe_jb_str(&b, root, "note", "each A/B compares one candidate with the baseline; gains of "
               "separate A/Bs do not add up and a combination must be measured as its own run");
    return moe_jb_done(&b, root);
}

bool moe_report_first_is_reference(const struct moe_report_run *runs, size_t n)
{
    return n > 1 || (n == 1 && strcmp(runs[0].name, "baseline") == 0);
}
