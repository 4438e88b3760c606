/* moeflow report: the validate stage's evidence from Megatron logs. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "analysis/checkpoint_verdict.h"
#include "report_fit.h"
#include "report_pack.h"
#include "report_profile.h"
#include "options.h"
#include "core/number.h"
#include "analysis/profile_pair.h"
#include "analysis/report.h"
#include "analysis/study_report.h"
#include "analysis/report_runs.h"
#include "analysis/decision_text.h"
#include "contract/contract_store.h"
#include "core/atomic_file.h"
#include "core/atomic_set.h"
#include "core/json_build.h"
#include "core/readfile.h"
#include "core/sha256.h"
#include "core/strbuf.h"
#include "core/text.h"
#include "core/study_dir.h"

#define MAX_EXPECT 64

struct report_args {
    struct moe_report_expect_for ex[MAX_EXPECT];
    size_t nex;
    struct moe_report_opts ropts;
    const char *stage, *outdir, *pack_dir;
    long first, last;
    bool window_given, winners, json, pack;
};

static int set_stage(void *args, const struct moe_opt *o, char *value)
{
    (void)o;
    if (strcmp(value, "fit") != 0 && strcmp(value, "scale") != 0 &&
        strcmp(value, "retune") != 0 && strcmp(value, "validate") != 0)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow report: --stage '%s': report reads fit, "
                             "scale, retune and validate runs\n", value);
    ((struct report_args *)args)->stage = value;
    return MOE_CLI_RUN;
}

struct progress {
    size_t done, total;
    int tty;
};

static void tick(void *data)
{
    struct progress *p = data;

    p->done++;
    if (p->tty && p->total > 1)
        fprintf(stderr, "\rmoeflow report: read %zu/%zu files", p->done, p->total);
}

/* The log's warnings go to stderr as they are found, whether or not the run
 * then makes it into the report. */
static void print_warnings(const struct moe_log *log, void *data)
{
    char shown[2048];

    (void)data;
    for (size_t i = 0; i < log->nwarnings; i++)
        fprintf(stderr, "moeflow report: warning: %s\n",
                moe_text_visible(log->warnings[i].text, shown, sizeof(shown)));
    if (log->warnings_total > log->nwarnings)
        fprintf(stderr, "moeflow report: warning: ... and %zu more\n",
                log->warnings_total - log->nwarnings);
}

/* "A-B": two step numbers, each through the one numeric check. */
static int parse_window(const char *s, long *first, long *last)
{
    char a[32];
    const char *dash = strchr(s, '-');
    struct moe_error e;

    if (!dash || dash == s || (size_t)(dash - s) >= sizeof(a))
        return -1;
    /* fits: dash - s is under sizeof(a), checked above */
    snprintf(a, sizeof(a), "%.*s", (int)(dash - s), s);
    moe_error_clear(&e);
    if (moe_number_parse_long(a, 1, LONG_MAX, first, &e) < 0 ||
        moe_number_parse_long(dash + 1, 1, LONG_MAX, last, &e) < 0)
        return -1;
    return *last < *first ? -1 : 0;
}

static int set_window(void *args, const struct moe_opt *o, char *value)
{
    struct report_args *a = args;

    (void)o;
    a->window_given = true;
    if (parse_window(moe_cli_window_steps(value), &a->first, &a->last) < 0)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow report: --window '%s': expected A-B, "
                             "e.g. 41-50\n", value);
    return MOE_CLI_RUN;
}

/* [RUN:]KEY=VALUE, cut in place. */
static int add_expect(void *args, const struct moe_opt *o, char *value)
{
    struct report_args *a = args;
    struct moe_report_expect_for *x = &a->ex[a->nex];
    char *eq = strchr(value, '='), *colon = strchr(value, ':'), *key = value;

    (void)o;
    if (a->nex == MAX_EXPECT)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow report: --expect '%s': at most %d "
                             "--expect options are taken\n", value, MAX_EXPECT);
    x->run = NULL;
    if (colon && eq && colon < eq) {
        *colon = '\0';
        x->run = value;
        key = colon + 1;
    }
    if (!eq || eq == key)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow report: --expect '%s': expected "
                             "[RUN:]KEY=VALUE\n", value);
    *eq = '\0';
    x->e.key = key;
    x->e.value = eq + 1;
    a->nex++;
    return MOE_CLI_RUN;
}

