/* What `contract show` labels "declared" comes from the study (through
 * moeflow gen's contracts/); "measured" is what a node reported: the
 * plugin's facts at job start (the contract's "sources" name them) and the
 * contract stage's capture, which lives beside the contract because the
 * frozen contract is sealed before the capture runs. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "contract_show.h"
#include "core/contract_keys.h"
#include "core/json_build.h"
#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

/* "measured (SOURCE)" when the plugin measured PATH or an object above it
 * (environment.container holds every container variable), else declared.
 * NULL when out of memory. */
static json_t *label(const json_t *sources, const char *path)
{
    char *prefix = strdup(path), *dot;
    json_t *l = NULL;

    while (prefix && !l) {
        const char *src = json_string_value(json_object_get(sources, prefix));

        if (src)
            l = json_sprintf("measured (%s)", src);
        else if ((dot = strrchr(prefix, '.')))
            *dot = '\0';
        else
            break;
    }
    if (prefix && !l)
        l = json_string(strncmp(path, "run.", 4) == 0 ? "declared (job options)" : "declared");
    free(prefix);
    return l;
}

/* Every leaf of DOC (arrays are leaves) under PREFIX: path -> label. */
static void collect(struct moe_jb *b, const json_t *doc, const char *prefix,
                    const json_t *sources, json_t *out)
{
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)doc, key, v) {
        char *path;

        if (!prefix[0] && strcmp(key, MOE_CONTRACT_SOURCES) == 0)
            continue;
        if (!(path = moe_strdup_printf("%s%s%s", prefix, prefix[0] ? "." : "", key))) {
            moe_jb_set(b, out, key, NULL);
            return;
        }
        if (json_is_object(v) && json_object_size(v))
            collect(b, v, path, sources, out);
        else
            moe_jb_set(b, out, path, label(sources, path));
        free(path);
    }
}

/* Each leaf's label; NULL with b's failure. */
static json_t *labels(struct moe_jb *b, const json_t *doc)
{
    json_t *out = json_object();

    collect(b, doc, "", json_object_get(doc, MOE_CONTRACT_SOURCES), out);
    moe_jb_within(b, "labels");
    return moe_jb_done(b, out);
}

