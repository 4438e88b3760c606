#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/study_report.h"
#include "core/contract_keys.h"
#include "core/manifest.h"
#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

/* The study's manifest, which must list stages. */
static int load_manifest(const char *study, struct moe_manifest *m, struct moe_error *err)
{
    if (moe_manifest_load(study, m, err) < 0)
        return -1;
    if (m->has_stages)
        return 0;
    moe_error_at(err, m->path, 0, 0, "stages: missing or not an array (not a manifest written "
                 "by moeflow gen?)");
    moe_manifest_free(m);
    return -1;
}

static const struct moe_manifest_stage *find_stage(const struct moe_manifest *m, const char *name)
{
    return moe_manifest_find(m, moe_stage_parse(name));
}

/* out from c, with its launch log's path; -1 with err when out of memory
 * (out is then empty). */
static int cand_of(const char *study, const char *stage, const struct moe_candidate *c,
                   struct moe_study_cand *out, struct moe_error *err)
{
    const char *var = c->variable;

    memset(out, 0, sizeof(*out));
    /* an id is 64 hex digits (manifest.c checks them): it fits id[72] */
    snprintf(out->id, sizeof(out->id), "%s", c->id ? c->id : "?");
    out->baseline = var && strcmp(var, "baseline") == 0;
    if (out->baseline || !var) {
        /* a fixed word */
        snprintf(out->label, sizeof(out->label), "baseline");
    } else {
        char *text = moe_value_text(c->value);

        /* a message: the label people read; a long value is shown cut */
        snprintf(out->label, sizeof(out->label), "%s=%s", var, text ? text : "?");
        free(text);
    }
    if (!(out->log = moe_study_result(study, stage, out->id, MOE_RESULT_LOG))) {
        moe_error_set(err, "%s: the log path of %s: out of memory", study, out->id);
        return -1;
    }
    {
        const char *reasons[MOE_LABEL_REASONS_MAX];
        size_t n;

        /* one of the label names (core/manifest.h), each a short word */
        snprintf(out->semantics, sizeof(out->semantics), "%s",
                 moe_candidate_semantics(c, reasons, &n));
    }
    moe_candidate_label_text(c, out->semantics_text, sizeof(out->semantics_text));
    return 0;
}

/* The window the study sets for a stage, from a candidate's contract. */
static int stage_window(const char *stage, const struct moe_candidate *c, long *first, long *last,
                        char *note, size_t len, struct moe_error *err)
{
    json_t *timing = json_object_get(c->contract, MOE_CONTRACT_TIMING);
    json_t *win = json_object_get(timing, MOE_CONTRACT_WINDOW);
    long warmup = (long)json_integer_value(json_object_get(timing, MOE_CONTRACT_WARMUP));
    long screen = (long)json_integer_value(json_object_get(timing, MOE_CONTRACT_SCREEN_STEPS));

    if (strcmp(stage, "validate") == 0) {
        if (json_array_size(win) != 2) {
            moe_error_set(err, MOE_STUDY_MANIFEST ": %s: contract.timing.window is missing", stage);
            return -1;
        }
        *first = (long)json_integer_value(json_array_get(win, 0));
        *last = (long)json_integer_value(json_array_get(win, 1));
        /* a fixed text, shorter than window_note */
        snprintf(note, len, "the study's report_window");
        return 0;
    }
    if (strcmp(stage, "scale") == 0 || strcmp(stage, "retune") == 0) {
        if (screen < 1) {
            moe_error_set(err, MOE_STUDY_MANIFEST ": %s: contract.timing.screen_steps is missing",
                          stage);
            return -1;
        }
        *first = warmup + 1;
        *last = warmup + screen;
        /* a fixed text and a number: shorter than window_note */
        snprintf(note, len, "the screening steps after %ld warm-up steps", warmup);
        return 0;
    }
    moe_error_set(err, "stage %s has no step-time window to report: report reads scale, retune "
                  "and validate runs", stage);
    return -1;
}