static int set_min_effect(void *args, const struct moe_opt *o, char *value)
{
    struct moe_report_opts *r = &((struct report_args *)args)->ropts;

    return moe_cli_double(o->name, value, 0, false, 100, &r->min_effect_pct);
}

static const struct moe_opt report_opts[] = {
    { "output", required_argument, 'o', "DIR",
      "write report.json, report.md and step-time.svg into DIR", .set = moe_opt_string,
      .field = offsetof(struct report_args, outdir), .label = "-o DIR" },
    { "stage", required_argument, 's', "STAGE",
      "with a STUDY_DIR: the stage to report (default: the last\n"
      "of validate, retune, scale that has a log)", .set = set_stage },
    { "record-winners", no_argument, 'W', NULL,
      "with a STUDY_DIR: record the best win of each variable (its\n"
      "sealed run record) in STUDY_DIR/" MOE_STUDY_WINNERS ", as 'moeflow\n"
      "contract winner' does (validate from them: moeflow gen --winners)", .set = moe_opt_flag,
      .field = offsetof(struct report_args, winners) },
    { "pack", no_argument, 0, NULL,
      "with a STUDY_DIR: write its evidence pack (README.md and\n"
      "pack.json, for a reviewer without moeflow) into\n"
      "STUDY_DIR/" MOE_STUDY_PACK, .set = moe_opt_flag,
      .field = offsetof(struct report_args, pack) },
    { "pack-dir", required_argument, 0, "DIR", "with --pack: write the evidence pack into DIR",
      .set = moe_opt_string, .field = offsetof(struct report_args, pack_dir) },
    { "window", required_argument, 'w', "A-B",
      "iterations to report (default: the study's, else %d-%d)", .set = set_window },
    { "expect", required_argument, 'e', "[RUN:]K=V",
      "argument value the runs (or the run named RUN) were\n"
      "asked for, e.g. moe_token_dispatcher_type=flex or\n"
      "deepep-run:dispatcher=deepep; a different value in the\n"
      "argument dump is flagged", .set = add_expect },
    { "json", no_argument, 'j', NULL, "print report.json to stdout", .set = moe_opt_flag,
      .field = offsetof(struct report_args, json) },
    { "min-effect", required_argument, 'm', "PCT",
      "smallest change of the median step time that counts as a\n"
      "win or a loss (default %.0f%%); it must also be significant:\n"
      "Mann-Whitney U p < %.2f and a 95%% bootstrap interval of\n"
      "the median difference that excludes 0", .set = set_min_effect },
    { .name = NULL },
};

static void report_help_values(FILE *out, const char *format)
{
    moe_cli_printf(out, format, MOE_REPORT_FIRST, MOE_REPORT_LAST, MOE_REPORT_MIN_EFFECT,
                   MOE_REPORT_ALPHA);
}

