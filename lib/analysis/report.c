#include "config.h"

#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/abtest.h"
#include "analysis/report.h"
#include "core/json_build.h"

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

static void flag(struct moe_report_run *r, const char *text)
{
    json_array_append_new(r->mismatches, json_string(text));
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

static void proof(struct moe_report_run *r, const struct moe_log *log,
                  const struct moe_report_expect *expect, size_t nexpect)
{
    const char *be = dispatcher_backend(log);
    char buf[512];

    r->in_effect = json_object();
    r->mismatches = json_array();
    for (const char *const *k = proof_keys; *k; k++) {
        const char *v = moe_log_arg(log, *k);

        if (v)
            json_object_set_new(r->in_effect, *k, json_string(v));
    }
    if (be)
        json_object_set_new(r->in_effect, "dispatcher", json_string(be));
    json_object_set_new(r->in_effect, "graph_evidence_lines",
                        json_integer((json_int_t)log->graph_lines));
    json_object_set_new(r->in_effect, "graph_capture_lines",
                        json_integer((json_int_t)log->graph_capture_lines));
    for (size_t i = 0; i < nexpect; i++) {
        const char *v = strcmp(expect[i].key, "dispatcher") == 0 ? be
                                                                 : moe_log_arg(log, expect[i].key);

        if (expect[i].requested && log->nargs == 0)
            continue; /* no dump at all (not rank 0's log): nothing to hold it against */
        if (!v)
            snprintf(buf, sizeof(buf),
                     "requested %s=%s, but the log has no %s in its argument dump", expect[i].key,
                     expect[i].value, expect[i].key);
        else if (!same_value(v, expect[i].value))
            snprintf(buf, sizeof(buf), "requested %s=%s, ran with %s=%s", expect[i].key,
                     expect[i].value, expect[i].key, v);
        else
            continue;
        flag(r, buf);
    }
    if (graphs_requested(r) && log->graph_lines == 0)
        flag(r, log->graph_capture_lines
                    ? "CUDA graphs requested and captured, but the log never shows one replayed"
                    : "CUDA graphs requested, but the log has no graph replay lines");
}

int moe_report_run_init(struct moe_report_run *r, const char *name, const struct moe_log *log,
                        long first, long last, const struct moe_report_expect *expect,
                        size_t nexpect, struct moe_error *err)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->warnings = json_array();
    for (size_t i = 0; i < log->nwarnings; i++)
        json_array_append_new(r->warnings, json_string(log->warnings[i].text));
    if (log->warnings_total > log->nwarnings)
        json_array_append_new(r->warnings,
                              json_sprintf("... and %zu more warnings",
                                           log->warnings_total - log->nwarnings));
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
    proof(r, log, expect, nexpect);
    return 0;
}

/* FP8 GEMMs show in kernel names as e4m3/e5m2 or fp8 (cuBLASLt, CUTLASS,
 * TE); the backend's dispatch/combine kernels by namespace. */
