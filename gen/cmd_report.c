/* moeflow report: the validate stage's evidence from Megatron logs. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "megatron_log.h"
#include "report.h"
#include "trace.h"

#define MAX_EXPECT 64

/* --expect, with the run it is for (NULL: every run). */
struct expect_arg {
    const char *run;
    struct moe_report_expect e;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: moeflow report [-o DIR] [--window A-B] [--expect KEY=VALUE]... [--json]\n"
            "                      RUN_DIR|LOG...\n"
            "\n"
            "Each LOG is one run; each RUN_DIR is one run made of its *.log, *.out, *.err and\n"
            "*.txt files (ranks' logs), with *.json, *.json.gz and *.sqlite files in it read\n"
            "as its profile.  The first run is the baseline of the A/B verdicts.\n"
            "  -o DIR            write report.json, report.md and step-time.svg into DIR\n"
            "  --window A-B      iterations to report (default %d-%d)\n"
            "  --expect [RUN:]K=V  argument value the runs (or the run named RUN) were\n"
            "                    asked for, e.g. moe_token_dispatcher_type=flex or\n"
            "                    deepep-run:dispatcher=deepep; a different value in the\n"
            "                    argument dump is flagged\n"
            "  --json            print report.json to stdout\n"
            "  --min-effect PCT  smallest change of the median step time that counts as a\n"
            "                    win or a loss (default %.0f%%); it must also be significant:\n"
            "                    Mann-Whitney U p < %.2f and a 95%% bootstrap interval of\n"
            "                    the median difference that excludes 0\n"
            "\n"
            "example: moeflow report -o out/ runs/baseline runs/deepep\n",
            MOE_REPORT_FIRST, MOE_REPORT_LAST, MOE_REPORT_MIN_EFFECT, MOE_REPORT_ALPHA);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);

    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int is_log(const char *name)
{
    return has_suffix(name, ".log") || has_suffix(name, ".out") || has_suffix(name, ".err") ||
           has_suffix(name, ".txt");
}

static int is_profile(const char *name)
{
    return has_suffix(name, ".json") || has_suffix(name, ".json.gz") || has_suffix(name, ".sqlite");
}

struct progress {
    size_t done, total;
    int tty;
};

static void tick(struct progress *p)
{
    p->done++;
    if (p->tty && p->total > 1)
        fprintf(stderr, "\rmoeflow report: read %zu/%zu files", p->done, p->total);
}

static int read_profile(struct moe_report_run *r, const char *path, struct moe_error *err)
{
    struct moe_trace t;
    int rc;

    moe_trace_init(&t, path, NULL, NULL);
    rc = moe_trace_load(&t, path, err);
    if (rc == 0)
        moe_report_run_profile(r, &t);
    moe_trace_free(&t);
    return rc;
}

/* The log's warnings go to stderr as they are found, whether or not the run
 * then makes it into the report. */
static void print_warnings(const struct moe_log *log)
{
    for (size_t i = 0; i < log->nwarnings; i++)
        fprintf(stderr, "moeflow report: warning: %s\n", log->warnings[i].text);
    if (log->warnings_total > log->nwarnings)
        fprintf(stderr, "moeflow report: warning: ... and %zu more\n",
                log->warnings_total - log->nwarnings);
}

/* One run: a log file, or a directory of rank logs and profiles. */
static int load_run(const char *arg, struct moe_report_run *r, long first, long last,
                    const struct expect_arg *all, size_t nall, struct progress *pg,
                    struct moe_error *err)
{
    struct moe_report_expect ex[MAX_EXPECT];
    size_t nex = 0;
    struct dirent **ents = NULL;
    struct moe_log log;
    struct stat st;
    const char *base;
    char name[128], path[4096];
    int n = 0, rc = -1;