static const struct moe_cli report_cli = {
    .usage = "usage: moeflow report [-o DIR] [--window A-B] [--expect KEY=VALUE]... [--json]\n"
             "                      RUN_DIR|LOG...\n"
             "       moeflow report [--stage fit|scale|retune|validate] [options] STUDY_DIR\n"
             "       moeflow report --pack [--pack-dir DIR] STUDY_DIR\n"
             "\n"
             "A STUDY_DIR (written by moeflow gen) gives one row per candidate of a stage,\n"
             "named by its variable and value, against the stage's own baseline (retune: the\n"
             "scale baseline), over the study's window for the stage; --stage fit gives each\n"
             "fit run's measured peak against the memory model, with its routing evidence.\n"
             "Each LOG is one run; each RUN_DIR is one run made of its *.log, *.out, *.err and\n"
             "*.txt files (ranks' logs), with *.json, *.json.gz and *.sqlite files in it read\n"
             "as its profile.  The first run is the baseline of the A/B verdicts.\n",
    .opts = report_opts,
    .column = 20,
    .tail = "\nexample: moeflow report tiny-study --stage retune\n",
    .values = report_help_values,
};

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
        char verdict[96], shown[2048];

        /* a message: fits, and a cut summary cell would still read */
        snprintf(verdict, sizeof(verdict), "%s",
                 moe_report_first_is_reference(runs, n) ? "baseline" : "- (one run)");

        if (i) {
            struct moe_report_ab ab;

            moe_report_compare(&runs[0], r, opts, &ab);
            /* a message: a summary cell */
            snprintf(verdict, sizeof(verdict), "%+.2f%% [%+.2f%%, %+.2f%%] p=%.3g %s",
                     ab.delta_pct, ab.ci_lo_pct, ab.ci_hi_pct, ab.p_value,
                     moe_verdict_name(ab.verdict));
        }
        /* names and mismatches quote a log's file name and values: shown
         * without their control characters */
        printf("%-*s %6zu %10.1f %9.2f %7.2f %11.1f %6s %7ld %4ld %9.0f %s\n", w,
               moe_text_visible(r->name, shown, sizeof(shown)), r->n,
               r->step_median, r->step_mean, 100 * r->step_cv, r->tflops_median,
               r->loss_finite ? "finite" : "BAD", r->skipped, r->nan_iters,
               r->peak_bytes / 1048576.0, verdict);
        for (size_t j = 0; j < json_array_size(r->mismatches); j++)
            printf("  MISMATCH: %s\n",
                   moe_text_visible(json_string_value(json_array_get(r->mismatches, j)), shown,
                                    sizeof(shown)));
    }
    if (n > 1)
        printf("win/loss: p < %.3g (Mann-Whitney U), a 95%% bootstrap interval of the median "
               "difference that excludes 0, and |effect| >= %.2f%%\n",
               opts->alpha, opts->min_effect_pct);
}

/* validate's findings beside the runs, kept in report.json under the keys
 * --json prints them with, where an evidence pack reads them:
 * validation.checkpoint's verdict and the twins' matched A/B profiles. */
static const char *const kept_findings[] = { "checkpoint", "profile_pairs", "decisions",
                                             "decisions_error", NULL };

/* report.json's text: the runs, and the keys of kept_findings that extra
 * holds; NULL with err naming what could not be made. */
static char *report_json(const struct moe_report_run *runs, size_t n,
                         const struct moe_report_opts *opts, json_t *extra,
                         struct moe_error *err)
{
    json_t *j = moe_report_to_json(runs, n, opts, err);
    char *text;

    for (int k = 0; j && kept_findings[k]; k++) {
        json_t *finding = json_object_get(extra, kept_findings[k]);

        /* checked: a finding that cannot be kept leaves no report.json */
        if (finding && json_object_set(j, kept_findings[k], finding) < 0) {
            moe_error_set(err, "%s: could not be kept (out of memory)", kept_findings[k]);
            json_decref(j);
            return NULL;
        }
    }
    if (!j)
        return NULL;
    text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
    if (!text)
        moe_error_set(err, "out of memory");
    json_decref(j);
    return text;
}

/* -o DIR: the folder opened once, never through a symlink, and its three
 * files put in place together (core/atomic_set.h): names relative to it,
 * never cut, and a report killed mid-way leaves the old three or the new
 * ones.  extra: the keys added to report.json (NULL: none). */
static int write_outputs(const char *dir, const struct moe_report_run *runs, size_t n,
                         const struct moe_report_opts *opts, json_t *extra,
                         struct moe_error *err)
{
    char *json = report_json(runs, n, opts, extra, err), *md = moe_report_md(runs, n, opts);
    char *svg = moe_report_svg(runs, n);
    int dirfd = -1, rc = -1;

    if (!json) {
        moe_error_within(err, "report.json could not be built");
        moe_error_locate(err, dir, 0, 0);
    } else if (!md || !svg)
        moe_error_at(err, dir, 0, 0, "cannot write: out of memory");
    else if ((dirfd = moe_output_dir_open(dir, err)) >= 0) {
        const struct moe_set_file files[] = {
            { "report.json", json, strlen(json), -1 },
            { "report.md", md, strlen(md), -1 },
            { "step-time.svg", svg, strlen(svg), -1 },
        };

        rc = moe_atomic_set_write(dirfd, dir, files, 3, err);
        close(dirfd);
    }
    free(json);
    free(md);
    free(svg);
    return rc;
}

/* The summary (or report.json) on stdout, and the files of -o; extra: keys
 * added to report.json. */
