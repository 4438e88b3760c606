/* moeflow diagnose: the main bottleneck and its retune candidates. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"
#include "analysis/diagnose.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: moeflow diagnose [--run NAME] [--capacity-gib G] [--json] REPORT [OVERLAP]\n"
            "       moeflow diagnose --list BOTTLENECK\n"
            "\n"
            "REPORT: report.json from moeflow report (or its -o directory); OVERLAP: the\n"
            "output of moeflow overlap --json.  Classifies the bottleneck as memory,\n"
            "communication, host or compute, and prints the matching retune candidates\n"
            "(for moeflow gen --stage retune --for BOTTLENECK).\n"
            "  --run NAME        the run to diagnose (default: the report's baseline)\n"
            "  --capacity-gib G  GPU memory, to judge how near capacity the peak is\n"
            "  --json            machine-readable output\n"
            "  --list B          print the retune candidates for bottleneck B (memory,\n"
            "                    communication, host, compute) without diagnosing\n"
            "\n"
            "example: moeflow diagnose --capacity-gib 141 out/report.json overlap.json\n");
}

static json_t *load(const char *path, struct moe_error *err)
{
    char buf[4096];
    struct stat st;
    json_error_t je;
    json_t *j;

    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(buf, sizeof(buf), "%s/report.json", path);
        path = buf;
    }
    j = json_load_file(path, 0, &je);
    if (!j)
        moe_error_at(err, path, je.line, je.column, "%s", je.text);
    return j;
}

static const json_t *pick_run(const json_t *report, const char *name)
{
    const json_t *runs = json_object_get(report, "runs"), *r;
    size_t i;

    json_array_foreach(runs, i, r) {
        if (!name || strcmp(json_string_value(json_object_get(r, "name")), name) == 0)
            return r;
    }
    return NULL;
}

int cmd_diagnose(int argc, char **argv)
{
    static const struct option opts[] = {
        { "run", required_argument, NULL, 'r' },
        { "capacity-gib", required_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "list", required_argument, NULL, 'l' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *run_name = NULL;
    double capacity = 0;
    int c, json = 0, rc = MOE_EXIT_INVALID_INPUT;
    json_t *report = NULL, *overlap = NULL;
    const json_t *run;
    struct moe_diagnosis d;
    struct moe_error err;
    char *end;

    moe_error_clear(&err);
    optind = 1;
    while ((c = getopt_long(argc, argv, "r:c:jhl:", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            run_name = optarg;
            break;
        case 'c':
            capacity = strtod(optarg, &end) * 1073741824.0;
            if (*end || capacity <= 0) {
                fprintf(stderr, "moeflow diagnose: --capacity-gib '%s': not a size\n", optarg);
                return MOE_EXIT_USAGE;
            }
            break;
        case 'j':
            json = 1;
            break;
        case 'l': {
            enum moe_bottleneck b = moe_bottleneck_parse(optarg);

            if (b == MOE_BOTTLENECK_COUNT) {
                fprintf(stderr, "moeflow diagnose: --list '%s': expected memory, communication, "
                        "host or compute\n", optarg);
                return MOE_EXIT_USAGE;
            }
            printf("retune candidates (moeflow gen --stage retune --for %s):\n", optarg);
            for (const char *const *p = moe_diagnose_candidates(b); *p; p++)
                printf("  - %s\n", *p);
            return MOE_EXIT_OK;
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
    if (optind >= argc || argc - optind > 2) {
        usage(stderr);
        return MOE_EXIT_USAGE;
    }
    report = load(argv[optind], &err);
    if (report && optind + 1 < argc)
        overlap = load(argv[optind + 1], &err);
    if (!report || (optind + 1 < argc && !overlap))
        goto fail;
    run = pick_run(report, run_name);
    if (!run) {
        moe_error_at(&err, argv[optind], 0, 0, "no run%s%s in the report", run_name ? " " : "",
                     run_name ? run_name : "");
        goto fail;
    }
    if (moe_diagnose(run, overlap, capacity, &d, &err) < 0)
        goto fail;
    if (json) {
        json_t *j = json_object(), *cands = json_array();

        for (const char *const *p = moe_diagnose_candidates(d.bottleneck); *p; p++)
            json_array_append_new(cands, json_string(*p));
        json_object_set_new(j, "run", json_incref(json_object_get(run, "name")));
        json_object_set_new(j, "bottleneck", json_string(moe_bottleneck_name(d.bottleneck)));
        json_object_set_new(j, "reason", json_string(d.reason));
        json_object_set_new(j, "retune_candidates", cands);
        json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
        putchar('\n');
        json_decref(j);
    } else {
        printf("%s: %s bottleneck: %s\nretune candidates (moeflow gen --stage retune --for %s):\n",
               json_string_value(json_object_get(run, "name")), moe_bottleneck_name(d.bottleneck),
               d.reason, moe_bottleneck_name(d.bottleneck));
        for (const char *const *p = moe_diagnose_candidates(d.bottleneck); *p; p++)
            printf("  - %s\n", *p);
    }
    rc = MOE_EXIT_OK;
    goto out;
fail:
    moe_cli_report(&err);
out:
    json_decref(report);
    json_decref(overlap);
    return rc;
}