    if (stat(arg, &st) < 0) {
        moe_error_at(err, arg, 0, 0, "%s", strerror(errno));
        return -1;
    }
    snprintf(name, sizeof(name), "%s", arg);
    while (strlen(name) > 1 && name[strlen(name) - 1] == '/')
        name[strlen(name) - 1] = '\0';
    base = strrchr(name, '/');
    base = base ? base + 1 : name;
    for (size_t i = 0; i < nall; i++)
        if (!all[i].run || strcmp(all[i].run, base) == 0)
            ex[nex++] = all[i].e;
    moe_log_init(&log);
    if (!S_ISDIR(st.st_mode)) {
        rc = moe_log_read_file(&log, arg, err);
        tick(pg);
        print_warnings(&log);
        if (rc == 0)
            rc = moe_report_run_init(r, base, &log, first, last, ex, nex, err);
        moe_log_free(&log);
        return rc;
    }
    n = scandir(arg, &ents, NULL, alphasort);
    if (n < 0) {
        moe_error_at(err, arg, 0, 0, "%s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", arg, ents[i]->d_name);
        if (is_log(ents[i]->d_name)) {
            if (moe_log_read_file(&log, path, err) < 0)
                goto out;
            tick(pg);
        }
    }
    print_warnings(&log);
    if (moe_report_run_init(r, base, &log, first, last, ex, nex, err) < 0)
        goto out;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", arg, ents[i]->d_name);
        if (is_profile(ents[i]->d_name) && read_profile(r, path, err) < 0) {
            moe_report_run_free(r);
            goto out;
        }
    }
    rc = 0;
out:
    for (int i = 0; i < n; i++)
        free(ents[i]);
    free(ents);
    moe_log_free(&log);
    return rc;
}

