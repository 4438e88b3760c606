#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/overlap_internal.h"
#include "analysis/intervals_internal.h"
#include "analysis/profile_pair.h"
#include "analysis/profile_pair_internal.h"
#include "analysis/report_internal.h"
#include "core/json_build.h"
#include "core/contract_keys.h"
#include "core/manifest.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

/* A run's traces: one per rank; more than this is no one run's profile. */
#define MAX_TRACES 4096

void moe_profile_side_init(struct moe_profile_side *s)
{
    memset(s, 0, sizeof(*s));
    moe_overlap_init(&s->overlap);
}

void moe_profile_side_free(struct moe_profile_side *s)
{
    for (size_t i = 0; i < s->nkernels; i++)
        free(s->kernels[i].name);
    free(s->kernels);
    moe_overlap_free(&s->overlap);
    memset(s, 0, sizeof(*s));
}

static int64_t clipped(int64_t start, int64_t end, int64_t lo, int64_t hi)
{
    int64_t s = start < lo ? lo : start, e = end > hi ? hi : end;

    return e > s ? e - s : 0;
}

/* The union of d's communication kernels inside [lo, hi); *n its count.
 * NULL when out of memory (or when there is none, with *n 0). */
static struct moe_interval *comm_union(const struct moe_trace_device *d, int64_t lo, int64_t hi,
                                       size_t *n)
{
    struct moe_interval *u = malloc((d->ncomm + 1) * sizeof(*u));

    *n = 0;
    if (!u)
        return NULL;
    for (size_t k = 0; k < d->ncomm; k++)
        u[k] = (struct moe_interval){ d->comm[k].start, d->comm[k].end };
    *n = moe_intervals_clip(u, d->ncomm, lo, hi);
    moe_intervals_sort(u, *n);
    *n = moe_intervals_union(u, *n);
    return u;
}

/* The timing of the name text, added when new; NULL when out of memory. */
static struct moe_kernel_timing *timing_of(struct moe_profile_side *s, const char *text)
{
    struct moe_kernel_timing *k;

    for (size_t i = 0; i < s->nkernels; i++)
        if (strcmp(s->kernels[i].name, text) == 0)
            return &s->kernels[i];
    k = moe_grow_array(s->kernels, &s->capkernels, s->nkernels + 1, sizeof(*k));
    if (!k)
        return NULL;
    s->kernels = k;
    k = &s->kernels[s->nkernels];
    *k = (struct moe_kernel_timing){ .name = strdup(text) };
    if (!k->name)
        return NULL;
    s->nkernels++;
    return k;
}

/* Per name of t, its runs alone and beside communication, into by_name
 * (indexed by t's name ids). */
static int device_contention(struct moe_profile_side *s, const struct moe_trace_device *d,
                             int64_t lo, int64_t hi, struct moe_kernel_timing *by_name)
{
    size_t nu;
    struct moe_interval *u = comm_union(d, lo, hi, &nu);

    if (!u)
        return -1;
    for (size_t k = 0; k < d->ncomm; k++)
        s->kernel_ns += clipped(d->comm[k].start, d->comm[k].end, lo, hi);
    for (size_t k = 0; k < d->ncompute; k++) {
        const struct moe_interval *iv = &d->compute[k];
        struct moe_kernel_timing *nt = &by_name[d->compute_names[k]];
        int64_t in = clipped(iv->start, iv->end, lo, hi);

        if (iv->end <= lo || iv->start >= hi)
            continue;
        s->kernel_ns += in;
        s->compute_kernel_ns += in;
        if (moe_intervals_cover(u, nu, iv->start, iv->end) > 0) {
            nt->concurrent++;
            nt->concurrent_ns += iv->end - iv->start;
        } else {
            nt->alone++;
            nt->alone_ns += iv->end - iv->start;
        }
    }
    free(u);
    return 0;
}

/* by_name's counts merged into s by name text. */
static int merge_timings(struct moe_profile_side *s, const struct moe_trace *t,
                         const struct moe_kernel_timing *by_name)
{
    for (size_t i = 0; i < t->nnames; i++) {
        struct moe_kernel_timing *k;

        if (by_name[i].alone + by_name[i].concurrent == 0)
            continue;
        if (!(k = timing_of(s, t->names[i].text)))
            return -1;
        k->alone += by_name[i].alone;
        k->concurrent += by_name[i].concurrent;
        k->alone_ns += by_name[i].alone_ns;
        k->concurrent_ns += by_name[i].concurrent_ns;
    }
    return 0;
}

