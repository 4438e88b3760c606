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
#include "core/readfile.h"
#include "core/manifest.h"
#include "core/study_dir.h"
#include "analysis/report.h"
#include "analysis/report_runs.h"
#include "analysis/study_report.h"

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
    { "capacity-gib", required_argument, 'c', "G",
      "GPU memory, to judge how near capacity the peak is", .set = set_capacity },
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
    .usage = "usage: moeflow diagnose [--run NAME] [--capacity-gib G] [--json] REPORT [OVERLAP]\n"
             "       moeflow diagnose [--stage STAGE] [options] STUDY_DIR [OVERLAP]\n"
             "       moeflow diagnose --list BOTTLENECK\n"
             "\n"
             "REPORT: report.json from moeflow report (or its -o directory), or a study\n"
             "directory, whose stage is read as moeflow report reads it; OVERLAP: the\n"
             "output of moeflow overlap --json.  Classifies the bottleneck as memory,\n"
             "communication, host or compute, and prints the matching retune candidates\n"
             "(for moeflow gen --stage retune --for BOTTLENECK).  With --stage profile\n"
             "it reads the profile stage's kernel traces under " MOE_STUDY_RESULTS
             "/profile and the\n"
             "fit stage's peak memory, and prints what it measured and the retune axes\n"
             "it skips, with why.\n",
    .opts = diagnose_opts,
    .column = 20,
    .tail = "\nexample: moeflow diagnose --capacity-gib 141 out/report.json overlap.json\n"
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
    if (n)
        j = moe_report_to_json(runs, n, &o);
    for (size_t i = 0; i < n; i++)
        moe_report_run_free(&runs[i]);
    free(runs);
    json_decref(skipped);
    moe_study_view_free(&v);
    return j;
}

static json_t *load(const char *path, const char *what, struct moe_error *err)
{
    char buf[4096];
    struct stat st;

    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(buf, sizeof(buf), "%s/report.json", path);
        path = buf;
    }
    return moe_read_json(path, what, err);
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
    const char *capacity_from;              /* "declared", "--capacity-gib" */
};

static json_t *num_or_null(double v)
{
    return v >= 0 && isfinite(v) ? json_real(v) : json_null();
}

static json_t *measured_json(const struct moe_diagnosis *d)
{
    const struct moe_straggler *s = &d->straggler;
    json_t *m = json_object();
    bool st = s->ranks >= 2;

    json_object_set_new(m, "gpu_busy_fraction", num_or_null(d->busy_fraction));
    json_object_set_new(m, "window_ms", num_or_null(d->window_ms));
    json_object_set_new(m, "busy_ms", num_or_null(d->busy_ms));
    json_object_set_new(m, "exposed_comm_fraction", num_or_null(d->exposed_fraction));
    json_object_set_new(m, "exposed_comm_ms", num_or_null(d->exposed_ms));
    json_object_set_new(m, "comm_ms", num_or_null(d->comm_ms));
    json_object_set_new(m, "hidden_comm_ms", num_or_null(d->hidden_ms));
    json_object_set_new(m, "hidden_comm_pct", num_or_null(d->hidden_pct));
    json_object_set_new(m, "idle_fraction", num_or_null(d->idle_fraction));
    json_object_set_new(m, "idle_ms", num_or_null(d->idle_ms));
    json_object_set_new(m, "idle_gaps", d->gaps >= 0 ? json_integer(d->gaps) : json_null());
    json_object_set_new(m, "max_gap_ms", num_or_null(d->max_gap_ms));
    json_object_set_new(m, "short_kernel_fraction", num_or_null(d->short_fraction));
    json_object_set_new(m, "memory_fraction", num_or_null(d->memory_fraction));
    json_object_set_new(m, "ranks", json_integer((json_int_t)s->ranks));
    json_object_set_new(m, "straggler_rank", st ? json_integer(s->rank) : json_null());
    json_object_set_new(m, "straggler_trace", st ? json_string(s->trace) : json_null());
    json_object_set_new(m, "straggler_work_ms", st ? json_real(s->work_ms) : json_null());
    json_object_set_new(m, "median_work_ms", st ? json_real(s->median_ms) : json_null());
    json_object_set_new(m, "straggler_behind_ms", st ? json_real(s->behind_ms) : json_null());
    json_object_set_new(m, "straggler_behind_pct",
                        st ? json_real(100 * s->behind_fraction) : json_null());
    json_object_set_new(m, "straggler", json_boolean(st && s->behind_fraction >= MOE_DIAG_STRAGGLER));
    return m;
}

/* The memory evidence: measured (the fit run's log), modeled (the memory
 * model's prediction), declared (the contract's GPU memory). */