static const json_t *at_path(const json_t *doc, const char *path)
{
    char *buf = strdup(path), *save = NULL;

    if (!buf)
        return NULL;
    for (char *k = strtok_r(buf, ".", &save); k && doc; k = strtok_r(NULL, ".", &save))
        doc = json_object_get(doc, k);
    free(buf);
    return doc;
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void print_contract(const json_t *doc, const json_t *lab)
{
    size_t n = json_object_size(lab), i = 0, width = 0;
    const char **keys = calloc(n ? n : 1, sizeof(*keys));
    const char *key;
    json_t *v;

    if (!keys)
        return;
    json_object_foreach((json_t *)lab, key, v) {
        keys[i++] = key;
        width = strlen(key) > width ? strlen(key) : width;
    }
    qsort(keys, n, sizeof(*keys), cmp_keys);
    for (i = 0; i < n; i++) {
        char *text = json_dumps(at_path(doc, keys[i]), JSON_ENCODE_ANY | JSON_COMPACT |
                                                           JSON_REAL_PRECISION(15));
        printf("  %-*s  %-10s  %s\n", (int)width, keys[i],
               json_string_value(json_object_get(lab, keys[i])), text ? text : "?");
        free(text);
    }
    free(keys);
}

/* contract/measured.json of the study PATH is, or of the study a run
 * directory (STUDY/runs/ID) belongs to; "" when PATH is a file.  malloc'd;
 * NULL when out of memory. */
static char *measured_path(const char *path)
{
    struct stat st;
    char *file;

    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return strdup("");
    if (!(file = moe_path_join(path, MOE_STUDY_MEASURED)) || access(file, F_OK) == 0)
        return file;
    free(file);
    return moe_path_join(path, "../../" MOE_STUDY_MEASURED);
}

/* A measured module or library: its version, or absent with the reason. */
static void print_version(const char *name, const json_t *m)
{
    const char *v = json_string_value(json_object_get(m, "version"));
    const char *why = json_string_value(json_object_get(m, "reason"));

    if (v)
        printf("  %-28s measured %s\n", name, v);
    else if (json_is_true(json_object_get(m, "imported")))
        printf("  %-28s measured present, version unknown (%s)\n", name, why ? why : "");
    else
        printf("  %-28s measured absent (%s)\n", name, why ? why : "no reason recorded");
}

static void print_gpus(const json_t *g)
{
    const char *model = json_string_value(json_object_get(g, "model"));
    const char *driver = json_string_value(json_object_get(g, "driver"));
    const char *topo = json_string_value(json_object_get(g, "topology"));
    const char *why = json_string_value(json_object_get(g, "nvidia_smi_reason"));

    if (model)
        printf("  %-28s measured %lld x %s, %lld MiB, driver %s\n", "gpus",
               (long long)json_integer_value(json_object_get(g, "count")), model,
               (long long)json_integer_value(json_object_get(g, "memory_mib")),
               driver ? driver : "unknown");
    else
        printf("  %-28s measured none (%s)\n", "gpus", why ? why : "no GPU seen");
    if (topo)
        printf("  %-28s measured (nvidia-smi topo -m, in " MOE_STUDY_MEASURED_NAME ")\n",
               "topology");
    else
        printf("  %-28s measured absent (%s)\n", "topology",
               json_string_value(json_object_get(g, "topology_reason"))
                   ? json_string_value(json_object_get(g, "topology_reason")) : "");
}

/* The capture's own comparison: it ran where the trainer runs. */
static int print_checks(const json_t *m, bool colour)
{
    bool enforced = json_is_true(json_object_get(json_object_get(m, "launcher"), "enforced"));
    const json_t *c;
    size_t i;
    int bad = 0;

    json_array_foreach(json_object_get(m, "checks"), i, c) {
        const char *outcome = json_string_value(json_object_get(c, "outcome"));
        const char *note = json_string_value(json_object_get(c, "note"));
        bool contra = outcome && strcmp(outcome, "contradicts") == 0;

        bad += contra;
        printf("  %-28s declared %s; measured %s; %s%s%s%s%s\n",
               json_string_value(json_object_get(c, "field")),
               json_string_value(json_object_get(c, "declared")),
               json_string_value(json_object_get(c, "measured")),
               contra && colour ? "\033[31m" : "",
               contra ? (enforced ? "DISAGREES" : "DISAGREES (not enforced)") : outcome,
               contra && colour ? "\033[0m" : "", note ? ": " : "", note ? note : "");
    }
    return bad;
}

static void print_measured(const char *file, const json_t *m)
{
    static const char *const libs[] = { "torch", "cuda", "nccl", "cudnn", NULL };
    const json_t *py = json_object_get(m, "python");
    int bad;

    printf("measured by the contract stage's capture (%s, host %s, %s):\n", file,
           json_string_value(json_object_get(m, "host")),
           json_string_value(json_object_get(m, "captured_at")));
    bad = print_checks(m, moe_cli_colour(stdout));
    printf("  %-28s measured %s (%s)\n", "python",
           json_string_value(json_object_get(py, "version")),
           json_string_value(json_object_get(py, "executable")));
    for (const char *const *l = libs; *l; l++)
        print_version(*l, json_object_get(m, *l));
    print_gpus(json_object_get(m, "gpus"));
    if (bad)
        printf("%d declared value%s contradicted by the measurement\n", bad,
               bad == 1 ? " is" : "s are");
}

/* show --json: the contract, its labels and what was measured; NULL with
 * err when a value could not be made. */
static json_t *show_json(const json_t *doc, const char *digest, json_t *lab, json_t *measured,
                         struct moe_error *err)
{
    struct moe_jb b;
    json_t *out = json_object();

    moe_jb_init(&b, err);
    moe_jb_str(&b, out, "sha256", digest);
    moe_jb_copy(&b, out, "contract", (json_t *)doc);
    moe_jb_copy(&b, out, "labels", lab);
    if (measured)
        moe_jb_copy(&b, out, "measured", measured);
    return moe_jb_done(&b, out);
}

int moe_contract_show(const char *path, const json_t *doc, const char *digest, bool json)
{
    char *file = measured_path(path);
    struct moe_error err;
    struct moe_jb b;
    json_t *lab, *measured = NULL, *out;
    int rc = MOE_EXIT_OK;

    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    if (!file || !(lab = labels(&b, doc))) {
        if (!file)
            moe_error_set(&err, "out of memory");
        free(file);
        return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    }
    if (file[0] && access(file, F_OK) == 0 &&
        !(measured = moe_read_json(file, MOE_STUDY_MEASURED_NAME, &err))) {
        moe_cli_report(&err);
        rc = MOE_EXIT_INVALID_INPUT;
    }
    if (json) {
        moe_error_clear(&err);
        if ((out = show_json(doc, digest, lab, measured, &err))) {
            json_dumpf(out, stdout, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(15));
            putchar('\n');
            json_decref(out);
        } else {
            rc = moe_cli_fail(&err, MOE_EXIT_SYSTEM);
        }
    } else {
        printf("sha256 %s\n", digest);
        printf("contract (declared: from the study; measured: by the plugin at job start):\n");
        print_contract(doc, lab);
        if (measured)
            print_measured(file, measured);
        else if (rc == MOE_EXIT_OK && file[0])
            printf("nothing measured yet: the contract stage writes " MOE_STUDY_MEASURED "\n");
    }
    free(file);
    json_decref(lab);
    json_decref(measured);
    return rc;
}
