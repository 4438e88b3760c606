/* moeflow diagnose: the main bottleneck and its retune candidates. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"
#include "core/text.h"
#include "options.h"
#include "analysis/diagnose.h"
#include "analysis/diagnose_profile.h"
#include "core/json_build.h"
#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/manifest.h"
#include "core/study_dir.h"
#include "analysis/report.h"
#include "analysis/report_runs.h"
#include "analysis/study_report.h"
#include "study/study.h"

struct diagnose_args {
    const char *run, *stage;
    double capacity; /* bytes; 0: not given */
    bool json;
};

static int set_capacity(void *args, const struct moe_opt *o, char *value)
{
    struct diagnose_args *a = args;
    double gib;
    int rc = moe_cli_double(o->name, value, 0, true, 1 << 20, &gib);

    if (rc == MOE_CLI_RUN)
        a->capacity = gib * 1073741824.0;
    return rc;
}

/* --capacity-gib: the name this option had before fit and layouts'
 * --gpu-mem-gib became every command's. */
static int set_capacity_old(void *args, const struct moe_opt *o, char *value)
{
    moe_cli_note_alias("--capacity-gib", "--gpu-mem-gib");
    return set_capacity(args, o, value);
}

/* "  - VARIABLE: what it changes" for each retune candidate of b. */
static void print_candidates(enum moe_bottleneck b)
{
    const struct moe_retune_entry *c[MOE_RETUNE_COUNT];
    size_t n = moe_diagnose_candidates(b, c, MOE_RETUNE_COUNT);

    for (size_t i = 0; i < n; i++)
        printf("  - %s: %s\n", c[i]->variable, c[i]->what);
}

/* --list B answers at once: no report needed. */
static int list_candidates(void *args, const struct moe_opt *o, char *value)
{
    enum moe_bottleneck b = moe_bottleneck_parse(value);

    (void)args;
    (void)o;
    if (b == MOE_BOTTLENECK_COUNT)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow diagnose: --list '%s': expected memory, "
                             "communication, host or compute\n", value);
    printf("retune candidates (moeflow gen --stage retune --for %s):\n", value);
    print_candidates(b);
    return MOE_EXIT_OK;
}

static const struct moe_opt diagnose_opts[] = {
    { "run", required_argument, 'r', "NAME",
      "the run to diagnose (default: the report's baseline)", .set = moe_opt_string,
      .field = offsetof(struct diagnose_args, run) },
    { "gpu-mem-gib", required_argument, 'c', "G",
      "GPU memory, to judge how near capacity the peak is", .set = set_capacity },
    { "capacity-gib", required_argument, 0, "G", NULL, .set = set_capacity_old },
    { "stage", required_argument, 's', "STAGE",
      "with a STUDY_DIR: the stage whose runs to read (default:\n"
      "the one moeflow report reads); profile: its kernel traces", .set = moe_opt_string,
      .field = offsetof(struct diagnose_args, stage) },
    { "json", no_argument, 'j', NULL, "machine-readable output", .set = moe_opt_flag,
      .field = offsetof(struct diagnose_args, json) },
    { "list", required_argument, 'l', "B",
      "print the retune candidates for bottleneck B (memory,\n"
      "communication, host, compute) without diagnosing", .set = list_candidates },
    { .name = NULL },
};

static const struct moe_cli diagnose_cli = {
    .usage = "usage: moeflow diagnose [--run NAME] [--gpu-mem-gib G] [--json] REPORT [OVERLAP]\n"
             "       moeflow diagnose [--stage STAGE] [options] STUDY_DIR [OVERLAP]\n"
             "       moeflow diagnose --list BOTTLENECK\n"
             "\n"
             "REPORT: report.json from moeflow report (or its -o directory), or a study\n"
             "directory, whose stage is read as moeflow report reads it; OVERLAP: the\n"
             "output of moeflow overlap --json.  Classifies the bottleneck as memory,\n"
             "communication, host or compute, and prints the matching retune candidates\n"
             "(for moeflow gen --stage retune --for BOTTLENECK).  With --stage profile\n"
             "it reads the profile stage's kernel traces under "
             MOE_STUDY_RESULTS "/profile and the\n"
             "fit stage's peak memory, and prints what it measured and the retune axes\n"
             "it skips, with why.\n",
    .opts = diagnose_opts,
    .column = 20,
    .tail = "\nexample: moeflow diagnose --gpu-mem-gib 141 out/report.json overlap.json\n"
            "         moeflow diagnose --json tiny-study --stage profile\n",
};

