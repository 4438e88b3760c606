#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/intervals_internal.h"
#include "analysis/overlap.h"
#include "analysis/overlap_internal.h"
#include "analysis/report_internal.h"
#include "core/json_build.h"
#include "core/strbuf.h"

/* "1.5s", "250ms", "40us", "7ns" -> ns. */
static int parse_duration(const char *s, const char *end, int64_t *out)
{
    static const struct { const char *unit; double ns; } units[] = {
        { "ns", 1.0 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
    };
    char *tail;
    double v;

    errno = 0;
    v = strtod(s, &tail);
    if (tail == s || errno || v < 0 || !isfinite(v))
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t ul = strlen(units[i].unit);

        if ((size_t)(end - tail) == ul && strncmp(tail, units[i].unit, ul) == 0) {
            *out = llround(v * units[i].ns);
            return 0;
        }
    }
    return -1;
}

static int parse_step(const char *s, const char *end, long *out)
{
    char *tail;

    errno = 0;
    *out = strtol(s, &tail, 10);
    return (tail == s || tail != end || errno || *out < 0) ? -1 : 0;
}

int moe_window_parse(const char *text, struct moe_window *w, struct moe_error *err)
{
    const char *end = text + strlen(text), *dash;

    memset(w, 0, sizeof(*w));
    if (strcmp(text, "all") == 0)
        return 0;
    if (strncmp(text, "steps=", 6) == 0) {
        const char *s = text + 6;

        w->kind = MOE_WINDOW_STEPS;
        dash = strchr(s, '-');
        if (!dash) {
            if (parse_step(s, end, &w->first) == 0) {
                w->last = w->first;
                return 0;
            }
        } else if (parse_step(s, dash, &w->first) == 0 &&
                   parse_step(dash + 1, end, &w->last) == 0 && w->first <= w->last) {
            return 0;
        }
    } else if (strncmp(text, "time=", 5) == 0) {
        const char *s = text + 5;

        w->kind = MOE_WINDOW_TIME;
        dash = strchr(s, '-');
        if (dash && parse_duration(s, dash, &w->lo) == 0 &&
            parse_duration(dash + 1, end, &w->hi) == 0 && w->lo < w->hi)
            return 0;
    }
    moe_error_at(err, "--window", 0, 0,
                 "'%s': expected all, steps=A-B, steps=N or time=T0-T1 with units "
                 "ns|us|ms|s (e.g. time=1.5s-2s)", text);
    return -1;
}

void moe_overlap_init(struct moe_overlap *o)
{
    memset(o, 0, sizeof(*o));
}

void moe_overlap_free(struct moe_overlap *o)
{
    for (size_t i = 0; i < o->nkernels; i++)
        free(o->kernels[i].name);
    free(o->kernels);
    free(o->gpus);
    memset(o, 0, sizeof(*o));
}

double moe_overlap_hidden_pct(const struct moe_overlap_gpu *g)
{
    return g->comm > 0 ? 100.0 * (double)g->hidden / (double)g->comm : -1.0;
}