static int emit(const struct moe_report_run *runs, size_t nruns, const struct moe_report_opts *o,
                int json, const char *outdir, json_t *extra)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (json) {
        json_t *j = moe_report_to_json(runs, nruns, o, &err);

        /* checked: never a report.json missing what extra holds */
        if (j && extra && json_object_update(j, extra) < 0) {
            moe_error_set(&err, "the study's findings could not be added (out of memory)");
            json_decref(j);
            j = NULL;
        }
        if (!j) {
            moe_error_within(&err, "report.json could not be built");
            return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
        }
        json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
        putchar('\n');
        json_decref(j);
    } else {
        print_summary(runs, nruns, o);
    }
    if (outdir && write_outputs(outdir, runs, nruns, o, extra, &err) < 0) {
        moe_cli_report(&err);
        return MOE_EXIT_SYSTEM;
    }
    return MOE_EXIT_OK;
}

/* The win of the candidate labelled LABEL: its sealed run record under
 * runs/ goes to <study>/winners.  0 recorded, 1 already recorded (path and
 * run_dir filled), -1 with err. */
static int record_win(const struct moe_study_view *v, const char *label, char *run_dir,
                      size_t run_len, char *path, size_t path_len, struct moe_error *err)
{
    const struct moe_study_cand *c = NULL;
    char *found = NULL;
    int r;

    for (size_t k = 0; k < v->n && !c; k++)
        if (strcmp(v->cands[k].label, label) == 0)
            c = &v->cands[k];
    if (!c) {
        moe_error_set(err, "not a candidate of the stage");
        return -1;
    }
    r = moe_study_find_run(v->study, v->stage, c->id, &found, err);
    if (r == 1 && moe_fmt_fixed(run_dir, run_len, err, "%s", found) < 0)
        r = -1;
    free(found);
    if (r == 0) {
        moe_error_set(err, "no run record of it in the study's " MOE_STUDY_RUNS " folder (did "
                      "it run with the moeflow plugin?)");
        return -1;
    }
    if (r == 1)
        r = moe_contract_record_winner(v->study, run_dir, path, path_len, err);
    return r >= 0 && err->text[0] ? -1 : r;
}

static int record_winners(const struct moe_study_view *v, const struct moe_report_run *runs,
                          size_t nruns, const struct moe_report_opts *o)
{
    int rc = MOE_EXIT_OK, any = 0;

    for (size_t i = 1; i < nruns; i++) {
        struct moe_report_ab ab;
        struct moe_error err;
        /* STUDY/runs/NAME and STUDY/winners/SHA256.json: a name in a folder
         * is at most NAME_MAX bytes, so neither is ever cut */
        size_t run_len = strlen(v->study) + sizeof("/" MOE_STUDY_RUNS "/") + NAME_MAX;
        size_t path_len = strlen(v->study) + sizeof("/" MOE_STUDY_WINNERS "/") +
                          MOE_SHA256_HEX_LEN + sizeof(".json");
        char *run = NULL, *path = NULL;
        const char *better = NULL;
        int r;

        moe_report_compare(&runs[0], &runs[i], o, &ab);
        if (ab.verdict != MOE_VERDICT_WIN)
            continue;
        any = 1;
        if (!moe_report_best_win(runs, nruns, i, o, &better)) {
            printf("win %s: not recorded: %s wins more\n", runs[i].name, better);
            continue;
        }
        if (json_array_size(runs[i].mismatches)) {
            printf("win %s: not recorded: what ran is not what it asked for (%s)\n",
                   runs[i].name, json_string_value(json_array_get(runs[i].mismatches, 0)));
            continue;
        }
        moe_error_clear(&err);
        if (!(run = malloc(run_len)) || !(path = malloc(path_len))) {
            moe_error_set(&err, "out of memory");
            r = -1;
        } else {
            r = record_win(v, runs[i].name, run, run_len, path, path_len, &err);
        }
        if (r < 0) {
            fprintf(stderr, "moeflow report: winner %s not recorded: %s\n", runs[i].name,
                    err.text);
            rc = MOE_EXIT_INVALID_INPUT;
        } else {
            printf("winner %s: %s %s (run %s)\n", runs[i].name,
                   r == 0 ? "recorded" : "already recorded", path, strrchr(run, '/') + 1);
        }
        free(run);
        free(path);
    }
    if (!any)
        printf("no winner to record: no candidate is a win\n");
    return rc;
}