/* A study directory's stage as moeflow report would report it: its
 * report.json, built here, never read from a file. */
static json_t *study_report(const char *study, const char *stage, struct moe_error *err)
{
    struct moe_study_view v;
    struct moe_report_opts o = { MOE_REPORT_ALPHA, MOE_REPORT_MIN_EFFECT };
    struct moe_report_reader rd = { 0 };
    struct moe_report_run *runs;
    json_t *j = NULL, *skipped = json_array();
    size_t n = 0;

    if (moe_study_view_load(study, stage, &v, err) < 0) {
        json_decref(skipped);
        return NULL;
    }
    rd.first = v.first;
    rd.last = v.last;
    runs = calloc(v.n + 1, sizeof(*runs));
    if (!runs || !skipped)
        moe_error_set(err, "out of memory");
    else if (moe_report_load_study_run(&v, &v.ref, "baseline", &rd, &runs[0], err) == 0)
        n = 1 + moe_report_load_candidates(&v, &rd, runs + 1, skipped);
    if (n && !(j = moe_report_to_json(runs, n, &o, err)))
        moe_error_within(err, "%s: its report could not be built", study);
    for (size_t i = 0; i < n; i++)
        moe_report_run_free(&runs[i]);
    free(runs);
    json_decref(skipped);
    moe_study_view_free(&v);
    return j;
}

/* REPORT or OVERLAP; a directory is report's -o folder: its report.json. */
static json_t *load(const char *path, const char *what, struct moe_error *err)
{
    struct stat st;
    char *inside;
    json_t *j;

    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return moe_read_json(path, what, err);
    if (!(inside = moe_path_join(path, MOE_STUDY_REPORT_JSON))) {
        moe_error_set(err, "out of memory");
        return NULL;
    }
    j = moe_read_json(inside, what, err);
    free(inside);
    return j;
}

/* The run named name (the first when name is NULL), or NULL with err.
 * Every run must carry its name: it is how a run is picked and shown, and
 * a report without one is not moeflow report's report.json. */
static const json_t *pick_run(const json_t *report, const char *name, const char *path,
                              struct moe_error *err)
{
    const json_t *runs = json_object_get(report, "runs"), *r;
    size_t i;

    json_array_foreach(runs, i, r) {
        const char *rn = json_string_value(json_object_get(r, "name"));

        if (!rn) {
            moe_error_at(err, path, 0, 0, "runs[%zu] has no name (expected report.json from "
                         "moeflow report)", i);
            return NULL;
        }
        if (!name || strcmp(rn, name) == 0)
            return r;
    }
    moe_error_at(err, path, 0, 0, "no run%s%s in the report", name ? " " : "", name ? name : "");
    return NULL;
}

/* What the diagnosis rests on, beyond the report's run. */
struct evidence {
    const char *what;                       /* where the overlap came from, in words */
    const struct moe_profile_evidence *pe;  /* --stage profile; NULL otherwise */
    double capacity_mib;                    /* 0: unknown */
    const char *capacity_from;              /* "declared", "--gpu-mem-gib" */
};

/* A measurement that may be missing: a negative value means "not
 * measured" and is written null, as is NaN; an infinity is recorded
 * (json_build.h). */
static int num_or_null(struct moe_jb *b, json_t *m, const char *key, double v)
{
    return isfinite(v) && v < 0 ? moe_jb_set(b, m, key, json_null()) : moe_jb_num_opt(b, m, key, v);
}

/* key = v when has, else null. */
static int num_if(struct moe_jb *b, json_t *m, const char *key, bool has, double v)
{
    return has ? moe_jb_num(b, m, key, v) : moe_jb_set(b, m, key, json_null());
}