/* The absolute [lo, hi) of w in t; INT64_MIN/MAX for "each GPU's span". */
/* Sums of GPU time saturate instead of wrapping: kernel times are bounded
 * (MOE_TRACE_TIME_MAX), but a damaged trace with many huge kernels could
 * still add past 2^63 ns, and signed overflow is undefined. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

int moe_window_resolve(const struct moe_trace *t, const struct moe_window *w, int64_t *lo,
                       int64_t *hi, struct moe_error *err)
{
    int64_t t0 = INT64_MAX;
    int gpu_markers = 0, have_first = 0, have_last = 0;
    long smin = 0, smax = -1;

    *lo = INT64_MIN;
    *hi = INT64_MAX;
    if (w->kind == MOE_WINDOW_ALL)
        return 0;
    if (w->kind == MOE_WINDOW_TIME) {
        for (size_t i = 0; i < t->ndevices; i++) {
            const struct moe_trace_device *d = &t->devices[i];

            for (size_t k = 0; k < d->ncomm; k++)
                if (d->comm[k].start < t0)
                    t0 = d->comm[k].start;
            for (size_t k = 0; k < d->ncompute; k++)
                if (d->compute[k].start < t0)
                    t0 = d->compute[k].start;
        }
        if (t0 == INT64_MAX)
            t0 = 0;
        *lo = sat_add(t0, w->lo);
        *hi = sat_add(t0, w->hi);
        return 0;
    }
    /* GPU-side step annotations follow the kernels; CPU-side ones run ahead
     * of them.  Use the GPU ones when the trace has any. */
    for (size_t i = 0; i < t->nsteps; i++)
        gpu_markers |= t->steps[i].gpu;
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (size_t i = 0; i < t->nsteps; i++) {
        const struct moe_step_marker *m = &t->steps[i];

        if (gpu_markers && !m->gpu)
            continue;
        if (smax < smin || m->step < smin)
            smin = m->step;
        if (smax < m->step)
            smax = m->step;
        if (m->step == w->first) {
            have_first = 1;
            if (m->start < *lo)
                *lo = m->start;
        }
        if (m->step == w->last) {
            have_last = 1;
            if (m->end > *hi)
                *hi = m->end;
        }
    }
    if (!have_first || !have_last || *lo >= *hi) {
        if (smax < smin)
            moe_error_at(err, t->source, 0, 0, "window steps=%ld-%ld: the trace has no %sN markers",
                         w->first, w->last, t->step_prefix);
        else
            moe_error_at(err, t->source, 0, 0,
                         "window steps=%ld-%ld: the trace only has steps %ld-%ld (%sN)", w->first,
                         w->last, smin, smax, t->step_prefix);
        return -1;
    }
    return 0;
}

static int by_kernel_start(const void *pa, const void *pb)
{
    const struct moe_kernel *a = pa, *b = pb;

    return (a->start > b->start) - (a->start < b->start);
}

struct scratch {
    struct moe_interval *cu, *exposed, *busy;
};

/* Ranks exposed time by kernel name: each communication kernel is charged
 * with the part of C \ P that it covers. */
static void attribute(const struct moe_trace_device *d, const struct moe_interval *ex, size_t nex,
                      int64_t lo, int64_t hi, int64_t *exposed, int64_t *time, size_t *count)
{
    for (size_t k = 0; k < d->ncomm; k++) {
        int64_t s = d->comm[k].start < lo ? lo : d->comm[k].start;
        int64_t e = d->comm[k].end > hi ? hi : d->comm[k].end;
        uint32_t nm = d->comm[k].name;

        if (e <= s)
            continue;
        exposed[nm] = sat_add(exposed[nm], moe_intervals_cover(ex, nex, s, e));
        time[nm] = sat_add(time[nm], e - s);
        count[nm]++;
    }
}