static struct moe_report_reader reader(const struct report_args *a, long first, long last,
                                       struct progress *pg)
{
    return (struct moe_report_reader){ a->ex, a->nex, first, last, tick, print_warnings, pg };
}

static int file_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether every candidate of v carries the reference's label: a stage
 * that mixed them would need its rows split by label. */
static bool one_semantics(const struct moe_study_view *v)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->cands[i].semantics_text, v->ref.semantics_text) != 0)
            return false;
    return true;
}

/* The part of report.json that says what the header lines say; NULL with
 * err naming the key that could not be made. */
static json_t *header_json(const struct moe_study_view *v, const char *source, long first,
                           long last, json_t *skipped, struct moe_error *err)
{
    struct moe_jb b;
    json_t *h = json_object();

    moe_jb_init(&b, err);
    moe_jb_str(&b, h, "study", v->name);
    moe_jb_str(&b, h, "stage", v->stage);
    moe_jb_set(&b, h, "window", moe_jb_pack(&b, "[I,I]", (json_int_t)first, (json_int_t)last));
    moe_jb_str(&b, h, "window_source", source);
    moe_jb_str(&b, h, "reference", v->ref_note);
    moe_jb_copy(&b, h, "not_reported", skipped);
    moe_jb_str(&b, h, "label", v->ref.semantics);
    moe_jb_str(&b, h, "label_text", v->ref.semantics_text);
    moe_jb_bool(&b, h, "label_uniform", one_semantics(v));
    return moe_jb_done(&b, h);
}

/* The study's header lines, and the part of report.json that says the
 * same.  Benchmark-only numbers get their own heading: they never read as
 * training-equivalent ones. */
static json_t *study_header(const struct moe_study_view *v, const struct report_args *a,
                            long first, long last, json_t *skipped, struct moe_error *err)
{
    const char *source = a->window_given ? "--window" : v->window_note;
    bool bench = strcmp(v->ref.semantics, "benchmark-only") == 0;

    if (!a->json) {
        printf("study %s, stage %s: %zu candidates; window %ld-%ld (%s); reference: %s\n",
               v->name, v->stage, v->n, first, last, source, v->ref_note);
        printf("%s results (%s)%s\n", bench ? "BENCHMARK-ONLY" : "training-equivalent",
               v->ref.semantics_text,
               bench ? ": not training-equivalent, they do not transfer to training" : "");
        for (size_t i = 0; i < v->n; i++)
            if (strcmp(v->cands[i].semantics_text, v->ref.semantics_text) != 0)
                printf("  LABEL DIFFERS: %s: %s\n", v->cands[i].label,
                       v->cands[i].semantics_text);
    }
    return header_json(v, source, first, last, skipped, err);
}

static void print_skipped(const json_t *skipped)
{
    for (size_t i = 0; i < json_array_size(skipped); i++) {
        json_t *s = json_array_get(skipped, i);

        printf("  NOT REPORTED: %s: %s\n", json_string_value(json_object_get(s, "candidate")),
               json_string_value(json_object_get(s, "reason")));
    }
}

/* An --expect for RUN names a run of the report: one that names none would
 * check nothing, and say nothing.  skipped: a study's candidates without a
 * log, which count as named. */
static int expected_runs_exist(const struct report_args *a, const struct moe_report_run *runs,
                               size_t n, const json_t *skipped)
{
    for (size_t i = 0; i < a->nex; i++) {
        const char *run = a->ex[i].run;
        bool found = !run;

        for (size_t j = 0; j < n && !found; j++)
            found = strcmp(runs[j].name, run) == 0;
        for (size_t j = 0; j < json_array_size(skipped) && !found; j++) {
            const char *c = json_string_value(json_object_get(json_array_get(skipped, j),
                                                              "candidate"));
            found = c && strcmp(c, run) == 0;
        }
        if (!found)
            return moe_cli_error(MOE_EXIT_USAGE, "moeflow report: --expect '%s:%s=%s': no run is "
                                 "named '%s' (a log's run is named after its file, a study's by "
                                 "variable=value)\n", run, a->ex[i].e.key, a->ex[i].e.value, run);
    }
    return MOE_EXIT_OK;
}

