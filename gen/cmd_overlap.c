/* moeflow overlap: hidden communication per GPU from kernel traces. */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "options.h"
#include "analysis/overlap.h"
#include "analysis/trace.h"
#include "core/text.h"

#define MAX_PATTERNS 64

struct overlap_args {
    struct moe_window win;
    const char *patterns[MAX_PATTERNS + 1]; /* the defaults, then --comm */
    const char *extra[MAX_PATTERNS];
    size_t nextra;
    const char *prefix;
    long top;
    bool json, no_defaults;
};

static int set_window(void *args, const struct moe_opt *o, char *value)
{
    const char *steps = moe_cli_window_steps(value);
    struct moe_error err;
    char text[128];

    (void)o;
    moe_error_clear(&err);
    /* A-B and N are steps, as report's --window reads them; the library
     * reads each kind by its prefix */
    if (strlen(value) < sizeof(text) - 8) {
        /* fits: checked just above */
        snprintf(text, sizeof(text), "%s%s", steps[0] >= '0' && steps[0] <= '9' ? "steps=" : "",
                 steps);
        if (moe_window_parse(text, &((struct overlap_args *)args)->win, &err) == 0)
            return MOE_CLI_RUN;
    }
    return moe_cli_error(MOE_EXIT_USAGE, "moeflow: --window: '%.80s': expected all, A-B or N "
                         "(steps), or time=T0-T1 with units ns|us|ms|s (e.g. 4-6, "
                         "time=1.5s-2s)\n",
                         value);
}

static int add_comm(void *args, const struct moe_opt *o, char *value)
{
    struct overlap_args *a = args;

    (void)o;
    if (a->nextra == MAX_PATTERNS)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow overlap: at most %d --comm globs\n",
                             MAX_PATTERNS);
    a->extra[a->nextra++] = value;
    return MOE_CLI_RUN;
}

static int set_top(void *args, const struct moe_opt *o, char *value)
{
    return moe_cli_long(o->name, value, 0, LONG_MAX, &((struct overlap_args *)args)->top);
}

static const struct moe_opt overlap_opts[] = {
    { "window", required_argument, 'w', "W",
      "all (default), steps A-B or N (ProfilerStep#N / NVTX\n"
      "ranges named P<N>), or time=T0-T1 after the first kernel\n"
      "(units ns|us|ms|s)", .set = set_window },
    { "comm", required_argument, 'c', "GLOB", "another kernel-name glob that counts as communication",
      .set = add_comm },
    { "no-default-comm", no_argument, 'N', NULL,
      "use only the --comm globs (defaults: NCCL, DeepEP,\nHybridEP, NVSHMEM)", .set = moe_opt_flag,
      .field = offsetof(struct overlap_args, no_defaults) },
    { "step-prefix", required_argument, 0, "P", "step marker prefix (default ProfilerStep#)",
      .set = moe_opt_string, .field = offsetof(struct overlap_args, prefix) },
    { "top", required_argument, 't', "N", "kernels ranked by exposed time (default 10)", .set = set_top },
    { "json", no_argument, 'j', NULL, "machine-readable output", .set = moe_opt_flag,
      .field = offsetof(struct overlap_args, json) },
    { .name = NULL },
};

static const struct moe_cli overlap_cli = {
    .usage = "usage: moeflow overlap [--window W] [--json] [--comm GLOB]... [--no-default-comm]\n"
             "                       [--step-prefix P] [--top N] TRACE...\n"
             "\n"
             "TRACE: an nsys SQLite export (nsys export --type sqlite) or a PyTorch-profiler\n"
             "(Kineto) JSON trace, plain or .json.gz.  Each file's devices are GPUs.\n",
    .opts = overlap_opts,
    .column = 20,
    .tail = "\nexample: moeflow overlap --window 4-6 rank0.json.gz rank1.json.gz\n",
};

/* The kernel-name globs that count as communication. */
static void comm_patterns(struct overlap_args *a)
{
    size_t np = 0;

    for (const char *const *p = moe_trace_default_comm; !a->no_defaults && *p && np < MAX_PATTERNS;
         p++)
        a->patterns[np++] = *p;
    for (size_t i = 0; i < a->nextra && np < MAX_PATTERNS; i++)
        a->patterns[np++] = a->extra[i];
    a->patterns[np] = NULL;
}

static double ms(int64_t ns)
{
    return (double)ns / 1e6;
}

static void row(const struct moe_overlap_gpu *g, const char *label, int64_t window)
{
    double pct = moe_overlap_hidden_pct(g);
    char pbuf[16];

    if (pct < 0)
        /* a message: a table cell; "-" and a percentage fit 16 bytes */
        snprintf(pbuf, sizeof(pbuf), "-");
    else
        /* a message: a table cell */
        snprintf(pbuf, sizeof(pbuf), "%.2f", pct);
    printf("%-34s %10.3f %10.3f %10.3f %10.3f %8s %10.3f %10.3f %10.3f %6zu %9.3f %9zu\n", label,
           ms(window), ms(g->comm), ms(g->compute), ms(g->hidden), pbuf, ms(g->exposed),
           ms(g->busy), ms(g->idle), g->gaps, ms(g->max_gap), g->kernels);
}