/* The window of each GPU: w's, or the GPU's own span for "all". */
static void device_span(const struct moe_trace_device *d, int64_t *lo, int64_t *hi)
{
    int64_t a = INT64_MAX, b = INT64_MIN;

    for (size_t k = 0; k < d->ncomm; k++) {
        a = d->comm[k].start < a ? d->comm[k].start : a;
        b = d->comm[k].end > b ? d->comm[k].end : b;
    }
    for (size_t k = 0; k < d->ncompute; k++) {
        a = d->compute[k].start < a ? d->compute[k].start : a;
        b = d->compute[k].end > b ? d->compute[k].end : b;
    }
    if (*lo == INT64_MIN)
        *lo = a;
    if (*hi == INT64_MAX)
        *hi = b;
}

int moe_profile_side_add_trace(struct moe_profile_side *s, struct moe_trace *t,
                               const struct moe_window *w, struct moe_error *err)
{
    struct moe_kernel_timing *by_name;
    int64_t lo, hi;
    int rc = 0;

    if (!t->compute_names) {
        moe_error_at(err, t->source, 0, 0, "read without the compute kernels' names");
        return -1;
    }
    if (moe_window_resolve(t, w, &lo, &hi, err) < 0)
        return -1;
    if (!(by_name = calloc(t->nnames + 1, sizeof(*by_name)))) {
        moe_error_at(err, t->source, 0, 0, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->ndevices && rc == 0; i++) {
        int64_t dlo = lo, dhi = hi;

        device_span(&t->devices[i], &dlo, &dhi);
        rc = device_contention(s, &t->devices[i], dlo, dhi, by_name);
    }
    if (rc == 0)
        rc = merge_timings(s, t, by_name);
    free(by_name);
    if (rc < 0) {
        moe_error_at(err, t->source, 0, 0, "out of memory");
        return -1;
    }
    s->traces++;
    return moe_overlap_add_trace(&s->overlap, t, w, err);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_trace(const char *name)
{
    return has_suffix(name, ".json") || has_suffix(name, ".json.gz") ||
           has_suffix(name, ".sqlite");
}

/* Reads the traces directly in dir (none when it does not exist). */
static int load_folder(struct moe_profile_side *s, const char *dir, const struct moe_window *w,
                       struct moe_error *err)
{
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, alphasort), rc = 0;

    if (n < 0 && (errno == ENOENT || errno == ENOTDIR))
        return 0;
    if (n < 0) {
        moe_error_at(err, dir, 0, 0, "%s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        struct moe_trace t;
        char *path;

        if (!is_trace(ents[i]->d_name))
            continue;
        if (s->traces == MAX_TRACES) {
            moe_error_at(err, dir, 0, 0, "more than %d traces: not one run's profile",
                         MAX_TRACES);
            rc = -1;
            break;
        }
        if (!(path = moe_path_join(dir, ents[i]->d_name))) {
            moe_error_at(err, dir, 0, 0, "out of memory");
            rc = -1;
            break;
        }
        moe_trace_init(&t, path, NULL, NULL);
        t.compute_names = 1;
        if (moe_trace_load(&t, path, err) < 0 || moe_profile_side_add_trace(s, &t, w, err) < 0)
            rc = -1;
        moe_trace_free(&t);
        free(path);
    }
    for (int i = 0; i < n; i++)
        free(ents[i]);
    free(ents);
    return rc;
}

int moe_profile_side_load(struct moe_profile_side *s, const char *dir, long first, long last,
                          struct moe_error *err)
{
    static const char *const where[] = { ".", "torch_profile", "tensorboard", NULL };
    struct moe_window w = { .kind = MOE_WINDOW_STEPS, .first = first, .last = last };

    for (const char *const *sub = where; *sub; sub++) {
        char *path = moe_path_join(dir, *sub);
        int rc = path ? load_folder(s, path, &w, err) : -1;

        if (!path)
            moe_error_at(err, dir, 0, 0, "out of memory");
        free(path);
        if (rc < 0)
            return -1;
    }
    if (s->traces == 0)
        return 1;
    return moe_overlap_finish(&s->overlap, 10, err) < 0 ? -1 : 0;
}

static double mean_us(int64_t ns, size_t n)
{
    return n ? (double)ns / (double)n / 1e3 : 0.0;
}

/* obj[key] = the mean in us, or null for no run. */
static void mean_or_null(struct moe_jb *b, json_t *obj, const char *key, int64_t ns, size_t n)
{
    if (n)
        moe_jb_num(b, obj, key, mean_us(ns, n));
    else
        moe_jb_set(b, obj, key, json_null());
}

/* ms per GPU per step. */
static double per_step_ms(int64_t ns, size_t gpus, long steps)
{
    return gpus && steps > 0 ? (double)ns / 1e6 / (double)gpus / (double)steps : 0.0;
}

/* What k's concurrent runs would have taken at its alone mean; 0 without
 * an alone run. */
static int64_t as_alone(const struct moe_kernel_timing *k)
{
    return k->alone ? (int64_t)((double)k->alone_ns / (double)k->alone * (double)k->concurrent)
                    : 0;
}

/* Contention summed over the names that ran both alone and beside
 * communication: what their concurrent runs took beyond their alone
 * mean. */
static void contention_cost(const struct moe_profile_side *s, int64_t *extra, int64_t *concurrent,
                            int64_t *alone, size_t *names)
{
    *extra = *concurrent = *alone = 0;
    *names = 0;
    for (size_t i = 0; i < s->nkernels; i++) {
        const struct moe_kernel_timing *k = &s->kernels[i];

        if (!k->alone || !k->concurrent)
            continue;
        *concurrent += k->concurrent_ns;
        *alone += as_alone(k);
        (*names)++;
    }
    *extra = *concurrent - *alone;
}

/* How much slower concurrent is than alone (%); NAN without an alone
 * figure to hold it against. */
static double slowdown(int64_t concurrent, int64_t alone)
{
    return alone > 0 ? 100.0 * ((double)concurrent / (double)alone - 1.0) : NAN;
}

double moe_profile_side_contention_pct(const struct moe_profile_side *s)
{
    int64_t extra, concurrent, alone;
    size_t names;

    contention_cost(s, &extra, &concurrent, &alone, &names);
    return names ? slowdown(concurrent, alone) : NAN;
}

static int by_time_desc(const void *pa, const void *pb)
{
    const struct moe_kernel_timing *a = pa, *b = pb;
    int64_t ta = a->alone_ns + a->concurrent_ns, tb = b->alone_ns + b->concurrent_ns;

    if (ta != tb)
        return ta < tb ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* s's kernels, most time first: a shallow copy (the names stay s's);
 * NULL when out of memory. */
static struct moe_kernel_timing *ranked(const struct moe_profile_side *s)
{
    struct moe_kernel_timing *r = malloc((s->nkernels + 1) * sizeof(*r));

    if (!r)
        return NULL;
    if (s->nkernels)
        memcpy(r, s->kernels, s->nkernels * sizeof(*r));
    qsort(r, s->nkernels, sizeof(*r), by_time_desc);
    return r;
}

/* obj["slowdown_pct"] = slowdown(), null where it is NAN. */
static void slowdown_pct(struct moe_jb *b, json_t *obj, int64_t concurrent, int64_t alone)
{
    moe_jb_num_opt(b, obj, "slowdown_pct", slowdown(concurrent, alone));
}

static json_t *kernel_json(struct moe_jb *b, const struct moe_kernel_timing *k)
{
    json_t *o = json_object();

    moe_jb_set(b, o, "name", moe_report_text_json(k->name));
    moe_jb_int(b, o, "alone_runs", (json_int_t)k->alone);
    moe_jb_num(b, o, "alone_mean_us", mean_us(k->alone_ns, k->alone));
    moe_jb_int(b, o, "concurrent_runs", (json_int_t)k->concurrent);
    moe_jb_num(b, o, "concurrent_mean_us", mean_us(k->concurrent_ns, k->concurrent));
    slowdown_pct(b, o, k->concurrent_ns, k->concurrent ? as_alone(k) : 0);
    return moe_jb_done(b, o);
}

static json_t *contention_json(struct moe_jb *b, const struct moe_profile_side *s, long steps,
                               size_t top)
{
    struct moe_kernel_timing *r = ranked(s);
    json_t *kernels = json_array(), *o = json_object();
    int64_t extra, concurrent, alone;
    size_t names, gpus = s->overlap.ngpus;

    if (!r)
        return moe_jb_done(b, NULL);
    contention_cost(s, &extra, &concurrent, &alone, &names);
    for (size_t i = 0; i < s->nkernels && i < top; i++)
        moe_jb_append(b, kernels, kernel_json(b, &r[i]));
    free(r);
    moe_jb_int(b, o, "kernel_names_both_ways", (json_int_t)names);
    /* no name ran both ways: nothing measured, which is not 0 */
    if (names)
        moe_jb_num(b, o, "extra_ms_per_gpu_step", per_step_ms(extra, gpus, steps));
    else
        moe_jb_set(b, o, "extra_ms_per_gpu_step", json_null());
    slowdown_pct(b, o, concurrent, alone);
    moe_jb_set(b, o, "kernels", kernels);
    return moe_jb_done(b, o);
}

json_t *moe_profile_side_json(struct moe_jb *b, const struct moe_profile_side *s, long steps,
                              size_t top)
{
    const struct moe_overlap_gpu *g = &s->overlap.total;
    size_t gpus = s->overlap.ngpus;
    double hidden = moe_overlap_hidden_pct(g);
    json_t *j = json_object();

    moe_jb_str(b, j, "source", "measured");
    moe_jb_int(b, j, "traces", (json_int_t)s->traces);
    moe_jb_int(b, j, "gpus", (json_int_t)gpus);
    moe_jb_int(b, j, "steps", (json_int_t)steps);
    /* below 0: no communication to hide */
    if (hidden < 0) {
        moe_jb_set(b, j, "hidden_comm_pct", json_null());
        moe_jb_set(b, j, "exposed_comm_pct", json_null());
    } else {
        moe_jb_num(b, j, "hidden_comm_pct", hidden);
        moe_jb_num(b, j, "exposed_comm_pct", 100.0 - hidden);
    }
    moe_jb_num(b, j, "comm_ms_per_gpu_step", per_step_ms(g->comm, gpus, steps));
    moe_jb_num(b, j, "hidden_comm_ms_per_gpu_step", per_step_ms(g->hidden, gpus, steps));
    moe_jb_num(b, j, "exposed_comm_ms_per_gpu_step", per_step_ms(g->exposed, gpus, steps));
    moe_jb_num(b, j, "kernel_ms_per_gpu_step", per_step_ms(s->kernel_ns, gpus, steps));
    moe_jb_num(b, j, "compute_kernel_ms_per_gpu_step",
               per_step_ms(s->compute_kernel_ns, gpus, steps));
    moe_jb_num(b, j, "compute_busy_ms_per_gpu_step", per_step_ms(g->compute, gpus, steps));
    moe_jb_set(b, j, "contention", contention_json(b, s, steps, top));
    return moe_jb_done(b, j);
}

static const struct moe_kernel_timing *find_timing(const struct moe_profile_side *s,
                                                   const char *name)
{
    for (size_t i = 0; i < s->nkernels; i++)
        if (strcmp(s->kernels[i].name, name) == 0)
            return &s->kernels[i];
    return NULL;
}

/* The winner's top compute kernels that the baseline ran too, each with its
 * mean duration on both sides. */
/* One kernel both sides ran: b the baseline's timing, w the winner's. */
static json_t *shared_kernel(struct moe_jb *b, const struct moe_kernel_timing *bt,
                             const struct moe_kernel_timing *w)
{
    size_t bn = bt->alone + bt->concurrent, wn = w->alone + w->concurrent;
    double bm = mean_us(bt->alone_ns + bt->concurrent_ns, bn);
    double wm = mean_us(w->alone_ns + w->concurrent_ns, wn);
    json_t *o = json_object();

    moe_jb_set(b, o, "name", moe_report_text_json(w->name));
    moe_jb_int(b, o, "baseline_runs", (json_int_t)bn);
    moe_jb_num(b, o, "baseline_mean_us", bm);
    moe_jb_int(b, o, "winner_runs", (json_int_t)wn);
    moe_jb_num(b, o, "winner_mean_us", wm);
    if (bm > 0)
        moe_jb_num(b, o, "change_pct", 100.0 * (wm / bm - 1.0));
    else
        moe_jb_set(b, o, "change_pct", json_null());
    mean_or_null(b, o, "baseline_alone_mean_us", bt->alone_ns, bt->alone);
    mean_or_null(b, o, "baseline_concurrent_mean_us", bt->concurrent_ns, bt->concurrent);
    mean_or_null(b, o, "winner_alone_mean_us", w->alone_ns, w->alone);
    mean_or_null(b, o, "winner_concurrent_mean_us", w->concurrent_ns, w->concurrent);
    return moe_jb_done(b, o);
}

static json_t *shared_kernels(struct moe_jb *b, const struct moe_profile_side *baseline,
                              const struct moe_profile_side *winner, size_t top)
{
    struct moe_kernel_timing *r = ranked(winner);
    json_t *out = json_array();
    size_t listed = 0;

    if (!r) {
        json_decref(out);
        return moe_jb_done(b, NULL);
    }
    for (size_t i = 0; i < winner->nkernels && listed < top; i++) {
        const struct moe_kernel_timing *bt = find_timing(baseline, r[i].name);

        if (!bt || bt->alone + bt->concurrent == 0)
            continue;
        moe_jb_append(b, out, shared_kernel(b, bt, &r[i]));
        listed++;
    }
    free(r);
    return moe_jb_done(b, out);
}

static double field(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

json_t *moe_profile_pair_json(struct moe_jb *jb, const struct moe_profile_side *baseline,
                              const struct moe_profile_side *winner, long steps, size_t top)
{
    static const char *const deltas[] = {
        "hidden_comm_pct", "exposed_comm_ms_per_gpu_step", "hidden_comm_ms_per_gpu_step",
        "kernel_ms_per_gpu_step", "compute_kernel_ms_per_gpu_step", NULL,
    };
    json_t *b = moe_profile_side_json(jb, baseline, steps, top);
    json_t *w = moe_profile_side_json(jb, winner, steps, top), *delta = json_object();
    json_t *j = json_object();

    for (const char *const *k = deltas; *k; k++) {
        json_t *bv = json_object_get(b, *k), *wv = json_object_get(w, *k);

        if (json_is_number(bv) && json_is_number(wv))
            moe_jb_num(jb, delta, *k, field(w, *k) - field(b, *k));
        else
            moe_jb_set(jb, delta, *k, json_null());
    }
    moe_jb_str(jb, j, "source", "measured");
    moe_jb_set(jb, j, "baseline", b);
    moe_jb_set(jb, j, "winner", w);
    moe_jb_set(jb, j, "winner_minus_baseline", delta);
    moe_jb_set(jb, j, "kernels", shared_kernels(jb, baseline, winner, top));
    return moe_jb_done(jb, j);
}

/* A side's GPU busy time per step: compute kernels, and communication
 * that none hid (ms). */
static double busy_ms(const json_t *side)
{
    const json_t *exposed = json_object_get(side, "exposed_comm_ms_per_gpu_step");

    return field(side, "compute_busy_ms_per_gpu_step") +
           (json_is_number(exposed) ? json_number_value(exposed) : 0);
}

/* obj[key] = part as a percent of whole; null when there is no whole */
static void pct_or_null(struct moe_jb *b, json_t *obj, const char *key, double part,
                        double whole)
{
    moe_jb_num_opt(b, obj, key,
                   isfinite(part) && isfinite(whole) && whole != 0 ? 100 * part / whole : NAN);
}

int moe_profile_pair_reconcile(json_t *pair, double baseline_step_ms, double winner_step_ms,
                               long first, long last, struct moe_error *err)
{
    const char *status = json_string_value(json_object_get(pair, "status"));
    double bb, wb, dstep = winner_step_ms - baseline_step_ms;
    struct moe_jb b;
    json_t *r;

    if (!status || strcmp(status, "paired") != 0 || !isfinite(baseline_step_ms) ||
        !isfinite(winner_step_ms))
        return 0;
    bb = busy_ms(json_object_get(pair, "baseline"));
    wb = busy_ms(json_object_get(pair, "winner"));
    moe_jb_init(&b, err);
    r = json_object();
    moe_jb_str(&b, r, "source", "measured: busy time from the twins' traces, step times from "
               "the timed runs' medians");
    moe_jb_set(&b, r, "timed_steps", moe_jb_pack(&b, "[I,I]", (json_int_t)first,
                                                 (json_int_t)last));
    moe_jb_num(&b, r, "baseline_step_ms", baseline_step_ms);
    moe_jb_num(&b, r, "winner_step_ms", winner_step_ms);
    pct_or_null(&b, r, "baseline_gpu_busy_pct", bb, baseline_step_ms);
    pct_or_null(&b, r, "winner_gpu_busy_pct", wb, winner_step_ms);
    moe_jb_num(&b, r, "step_change_ms", dstep);
    moe_jb_num(&b, r, "busy_change_ms", wb - bb);
    pct_or_null(&b, r, "busy_share_of_step_change_pct", wb - bb, dstep);
    moe_jb_str_opt(&b, r, "gap", bb > baseline_step_ms || wb > winner_step_ms
                                     ? "a twin's GPU busy time exceeds its run's timed step: "
                                       "the profiled steps ran in another regime, or the "
                                       "profiler slowed them"
                                     : NULL);
    return moe_jb_set(&b, pair, "reconciled", moe_jb_done(&b, r));
}

/* The validate stage's candidates, as the manifest lists them. */
struct pairing {
    const char *study;
    const struct moe_manifest_stage *st;
    size_t top;
    struct moe_error *err;
};

static const struct moe_candidate *by_id(const struct moe_manifest_stage *st, const char *id)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->cands[i].id && strcmp(st->cands[i].id, id) == 0)
            return &st->cands[i];
    return NULL;
}

/* The twin of the run whose id is id, or NULL. */
static const struct moe_candidate *twin_of(const struct moe_manifest_stage *st, const char *id)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->cands[i].twin_of && strcmp(st->cands[i].twin_of, id) == 0)
            return &st->cands[i];
    return NULL;
}

