#include "config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose.h"
#include "analysis/diagnose_internal.h"

/* The catalogue's axes that target b: what `moeflow gen --stage retune
 * --for B` keeps (tests/cli/gen-for.sh checks that the two agree). */
size_t moe_diagnose_candidates(enum moe_bottleneck b, const struct moe_retune_entry **out,
                               size_t max)
{
    size_t n = 0;

    for (int a = 0; a < MOE_RETUNE_COUNT; a++) {
        const struct moe_retune_entry *e = moe_retune_entry((enum moe_retune_axis)a);

        if (e->bottleneck != b)
            continue;
        if (n < max)
            out[n] = e;
        n++;
    }
    return n;
}

static double number(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);

    return json_is_number(v) ? json_number_value(v) : -1.0;
}

/* total.KEY is a number in [0, max]: a measure that is missing or out of
 * its bounds is not moeflow overlap's, and a diagnosis from it would claim
 * what nothing measured ("communication is hidden"). */
static int measure_ok(const json_t *t, const char *key, double max, struct moe_error *err)
{
    const json_t *v = json_object_get(t, key);

    if (!json_is_number(v)) {
        moe_error_set(err, "overlap: total.%s: %s (expected the output of moeflow overlap --json)",
                      key, v ? "not a number" : "missing");
        return -1;
    }
    if (json_number_value(v) < 0 || json_number_value(v) > max) {
        moe_error_set(err, "overlap: total.%s: %g is out of range 0..%g (expected the output of "
                      "moeflow overlap --json)", key, json_number_value(v), max);
        return -1;
    }
    return 0;
}

/* Fractions of GPU time from the overlap analysis's total. */
static int overlap_fractions(const json_t *overlap, struct moe_diagnosis *d, struct moe_error *err)
{
    const json_t *t = json_object_get(overlap, "total");
    double window = number(t, "window_ns"), kernels = number(t, "kernels");

    if (!json_is_object(t) || window <= 0) {
        moe_error_set(err, "overlap: no \"total\" with a positive window_ns (expected the output "
                           "of moeflow overlap --json)");
        return -1;
    }
    if (measure_ok(t, "exposed_ns", window, err) != 0 || measure_ok(t, "idle_ns", window, err) != 0 ||
        measure_ok(t, "kernels", 1e18, err) != 0 ||
        measure_ok(t, "short_kernels", kernels, err) != 0 ||
        (!json_is_null(json_object_get(t, "hidden_pct")) &&
         measure_ok(t, "hidden_pct", 100, err) != 0))
        return -1;
    d->exposed_fraction = number(t, "exposed_ns") / window;
    d->idle_fraction = number(t, "idle_ns") / window;
    d->short_fraction = kernels > 0 ? number(t, "short_kernels") / kernels : -1.0;
    d->hidden_pct = number(t, "hidden_pct");
    return 0;
}

/* The totals in ms, where the document has them (an older or hand-made
 * one may lack busy_ns: its share is then window less idle). */
static void overlap_totals(const json_t *overlap, struct moe_diagnosis *d)
{
    const json_t *t = json_object_get(overlap, "total");
    double window = number(t, "window_ns"), busy = number(t, "busy_ns");

    if (busy < 0 || busy > window)
        busy = window - number(t, "idle_ns");
    d->window_ms = window / 1e6;
    d->busy_ms = busy / 1e6;
    d->busy_fraction = busy / window;
    d->exposed_ms = number(t, "exposed_ns") / 1e6;
    d->idle_ms = number(t, "idle_ns") / 1e6;
    d->comm_ms = number(t, "comm_ns") >= 0 ? number(t, "comm_ns") / 1e6 : -1.0;
    d->hidden_ms = number(t, "hidden_ns") >= 0 ? number(t, "hidden_ns") / 1e6 : -1.0;
    d->max_gap_ms = number(t, "max_gap_ns") >= 0 ? number(t, "max_gap_ns") / 1e6 : -1.0;
    d->gaps = number(t, "idle_gaps") >= 0 ? (long)number(t, "idle_gaps") : -1;
}