static int file_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* 1 when a candidate of st has a launch log, 0 when none, -1 with err. */
static int stage_has_log(const char *study, const struct moe_manifest_stage *st,
                         const char *name, struct moe_error *err)
{
    for (size_t i = 0; i < st->n; i++) {
        struct moe_study_cand sc;
        int has;

        if (cand_of(study, name, &st->cands[i], &sc, err) < 0)
            return -1;
        has = file_exists(sc.log);
        free(sc.log);
        if (has)
            return 1;
    }
    return 0;
}

static const struct moe_candidate *baseline_of(const struct moe_manifest_stage *st)
{
    for (size_t i = 0; i < st->n; i++) {
        const char *var = st->cands[i].variable;

        if (var && strcmp(var, "baseline") == 0 && moe_candidate_is_timed(&st->cands[i]))
            return &st->cands[i];
    }
    return NULL;
}

/* stage NULL or "": the last of validate, retune, scale with a launch log. */
static const char *default_stage(const char *study, const struct moe_manifest *m,
                                 struct moe_error *err)
{
    static const char *const order[] = { "validate", "retune", "scale", NULL };
    const struct moe_manifest_stage *st;

    for (const char *const *s = order; *s; s++) {
        int has = (st = find_stage(m, *s)) ? stage_has_log(study, st, *s, err) : 0;

        if (has < 0)
            return NULL;
        if (has)
            return *s;
    }
    moe_error_set(err, "%s: no launch log of a scale, retune or validate run under "
                  MOE_STUDY_RESULTS "/ yet (submit.sh writes them; or name one: --stage)", study);
    return NULL;
}

/* The reference run of stage st: its baseline, or for retune the scale
 * stage's. */
static const struct moe_candidate *reference(const char *study, const struct moe_manifest *m,
                                             const char *stage, struct moe_error *err)
{
    const struct moe_manifest_stage *ref_stage =
        strcmp(stage, "retune") == 0 ? find_stage(m, "scale") : find_stage(m, stage);
    const struct moe_manifest_stage *own = find_stage(m, stage);
    const struct moe_candidate *ref = own && own->reference ? own->reference
                                      : ref_stage          ? baseline_of(ref_stage)
                                                           : NULL;

    if (!ref)
        moe_error_set(err, "%s/" MOE_STUDY_MANIFEST ": %s has no reference run: %s", study, stage,
                      strcmp(stage, "retune") == 0
                          ? "retune is compared with the scale stage's baseline, and this study "
                            "has no scale stage (generate it, or give the logs by hand)"
                          : "the stage has no baseline candidate");
    return ref;
}

/* The view of stage st (found in m) against its reference ref. */
static int fill_view(struct moe_study_view *v, const struct moe_manifest_stage *st,
                     const struct moe_candidate *ref, struct moe_error *err)
{
    bool own = strcmp(v->stage, "retune") != 0;

    if (stage_window(v->stage, ref, &v->first, &v->last, v->window_note,
                     sizeof(v->window_note), err) < 0)
        return -1;
    if (cand_of(v->study, own ? v->stage : "scale", ref, &v->ref, err) < 0)
        return -1;
    if (!own && !v->ref.baseline) /* ref_note is for people: cut, it still names the run */
        snprintf(v->ref_note, sizeof(v->ref_note), "the scale run of the adopted baseline, %s "
                 "(%s)", v->ref.label, v->ref.id);
    else /* the same */
        snprintf(v->ref_note, sizeof(v->ref_note), "%s baseline (%s)",
                 own ? v->stage : "the scale stage's", v->ref.id);
    if (!(v->cands = calloc(st->n + 1, sizeof(*v->cands)))) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    /* twins and the checkpoint run are reported apart (profile_pair.h,
     * checkpoint_verdict.h) */
    for (size_t i = 0; i < st->n; i++)
        if (&st->cands[i] != ref && moe_candidate_is_timed(&st->cands[i])) {
            if (cand_of(v->study, v->stage, &st->cands[i], &v->cands[v->n], err) < 0)
                return -1;
            v->n++;
        }
    return 0;
}

int moe_study_view_load(const char *study, const char *stage, struct moe_study_view *v,
                        struct moe_error *err)
{
    const struct moe_manifest_stage *st;
    const struct moe_candidate *ref;
    struct moe_manifest m;
    int rc = -1;