static const struct moe_candidate *baseline_run(const struct moe_manifest_stage *st)
{
    for (size_t i = 0; i < st->n; i++)
        if (!st->cands[i].twin_of && st->cands[i].variable &&
            strcmp(st->cands[i].variable, "baseline") == 0)
            return &st->cands[i];
    return NULL;
}

/* The profiled steps a twin's contract declares. */
static int twin_steps(const struct pairing *p, const struct moe_candidate *twin, long *first,
                      long *last)
{
    json_t *steps = json_object_get(json_object_get(twin->contract, MOE_CONTRACT_PROFILING),
                                    "steps");

    if (json_array_size(steps) == 2 && json_is_integer(json_array_get(steps, 0)) &&
        json_is_integer(json_array_get(steps, 1))) {
        *first = (long)json_integer_value(json_array_get(steps, 0));
        *last = (long)json_integer_value(json_array_get(steps, 1));
        if (*first <= *last)
            return 0;
    }
    moe_error_at(p->err, p->study, 0, 0, MOE_STUDY_MANIFEST ": validate candidate %s: "
                 "contract.profiling.steps: expected [first, last]", twin->id);
    return -1;
}

/* Loads the side profiled by twin from *dir (set here: free it); 1 when
 * it has no trace yet. */
static int load_twin(const struct pairing *p, const struct moe_candidate *twin, long first,
                     long last, struct moe_profile_side *side, char **dir)
{
    if (!moe_candidate_id_is_hash(twin->twin_of)) {
        moe_error_at(p->err, p->study, 0, 0, MOE_STUDY_MANIFEST ": validate candidate %.80s: "
                     "twin_of: not a candidate id (64 hex digits)", twin->id ? twin->id : "?");
        return -1;
    }
    free(*dir);
    if (!(*dir = moe_strdup_printf("%s/" MOE_TWIN_PROFILE_DIR_FMT, p->study, twin->twin_of))) {
        moe_error_at(p->err, p->study, 0, 0, "out of memory");
        return -1;
    }
    return moe_profile_side_load(side, *dir, first, last, p->err);
}