/* The reference and candidates of v are read; runs gets them. */
static int load_stage(const struct moe_study_view *v, const struct moe_report_reader *rd,
                      struct moe_report_run *runs, size_t *nruns, json_t *skipped)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (!file_exists(v->ref.log))
        return moe_cli_error(MOE_EXIT_INVALID_INPUT, "moeflow report: %s: the reference run, "
                             "%s, has no log yet (%s)\n", v->study, v->ref_note, v->ref.log);
    if (moe_report_load_study_run(v, &v->ref, "baseline", rd, &runs[0], &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    *nruns = 1 + moe_report_load_candidates(v, rd, runs + 1, skipped);
    return MOE_EXIT_OK;
}

/* validate with validation.checkpoint: the checkpoint/resume verdict
 * (analysis/checkpoint_verdict.h) under extra's "checkpoint"; *out keeps
 * it for the text (NULL when the study has none). */
static int checkpoint_verdict(const struct moe_study_view *v, json_t *extra,
                              struct moe_ckpt_verdict **out, char *id, size_t len)
{
    struct moe_error err;
    json_t *j;
    int r;

    *out = NULL;
    if (strcmp(v->stage, "validate") != 0)
        return MOE_EXIT_OK;
    if (!(*out = calloc(1, sizeof(**out))))
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow report: out of memory\n");
    moe_error_clear(&err);
    if ((r = moe_ckpt_study(v->study, *out, id, len, &err)) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    if (r == 0) {
        free(*out);
        *out = NULL;
        return MOE_EXIT_OK;
    }
    if (!(j = moe_ckpt_verdict_json(*out, id, &err)))
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow report: report.json: the checkpoint "
                             "verdict could not be written: checkpoint.%s\n", err.text);
    /* checked: a verdict not set is an error, never a report without it */
    if (json_object_set_new(extra, "checkpoint", j) < 0)
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow report: report.json: the checkpoint "
                             "verdict could not be added (out of memory)\n");
    return MOE_EXIT_OK;
}

/* validate: the matched A/B profiles of its profiling twins, into extra
 * as "profile_pairs" (timing never reads a twin: study_report.c). */
static int profile_pairs(const struct moe_study_view *v, json_t *extra)
{
    struct moe_error err;
    json_t *pairs;

    if (strcmp(v->stage, "validate") != 0)
        return MOE_EXIT_OK;
    moe_error_clear(&err);
    if (!(pairs = moe_profile_pairs_of_study(v->study, 10, &err)))
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    /* checked: as the checkpoint verdict */
    if (json_object_set_new(extra, "profile_pairs", pairs) < 0)
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow report: report.json: the matched "
                             "profiles could not be added (out of memory)\n");
    return MOE_EXIT_OK;
}

/* A run's median step (ms), NAN when it has none. */
static double median_of(const struct moe_report_run *runs, size_t nruns, const char *name)
{
    for (size_t i = 0; name && i < nruns; i++)
        if (strcmp(runs[i].name, name) == 0)
            return runs[i].n ? runs[i].step_median : NAN;
    return NAN;
}

/* Each matched profile against the timed runs it twins (runs[0]: the
 * baseline, the stage's reference), over the report's window. */
static int reconcile_pairs(json_t *extra, const struct moe_report_run *runs, size_t nruns,
                           long first, long last)
{
    json_t *pairs = json_object_get(extra, "profile_pairs"), *p;
    size_t i;

    json_array_foreach(pairs, i, p) {
        const char *label = json_string_value(json_object_get(p, "label"));

        struct moe_error err = { 0 };

        if (moe_profile_pair_reconcile(p, runs[0].n ? runs[0].step_median : NAN,
                                       median_of(runs, nruns, label), first, last, &err) < 0) {
            moe_error_within(&err, "profile_pairs[%zu]", i);
            return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
        }
    }
    return MOE_EXIT_OK;
}

/* One row per candidate of a stage of a generated study, against the
 * stage's own reference, over the study's window for it. */
/* One decision of the trail as report.json lists it. */
static json_t *decision_json(struct moe_jb *b, const json_t *e)
{
    const json_t *d = json_object_get(e, "decision");
    json_t *o = json_object();

    moe_jb_copy(b, o, "file", json_object_get(e, "file"));
    moe_jb_copy(b, o, "sha256", json_object_get(e, "digest"));
    moe_jb_copy(b, o, "stage", json_object_get(d, "stage"));
    moe_jb_copy(b, o, "round", json_object_get(d, "round"));
    moe_jb_copy(b, o, "rule", json_object_get(d, "rule"));
    moe_jb_set(b, o, "chose", moe_decision_said(d));
    return moe_jb_done(b, o);
}

