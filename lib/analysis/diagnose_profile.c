#include "config.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/diagnose_profile.h"
#include "analysis/fit_report.h"
#include "analysis/profile_pair.h"
#include "analysis/profile_pair_internal.h"
#include "core/json_build.h"
#include "core/contract_keys.h"
#include "core/manifest.h"
#include "core/shquote.h"
#include "core/strbuf.h"

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The stage's baseline: the run every later stage's changes are measured
 * against, so the one whose bottleneck retune should attack. */
static const struct moe_candidate *profile_baseline(const struct moe_manifest *m,
                                                    struct moe_error *err)
{
    const struct moe_manifest_stage *st = moe_manifest_find(m, MOE_STAGE_PROFILE);

    for (size_t i = 0; st && i < st->n; i++)
        if (st->cands[i].id && st->cands[i].variable &&
            strcmp(st->cands[i].variable, "baseline") == 0)
            return &st->cands[i];
    moe_error_at(err, m->path, 0, 0, "the profile stage has no baseline candidate");
    return NULL;
}

static int profiled_steps(const struct moe_manifest *m, const struct moe_candidate *c, long *first,
                          long *last, struct moe_error *err)
{
    const json_t *steps = json_object_get(json_object_get(c->contract, MOE_CONTRACT_PROFILING),
                                          "steps");

    if (json_array_size(steps) == 2 && json_is_integer(json_array_get(steps, 0)) &&
        json_is_integer(json_array_get(steps, 1))) {
        *first = (long)json_integer_value(json_array_get(steps, 0));
        *last = (long)json_integer_value(json_array_get(steps, 1));
        if (*first <= *last)
            return 0;
    }
    moe_error_at(err, m->path, 0, 0, "profile candidate %s: contract.profiling.steps: expected "
                 "[first, last]", c->id);
    return -1;
}

/* The command that exports dir/name (a .nsys-rep) to the SQLite file
 * moeflow reads, quoted for the shell; NULL when out of memory. */
static char *export_command(const char *dir, const char *name)
{
    char *rep = moe_path_join(dir, name), *sqlite = rep ? strdup(rep) : NULL, *cmd = NULL;
    const char *words[] = { "nsys", "export", "--type", "sqlite", "--output", sqlite, rep };

    if (sqlite) {
        strcpy(sqlite + strlen(sqlite) - strlen(".nsys-rep"), ".sqlite");
        cmd = moe_shquote_words(words, sizeof(words) / sizeof(words[0]));
    }
    free(rep);
    free(sqlite);
    return cmd;
}

/* Whether dir/name's SQLite export lies beside it. */
static int exported(const char *dir, const char *name)
{
    char *path = moe_path_join(dir, name);
    struct stat st;
    int ok = 0;

    if (path) {
        strcpy(path + strlen(path) - strlen(".nsys-rep"), ".sqlite");
        ok = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    }
    free(path);
    return ok;
}

/* -1 with err naming the command when an Nsight Systems report in dir has
 * no SQLite export: the profile exists, and a diagnosis without it would
 * guess what it shows. */
static int nsys_exports_present(const char *dir, struct moe_error *err)
{
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, alphasort), missing = 0;
    char *first = NULL;

    for (int i = 0; i < n; i++) {
        if (has_suffix(ents[i]->d_name, ".nsys-rep") && !exported(dir, ents[i]->d_name) &&
            missing++ == 0)
            first = export_command(dir, ents[i]->d_name);
        free(ents[i]);
    }
    free(ents);
    if (missing)
        moe_error_at(err, dir, 0, 0, "%d Nsight Systems report%s without the SQLite export "
                     "moeflow reads; export each first, e.g. %s", missing, missing > 1 ? "s" : "",
                     first ? first : "(out of memory)");
    free(first);
    return missing ? -1 : 0;
}