/* o's "status", and the pair when both sides have traces; -1 with p->err. */
static int pair_status(const struct pairing *p, struct moe_jb *b, json_t *o,
                       const struct moe_candidate *twin, const struct moe_profile_side *base,
                       int base_rc, long first, long last)
{
    struct moe_profile_side side;
    char *dir = NULL, *text = NULL;
    json_t *pair = NULL;
    long wf, wl;
    int rc;

    moe_profile_side_init(&side);
    if ((rc = twin_steps(p, twin, &wf, &wl)) < 0)
        goto out;
    if (wf != first || wl != last)
        text = moe_strdup_printf("not matched: the twin profiles steps %ld..%ld, the "
                                 "baseline's %ld..%ld", wf, wl, first, last);
    else if ((rc = load_twin(p, twin, first, last, &side, &dir)) < 0)
        goto out;
    else if (rc == 1)
        text = moe_strdup_printf("no trace yet under %s", dir);
    else if (base_rc == 1)
        text = strdup("the baseline twin has no trace yet");
    else
        pair = moe_profile_pair_json(b, base, &side, last - first + 1, p->top);
    rc = 0;
    moe_jb_set(b, o, "status", moe_report_text_json(text ? text : pair ? "paired" : NULL));
    if (pair && json_object_update(o, pair) < 0)
        moe_jb_set(b, o, "baseline", NULL); /* names what the update lost */
out:
    json_decref(pair);
    free(text);
    free(dir);
    moe_profile_side_free(&side);
    return rc;
}

