/* moeflow diagnose: the main bottleneck and its retune candidates. */
#include "config.h"

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
#include "core/readfile.h"

struct diagnose_args {
    const char *run;
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
    { "json", no_argument, 'j', NULL, "machine-readable output", .set = moe_opt_flag,
      .field = offsetof(struct diagnose_args, json) },
    { "list", required_argument, 'l', "B",
      "print the retune candidates for bottleneck B (memory,\n"
      "communication, host, compute) without diagnosing", .set = list_candidates },
    { .name = NULL },
};

static const struct moe_cli diagnose_cli = {
    .usage = "usage: moeflow diagnose [--run NAME] [--capacity-gib G] [--json] REPORT [OVERLAP]\n"
             "       moeflow diagnose --list BOTTLENECK\n"
             "\n"
             "REPORT: report.json from moeflow report (or its -o directory); OVERLAP: the\n"
             "output of moeflow overlap --json.  Classifies the bottleneck as memory,\n"
             "communication, host or compute, and prints the matching retune candidates\n"
             "(for moeflow gen --stage retune --for BOTTLENECK).\n",
    .opts = diagnose_opts,
    .column = 20,
    .tail = "\nexample: moeflow diagnose --capacity-gib 141 out/report.json overlap.json\n",
};

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

static void print_diagnosis(const json_t *run, const struct moe_diagnosis *d, bool json)
{
    char shown[1024]; /* a run is named after its log file: shown without control characters */

    if (json) {
        const struct moe_retune_entry *c[MOE_RETUNE_COUNT];
        size_t n = moe_diagnose_candidates(d->bottleneck, c, MOE_RETUNE_COUNT);
        json_t *j = json_object(), *list = json_array();

        for (size_t i = 0; i < n; i++)
            json_array_append_new(list, json_sprintf("%s: %s", c[i]->variable, c[i]->what));
        json_object_set_new(j, "run", json_incref(json_object_get(run, "name")));
        json_object_set_new(j, "bottleneck", json_string(moe_bottleneck_name(d->bottleneck)));
        json_object_set_new(j, "reason", json_string(d->reason));
        json_object_set_new(j, "retune_candidates", list);
        moe_cli_json(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
        return;
    }
    printf("%s: %s bottleneck: %s\nretune candidates (moeflow gen --stage retune --for %s):\n",
           moe_text_visible(json_string_value(json_object_get(run, "name")), shown, sizeof(shown)),
           moe_bottleneck_name(d->bottleneck),
           d->reason, moe_bottleneck_name(d->bottleneck));
    print_candidates(d->bottleneck);
}

/* REPORT [OVERLAP]: the run's diagnosis, or -1 with err. */
static int diagnose(const struct diagnose_args *a, char **files, int n, struct moe_error *err)
{
    json_t *report = load(files[0], "report", err), *overlap = NULL;
    const json_t *run;
    struct moe_diagnosis d;
    int rc = -1;

    if (report && n > 1)
        overlap = load(files[1], "overlap", err);
    if (!report || (n > 1 && !overlap))
        goto out;
    run = pick_run(report, a->run, files[0], err);
    if (run && (rc = moe_diagnose(run, overlap, a->capacity, &d, err)) == 0)
        print_diagnosis(run, &d, a->json);
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
    moe_error_clear(&err);
    if (diagnose(&a, argv + first, argc - first, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    return MOE_EXIT_OK;
}
