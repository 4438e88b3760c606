/* moeflow overlap: hidden communication per GPU from kernel traces. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "analysis/overlap.h"
#include "analysis/trace.h"

#define MAX_PATTERNS 64

static void usage(FILE *out)
{
    fprintf(out,
            "usage: moeflow overlap [--window W] [--json] [--comm GLOB]... [--no-default-comm]\n"
            "                       [--step-prefix P] [--top N] TRACE...\n"
            "\n"
            "TRACE: an nsys SQLite export (nsys export --type sqlite) or a PyTorch-profiler\n"
            "(Kineto) JSON trace, plain or .json.gz.  Each file's devices are GPUs.\n"
            "  --window W        all (default), steps=A-B or steps=N (ProfilerStep#N / NVTX\n"
            "                    ranges named P<N>), time=T0-T1 after the first kernel\n"
            "                    (units ns|us|ms|s)\n"
            "  --comm GLOB       another kernel-name glob that counts as communication\n"
            "  --no-default-comm use only the --comm globs (defaults: NCCL, DeepEP,\n"
            "                    HybridEP, NVSHMEM)\n"
            "  --step-prefix P   step marker prefix (default ProfilerStep#)\n"
            "  --top N           kernels ranked by exposed time (default 10)\n"
            "  --json            machine-readable output\n"
            "\n"
            "example: moeflow overlap --window steps=4-6 rank0.json.gz rank1.json.gz\n");
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
        snprintf(pbuf, sizeof(pbuf), "-");
    else
        snprintf(pbuf, sizeof(pbuf), "%.2f", pct);
    printf("%-34s %10.3f %10.3f %10.3f %10.3f %8s %10.3f %10.3f %10.3f %6zu %9.3f %9zu\n", label,
           ms(window), ms(g->comm), ms(g->compute), ms(g->hidden), pbuf, ms(g->exposed),
           ms(g->busy), ms(g->idle), g->gaps, ms(g->max_gap), g->kernels);
}

static void print_table(const struct moe_overlap *o)
{
    char label[64];

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
        snprintf(label, sizeof(label), "%.30s:%d", base, g->device);
        row(g, label, g->hi - g->lo);
    }
    row(&o->total, "total", o->total.hi);
    if (o->nkernels) {
        printf("\ncommunication kernels by exposed time:\n%12s %12s %8s  %s\n", "exposed_ms",
               "time_ms", "count", "kernel");
        for (size_t i = 0; i < o->nkernels; i++)
            printf("%12.3f %12.3f %8zu  %.100s\n", ms(o->kernels[i].exposed),
                   ms(o->kernels[i].time), o->kernels[i].count, o->kernels[i].name);
    }
}

int cmd_overlap(int argc, char **argv)
{
    static const struct option opts[] = {
        { "window", required_argument, NULL, 'w' },
        { "json", no_argument, NULL, 'j' },
        { "comm", required_argument, NULL, 'c' },
        { "no-default-comm", no_argument, NULL, 'N' },
        { "step-prefix", required_argument, NULL, 's' },
        { "top", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *patterns[MAX_PATTERNS + 1], *extra[MAX_PATTERNS], *prefix = NULL;
    size_t nextra = 0, np = 0;
    struct moe_window win = { 0 };
    struct moe_overlap o;
    struct moe_error err;
    int json = 0, defaults = 1, c, rc = MOE_EXIT_OK;
    long top = 10;
    char *end;

    moe_error_clear(&err);
    optind = 1;
    while ((c = getopt_long(argc, argv, "w:jc:Ns:t:h", opts, NULL)) != -1) {
        switch (c) {
        case 'w':
            if (moe_window_parse(optarg, &win, &err) < 0) {
                moe_cli_report(&err);
                return MOE_EXIT_USAGE;
            }
            break;
        case 'j':
            json = 1;
            break;
        case 'c':
            if (nextra == MAX_PATTERNS) {
                fprintf(stderr, "moeflow overlap: at most %d --comm globs\n", MAX_PATTERNS);
                return MOE_EXIT_USAGE;
            }
            extra[nextra++] = optarg;
            break;
        case 'N':
            defaults = 0;
            break;
        case 's':
            prefix = optarg;
            break;
        case 't':
            top = strtol(optarg, &end, 10);
            if (*end || top < 0) {
                fprintf(stderr, "moeflow overlap: --top: '%s' is not a count\n", optarg);
                return MOE_EXIT_USAGE;
            }
            break;
        case 'h':
            usage(stdout);
            return MOE_EXIT_OK;
        default:
            moe_cli_suggest_option(argc, argv, opts);
            usage(stderr);
            return MOE_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return MOE_EXIT_USAGE;
    }
    for (const char *const *p = moe_trace_default_comm; defaults && *p && np < MAX_PATTERNS; p++)
        patterns[np++] = *p;
    for (size_t i = 0; i < nextra && np < MAX_PATTERNS; i++)
        patterns[np++] = extra[i];
    patterns[np] = NULL;

    moe_overlap_init(&o);
    for (int i = optind; i < argc && rc == MOE_EXIT_OK; i++) {
        struct moe_trace t;

        moe_trace_init(&t, argv[i], patterns, prefix);
        if (moe_trace_load(&t, argv[i], &err) < 0 ||
            moe_overlap_add_trace(&o, &t, &win, &err) < 0) {
            moe_cli_report(&err);
            rc = MOE_EXIT_INVALID_INPUT;
        }
        moe_trace_free(&t);
    }
    if (rc == MOE_EXIT_OK && moe_overlap_finish(&o, (size_t)top, &err) < 0) {
        moe_cli_report(&err);
        rc = MOE_EXIT_SYSTEM;
    }
    if (rc == MOE_EXIT_OK) {
        if (json) {
            json_t *j = moe_overlap_to_json(&o, &win);

            json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
            putchar('\n');
            json_decref(j);
        } else {
            print_table(&o);
        }
    }
    moe_overlap_free(&o);
    return rc;
}
