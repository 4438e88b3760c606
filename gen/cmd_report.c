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
#include "analysis/megatron_log.h"
#include "analysis/report.h"
#include "analysis/study_report.h"
#include "contract/contract_store.h"
#include "analysis/trace.h"

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
            "       moeflow report [--stage scale|retune|validate] [options] STUDY_DIR\n"
            "\n"
            "A STUDY_DIR (written by moeflow gen) gives one row per candidate of a stage,\n"
            "named by its variable and value, against the stage's own baseline (retune: the\n"
            "scale baseline), over the study's window for the stage.\n"
            "Each LOG is one run; each RUN_DIR is one run made of its *.log, *.out, *.err and\n"
            "*.txt files (ranks' logs), with *.json, *.json.gz and *.sqlite files in it read\n"
            "as its profile.  The first run is the baseline of the A/B verdicts.\n"
            "  -o DIR            write report.json, report.md and step-time.svg into DIR\n"
            "  --stage STAGE     with a STUDY_DIR: the stage to report (default: the last\n"
            "                    of validate, retune, scale that has a log)\n"
            "  --record-winners  with a STUDY_DIR: record the best win of each variable (its\n"
            "                    sealed run record) in STUDY_DIR/winners, as 'moeflow\n"
            "                    contract winner' does (validate from them: moeflow gen --winners)\n"
            "  --window A-B      iterations to report (default: the study's, else %d-%d)\n"
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
            "example: moeflow report tiny-study --stage retune\n",
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