static int device(struct moe_overlap_gpu *g, struct moe_trace_device *d, int64_t lo, int64_t hi,
                  int64_t *exposed, int64_t *time, size_t *count)
{
    struct scratch s = { 0 };
    size_t ncu = 0, ncomp, nex, nbusy;
    int64_t prev;

    s.cu = malloc((d->ncomm + 1) * sizeof(*s.cu));
    s.exposed = malloc((d->ncomm + d->ncompute + 1) * sizeof(*s.exposed));
    s.busy = malloc((d->ncomm + d->ncompute + 1) * sizeof(*s.busy));
    if (!s.cu || !s.exposed || !s.busy) {
        free(s.cu);
        free(s.exposed);
        free(s.busy);
        return -1;
    }
    for (size_t k = 1; k < d->ncomm; k++) {
        if (d->comm[k].start < d->comm[k - 1].start) {
            qsort(d->comm, d->ncomm, sizeof(*d->comm), by_kernel_start);
            break;
        }
    }
    for (size_t k = 0; k < d->ncomm; k++) {
        s.cu[ncu].start = d->comm[k].start;
        s.cu[ncu].end = d->comm[k].end;
        if (s.cu[ncu].end - s.cu[ncu].start < MOE_SHORT_KERNEL_NS &&
            s.cu[ncu].end > lo && s.cu[ncu].start < hi)
            g->short_kernels++;
        ncu++;
    }
    ncu = moe_intervals_clip(s.cu, ncu, lo, hi);
    g->comm_kernels = ncu;
    for (size_t k = 0; k < d->ncompute; k++)
        if (d->compute[k].end - d->compute[k].start < MOE_SHORT_KERNEL_NS &&
            d->compute[k].end > lo && d->compute[k].start < hi)
            g->short_kernels++;
    ncomp = moe_intervals_clip(d->compute, d->ncompute, lo, hi);
    g->kernels = ncu + ncomp;
    d->ncompute = ncomp; /* clipped in place; the trace is consumed */
    ncu = moe_intervals_union(s.cu, ncu);
    ncomp = moe_intervals_union(d->compute, ncomp);
    d->ncompute = ncomp;

    g->comm = moe_intervals_length(s.cu, ncu);
    g->compute = moe_intervals_length(d->compute, ncomp);
    g->hidden = moe_intervals_overlap(s.cu, ncu, d->compute, ncomp);
    nex = moe_intervals_subtract(s.cu, ncu, d->compute, ncomp, s.exposed);
    g->exposed = moe_intervals_length(s.exposed, nex);
    nbusy = moe_intervals_merge(s.cu, ncu, d->compute, ncomp, s.busy);
    g->busy = moe_intervals_length(s.busy, nbusy);

    /* Without an explicit window a GPU's span runs from its first kernel to
     * its last, so it starts and ends busy. */
    if (lo == INT64_MIN)
        lo = nbusy ? s.busy[0].start : 0;
    if (hi == INT64_MAX)
        hi = nbusy ? s.busy[nbusy - 1].end : lo;
    g->lo = lo;
    g->hi = hi;
    g->idle = (hi - lo) - g->busy;
    prev = lo;
    for (size_t i = 0; i <= nbusy; i++) {
        int64_t next = i < nbusy ? s.busy[i].start : hi;

        if (next > prev) {
            g->gaps++;
            if (next - prev > g->max_gap)
                g->max_gap = next - prev;
        }
        if (i < nbusy)
            prev = s.busy[i].end;
    }
    attribute(d, s.exposed, nex, lo, hi, exposed, time, count);
    free(s.cu);
    free(s.exposed);
    free(s.busy);
    return 0;
}

static int add_kernel_rows(struct moe_overlap *o, const struct moe_trace *t, const int64_t *exposed,
                           const int64_t *time, const size_t *count)
{
    for (size_t i = 0; i < t->nnames; i++) {
        struct moe_overlap_kernel *k;

        if (!count[i])
            continue;
        k = moe_grow_array(o->kernels, &o->capkernels, o->nkernels + 1, sizeof(*k));
        if (!k)
            return -1;
        o->kernels = k;
        k = &o->kernels[o->nkernels];
        k->name = strdup(t->names[i].text);
        if (!k->name)
            return -1;
        k->exposed = exposed[i];
        k->time = time[i];
        k->count = count[i];
        o->nkernels++;
    }
    return 0;
}

int moe_overlap_add_trace(struct moe_overlap *o, struct moe_trace *t, const struct moe_window *w,
                          struct moe_error *err)
{
    int64_t lo, hi, *exposed = NULL, *time = NULL;
    size_t *count = NULL;
    int rc = -1;