/* One winner twin's entry, against the baseline side (base_rc: what
 * loading it gave); NULL with p->err. */
static json_t *pair_entry(const struct pairing *p, const struct moe_candidate *twin,
                          const struct moe_candidate *base_twin,
                          const struct moe_profile_side *base, int base_rc, long first, long last)
{
    const struct moe_candidate *sib = by_id(p->st, twin->twin_of);
    char *label = sib ? moe_candidate_label(sib) : NULL;
    struct moe_jb b;
    json_t *o = json_object();

    moe_jb_init(&b, p->err);
    moe_jb_str(&b, o, "label", label ? label : "?");
    moe_jb_str(&b, o, "winner_id", twin->twin_of);
    moe_jb_str(&b, o, "twin", twin->id);
    moe_jb_str(&b, o, "baseline_twin", base_twin->id);
    moe_jb_set(&b, o, "steps", moe_jb_pack(&b, "[I,I]", (json_int_t)first, (json_int_t)last));
    free(label);
    if (pair_status(p, &b, o, twin, base, base_rc, first, last) < 0) {
        json_decref(o);
        return NULL;
    }
    return moe_jb_done(&b, o);
}

/* Every winner twin's entry into out. */
static int pair_all(const struct pairing *p, const struct moe_candidate *base_twin, json_t *out)
{
    struct moe_profile_side base;
    char *dir = NULL;
    long first, last;
    int base_rc = -1, rc = 0;

    moe_profile_side_init(&base);
    if (twin_steps(p, base_twin, &first, &last) == 0)
        base_rc = load_twin(p, base_twin, first, last, &base, &dir);
    free(dir);
    for (size_t i = 0; i < p->st->n && base_rc >= 0 && rc == 0; i++) {
        const struct moe_candidate *t = &p->st->cands[i];
        json_t *e;

        if (!t->twin_of || t == base_twin)
            continue;
        /* a NULL e set p->err; the append only fails out of memory */
        if (!(e = pair_entry(p, t, base_twin, &base, base_rc, first, last)) ||
            json_array_append_new(out, e) < 0) {
            if (e)
                moe_error_at(p->err, p->study, 0, 0, "profile_pairs: out of memory");
            rc = -1;
        }
    }
    moe_profile_side_free(&base);
    return base_rc < 0 ? -1 : rc;
}

json_t *moe_profile_pairs_of_study(const char *study, size_t top, struct moe_error *err)
{
    struct moe_manifest m;
    struct pairing p = { .study = study, .top = top, .err = err };
    const struct moe_candidate *base, *base_twin;
    json_t *out = json_array();
    int rc = 0;

    if (moe_manifest_load(study, &m, err) < 0) {
        json_decref(out);
        return NULL;
    }
    p.st = moe_manifest_find(&m, MOE_STAGE_VALIDATE);
    base = p.st ? baseline_run(p.st) : NULL;
    base_twin = base && base->id ? twin_of(p.st, base->id) : NULL;
    if (base_twin)
        rc = pair_all(&p, base_twin, out);
    moe_manifest_free(&m);
    if (rc < 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}