static json_t *memory_json(const struct evidence *ev)
{
    const struct moe_profile_evidence *pe = ev->pe;
    double peak = pe ? pe->fit_measured_mib : NAN;
    json_t *m = json_object();

    json_object_set_new(m, "status", json_string(!isnan(peak) ? "measured" : "unknown"));
    json_object_set_new(m, "measured_peak_mib", num_or_null(peak));
    json_object_set_new(m, "modeled_peak_mib", num_or_null(pe ? pe->fit_predicted_mib : NAN));
    json_object_set_new(m, "capacity_mib", num_or_null(ev->capacity_mib > 0 ? ev->capacity_mib : NAN));
    json_object_set_new(m, "capacity_from", ev->capacity_mib > 0 ? json_string(ev->capacity_from)
                                                                 : json_null());
    json_object_set_new(m, "headroom_mib", num_or_null(!isnan(peak) && ev->capacity_mib > 0
                                                           ? ev->capacity_mib - peak : NAN));
    json_object_set_new(m, "fit_run", pe && pe->fit_id[0] ? json_string(pe->fit_id) : json_null());
    json_object_set_new(m, "fit_label", pe && pe->fit_id[0] ? json_string(pe->fit_label)
                                                            : json_null());
    json_object_set_new(m, "fit_verdict", pe && pe->fit_id[0] ? json_string(pe->fit_verdict)
                                                              : json_null());
    return m;
}

static json_t *skipped_json(const struct moe_diagnosis *d)
{
    json_t *list = json_array();
    char why[512];

    for (int a = 0; a < MOE_RETUNE_COUNT; a++) {
        const struct moe_retune_entry *e = moe_retune_entry((enum moe_retune_axis)a);

        if (moe_diagnose_skip_reason(d, e, why, sizeof(why)))
            json_array_append_new(list, json_pack("{s:s,s:s,s:s}", "variable", e->variable,
                                                  "targets", moe_bottleneck_name(e->bottleneck),
                                                  "reason", why));
    }
    return list;
}

static json_t *thresholds_json(void)
{
    return json_pack("{s:f,s:f,s:f,s:f,s:f}", "memory_fraction", MOE_DIAG_MEMORY_NEAR,
                     "exposed_comm_fraction", MOE_DIAG_EXPOSED_COMM, "idle_fraction",
                     MOE_DIAG_IDLE, "short_kernel_fraction", MOE_DIAG_SHORT_KERNELS,
                     "straggler_fraction", MOE_DIAG_STRAGGLER);
}

static void print_json(const json_t *run, const struct moe_diagnosis *d, const struct evidence *ev)
{
    const struct moe_retune_entry *c[MOE_RETUNE_COUNT];
    size_t n = moe_diagnose_candidates(d->bottleneck, c, MOE_RETUNE_COUNT);
    json_t *j = json_object(), *list = json_array();

    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, json_sprintf("%s: %s", c[i]->variable, c[i]->what));
    json_object_set_new(j, "run", json_incref(json_object_get(run, "name")));
    json_object_set_new(j, "bottleneck", json_string(moe_bottleneck_name(d->bottleneck)));
    json_object_set_new(j, "reason", json_string(d->reason));
    json_object_set_new(j, "retune_candidates", list);
    json_object_set_new(j, "skipped_axes", skipped_json(d));
    json_object_set_new(j, "measured", measured_json(d));
    json_object_set_new(j, "memory", memory_json(ev));
    json_object_set_new(j, "thresholds", thresholds_json());
    json_object_set_new(j, "measured_from", ev->what ? json_string(ev->what) : json_null());
    json_object_set_new(j, "sources", ev->pe ? json_incref(ev->pe->sources) : json_array());
    if (ev->pe)
        json_object_set_new(j, "profiled_steps", json_pack("[I,I]", (json_int_t)ev->pe->first,
                                                           (json_int_t)ev->pe->last));
    moe_cli_json(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
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

static void print_diagnosis(const json_t *run, const struct moe_diagnosis *d,
                            const struct evidence *ev, bool json)
{
    char shown[1024]; /* a run is named after its log file: shown without control characters */

    if (json) {
        print_json(run, d, ev);
        return;
    }
    printf("%s: %s bottleneck: %s\n",
           moe_text_visible(json_string_value(json_object_get(run, "name")), shown, sizeof(shown)),
           moe_bottleneck_name(d->bottleneck), d->reason);
    print_measured(d, ev);
    print_memory(ev);
    printf("retune candidates (moeflow gen --stage retune --for %s):\n",
           moe_bottleneck_name(d->bottleneck));
    print_candidates(d->bottleneck);
    print_skipped(d);
}

/* STUDY_DIR --stage profile: the profile stage's own traces and the fit
 * stage's memory, or -1 with err. */
static int diagnose_profile(const struct diagnose_args *a, const char *study,
                            struct moe_error *err)
{
    struct moe_profile_evidence pe;
    struct evidence ev = { "the profile stage's kernel traces", &pe, a->capacity / 1048576.0,
                           "--capacity-gib" };
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
        print_diagnosis(pe.run, &d, &ev, a->json);
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
    struct evidence ev = { NULL, NULL, a->capacity / 1048576.0, "--capacity-gib" };
    int rc = -1;

    if (report && n > 1)
        overlap = load(files[1], "overlap", err);
    if (!report || (n > 1 && !overlap))
        goto out;
    if (overlap)
        ev.what = "moeflow overlap --json (OVERLAP)";
    run = pick_run(report, a->run, files[0], err);
    if (run && (rc = moe_diagnose(run, overlap, a->capacity, &d, err)) == 0)
        print_diagnosis(run, &d, &ev, a->json);
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