    if (moe_window_resolve(t, w, &lo, &hi, err) < 0)
        return -1;
    exposed = calloc(t->nnames + 1, sizeof(*exposed));
    time = calloc(t->nnames + 1, sizeof(*time));
    count = calloc(t->nnames + 1, sizeof(*count));
    if (!exposed || !time || !count)
        goto oom;
    for (size_t i = 0; i < t->ndevices; i++) {
        struct moe_overlap_gpu *g = moe_grow_array(o->gpus, &o->capgpus, o->ngpus + 1,
                                                   sizeof(*g));

        if (!g)
            goto oom;
        o->gpus = g;
        g = &o->gpus[o->ngpus];
        memset(g, 0, sizeof(*g));
        if (strlen(t->source) >= sizeof(g->trace)) {
            moe_error_at(err, t->source, 0, 0, "the trace's name is too long for a report row (at most %zu bytes)", sizeof(g->trace) - 1);
            goto out;
        }
        memcpy(g->trace, t->source, strlen(t->source) + 1);
        g->device = t->devices[i].id;
        if (device(g, &t->devices[i], lo, hi, exposed, time, count) < 0)
            goto oom;
        o->ngpus++;
    }
    if (add_kernel_rows(o, t, exposed, time, count) < 0)
        goto oom;
    rc = 0;
    goto out;
oom:
    moe_error_at(err, t->source, 0, 0, "out of memory");
out:
    free(exposed);
    free(time);
    free(count);
    return rc;
}

static int by_name(const void *pa, const void *pb)
{
    return strcmp(((const struct moe_overlap_kernel *)pa)->name,
                  ((const struct moe_overlap_kernel *)pb)->name);
}

static int by_exposed(const void *pa, const void *pb)
{
    const struct moe_overlap_kernel *a = pa, *b = pb;

    if (a->exposed != b->exposed)
        return a->exposed > b->exposed ? -1 : 1;
    if (a->time != b->time)
        return a->time > b->time ? -1 : 1;
    return strcmp(a->name, b->name);
}

int moe_overlap_finish(struct moe_overlap *o, size_t top_n, struct moe_error *err)
{
    struct moe_overlap_gpu *t = &o->total;
    size_t k = 0;

    (void)err;
    memset(t, 0, sizeof(*t));
    /* fits: a 6-byte literal in trace[256] */
    snprintf(t->trace, sizeof(t->trace), "total");
    t->device = -1;
    for (size_t i = 0; i < o->ngpus; i++) {
        const struct moe_overlap_gpu *g = &o->gpus[i];

        t->kernels += g->kernels;
        t->comm_kernels += g->comm_kernels;
        t->short_kernels += g->short_kernels;
        t->comm = sat_add(t->comm, g->comm);
        t->compute = sat_add(t->compute, g->compute);
        t->hidden = sat_add(t->hidden, g->hidden);
        t->exposed = sat_add(t->exposed, g->exposed);
        t->busy = sat_add(t->busy, g->busy);
        t->idle = sat_add(t->idle, g->idle);
        t->gaps += g->gaps;
        if (g->max_gap > t->max_gap)
            t->max_gap = g->max_gap;
        t->hi = sat_add(t->hi, g->hi - g->lo); /* total: GPU-time of all windows */
    }
    /* The same kernel name in several traces is one row. */
    if (o->nkernels) {
        qsort(o->kernels, o->nkernels, sizeof(*o->kernels), by_name);
        for (size_t i = 1; i < o->nkernels; i++) {
            if (strcmp(o->kernels[i].name, o->kernels[k].name) == 0) {
                o->kernels[k].exposed = sat_add(o->kernels[k].exposed, o->kernels[i].exposed);
                o->kernels[k].time = sat_add(o->kernels[k].time, o->kernels[i].time);
                o->kernels[k].count += o->kernels[i].count;
                free(o->kernels[i].name);
            } else {
                o->kernels[++k] = o->kernels[i];
            }
        }
        o->nkernels = k + 1;
        qsort(o->kernels, o->nkernels, sizeof(*o->kernels), by_exposed);
    }
    while (o->nkernels > top_n)
        free(o->kernels[--o->nkernels].name);
    return 0;
}