static size_t count_files(char **args, int n)
{
    size_t total = 0;

    for (int i = 0; i < n; i++) {
        struct stat st;
        DIR *d;
        struct dirent *e;

        if (stat(args[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
            total++;
            continue;
        }
        d = opendir(args[i]);
        while (d && (e = readdir(d)))
            total += is_log(e->d_name) != 0;
        if (d)
            closedir(d);
    }
    return total;
}

static int parse_window(const char *s, long *first, long *last)
{
    char *end;

    *first = strtol(s, &end, 10);
    if (end == s || *end != '-')
        return -1;
    s = end + 1;
    *last = strtol(s, &end, 10);
    return (end == s || *end || *first < 1 || *last < *first) ? -1 : 0;
}

static void print_summary(const struct moe_report_run *runs, size_t n,
                          const struct moe_report_opts *opts)
{
    printf("%-32s %6s %10s %9s %7s %11s %6s %7s %4s %9s %s\n", "run", "steps", "median_ms",
           "mean_ms", "cv%", "TFLOP/s/GPU", "loss", "skipped", "nan", "peak_MiB",
           "effect [95% interval] p verdict");
    for (size_t i = 0; i < n; i++) {
        const struct moe_report_run *r = &runs[i];
        char verdict[96] = "baseline";

        if (i) {
            struct moe_report_ab ab;

            moe_report_compare(&runs[0], r, opts, &ab);
            snprintf(verdict, sizeof(verdict), "%+.2f%% [%+.2f%%, %+.2f%%] p=%.3g %s",
                     ab.delta_pct, ab.ci_lo_pct, ab.ci_hi_pct, ab.p_value,
                     moe_verdict_name(ab.verdict));
        }
        printf("%-32.32s %6zu %10.1f %9.2f %7.2f %11.1f %6s %7ld %4ld %9.0f %s\n", r->name, r->n,
               r->step_median, r->step_mean, 100 * r->step_cv, r->tflops_median,
               r->loss_finite ? "finite" : "BAD", r->skipped, r->nan_iters,
               r->peak_bytes / 1048576.0, verdict);
        for (size_t j = 0; j < json_array_size(r->mismatches); j++)
            printf("  MISMATCH: %s\n", json_string_value(json_array_get(r->mismatches, j)));
    }
    if (n > 1)
        printf("win/loss: p < %.3g (Mann-Whitney U), a 95%% bootstrap interval of the median "
               "difference that excludes 0, and |effect| >= %.2f%%\n",
               opts->alpha, opts->min_effect_pct);
}

static int write_outputs(const char *dir, const struct moe_report_run *runs, size_t n,
                         const struct moe_report_opts *opts, struct moe_error *err)
{
    char path[4096];
    json_t *j;
    int rc;

    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        moe_error_at(err, dir, 0, 0, "cannot create: %s", strerror(errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s/report.json", dir);
    j = moe_report_to_json(runs, n, opts);
    rc = json_dump_file(j, path, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
    json_decref(j);
    if (rc < 0) {
        moe_error_at(err, path, 0, 0, "cannot write: %s", strerror(errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s/report.md", dir);
    if (moe_report_write_md(runs, n, opts, path, err) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/step-time.svg", dir);
    return moe_report_write_svg(runs, n, path, err);
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "window", required_argument, NULL, 'w' },
        { "expect", required_argument, NULL, 'e' },
        { "json", no_argument, NULL, 'j' },
        { "min-effect", required_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct expect_arg ex[MAX_EXPECT];
    struct moe_report_run *runs;
    struct progress pg = { 0 };
    struct moe_report_opts ropts = { MOE_REPORT_ALPHA, MOE_REPORT_MIN_EFFECT };
    struct moe_error err;
    const char *outdir = NULL;
    long first = MOE_REPORT_FIRST, last = MOE_REPORT_LAST;
    size_t nex = 0, nruns = 0;
    int c, json = 0, rc = MOE_EXIT_OK;

    moe_error_clear(&err);
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:w:e:jhm:", opts, NULL)) != -1) {
        char *eq;

        switch (c) {
        case 'o':
            outdir = optarg;
            break;
        case 'w':
            if (parse_window(optarg, &first, &last) < 0) {
                fprintf(stderr, "moeflow report: --window '%s': expected A-B, e.g. 41-50\n",
                        optarg);
                return MOE_EXIT_USAGE;
            }
            break;
        case 'e': {
            char *colon, *key = optarg;

            eq = strchr(optarg, '=');
            colon = strchr(optarg, ':');
            ex[nex].run = NULL;
            if (colon && eq && colon < eq) {
                *colon = '\0';
                ex[nex].run = optarg;
                key = colon + 1;
            }
            if (!eq || eq == key || nex == MAX_EXPECT) {
                fprintf(stderr, "moeflow report: --expect '%s': expected [RUN:]KEY=VALUE\n",
                        optarg);
                return MOE_EXIT_USAGE;
            }
            *eq = '\0';
            ex[nex].e.key = key;
            ex[nex++].e.value = eq + 1;
            break;
        }
        case 'j':
            json = 1;
            break;
        case 'm': {
            char *end;

            ropts.min_effect_pct = strtod(optarg, &end);
            if (end == optarg || *end || !(ropts.min_effect_pct >= 0) ||
                ropts.min_effect_pct > 100) {
                fprintf(stderr, "moeflow report: --min-effect '%s': expected a percentage "
                        "between 0 and 100, e.g. 2\n", optarg);
                return MOE_EXIT_USAGE;
            }
            break;
        }
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
    runs = calloc((size_t)(argc - optind), sizeof(*runs));
    if (!runs) {
        moe_error_set(&err, "out of memory");
        moe_cli_report(&err);
        return MOE_EXIT_SYSTEM;
    }
    pg.tty = isatty(STDERR_FILENO);
    pg.total = count_files(argv + optind, argc - optind);
    for (int i = optind; i < argc; i++) {
        if (load_run(argv[i], &runs[nruns], first, last, ex, nex, &pg, &err) < 0) {
            if (pg.tty && pg.total > 1)
                fputc('\n', stderr);
            moe_cli_report(&err);
            rc = MOE_EXIT_INVALID_INPUT;
            break;
        }
        nruns++;
    }
    if (pg.tty && pg.total > 1 && rc == MOE_EXIT_OK)
        fputc('\n', stderr);
    if (rc == MOE_EXIT_OK) {
        if (json) {
            json_t *j = moe_report_to_json(runs, nruns, &ropts);

            json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
            putchar('\n');
            json_decref(j);
        } else {
            print_summary(runs, nruns, &ropts);
        }
        if (outdir && write_outputs(outdir, runs, nruns, &ropts, &err) < 0) {
            moe_cli_report(&err);
            rc = MOE_EXIT_SYSTEM;
        }
    }
    for (size_t i = 0; i < nruns; i++)
        moe_report_run_free(&runs[i]);
    free(runs);
    return rc;
}