/* The study's decisions (moeflow run's trail), sealed, into extra; a
 * trail that is not sealed is said, not trusted.  MOE_EXIT_OK, or the exit
 * code with the key that could not be made said. */
static int trail(const char *study, json_t *extra)
{
    struct moe_error err, jerr;
    json_t *t = moe_contract_load_trail(study, (moe_error_clear(&err), &err)), *e, *out;
    struct moe_jb b;
    size_t i;

    moe_error_clear(&jerr);
    moe_jb_init(&b, &jerr);
    if (!t) {
        moe_jb_str(&b, extra, "decisions_error", err.text);
    } else {
        out = json_array();
        json_array_foreach(t, i, e)
            moe_jb_append(&b, out, decision_json(&b, e));
        moe_jb_within(&b, "decisions");
        if (json_array_size(out)) /* a study moeflow run has not driven: report.json as before */
            moe_jb_set(&b, extra, "decisions", out);
        else
            json_decref(out);
        json_decref(t);
    }
    if (!b.failed)
        return MOE_EXIT_OK;
    return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow report: report.json: %s\n", jerr.text);
}

static void print_trail(const char *study, const json_t *extra)
{
    const json_t *out = json_object_get(extra, "decisions"), *e;
    const char *bad = json_string_value(json_object_get(extra, "decisions_error"));
    size_t i;

    if (bad)
        printf("decisions: NOT TRUSTED: %s\n", bad);
    if (json_array_size(out))
        printf("decisions (moeflow run's trail, each sealed; %s/" MOE_STUDY_DECISIONS "):\n",
               study);
    json_array_foreach(out, i, e)
        printf("  %-18s %-8s round %" JSON_INTEGER_FORMAT ": %s (rule %s)\n",
               json_string_value(json_object_get(e, "file")) + strlen(MOE_STUDY_DECISIONS "/"),
               json_string_value(json_object_get(e, "stage")),
               json_integer_value(json_object_get(e, "round")),
               json_string_value(json_object_get(e, "chose")),
               json_string_value(json_object_get(e, "rule")));
}