    memset(v, 0, sizeof(*v));
    if (!(v->study = strdup(study))) {
        moe_error_set(err, "%s: out of memory", study);
        return -1;
    }
    if (load_manifest(study, &m, err) < 0) {
        moe_study_view_free(v);
        return -1;
    }
    /* the study's name, for people: cut, it still names it */
    snprintf(v->name, sizeof(v->name), "%s", m.study ? m.study : "?");
    if ((!stage || !stage[0]) && !(stage = default_stage(study, &m, err)))
        goto out;
    if (moe_fmt_fixed(v->stage, sizeof(v->stage), err, "%s", stage) < 0)
        goto out;
    if (!(st = find_stage(&m, stage)))
        moe_error_set(err, "%s/" MOE_STUDY_MANIFEST ": the study has no %s stage (generated "
                      "with --stage?)", study, stage);
    else if ((ref = reference(study, &m, stage, err)))
        rc = fill_view(v, st, ref, err);
out:
    moe_manifest_free(&m);
    if (rc < 0)
        moe_study_view_free(v);
    return rc;
}

void moe_study_view_free(struct moe_study_view *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->cands[i].log);
    free(v->cands);
    free(v->ref.log);
    free(v->study);
    v->cands = NULL;
    v->ref.log = NULL;
    v->study = NULL;
    v->n = 0;
}

void moe_study_where_free(struct moe_study_where *w)
{
    free(w->study);
    free(w->cand.log);
    w->study = NULL;
    w->cand.log = NULL;
}

static void parent(char *path)
{
    char *slash = strrchr(path, '/');

    if (slash && slash != path)
        *slash = '\0';
    else if (slash)
        slash[1] = '\0';
}