static json_t *measured_json(struct moe_jb *b, const struct moe_diagnosis *d)
{
    const struct moe_straggler *s = &d->straggler;
    json_t *m = json_object();
    bool st = s->ranks >= 2;

    num_or_null(b, m, "gpu_busy_fraction", d->busy_fraction);
    num_or_null(b, m, "window_ms", d->window_ms);
    num_or_null(b, m, "busy_ms", d->busy_ms);
    num_or_null(b, m, "exposed_comm_fraction", d->exposed_fraction);
    num_or_null(b, m, "exposed_comm_ms", d->exposed_ms);
    num_or_null(b, m, "comm_ms", d->comm_ms);
    num_or_null(b, m, "hidden_comm_ms", d->hidden_ms);
    num_or_null(b, m, "hidden_comm_pct", d->hidden_pct);
    num_or_null(b, m, "idle_fraction", d->idle_fraction);
    num_or_null(b, m, "idle_ms", d->idle_ms);
    moe_jb_set(b, m, "idle_gaps", d->gaps >= 0 ? json_integer(d->gaps) : json_null());
    num_or_null(b, m, "max_gap_ms", d->max_gap_ms);
    num_or_null(b, m, "short_kernel_fraction", d->short_fraction);
    num_or_null(b, m, "memory_fraction", d->memory_fraction);
    moe_jb_int(b, m, "ranks", (json_int_t)s->ranks);
    moe_jb_set(b, m, "straggler_rank", st ? json_integer(s->rank) : json_null());
    moe_jb_str_opt(b, m, "straggler_trace", st ? s->trace : NULL);
    num_if(b, m, "straggler_work_ms", st, s->work_ms);
    num_if(b, m, "median_work_ms", st, s->median_ms);
    num_if(b, m, "straggler_behind_ms", st, s->behind_ms);
    num_if(b, m, "straggler_behind_pct", st, 100 * s->behind_fraction);
    moe_jb_bool(b, m, "straggler", st && s->behind_fraction >= MOE_DIAG_STRAGGLER);
    return moe_jb_done(b, m);
}

/* The memory evidence: measured (the fit run's log), modeled (the memory
 * model's prediction), declared (the contract's GPU memory). */
static json_t *memory_json(struct moe_jb *b, const struct evidence *ev)
{
    const struct moe_profile_evidence *pe = ev->pe;
    double peak = pe ? pe->fit_measured_mib : NAN;
    bool fit = pe && pe->fit_id[0];
    json_t *m = json_object();

    moe_jb_str(b, m, "status", !isnan(peak) ? "measured" : "unknown");
    num_or_null(b, m, "measured_peak_mib", peak);
    num_or_null(b, m, "modeled_peak_mib", pe ? pe->fit_predicted_mib : NAN);
    num_or_null(b, m, "capacity_mib", ev->capacity_mib > 0 ? ev->capacity_mib : NAN);
    moe_jb_str_opt(b, m, "capacity_from", ev->capacity_mib > 0 ? ev->capacity_from : NULL);
    num_or_null(b, m, "headroom_mib",
                !isnan(peak) && ev->capacity_mib > 0 ? ev->capacity_mib - peak : NAN);
    moe_jb_str_opt(b, m, "fit_run", fit ? pe->fit_id : NULL);
    moe_jb_str_opt(b, m, "fit_label", fit ? pe->fit_label : NULL);
    moe_jb_str_opt(b, m, "fit_verdict", fit ? pe->fit_verdict : NULL);
    return moe_jb_done(b, m);
}

static json_t *skipped_json(struct moe_jb *b, const struct moe_diagnosis *d)
{
    json_t *list = json_array();
    char why[512];

    for (int a = 0; a < MOE_RETUNE_COUNT; a++) {
        const struct moe_retune_entry *e = moe_retune_entry((enum moe_retune_axis)a);
        json_t *o;

        if (!moe_diagnose_skip_reason(d, e, why, sizeof(why)))
            continue;
        o = json_object();
        moe_jb_str(b, o, "variable", e->variable);
        moe_jb_str(b, o, "targets", moe_bottleneck_name(e->bottleneck));
        moe_jb_str(b, o, "reason", why);
        moe_jb_append(b, list, moe_jb_done(b, o));
    }
    return moe_jb_done(b, list);
}