static int report_study(const char *study, const char *stage, const struct report_args *a)
{
    struct moe_study_view v;
    struct moe_report_run *runs;
    struct progress pg = { 0 };
    struct moe_report_reader rd;
    struct moe_error err;
    json_t *extra = NULL, *skipped;
    struct moe_ckpt_verdict *ck = NULL;
    char ck_id[128] = "";
    size_t nruns = 0;
    int rc;

    moe_error_clear(&err);
    if (moe_study_view_load(study, stage, &v, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    rd = reader(a, a->window_given ? a->first : v.first, a->window_given ? a->last : v.last, &pg);
    runs = calloc(v.n + 1, sizeof(*runs));
    skipped = json_array();
    if (!runs || !skipped)
        rc = moe_cli_error(MOE_EXIT_SYSTEM, "moeflow report: out of memory\n");
    else if ((rc = load_stage(&v, &rd, runs, &nruns, skipped)) == MOE_EXIT_OK &&
             (rc = expected_runs_exist(a, runs, nruns, skipped)) == MOE_EXIT_OK) {
        if (!(extra = study_header(&v, a, rd.first, rd.last, skipped, &err)))
            rc = moe_cli_error(MOE_EXIT_SYSTEM, "moeflow report: report.json: %s\n", err.text);
        else
            rc = checkpoint_verdict(&v, extra, &ck, ck_id, sizeof(ck_id));
        if (rc == MOE_EXIT_OK)
            rc = profile_pairs(&v, extra);
        if (rc == MOE_EXIT_OK)
            rc = reconcile_pairs(extra, runs, nruns, rd.first, rd.last);
        if (rc == MOE_EXIT_OK)
            rc = trail(study, extra);
        if (rc == MOE_EXIT_OK) {
            rc = emit(runs, nruns, &a->ropts, a->json, a->outdir, extra);
        }
        if (rc == MOE_EXIT_OK && !a->json) {
            print_trail(study, extra);
            print_skipped(skipped);
            moe_report_print_profile_pairs(json_object_get(extra, "profile_pairs"));
            if (ck)
                moe_ckpt_verdict_print(stdout, ck, ck_id);
        }
        if (rc == MOE_EXIT_OK && a->winners)
            rc = record_winners(&v, runs, nruns, &a->ropts);
    }
    for (size_t i = 0; i < nruns; i++)
        moe_report_run_free(&runs[i]);
    free(runs);
    json_decref(skipped);
    json_decref(extra);
    free(ck);
    moe_study_view_free(&v);
    return rc;
}

/* Runs given one by one, the first as the baseline.  A run of a generated
 * study is named by its variable and value, and reported over the study's
 * window for its stage. */
static int report_files(const struct report_args *a, char **paths, int n)
{
    struct moe_report_run *runs = calloc((size_t)n, sizeof(*runs));
    struct progress pg = { .tty = isatty(STDERR_FILENO), .total = moe_report_count_logs(paths, n) };
    struct moe_study_where where;
    struct moe_error err;
    size_t nruns = 0;
    int rc = MOE_EXIT_OK;

    moe_error_clear(&err);
    if (!runs) {
        moe_error_set(&err, "out of memory");
        return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    }
    for (int i = 0; i < n && rc == MOE_EXIT_OK; i++) {
        int loc = moe_study_locate(paths[i], &where, &err);
        bool in_study = loc == 1 && where.cand.id[0];
        struct moe_report_reader rd =
            reader(a, in_study && !a->window_given ? where.first : a->first,
                   in_study && !a->window_given ? where.last : a->last, &pg);

        if (loc < 0 ||
            moe_report_load_run(paths[i], in_study ? where.cand.label : NULL, &rd, &runs[nruns],
                                &err) < 0)
            rc = MOE_EXIT_INVALID_INPUT;
        else
            nruns++;
        moe_study_where_free(&where);
    }
    if (pg.tty && pg.total > 1)
        fputc('\n', stderr);
    if (rc != MOE_EXIT_OK)
        rc = moe_cli_fail(&err, rc);
    else if ((rc = expected_runs_exist(a, runs, nruns, NULL)) == MOE_EXIT_OK)
        rc = emit(runs, nruns, &a->ropts, a->json, a->outdir, NULL);
    for (size_t i = 0; i < nruns; i++)
        moe_report_run_free(&runs[i]);
    free(runs);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    struct report_args a = { .ropts = { MOE_REPORT_ALPHA, MOE_REPORT_MIN_EFFECT },
                             .first = MOE_REPORT_FIRST, .last = MOE_REPORT_LAST };
    struct moe_study_where where;
    struct moe_error err;
    int first, rc = moe_cli_parse(&report_cli, argc, argv, &a, &first);

    if (rc != MOE_CLI_RUN)
        return rc;
    if (first >= argc)
        return moe_cli_misuse(&report_cli);
    if (a.pack_dir && !a.pack)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow report: --pack-dir goes with --pack\n");
    if ((a.pack_dir && !a.pack_dir[0]) || (a.outdir && !a.outdir[0]))
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow: %s: an empty path names no folder\n",
                             a.outdir && !a.outdir[0] ? "-o" : "--pack-dir");
    moe_error_clear(&err);
    if (argc - first == 1) {
        int loc = moe_study_locate(argv[first], &where, &err), done = 1;

        if (loc < 0)
            rc = moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
        else if (loc == 1 && !where.cand.id[0] && !where.stage[0] && a.pack)
            rc = moe_report_pack(where.study, a.pack_dir, &a.ropts);
        else if (loc == 1 && !where.cand.id[0] && a.stage && strcmp(a.stage, "fit") == 0)
            rc = moe_report_fit(where.study, argv[first], a.json);
        else if (loc == 1 && !where.cand.id[0])
            rc = report_study(where.study, a.stage ? a.stage : where.stage, &a);
        else
            done = 0;
        moe_study_where_free(&where);
        if (done)
            return rc;
    }
    if (a.stage || a.winners || a.pack)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow report: --%s needs one study directory "
                             "(the folder moeflow gen wrote, with its " MOE_STUDY_MANIFEST ")\n",
                             a.stage ? "stage" : a.winners ? "record-winners" : "pack");
    return report_files(&a, argv + first, argc - first);
}