static const char *base(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

static int is_stage_name(const char *s)
{
    return moe_stage_parse(s) != MOE_STAGE_NONE;
}

/* Fills w->cand and the window from the manifest entry of id in stage. */
static int candidate_in(const char *study, const char *stage, const char *id,
                        struct moe_study_where *w, struct moe_error *err)
{
    const struct moe_candidate *c;
    struct moe_manifest m;
    char note[128];
    int rc = -1;

    if (load_manifest(study, &m, err) < 0)
        return -1;
    if ((c = moe_manifest_candidate_by_id(&m, moe_stage_parse(stage), id)))
        rc = cand_of(study, stage, c, &w->cand, err) < 0 ||
                     stage_window(stage, c, &w->first, &w->last, note, sizeof(note), err) < 0
                 ? -1 : 1;
    if (rc < 0 && !err->text[0])
        moe_error_set(err, "%s/" MOE_STUDY_MANIFEST ": stage %s has no candidate %.16s", study,
                      stage, id);
    moe_manifest_free(&m);
    return rc;
}

/* The stage and candidate a run record (runs/<id>/contract.json) names;
 * false when it names none. */
static bool run_names(const json_t *doc, const char **stage, const char **cand)
{
    const json_t *run = json_object_get(doc, MOE_CONTRACT_RUN);

    *stage = json_string_value(json_object_get(run, MOE_CONTRACT_RUN_STAGE));
    *cand = json_string_value(json_object_get(run, MOE_CONTRACT_RUN_CANDIDATE));
    return *stage && *cand;
}

int moe_study_find_run(const char *study, const char *stage, const char *id, char **run_dir,
                       struct moe_error *err)
{
    char *dir = moe_path_join(study, MOE_STUDY_RUNS), *file;
    struct dirent **ents = NULL;
    int n, found = 0;

    *run_dir = NULL;
    if (!dir) {
        moe_error_set(err, "%s/" MOE_STUDY_RUNS ": out of memory", study);
        return -1;
    }
    n = scandir(dir, &ents, NULL, alphasort);
    if (n < 0) {
        int e = errno;

        if (e != ENOENT)
            moe_error_set(err, "%s: %s", dir, strerror(e));
        free(dir);
        return e == ENOENT ? 0 : -1;
    }
    for (int i = 0; i < n; i++) {
        json_t *doc;
        const char *s, *c;

        if (found == 0 && ents[i]->d_name[0] != '.') {
            file = moe_strdup_printf("%s/%s/contract.json", dir, ents[i]->d_name);
            doc = file ? moe_read_json(file, "run record", NULL) : NULL;
            free(file);
            if (run_names(doc, &s, &c) && strcmp(s, stage) == 0 && strcmp(c, id) == 0) {
                *run_dir = moe_path_join(dir, ents[i]->d_name);
                found = *run_dir ? 1 : -1;
                if (found < 0)
                    moe_error_set(err, "%s/%s: out of memory", dir, ents[i]->d_name);
            }
            json_decref(doc);
        }
        free(ents[i]);
    }
    free(ents);
    free(dir);
    return found;
}

/* w->study becomes a copy of study: 1, or -1 with err. */
static int set_study(struct moe_study_where *w, const char *study, struct moe_error *err)
{
    if ((w->study = strdup(study)))
        return 1;
    moe_error_set(err, "%s: out of memory", study);
    return -1;
}

int moe_study_locate(const char *path, struct moe_study_where *w, struct moe_error *err)
{
    char real[PATH_MAX], up[PATH_MAX], up2[PATH_MAX], file[PATH_MAX + 32];
    struct stat st;

    memset(w, 0, sizeof(*w));
    if (!realpath(path, real) || stat(real, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode) && moe_study_is_dir(real)) {
        return set_study(w, real, err);
    }
    /* realpath's result and its parents fit PATH_MAX */
    snprintf(up, sizeof(up), "%s", real);
    parent(up);
    /* realpath's result and its parents fit PATH_MAX */
    snprintf(up2, sizeof(up2), "%s", up);
    parent(up2);
    /* <study>/results/<stage> */
    if (S_ISDIR(st.st_mode) && is_stage_name(base(real)) && strcmp(base(up), MOE_STUDY_RESULTS) == 0 &&
        moe_study_is_dir(up2)) {
        /* is_stage_name checked it: one of the short stage names */
        snprintf(w->stage, sizeof(w->stage), "%.15s", base(real));
        return set_study(w, up2, err);
    }
    /* <study>/runs/<run id>, with the plugin's record of what ran */
    /* file is PATH_MAX + 32: real and "/contract.json" fit */
    snprintf(file, sizeof(file), "%s/contract.json", real);
    if (S_ISDIR(st.st_mode) && strcmp(base(up), MOE_STUDY_RUNS) == 0 && moe_study_is_dir(up2) &&
        file_exists(file)) {
        json_t *doc = moe_read_json(file, "run record", err);
        const char *stage, *cand;
        int rc = 0;

        if (!doc)
            return -1;
        if (run_names(doc, &stage, &cand) && is_stage_name(stage)) {
            /* is_stage_name checked it: one of the short stage names */
            snprintf(w->stage, sizeof(w->stage), "%s", stage);
            rc = set_study(w, up2, err) < 0 ? -1 : candidate_in(up2, stage, cand, w, err);
        }
        json_decref(doc);
        return rc;
    }
    /* <study>/results/<stage>/<id>.log */
    if (S_ISREG(st.st_mode) && is_stage_name(base(up)) && strlen(base(real)) > 4 &&
        strcmp(base(real) + strlen(base(real)) - 4, ".log") == 0) {
        char study[PATH_MAX], id[80];

        /* realpath's result and its parents fit PATH_MAX */
        snprintf(study, sizeof(study), "%s", up2);
        parent(study);
        if (strcmp(base(up2), MOE_STUDY_RESULTS) != 0 || !moe_study_is_dir(study))
            return 0;
        /* an id is 64 hex digits: a longer name, cut, is no candidate's */
        snprintf(id, sizeof(id), "%.*s", (int)(strlen(base(real)) - 4), base(real));
        /* is_stage_name checked it: one of the short stage names */
        snprintf(w->stage, sizeof(w->stage), "%.15s", base(up));
        if (set_study(w, study, err) < 0)
            return -1;
        return candidate_in(study, w->stage, id, w, err);
    }
    return 0;
}