static json_t *gpu_json(struct moe_jb *b, const struct moe_overlap_gpu *g, int total)
{
    double pct = moe_overlap_hidden_pct(g);
    json_t *j = json_object();

    if (!total) {
        moe_jb_set(b, j, "trace", moe_report_text_json(g->trace));
        moe_jb_int(b, j, "device", g->device);
        moe_jb_int(b, j, "window_start_ns", g->lo);
        moe_jb_int(b, j, "window_end_ns", g->hi);
    }
    moe_jb_int(b, j, "window_ns", total ? g->hi : g->hi - g->lo);
    moe_jb_int(b, j, "kernels", (json_int_t)g->kernels);
    moe_jb_int(b, j, "comm_kernels", (json_int_t)g->comm_kernels);
    moe_jb_int(b, j, "short_kernels", (json_int_t)g->short_kernels);
    moe_jb_int(b, j, "comm_ns", g->comm);
    moe_jb_int(b, j, "compute_ns", g->compute);
    moe_jb_int(b, j, "hidden_ns", g->hidden);
    moe_jb_int(b, j, "exposed_ns", g->exposed);
    moe_jb_int(b, j, "busy_ns", g->busy);
    moe_jb_int(b, j, "idle_ns", g->idle);
    moe_jb_int(b, j, "idle_gaps", (json_int_t)g->gaps);
    moe_jb_int(b, j, "max_gap_ns", g->max_gap);
    /* below 0: no communication to hide */
    if (pct < 0)
        moe_jb_set(b, j, "hidden_pct", json_null());
    else
        moe_jb_num(b, j, "hidden_pct", pct);
    return moe_jb_done(b, j);
}

/* NULL for a kind this switch does not list: the window's "kind" is then
 * an error naming it, never another kind's name. */
static const char *window_kind_name(enum moe_window_kind k)
{
    switch (k) {
    case MOE_WINDOW_ALL:
        return "all";
    case MOE_WINDOW_TIME:
        return "time";
    case MOE_WINDOW_STEPS:
        return "steps";
    }
    return NULL;
}

static json_t *window_json(struct moe_jb *b, const struct moe_window *w)
{
    json_t *win = json_object();

    moe_jb_str(b, win, "kind", window_kind_name(w->kind));
    if (w->kind == MOE_WINDOW_TIME) {
        moe_jb_int(b, win, "from_ns", w->lo);
        moe_jb_int(b, win, "to_ns", w->hi);
    } else if (w->kind == MOE_WINDOW_STEPS) {
        moe_jb_int(b, win, "first_step", w->first);
        moe_jb_int(b, win, "last_step", w->last);
    }
    return moe_jb_done(b, win);
}

static json_t *kernel_json(struct moe_jb *b, const struct moe_overlap_kernel *k)
{
    json_t *j = json_object();

    moe_jb_set(b, j, "name", moe_report_text_json(k->name));
    moe_jb_int(b, j, "exposed_ns", k->exposed);
    moe_jb_int(b, j, "time_ns", k->time);
    moe_jb_int(b, j, "count", (json_int_t)k->count);
    return moe_jb_done(b, j);
}

json_t *moe_overlap_to_json(const struct moe_overlap *o, const struct moe_window *w,
                            struct moe_error *err)
{
    json_t *root = json_object(), *gpus = json_array(), *top = json_array();
    struct moe_jb b;

    moe_jb_init(&b, err);
    moe_jb_set(&b, root, "window", window_json(&b, w));
    for (size_t i = 0; i < o->ngpus; i++)
        moe_jb_append(&b, gpus, gpu_json(&b, &o->gpus[i], 0));
    moe_jb_set(&b, root, "gpus", gpus);
    moe_jb_set(&b, root, "total", gpu_json(&b, &o->total, 1));
    for (size_t i = 0; i < o->nkernels; i++)
        moe_jb_append(&b, top, kernel_json(&b, &o->kernels[i]));
    moe_jb_set(&b, root, "top_exposed_kernels", top);
    return moe_jb_done(&b, root);
}