static json_t *thresholds_json(struct moe_jb *b)
{
    json_t *t = json_object();

    moe_jb_num(b, t, "memory_fraction", MOE_DIAG_MEMORY_NEAR);
    moe_jb_num(b, t, "exposed_comm_fraction", MOE_DIAG_EXPOSED_COMM);
    moe_jb_num(b, t, "idle_fraction", MOE_DIAG_IDLE);
    moe_jb_num(b, t, "short_kernel_fraction", MOE_DIAG_SHORT_KERNELS);
    moe_jb_num(b, t, "straggler_fraction", MOE_DIAG_STRAGGLER);
    return moe_jb_done(b, t);
}

static json_t *candidates_json(struct moe_jb *b, enum moe_bottleneck bn)
{
    const struct moe_retune_entry *c[MOE_RETUNE_COUNT];
    size_t n = moe_diagnose_candidates(bn, c, MOE_RETUNE_COUNT);
    json_t *list = json_array();

    for (size_t i = 0; i < n; i++)
        moe_jb_append(b, list, json_sprintf("%s: %s", c[i]->variable, c[i]->what));
    return moe_jb_done(b, list);
}

/* The profile's contention, measured, and what gen --contention makes of
 * it for the dispatcher SM counts (lib/study/candidates.c). */
static const char *contention_use(double pct)
{
    if (isnan(pct))
        return "unknown: retune screens dispatcher_sms with the whole catalogue";
    return pct < MOE_CONTENTION_MIN_PCT ? "under the threshold: retune skips dispatcher_sms"
                                        : "at or over the threshold: retune screens dispatcher_sms";
}

static json_t *contention_json(struct moe_jb *b, const struct moe_profile_evidence *pe)
{
    json_t *c = json_object();

    moe_jb_str(b, c, "source", "measured, trace: compute kernels beside communication "
               "against the same kernels alone");
    num_or_null(b, c, "slowdown_pct", pe->contention_pct);
    moe_jb_num(b, c, "threshold_pct", MOE_CONTENTION_MIN_PCT);
    moe_jb_str(b, c, "dispatcher_sms", contention_use(pe->contention_pct));
    return moe_jb_done(b, c);
}

static void print_contention(const struct moe_profile_evidence *pe)
{
    if (!pe)
        return;
    if (isnan(pe->contention_pct))
        printf("  contention (measured, trace): no compute kernel ran both alone and beside "
               "communication; %s\n", contention_use(pe->contention_pct));
    else
        printf("  contention (measured, trace): compute kernels %.1f%% slower beside "
               "communication than alone (threshold %.0f%%): %s\n", pe->contention_pct,
               MOE_CONTENTION_MIN_PCT, contention_use(pe->contention_pct));
}

/* The diagnosis as --json prints it; -1 with err (naming the key) when a
 * value could not be made: never a document missing a key. */
static int print_json(const json_t *run, const struct moe_diagnosis *d, const struct evidence *ev,
                      struct moe_error *err)
{
    struct moe_jb b;
    json_t *j = json_object();

    moe_jb_init(&b, err);
    moe_jb_copy(&b, j, "run", json_object_get(run, "name"));
    moe_jb_str(&b, j, "bottleneck", moe_bottleneck_name(d->bottleneck));
    moe_jb_str(&b, j, "reason", d->reason);
    moe_jb_set(&b, j, "retune_candidates", candidates_json(&b, d->bottleneck));
    moe_jb_set(&b, j, "skipped_axes", skipped_json(&b, d));
    moe_jb_set(&b, j, "measured", measured_json(&b, d));
    moe_jb_set(&b, j, "memory", memory_json(&b, ev));
    moe_jb_set(&b, j, "thresholds", thresholds_json(&b));
    moe_jb_str_opt(&b, j, "measured_from", ev->what);
    moe_jb_set(&b, j, "sources", ev->pe ? json_incref(ev->pe->sources) : json_array());
    if (ev->pe)
        moe_jb_set(&b, j, "contention", contention_json(&b, ev->pe));
    if (ev->pe)
        moe_jb_set(&b, j, "profiled_steps",
                   moe_jb_pack(&b, "[I,I]", (json_int_t)ev->pe->first, (json_int_t)ev->pe->last));
    if (!(j = moe_jb_done(&b, j)))
        return -1;
    if (moe_cli_json(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15)) < 0) {
        moe_error_set(err, "the diagnosis could not be written to standard output");
        return -1;
    }
    return 0;
}