/* The rank a trace's file name gives (".../rank-3.json.gz", "profile-7-rank3.sqlite"),
 * or -1. */
static int rank_of(const char *trace)
{
    const char *base = strrchr(trace, '/'), *r;

    base = base ? base + 1 : trace;
    if (!(r = strstr(base, "rank")))
        return -1;
    r += 4;
    if (*r == '-' || *r == '_')
        r++;
    if (!isdigit((unsigned char)*r))
        return -1;
    return (int)strtol(r, NULL, 10);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(const double *v, size_t n)
{
    double *c = malloc(n * sizeof(*c)), m;

    if (!c)
        return -1.0;
    memcpy(c, v, n * sizeof(*c));
    qsort(c, n, sizeof(*c), by_value);
    m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    free(c);
    return m;
}

/* A GPU row's own work, ms: its window less the communication nothing hid,
 * which a rank spends waiting for the slowest one to reach the collective
 * (a rank's busy time would name the rank that waits longest); negative
 * for a row that is not the overlap analysis's. */
static double own_work_ms(const json_t *g)
{
    double window = number(g, "window_ns"), exposed = number(g, "exposed_ns");

    return window > 0 && exposed >= 0 && exposed <= window ? (window - exposed) / 1e6 : -1.0;
}

static void name_row(const json_t *g, size_t row, struct moe_straggler *s)
{
    const char *trace = json_string_value(json_object_get(g, "trace"));
    const char *base = trace ? strrchr(trace, '/') : NULL;

    base = base ? base + 1 : trace ? trace : "?";
    s->rank = trace && rank_of(trace) >= 0 ? rank_of(trace) : (int)row;
    /* a trace's name for people: cut, it still names it */
    snprintf(s->trace, sizeof(s->trace), "%s:%d", base, (int)number(g, "device"));
}

void moe_diagnose_straggler(const json_t *overlap, struct moe_straggler *s)
{
    const json_t *gpus = json_object_get(overlap, "gpus");
    size_t n = json_array_size(gpus), top = 0;
    double *work = n ? calloc(n, sizeof(*work)) : NULL;

    memset(s, 0, sizeof(*s));
    s->rank = -1;
    if (!work)
        return;
    for (size_t i = 0; i < n; i++)
        if ((work[i] = own_work_ms(json_array_get(gpus, i))) < 0) {
            free(work);
            return;
        }
    for (size_t i = 1; i < n; i++)
        if (work[i] > work[top])
            top = i;
    s->ranks = n;
    if (n >= 2) {
        name_row(json_array_get(gpus, top), top, s);
        s->work_ms = work[top];
        s->median_ms = median(work, n);
        s->behind_ms = s->work_ms - s->median_ms;
        s->behind_fraction = s->median_ms > 0 ? s->behind_ms / s->median_ms : 0.0;
    }
    free(work);
}

static void memory_reason(struct moe_diagnosis *d)
{
    d->bottleneck = MOE_BOTTLENECK_MEMORY;
    if (d->full_recompute)
        /* a reason for people: cut, it still says it */
        snprintf(d->reason, sizeof(d->reason), "full recompute is needed to fit");
    else
        /* a reason for people: cut, it still says it */
        snprintf(d->reason, sizeof(d->reason),
                 "peak allocated memory is %.1f%% of capacity (>= %.0f%%)",
                 100 * d->memory_fraction, 100 * MOE_DIAG_MEMORY_NEAR);
}

static void communication_reason(struct moe_diagnosis *d)
{
    d->bottleneck = MOE_BOTTLENECK_COMMUNICATION;
    /* a reason for people: cut, it still says it */
    snprintf(d->reason, sizeof(d->reason),
             "exposed communication is %.1f%% of GPU time (>= %.0f%%, idle %.1f%%); %.2f%% of "
             "communication is hidden", 100 * d->exposed_fraction, 100 * MOE_DIAG_EXPOSED_COMM,
             100 * d->idle_fraction, d->hidden_pct);
}

static void host_reason(struct moe_diagnosis *d)
{
    d->bottleneck = MOE_BOTTLENECK_HOST;
    if (d->idle_fraction >= MOE_DIAG_IDLE)
        /* a reason for people: cut, it still says it */
        snprintf(d->reason, sizeof(d->reason),
                 "GPUs are idle %.1f%% of the window (>= %.0f%%, more than the %.1f%% of exposed "
                 "communication), busy %.1f%%: host or launch overhead",
                 100 * d->idle_fraction, 100 * MOE_DIAG_IDLE, 100 * d->exposed_fraction,
                 100 * d->busy_fraction);
    else
        /* a reason for people: cut, it still says it */
        snprintf(d->reason, sizeof(d->reason),
                 "%.1f%% of kernels run under 10 us (>= %.0f%%): launch-bound",
                 100 * d->short_fraction, 100 * MOE_DIAG_SHORT_KERNELS);
}

static void classify(struct moe_diagnosis *d, bool profiled)
{
    bool comm = d->exposed_fraction >= MOE_DIAG_EXPOSED_COMM;
    bool host = d->idle_fraction >= MOE_DIAG_IDLE || d->short_fraction >= MOE_DIAG_SHORT_KERNELS;

    if (d->memory_fraction >= MOE_DIAG_MEMORY_NEAR || d->full_recompute)
        memory_reason(d);
    else if (comm && (!host || d->exposed_fraction >= d->idle_fraction))
        communication_reason(d);
    else if (host)
        host_reason(d);
    else {
        d->bottleneck = MOE_BOTTLENECK_COMPUTE;
        if (profiled)
            /* a reason for people: cut, it still says it */
            snprintf(d->reason, sizeof(d->reason),
                     "%s, exposed communication is %.1f%% and idle time %.1f%% of GPU time (each "
                     "< 10%%): GPUs are busy %.1f%% of the window",
                     d->memory_fraction >= 0 ? "memory fits" : "memory pressure unknown",
                     100 * d->exposed_fraction, 100 * d->idle_fraction, 100 * d->busy_fraction);
        else
            /* a reason for people: cut, it still says it */
            snprintf(d->reason, sizeof(d->reason), "no memory pressure; without a profile, "
                     "communication and host overhead cannot be judged");
    }
}

int moe_diagnose(const json_t *run, const json_t *overlap, double capacity_bytes,
                 struct moe_diagnosis *d, struct moe_error *err)
{
    const char *rg = json_string_value(json_object_get(json_object_get(run, "in_effect"),
                                                       "recompute_granularity"));
    double peak = number(run, "peak_max_allocated_mib");

    memset(d, 0, sizeof(*d));
    d->memory_fraction = d->exposed_fraction = d->idle_fraction = d->short_fraction = -1.0;
    d->hidden_pct = d->busy_fraction = -1.0;
    d->window_ms = d->busy_ms = d->comm_ms = d->hidden_ms = d->exposed_ms = d->idle_ms = -1.0;
    d->max_gap_ms = -1.0;
    d->gaps = -1;
    d->straggler.rank = -1;
    if (!json_is_object(run)) {
        moe_error_set(err, "report: expected a run object from report.json");
        return -1;
    }
    if (peak >= 0 && capacity_bytes > 0)
        d->memory_fraction = peak * 1048576.0 / capacity_bytes;
    d->full_recompute = rg && strcmp(rg, "full") == 0;
    if (overlap) {
        if (overlap_fractions(overlap, d, err) < 0)
            return -1;
        overlap_totals(overlap, d);
        moe_diagnose_straggler(overlap, &d->straggler);
    }
    classify(d, overlap != NULL);
    return 0;
}

static void skip_memory(const struct moe_diagnosis *d, char *buf, size_t len)
{
    if (d->memory_fraction < 0)
        /* a reason for people: cut, it still says it */
        snprintf(buf, len, "targets memory; no measured peak against a known capacity shows "
                 "memory pressure (memory headroom unknown), and recompute is not full");
    else
        /* a reason for people: cut, it still says it */
        snprintf(buf, len, "targets memory; peak allocated memory is %.1f%% of capacity, under "
                 "the %.0f%% threshold, and recompute is not full", 100 * d->memory_fraction,
                 100 * MOE_DIAG_MEMORY_NEAR);
}

static void skip_communication(const struct moe_diagnosis *d, char *buf, size_t len)
{
    if (d->exposed_fraction < 0)
        /* a reason for people: cut, it still says it */
        snprintf(buf, len, "targets communication; without a profile, exposed communication "
                 "is not measured");
    else if (d->exposed_fraction < MOE_DIAG_EXPOSED_COMM)
        /* a reason for people: cut, it still says it */
        snprintf(buf, len, "targets communication; the profile shows exposed communication "
                 "%.1f%% of GPU time, under the %.0f%% threshold", 100 * d->exposed_fraction,
                 100 * MOE_DIAG_EXPOSED_COMM);
    else
        /* a reason for people: cut, it still says it */
        snprintf(buf, len, "targets communication; exposed communication %.1f%% of GPU time is "
                 "at or over the %.0f%% threshold but less than the %.1f%% the GPUs sit idle",
                 100 * d->exposed_fraction, 100 * MOE_DIAG_EXPOSED_COMM, 100 * d->idle_fraction);
}

static void skip_host(const struct moe_diagnosis *d, char *buf, size_t len)
{
    if (d->idle_fraction < 0)
        /* a reason for people: cut, it still says it */
        snprintf(buf, len, "targets host overhead; without a profile, GPU idle time is not "
                 "measured");
    else if (d->idle_fraction < MOE_DIAG_IDLE && d->short_fraction < MOE_DIAG_SHORT_KERNELS)
        /* a reason for people: cut, it still says it */
        snprintf(buf, len, "targets host overhead; the profile shows GPUs idle %.1f%% of GPU time "
                 "(under the %.0f%% threshold) and %.1f%% of kernels under 10 us (under %.0f%%)",
                 100 * d->idle_fraction, 100 * MOE_DIAG_IDLE, 100 * d->short_fraction,
                 100 * MOE_DIAG_SHORT_KERNELS);
    else
        /* a reason for people: cut, it still says it */
        snprintf(buf, len, "targets host overhead; GPUs idle %.1f%% of GPU time is less than the "
                 "%.1f%% of exposed communication", 100 * d->idle_fraction,
                 100 * d->exposed_fraction);
}

const char *moe_diagnose_skip_reason(const struct moe_diagnosis *d,
                                     const struct moe_retune_entry *e, char *buf, size_t len)
{
    if (e->bottleneck == d->bottleneck)
        return NULL;
    if (d->bottleneck == MOE_BOTTLENECK_MEMORY && e->bottleneck != MOE_BOTTLENECK_MEMORY)
        /* a reason for people: cut, it still says it */
        snprintf(buf, len, "targets %s; memory comes first: %s", moe_bottleneck_name(e->bottleneck),
                 d->reason);
    else if (e->bottleneck == MOE_BOTTLENECK_MEMORY)
        skip_memory(d, buf, len);
    else if (e->bottleneck == MOE_BOTTLENECK_COMMUNICATION)
        skip_communication(d, buf, len);
    else if (e->bottleneck == MOE_BOTTLENECK_HOST)
        skip_host(d, buf, len);
    else
        /* a reason for people: cut, it still says it */
        snprintf(buf, len, "targets compute, which is the bottleneck only when memory, "
                 "communication and host are not: here %s is", moe_bottleneck_name(d->bottleneck));
    return buf;
}