/* Path relative to the study when it lies below it. */
static const char *below(const char *study, const char *path)
{
    size_t n = strlen(study);

    while (n > 1 && study[n - 1] == '/')
        n--;
    return strncmp(path, study, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

static json_t *sources_of(struct moe_jb *b, const char *study, const struct moe_overlap *o)
{
    json_t *s = json_array();

    for (size_t i = 0; s && i < o->ngpus; i++) {
        const char *p = below(study, o->gpus[i].trace);
        size_t j;
        json_t *v;
        int seen = 0;

        json_array_foreach(s, j, v) {
            seen |= strcmp(json_string_value(v), p) == 0;
        }
        if (!seen && moe_jb_append(b, s, json_string(p)) < 0)
            break;
    }
    if (!(s = moe_jb_done(b, s)))
        moe_jb_within(b, "sources");
    return s;
}

static int load_traces(const char *study, struct moe_profile_evidence *e, struct moe_error *err)
{
    struct moe_profile_side side;
    struct moe_window w = { .kind = MOE_WINDOW_STEPS, .first = e->first, .last = e->last };
    char *dir = moe_path_join(study, MOE_PROFILE_RESULTS);
    struct moe_jb b;
    int rc = -1;

    moe_profile_side_init(&side);
    if (!dir)
        moe_error_set(err, "out of memory");
    else if (nsys_exports_present(dir, err) == 0 &&
             (rc = moe_profile_side_load(&side, dir, e->first, e->last, err)) == 1) {
        moe_error_at(err, dir, 0, 0, "no kernel trace here, nor in torch_profile/ or "
                     "tensorboard/: has the profile stage run? (the PyTorch profiler writes "
                     "*.json.gz, nsys a .nsys-rep to export with nsys export --type sqlite)");
        rc = -1;
    }
    moe_jb_init(&b, err);
    if (rc == 0 && !(e->overlap = moe_overlap_to_json(&side.overlap, &w, err))) {
        moe_error_within(err, "overlap");
        moe_error_locate(err, dir, 0, 0);
        rc = -1;
    }
    if (rc == 0 && !(e->sources = sources_of(&b, study, &side.overlap)))
        rc = -1;
    if (rc == 0)
        e->contention_pct = moe_profile_side_contention_pct(&side);
    moe_profile_side_free(&side);
    free(dir);
    return rc;
}

/* The same layout and recompute: what the fit stage measured is this
 * configuration's peak. */
static int same_memory_shape(const json_t *a, const json_t *b)
{
    const json_t *ta = json_object_get(a, MOE_CONTRACT_TUNING);
    const json_t *tb = json_object_get(b, MOE_CONTRACT_TUNING);

    return json_equal(json_object_get(a, MOE_CONTRACT_PARALLEL),
                      json_object_get(b, MOE_CONTRACT_PARALLEL)) &&
           json_equal(json_object_get(ta, MOE_CONTRACT_RECOMPUTE),
                      json_object_get(tb, MOE_CONTRACT_RECOMPUTE));
}

static int row_usable(const struct moe_fit_row *r)
{
    return !isnan(r->measured_mib) && !(r->flags & (MOE_FIT_NOT_RUN | MOE_FIT_FAILED));
}

/* The fit row of that shape that measured a peak (else the first of that
 * shape, for its prediction and verdict), or NULL. */
static const struct moe_fit_row *fit_row(const struct moe_manifest *m, const json_t *contract,
                                         const struct moe_fit_report *r)
{
    const struct moe_fit_row *any = NULL;

    for (size_t i = 0; i < r->n; i++) {
        const struct moe_candidate *c = moe_manifest_candidate_by_id(m, MOE_STAGE_FIT,
                                                                     r->rows[i].id);

        if (!c || !same_memory_shape(c->contract, contract))
            continue;
        if (row_usable(&r->rows[i]))
            return &r->rows[i];
        if (!any)
            any = &r->rows[i];
    }
    return any;
}

static void fit_memory(const char *study, const struct moe_manifest *m, const json_t *contract,
                       struct moe_profile_evidence *e)
{
    struct moe_fit_report r;
    struct moe_error ignored; /* no fit stage, or none run: the memory is unknown */
    const struct moe_fit_row *row;

    if (moe_fit_report_load(study, &r, &ignored) < 0)
        return;
    if ((row = fit_row(m, contract, &r))) {
        /* fit_id and fit_label are the row's own sizes (diagnose_profile.h) */
        snprintf(e->fit_id, sizeof(e->fit_id), "%s", row->id);
        snprintf(e->fit_label, sizeof(e->fit_label), "%s", row->label); /* same size */
        moe_fit_row_verdict(row, e->fit_verdict, sizeof(e->fit_verdict));
        e->fit_measured_mib = row_usable(row) ? row->measured_mib : NAN;
        e->fit_predicted_mib = row->predicted_mib;
    }
    moe_fit_report_free(&r);
}

static json_t *run_of(struct moe_jb *b, const struct moe_candidate *c,
                      const struct moe_profile_evidence *e)
{
    const char *gran = json_string_value(json_object_get(
        json_object_get(json_object_get(c->contract, MOE_CONTRACT_TUNING), MOE_CONTRACT_RECOMPUTE),
        MOE_CONTRACT_GRANULARITY));
    json_t *run = json_object(), *in_effect = json_object();

    moe_jb_set(b, run, "name", json_sprintf("profile baseline %.12s", c->id));
    moe_jb_str(b, in_effect, "recompute_granularity", gran ? gran : "none");
    moe_jb_set(b, run, "in_effect", in_effect);
    /* NaN: the fit stage measured no usable peak */
    if (!isnan(e->fit_measured_mib))
        moe_jb_num(b, run, "peak_max_allocated_mib", e->fit_measured_mib);
    if (!(run = moe_jb_done(b, run)))
        moe_jb_within(b, "run");
    return run;
}

static double declared_capacity_mib(const json_t *contract)
{
    const json_t *g = json_object_get(json_object_get(contract, MOE_CONTRACT_HARDWARE),
                                      "gpu_memory_gib");

    return json_is_number(g) && json_number_value(g) > 0 ? json_number_value(g) * 1024 : 0;
}

int moe_profile_evidence_load(const char *study, struct moe_profile_evidence *e,
                              struct moe_error *err)
{
    struct moe_manifest m;
    const struct moe_candidate *c;
    int rc = -1;

    memset(e, 0, sizeof(*e));
    e->fit_measured_mib = e->fit_predicted_mib = e->contention_pct = NAN;
    if (moe_manifest_load(study, &m, err) < 0)
        return -1;
    if ((c = profile_baseline(&m, err)) && profiled_steps(&m, c, &e->first, &e->last, err) == 0 &&
        load_traces(study, e, err) == 0) {
        struct moe_jb b;

        moe_jb_init(&b, err);
        /* candidate[] holds an id: 64 hex digits (manifest.c checks them) */
        snprintf(e->candidate, sizeof(e->candidate), "%s", c->id);
        e->capacity_mib = declared_capacity_mib(c->contract);
        fit_memory(study, &m, c->contract, e);
        rc = (e->run = run_of(&b, c, e)) ? 0 : -1;
    }
    moe_manifest_free(&m);
    if (rc < 0)
        moe_profile_evidence_free(e);
    return rc;
}

void moe_profile_evidence_free(struct moe_profile_evidence *e)
{
    json_decref(e->overlap);
    json_decref(e->sources);
    json_decref(e->run);
    e->overlap = e->sources = e->run = NULL;
}