static void print_sources(const struct evidence *ev)
{
    char shown[1024];
    size_t i;
    const json_t *s;

    if (!ev->pe)
        return;
    printf("traces read (steps %ld-%ld):\n", ev->pe->first, ev->pe->last);
    json_array_foreach(ev->pe->sources, i, s) {
        printf("  %s\n", moe_text_visible(json_string_value(s), shown, sizeof(shown)));
    }
}

static void print_straggler(const struct moe_straggler *s)
{
    char shown[300];

    if (s->ranks < 2) {
        printf("  straggler (measured, trace): none to name: one GPU's trace\n");
        return;
    }
    printf("  straggler (measured, trace): rank %d (%s): own work %.1f ms, %.1f ms (%.1f%%) %s "
           "the median %.1f ms of %zu ranks%s\n", s->rank,
           moe_text_visible(s->trace, shown, sizeof(shown)), s->work_ms, fabs(s->behind_ms),
           100 * fabs(s->behind_fraction), s->behind_ms >= 0 ? "over" : "under", s->median_ms,
           s->ranks, s->behind_fraction >= MOE_DIAG_STRAGGLER ? "" : ": the ranks are even");
}

/* The trace measurements, each saying where it comes from. */
static void print_measured(const struct moe_diagnosis *d, const struct evidence *ev)
{
    if (d->busy_fraction < 0) {
        printf("measured: no profile read; communication and host are not measured\n");
        return;
    }
    print_sources(ev);
    printf("  GPU busy (measured, trace): %.1f%% of the profiled window (%.1f of %.1f ms of "
           "GPU time)\n", 100 * d->busy_fraction, d->busy_ms, d->window_ms);
    printf("  communication (measured, trace): hidden %.1f ms (%.2f%% of %.1f ms), exposed %.1f "
           "ms (%.1f%% of the window)\n", d->hidden_ms, d->hidden_pct < 0 ? 0.0 : d->hidden_pct,
           d->comm_ms, d->exposed_ms, 100 * d->exposed_fraction);
    printf("  host gaps (measured, trace): GPUs idle %.1f ms (%.1f%% of the window) in %ld gaps, "
           "the longest %.3f ms; %.1f%% of kernels under 10 us\n", d->idle_ms,
           100 * d->idle_fraction, d->gaps, d->max_gap_ms, 100 * d->short_fraction);
    print_straggler(&d->straggler);
}

static void print_memory(const struct evidence *ev)
{
    const struct moe_profile_evidence *pe = ev->pe;
    char shown[300];

    if (!pe)
        return;
    if (isnan(pe->fit_measured_mib)) {
        printf("  memory headroom: unknown (no fit run of this layout and recompute measured a "
               "peak%s%s)", pe->fit_id[0] ? ": " : "",
               pe->fit_id[0] ? moe_text_visible(pe->fit_verdict, shown, sizeof(shown)) : "");
        if (!isnan(pe->fit_predicted_mib))
            printf("; modeled peak %.0f MiB (the memory model, not a measurement)",
                   pe->fit_predicted_mib);
        printf("\n");
        return;
    }
    printf("  memory (measured, fit log): peak %.0f MiB in fit run %.12s (%s)", pe->fit_measured_mib,
           pe->fit_id, moe_text_visible(pe->fit_label, shown, sizeof(shown)));
    if (!isnan(pe->fit_predicted_mib))
        printf("; modeled %.0f MiB", pe->fit_predicted_mib);
    if (ev->capacity_mib > 0)
        printf("; headroom %.0f MiB of %.0f MiB (%s)", ev->capacity_mib - pe->fit_measured_mib,
               ev->capacity_mib, ev->capacity_from);
    printf("\n");
}

static void print_skipped(const struct moe_diagnosis *d)
{
    char why[512];

    printf("skipped axes (they target another bottleneck):\n");
    for (int a = 0; a < MOE_RETUNE_COUNT; a++) {
        const struct moe_retune_entry *e = moe_retune_entry((enum moe_retune_axis)a);

        if (moe_diagnose_skip_reason(d, e, why, sizeof(why)))
            printf("  - %s: %s\n", e->variable, why);
    }
}