void moe_report_run_profile(struct moe_report_run *r, const struct moe_trace *t)
{
    static const char *const fp8_globs[] = { "*[Ff][Pp]8*", "*e4m3*", "*E4M3*", "*e5m2*",
                                             "*E5M2*", NULL };
    const char *be = json_string_value(json_object_get(r->in_effect, "dispatcher"));
    const char *fp8 = json_string_value(json_object_get(r->in_effect, "fp8"));
    const char *glob = NULL;
    size_t nfp8 = 0, nbackend = 0;
    json_t *p = json_object();

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
    json_object_set_new(p, "trace", json_string(t->source));
    json_object_set_new(p, "fp8_kernel_names", json_integer((json_int_t)nfp8));
    if (glob) {
        json_object_set_new(p, "dispatcher_kernel_glob", json_string(glob));
        json_object_set_new(p, "dispatcher_kernel_names", json_integer((json_int_t)nbackend));
    }
    if (!is_off(fp8) && nfp8 == 0)
        flag(r, "FP8 requested, but the profile has no FP8 GEMM kernels");
    if (glob && nbackend == 0) {
        char buf[256];

        snprintf(buf, sizeof(buf), "dispatcher %s requested, but the profile has no %s kernels", be,
                 glob);
        flag(r, buf);
    }
    json_decref(r->profile);
    r->profile = p;
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

size_t moe_report_window_samples(const struct moe_report_run *r, double *out, size_t max)
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
        snprintf(ab->why, sizeof(ab->why), "out of memory");
        goto out;
    }
    ab->n_base = moe_report_window_samples(base, a, base->nseries);
    ab->n_cand = moe_report_window_samples(cand, b, cand->nseries);
    if (moe_abtest_run(a, ab->n_base, b, ab->n_cand, MOE_ABTEST_SEED, &t, &err) < 0) {
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
        snprintf(ab->why, sizeof(ab->why), "the reference's steps spread too much to decide "
                 "(CV %.0f%% > %.0f%%): rerun it, interleaved with the candidate",
                 100 * ab->ref_cv, 100 * MOE_REPORT_MAX_REF_CV);
    } else if (!significant)
        snprintf(ab->why, sizeof(ab->why), "not significant (p=%.3g%s, interval %s 0)",
                 t.p_value, t.p_value < opts->alpha ? "" : " >= alpha",
                 t.ci_lo_pct <= 0 && t.ci_hi_pct >= 0 ? "includes" : "excludes");
    else if (fabs(t.effect_pct) < opts->min_effect_pct)
        snprintf(ab->why, sizeof(ab->why), "significant, but |%+.2f%%| is below the %.2f%% "
                 "minimum effect", t.effect_pct, opts->min_effect_pct);
    else {
        ab->verdict = t.effect_pct < 0 ? MOE_VERDICT_WIN : MOE_VERDICT_LOSS;
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

static json_t *run_json(const struct moe_report_run *r, const struct moe_report_run *base,
                        const struct moe_report_opts *opts)
{
    json_t *j = json_object(), *series = json_array();

    json_object_set_new(j, "name", json_string(r->name));
    json_object_set_new(j, "window", json_pack("[I,I]", (json_int_t)r->first, (json_int_t)r->last));
    json_object_set_new(j, "steps_seen", json_integer((json_int_t)r->steps_seen));
    json_object_set_new(j, "last_iteration", json_integer(r->max_iter));
    json_object_set_new(j, "window_iterations", json_integer((json_int_t)r->n));
    json_object_set_new(j, "step_ms_mean", moe_json_number(r->step_mean));
    json_object_set_new(j, "step_ms_median", moe_json_number(r->step_median));
    json_object_set_new(j, "step_ms_stdev", moe_json_number(r->step_stdev));
    json_object_set_new(j, "step_cv", moe_json_number(r->step_cv));
    json_object_set_new(j, "tflops_per_gpu_mean", moe_json_number(r->tflops_mean));
    json_object_set_new(j, "tflops_per_gpu_median", moe_json_number(r->tflops_median));
    json_object_set_new(j, "loss_finite", json_boolean(r->loss_finite));
    json_object_set_new(j, "loss_last", moe_json_number(r->loss_last));
    json_object_set_new(j, "skipped_iterations", json_integer(r->skipped));
    json_object_set_new(j, "nan_iterations", json_integer(r->nan_iters));
    json_object_set_new(j, "peak_max_allocated_mib", moe_json_number(r->peak_bytes / 1048576.0));
    json_object_set_new(j, "peak_rank",
                        r->peak_rank >= 0 ? json_integer(r->peak_rank) : json_null());
    json_object_set_new(j, "theoretical_total_mb", moe_json_number(r->theo_total_mb));
    json_object_set_new(j, "in_effect", json_incref(r->in_effect));
    json_object_set_new(j, "mismatches", json_incref(r->mismatches));
    json_object_set_new(j, "warnings", r->warnings ? json_incref(r->warnings) : json_array());
    if (r->profile)
        json_object_set_new(j, "profile", json_incref(r->profile));
    for (size_t i = 0; i < r->nseries; i++)
        json_array_append_new(series, json_pack("[I,o]", (json_int_t)r->series[i].iter,
                                                moe_json_number(r->series[i].step_ms)));
    json_object_set_new(j, "step_ms_series", series);
    if (base && base != r) {
        struct moe_report_ab ab;

        moe_report_compare(base, r, opts, &ab);
        json_object_set_new(
            j, "ab",
            json_pack("{s:s,s:o,s:o,s:[o,o],s:o,s:s,s:I,s:I,s:f,s:f,s:s,s:s}", "baseline",
                      base->name, "baseline_cv", moe_json_number(ab.ref_cv), "delta_pct", moe_json_number(ab.delta_pct),
                      "ci95_pct", moe_json_number(ab.ci_lo_pct),
                      moe_json_number(ab.ci_hi_pct), "p_value", moe_json_number(ab.p_value), "test",
                      ab.exact ? "Mann-Whitney U, exact" : "Mann-Whitney U, normal approximation",
                      "n_baseline", (json_int_t)ab.n_base, "n_candidate", (json_int_t)ab.n_cand,
                      "alpha", ab.alpha, "min_effect_pct", ab.min_effect_pct, "verdict",
                      moe_verdict_name(ab.verdict), "why", ab.why));
    }
    return j;
}

json_t *moe_report_to_json(const struct moe_report_run *runs, size_t n,
                           const struct moe_report_opts *opts)
{
    json_t *root = json_object(), *arr = json_array();

    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, run_json(&runs[i], &runs[0], opts));
    json_object_set_new(root, "runs", arr);
    json_object_set_new(root, "baseline", n ? json_string(runs[0].name) : json_null());
    json_object_set_new(root, "note",
                        json_string("each A/B compares one candidate with the "
                                    "baseline; gains of separate A/Bs do not add up "
                                    "and a combination must be measured as its own run"));
    return root;
}

bool moe_report_first_is_reference(const struct moe_report_run *runs, size_t n)
{
    return n > 1 || (n == 1 && strcmp(runs[0].name, "baseline") == 0);
}