static void print_table(const struct moe_overlap *o)
{
    char label[64], shown[256];

    printf("%-34s %10s %10s %10s %10s %8s %10s %10s %10s %6s %9s %9s\n", "gpu", "window_ms",
           "comm_ms", "compute_ms", "hidden_ms", "hidden%", "exposed_ms", "busy_ms", "idle_ms",
           "gaps", "maxgap_ms", "kernels");
    for (size_t i = 0; i < o->ngpus; i++) {
        const struct moe_overlap_gpu *g = &o->gpus[i];
        const char *base = strrchr(g->trace, '/');

        base = base ? base + 1 : g->trace;
        /* Keep the end of long names: that is where the rank usually is. */
        if (strlen(base) > 30)
            base += strlen(base) - 30;
        /* a message: a row label; at most 30 bytes of name and an int */
        snprintf(label, sizeof(label), "%.30s:%d", moe_text_visible(base, shown, sizeof(shown)),
                 g->device);
        row(g, label, g->hi - g->lo);
    }
    row(&o->total, "total", o->total.hi);
    if (o->nkernels) {
        printf("\ncommunication kernels by exposed time:\n%12s %12s %8s  %s\n", "exposed_ms",
               "time_ms", "count", "kernel");
        for (size_t i = 0; i < o->nkernels; i++) {
            char kname[512];

            /* a trace's names are its writer's: no terminal control of theirs */
            printf("%12.3f %12.3f %8zu  %.100s\n", ms(o->kernels[i].exposed),
                   ms(o->kernels[i].time), o->kernels[i].count,
                   moe_text_visible(o->kernels[i].name, kname, sizeof(kname)));
        }
    }
}

/* A trace whose kernels were all left out, or that has none, is not a
 * kernel trace (a CPU-only profile, a file exported without CUDA
 * activities): refused, never an analysis of nothing.  Kernels left out
 * beside others are said. */
static int kernels_read(const struct moe_trace *t, const char *file, struct moe_error *err)
{
    size_t n = 0;

    for (size_t d = 0; d < t->ndevices; d++)
        n += t->devices[d].ncomm + t->devices[d].ncompute;
    if (n == 0) {
        moe_error_at(err, file, 0, 0, "no GPU kernel in the trace%s (Kineto: events with "
                     "\"ph\":\"X\",\"cat\":\"kernel\"; nsys: CUPTI_ACTIVITY_KIND_KERNEL)",
                     t->dropped ? ", but kernels with impossible times (negative, ending before "
                     "they start, or past 2^62 ns)" : "");
        return -1;
    }
    if (t->dropped) {
        char shown[1024];

        fprintf(stderr, "moeflow overlap: warning: %s: %zu kernels with impossible times "
                "(negative, ending before they start, or past 2^62 ns) were left out\n",
                moe_text_visible(file, shown, sizeof(shown)), t->dropped);
    }
    return 0;
}

/* Every trace's GPUs into o; an exit code. */
static int add_traces(struct moe_overlap *o, const struct overlap_args *a, char **files, int n)
{
    struct moe_error err;

    moe_error_clear(&err);
    for (int i = 0; i < n; i++) {
        struct moe_trace t;
        int rc = 0;

        moe_trace_init(&t, files[i], a->patterns, a->prefix);
        if (moe_trace_load(&t, files[i], &err) < 0 || kernels_read(&t, files[i], &err) < 0 ||
            moe_overlap_add_trace(o, &t, &a->win, &err) < 0)
            rc = -1;
        moe_trace_free(&t);
        if (rc < 0)
            return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    }
    if (moe_overlap_finish(o, (size_t)a->top, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    return MOE_EXIT_OK;
}

int cmd_overlap(int argc, char **argv)
{
    struct overlap_args a = { .top = 10 };
    struct moe_overlap o;
    struct moe_error err = { 0 };
    json_t *j;
    int first, rc = moe_cli_parse(&overlap_cli, argc, argv, &a, &first);

    if (rc != MOE_CLI_RUN)
        return rc;
    if (first >= argc)
        return moe_cli_misuse(&overlap_cli);
    comm_patterns(&a);
    moe_overlap_init(&o);
    rc = add_traces(&o, &a, argv + first, argc - first);
    if (rc == MOE_EXIT_OK && !a.json) {
        print_table(&o);
    } else if (rc == MOE_EXIT_OK && !(j = moe_overlap_to_json(&o, &a.win, &err))) {
        moe_error_within(&err, "overlap JSON could not be built");
        rc = moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    } else if (rc == MOE_EXIT_OK &&
               moe_cli_json(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15)) < 0) {
        rc = moe_cli_error(MOE_EXIT_SYSTEM, "moeflow overlap: its JSON could not be written\n");
    }
    moe_overlap_free(&o);
    return rc;
}