static int print_diagnosis(const json_t *run, const struct moe_diagnosis *d,
                           const struct evidence *ev, bool json, struct moe_error *err)
{
    char shown[1024]; /* a run is named after its log file: shown without control characters */

    if (json)
        return print_json(run, d, ev, err);
    printf("%s: %s bottleneck: %s\n",
           moe_text_visible(json_string_value(json_object_get(run, "name")), shown, sizeof(shown)),
           moe_bottleneck_name(d->bottleneck), d->reason);
    print_measured(d, ev);
    print_contention(ev->pe);
    print_memory(ev);
    printf("retune candidates (moeflow gen --stage retune --for %s):\n",
           moe_bottleneck_name(d->bottleneck));
    print_candidates(d->bottleneck);
    print_skipped(d);
    return 0;
}

/* STUDY_DIR --stage profile: the profile stage's own traces and the fit
 * stage's memory, or -1 with err. */
static int diagnose_profile(const struct diagnose_args *a, const char *study,
                            struct moe_error *err)
{
    struct moe_profile_evidence pe;
    struct evidence ev = { "the profile stage's kernel traces", &pe, a->capacity / 1048576.0,
                           "--gpu-mem-gib" };
    struct moe_diagnosis d;
    int rc;

    if (moe_profile_evidence_load(study, &pe, err) < 0)
        return -1;
    if (ev.capacity_mib <= 0) {
        ev.capacity_mib = pe.capacity_mib;
        ev.capacity_from = "declared in the contract";
    }
    rc = moe_diagnose(pe.run, pe.overlap, ev.capacity_mib * 1048576.0, &d, err);
    if (rc == 0)
        rc = print_diagnosis(pe.run, &d, &ev, a->json, err);
    moe_profile_evidence_free(&pe);
    return rc;
}

/* REPORT [OVERLAP]: the run's diagnosis, or -1 with err. */
static int diagnose(const struct diagnose_args *a, char **files, int n, struct moe_error *err)
{
    json_t *report = moe_study_is_dir(files[0]) ? study_report(files[0], a->stage, err)
                                                : load(files[0], "report", err);
    json_t *overlap = NULL;
    const json_t *run;
    struct moe_diagnosis d;
    struct evidence ev = { NULL, NULL, a->capacity / 1048576.0, "--gpu-mem-gib" };
    int rc = -1;

    if (report && n > 1)
        overlap = load(files[1], "overlap", err);
    if (!report || (n > 1 && !overlap))
        goto out;
    if (overlap)
        ev.what = "moeflow overlap --json (OVERLAP)";
    run = pick_run(report, a->run, files[0], err);
    if (run && (rc = moe_diagnose(run, overlap, a->capacity, &d, err)) == 0)
        rc = print_diagnosis(run, &d, &ev, a->json, err);
    else if (run && overlap && !err->source[0])
        moe_error_locate(err, files[1], 0, 0); /* what is wrong is in OVERLAP */
out:
    json_decref(report);
    json_decref(overlap);
    return rc;
}

int cmd_diagnose(int argc, char **argv)
{
    struct diagnose_args a = { 0 };
    struct moe_error err;
    int first, rc = moe_cli_parse(&diagnose_cli, argc, argv, &a, &first);

    if (rc != MOE_CLI_RUN)
        return rc;
    if (first >= argc || argc - first > 2)
        return moe_cli_misuse(&diagnose_cli);
    if (a.stage && !moe_study_is_dir(argv[first]))
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow diagnose: --stage needs a study directory "
                             "(the folder moeflow gen wrote, with its " MOE_STUDY_MANIFEST ")\n");
    if (a.stage && strcmp(a.stage, "profile") == 0 && (a.run || argc - first > 1))
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow diagnose: --stage profile reads the profile "
                             "stage's own traces and its baseline: no --run, no OVERLAP\n");
    moe_error_clear(&err);
    if (a.stage && strcmp(a.stage, "profile") == 0 ? diagnose_profile(&a, argv[first], &err) < 0
                                                   : diagnose(&a, argv + first, argc - first, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    return MOE_EXIT_OK;
}