/* A run record's contract.json is not a profile. */
static int is_profile(const char *name)
{
    if (strcmp(name, "contract.json") == 0)
        return 0;
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
static int load_run(const char *arg, const char *label, struct moe_report_run *r, long first,
                    long last, const struct expect_arg *all, size_t nall, struct progress *pg,
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
    if (label)
        base = label;
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
    int w = 32;

    for (size_t i = 0; i < n; i++)
        if ((int)strlen(runs[i].name) > w)
            w = (int)strlen(runs[i].name);
    printf("%-*s %6s %10s %9s %7s %11s %6s %7s %4s %9s %s\n", w, "run", "steps", "median_ms",
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
        printf("%-*s %6zu %10.1f %9.2f %7.2f %11.1f %6s %7ld %4ld %9.0f %s\n", w, r->name, r->n,
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

/* The summary (or report.json) on stdout, and the files of -o; extra: keys
 * added to report.json. */
static int emit(const struct moe_report_run *runs, size_t nruns, const struct moe_report_opts *o,
                int json, const char *outdir, json_t *extra)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (json) {
        json_t *j = moe_report_to_json(runs, nruns, o);

        if (extra)
            json_object_update(j, extra);
        json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
        putchar('\n');
        json_decref(j);
    } else {
        print_summary(runs, nruns, o);
    }
    if (outdir && write_outputs(outdir, runs, nruns, o, &err) < 0) {
        moe_cli_report(&err);
        return MOE_EXIT_SYSTEM;
    }
    return MOE_EXIT_OK;
}

static int file_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* One row per candidate of a stage of a generated study, against the
 * stage's own reference, over the study's window for it. */
/* The contract's "winner" rule: for each variable, the run with the best
 * "win" verdict (the largest speed-up; one value of a variable can win),
 * as its sealed run record shows it, goes to <study>/winners. */
static int best_win_of_its_variable(const struct moe_report_run *runs, size_t nruns, size_t i,
                                    const struct moe_report_opts *o, const char **better)
{
    const char *eq = strchr(runs[i].name, '=');
    size_t vlen = eq ? (size_t)(eq - runs[i].name) : strlen(runs[i].name);
    struct moe_report_ab mine, other;

    double best;

    moe_report_compare(&runs[0], &runs[i], o, &mine);
    best = mine.delta_pct;
    *better = NULL;
    for (size_t k = 1; k < nruns; k++) {
        if (k == i || strncmp(runs[k].name, runs[i].name, vlen) != 0 || runs[k].name[vlen] != '=')
            continue;
        moe_report_compare(&runs[0], &runs[k], o, &other);
        if (other.verdict == MOE_VERDICT_WIN &&
            (other.delta_pct < best || (other.delta_pct == best && k < i && !*better))) {
            best = other.delta_pct;
            *better = runs[k].name;
        }
    }
    return *better == NULL;
}

static int record_winners(const struct moe_study_view *v, const struct moe_report_run *runs,
                          size_t nruns, const struct moe_report_opts *o)
{
    int rc = MOE_EXIT_OK, any = 0;

    for (size_t i = 1; i < nruns; i++) {
        const struct moe_study_cand *c = NULL;
        struct moe_report_ab ab;
        struct moe_error err;
        char run[4400], path[4400];
        int r = -1;

        const char *better = NULL;

        moe_report_compare(&runs[0], &runs[i], o, &ab);
        if (ab.verdict != MOE_VERDICT_WIN)
            continue;
        any = 1;
        if (!best_win_of_its_variable(runs, nruns, i, o, &better)) {
            printf("win %s: not recorded: %s wins more\n", runs[i].name, better);
            continue;
        }
        for (size_t k = 0; k < v->n && !c; k++)
            if (strcmp(v->cands[k].label, runs[i].name) == 0)
                c = &v->cands[k];
        moe_error_clear(&err);
        if (!c)
            moe_error_set(&err, "not a candidate of the stage");
        else if ((r = moe_study_find_run(v->study, v->stage, c->id, run, sizeof(run), &err)) == 0)
            moe_error_set(&err, "no run record of it under runs/ (did it run with the moeflow "
                          "plugin?)");
        else if (r == 1)
            r = moe_contract_record_winner(v->study, run, path, sizeof(path), &err);
        if (!c || r < 0 || err.text[0]) {
            fprintf(stderr, "moeflow report: winner %s not recorded: %s\n", runs[i].name,
                    err.text);
            rc = MOE_EXIT_INVALID_INPUT;
            continue;
        }
        printf("winner %s: %s %s (run %s)\n", runs[i].name,
               r == 0 ? "recorded" : "already recorded", path, strrchr(run, '/') + 1);
    }
    if (!any)
        printf("no winner to record: no candidate is a win\n");
    return rc;
}

static int report_study(const char *study, const char *stage, int window_given, long first,
                        long last, const struct expect_arg *ex, size_t nex,
                        const struct moe_report_opts *o, int json, const char *outdir,
                        int winners)
{
    struct moe_study_view v;
    struct moe_report_run *runs = NULL;
    struct progress pg = { 0 };
    struct moe_error err;
    json_t *extra = NULL, *skipped = NULL;
    size_t nruns = 0;
    int rc = MOE_EXIT_OK;

    moe_error_clear(&err);
    if (moe_study_view_load(study, stage, &v, &err) < 0) {
        moe_cli_report(&err);
        return MOE_EXIT_INVALID_INPUT;
    }
    if (!window_given) {
        first = v.first;
        last = v.last;
    }
    runs = calloc(v.n + 1, sizeof(*runs));
    skipped = json_array();
    if (!runs || !skipped) {
        fprintf(stderr, "moeflow report: out of memory\n");
        rc = MOE_EXIT_SYSTEM;
        goto out;
    }
    if (!file_exists(v.ref.log)) {
        fprintf(stderr, "moeflow report: %s: the reference run, %s, has no log yet (%s)\n",
                study, v.ref_note, v.ref.log);
        rc = MOE_EXIT_INVALID_INPUT;
        goto out;
    }
    if (load_run(v.ref.log, "baseline", &runs[0], first, last, ex, nex, &pg, &err) < 0) {
        moe_cli_report(&err);
        rc = MOE_EXIT_INVALID_INPUT;
        goto out;
    }
    nruns = 1;
    for (size_t i = 0; i < v.n; i++) {
        const struct moe_study_cand *c = &v.cands[i];
        char why[MOE_ERROR_TEXT_MAX + 64];

        moe_error_clear(&err);
        if (!file_exists(c->log))
            snprintf(why, sizeof(why), "no log yet (%.500s)", c->log);
        else if (load_run(c->log, c->label, &runs[nruns], first, last, ex, nex, &pg, &err) < 0)
            snprintf(why, sizeof(why), "%s", err.text);
        else {
            nruns++;
            continue;
        }
        json_array_append_new(skipped, json_pack("{s:s,s:s,s:s}", "candidate", c->label, "id",
                                                 c->id, "reason", why));
    }
    if (!json)
        printf("study %s, stage %s: %zu candidates; window %ld-%ld (%s); reference: %s\n",
               v.name, v.stage, v.n, first, last,
               window_given ? "--window" : v.window_note, v.ref_note);
    extra = json_pack("{s:s,s:s,s:[I,I],s:s,s:s,s:O}", "study", v.name, "stage", v.stage,
                      "window", (json_int_t)first, (json_int_t)last, "window_source",
                      window_given ? "--window" : v.window_note, "reference", v.ref_note,
                      "not_reported", skipped);
    rc = emit(runs, nruns, o, json, outdir, extra);
    if (!json)
        for (size_t i = 0; i < json_array_size(skipped); i++) {
            json_t *s = json_array_get(skipped, i);

            printf("  NOT REPORTED: %s: %s\n", json_string_value(json_object_get(s, "candidate")),
                   json_string_value(json_object_get(s, "reason")));
        }
    if (rc == MOE_EXIT_OK && winners)
        rc = record_winners(&v, runs, nruns, o);
out:
    for (size_t i = 0; i < nruns; i++)
        moe_report_run_free(&runs[i]);
    free(runs);
    json_decref(skipped);
    json_decref(extra);
    moe_study_view_free(&v);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        { "output", required_argument, NULL, 'o' },
        { "window", required_argument, NULL, 'w' },
        { "expect", required_argument, NULL, 'e' },
        { "json", no_argument, NULL, 'j' },
        { "min-effect", required_argument, NULL, 'm' },
        { "stage", required_argument, NULL, 's' },
        { "record-winners", no_argument, NULL, 'W' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct expect_arg ex[MAX_EXPECT];
    struct moe_report_run *runs;
    struct progress pg = { 0 };
    struct moe_report_opts ropts = { MOE_REPORT_ALPHA, MOE_REPORT_MIN_EFFECT };
    struct moe_study_where where;
    const char *stage = NULL;
    int window_given = 0, winners = 0;
    struct moe_error err;
    const char *outdir = NULL;
    long first = MOE_REPORT_FIRST, last = MOE_REPORT_LAST;
    size_t nex = 0, nruns = 0;
    int c, json = 0, rc = MOE_EXIT_OK;

    moe_error_clear(&err);
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:w:e:jhm:s:W", opts, NULL)) != -1) {
        char *eq;

        switch (c) {
        case 'o':
            outdir = optarg;
            break;
        case 'W':
            winners = 1;
            break;
        case 's':
            if (strcmp(optarg, "scale") != 0 && strcmp(optarg, "retune") != 0 &&
                strcmp(optarg, "validate") != 0) {
                fprintf(stderr, "moeflow report: --stage '%s': report reads scale, retune and "
                        "validate runs\n", optarg);
                return MOE_EXIT_USAGE;
            }
            stage = optarg;
            break;
        case 'w':
            window_given = 1;
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
    if (argc - optind == 1) {
        int loc = moe_study_locate(argv[optind], &where, &err);

        if (loc < 0) {
            moe_cli_report(&err);
            return MOE_EXIT_INVALID_INPUT;
        }
        if (loc == 1 && !where.cand.id[0])
            return report_study(where.study, stage ? stage : where.stage, window_given, first,
                                last, ex, nex, &ropts, json, outdir, winners);
    }
    if (stage || winners) {
        fprintf(stderr, "moeflow report: --%s needs one study directory (the folder moeflow "
                "gen wrote, with its manifest.json)\n", stage ? "stage" : "record-winners");
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
        long a = first, b = last;
        const char *label = NULL;
        int loc = moe_study_locate(argv[i], &where, &err);

        /* A run of a generated study: named by its variable and value, and
         * reported over the study's window for its stage. */
        if (loc == 1 && where.cand.id[0]) {
            label = where.cand.label;
            if (!window_given) {
                a = where.first;
                b = where.last;
            }
        }
        if (loc < 0 ||
            load_run(argv[i], label, &runs[nruns], a, b, ex, nex, &pg, &err) < 0) {
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
    if (rc == MOE_EXIT_OK)
        rc = emit(runs, nruns, &ropts, json, outdir, NULL);
    for (size_t i = 0; i < nruns; i++)
        moe_report_run_free(&runs[i]);
    free(runs);
    return rc;
}
