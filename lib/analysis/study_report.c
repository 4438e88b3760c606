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
#include "core/readfile.h"

int moe_study_is_dir(const char *dir)
{
    char path[4200];
    struct stat st;

    snprintf(path, sizeof(path), "%s/manifest.json", dir);
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static json_t *load_manifest(const char *study, struct moe_error *err)
{
    char path[4200];
    json_t *m;

    snprintf(path, sizeof(path), "%s/manifest.json", study);
    if (!(m = moe_read_json(path, "manifest", err)))
        return NULL;
    if (!json_is_array(json_object_get(m, "stages"))) {
        moe_error_at(err, path, 0, 0, "stages: missing or not an array (not a manifest written "
                     "by moeflow gen?)");
        json_decref(m);
        return NULL;
    }
    return m;
}

static json_t *find_stage(json_t *manifest, const char *name)
{
    json_t *st;
    size_t i;

    json_array_foreach(json_object_get(manifest, "stages"), i, st) {
        const char *s = json_string_value(json_object_get(st, "stage"));

        if (s && strcmp(s, name) == 0)
            return st;
    }
    return NULL;
}

static void cand_of(const char *study, const char *stage, json_t *c, struct moe_study_cand *out)
{
    const char *id = json_string_value(json_object_get(c, "id"));
    const char *var = json_string_value(json_object_get(c, "variable"));
    json_t *val = json_object_get(c, "value");

    memset(out, 0, sizeof(*out));
    snprintf(out->id, sizeof(out->id), "%s", id ? id : "?");
    out->baseline = var && strcmp(var, "baseline") == 0;
    if (out->baseline || !var) {
        snprintf(out->label, sizeof(out->label), "baseline");
    } else if (json_is_string(val)) {
        snprintf(out->label, sizeof(out->label), "%s=%s", var, json_string_value(val));
    } else {
        char *text = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);

        snprintf(out->label, sizeof(out->label), "%s=%s", var, text ? text : "?");
        free(text);
    }
    snprintf(out->log, sizeof(out->log), "%s/results/%s/%s.log", study, stage, out->id);
}

/* The window the study sets for a stage, from a candidate's contract. */
static int stage_window(const char *stage, json_t *c, long *first, long *last, char *note,
                        size_t len, struct moe_error *err)
{
    json_t *timing = json_object_get(json_object_get(c, "contract"), "timing");
    json_t *win = json_object_get(timing, "window");
    long warmup = (long)json_integer_value(json_object_get(timing, "warmup"));
    long screen = (long)json_integer_value(json_object_get(timing, "screen_steps"));

    if (strcmp(stage, "validate") == 0) {
        if (json_array_size(win) != 2) {
            moe_error_set(err, "manifest.json: %s: contract.timing.window is missing", stage);
            return -1;
        }
        *first = (long)json_integer_value(json_array_get(win, 0));
        *last = (long)json_integer_value(json_array_get(win, 1));
        snprintf(note, len, "the study's report_window");
        return 0;
    }
    if (strcmp(stage, "scale") == 0 || strcmp(stage, "retune") == 0) {
        if (screen < 1) {
            moe_error_set(err, "manifest.json: %s: contract.timing.screen_steps is missing",
                          stage);
            return -1;
        }
        *first = warmup + 1;
        *last = warmup + screen;
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

static int stage_has_log(const char *study, json_t *st, const char *name)
{
    json_t *c;
    size_t i;

    json_array_foreach(json_object_get(st, "candidates"), i, c) {
        struct moe_study_cand sc;

        cand_of(study, name, c, &sc);
        if (file_exists(sc.log))
            return 1;
    }
    return 0;
}

static json_t *baseline_of(json_t *st)
{
    json_t *c;
    size_t i;

    json_array_foreach(json_object_get(st, "candidates"), i, c) {
        const char *var = json_string_value(json_object_get(c, "variable"));

        if (var && strcmp(var, "baseline") == 0)
            return c;
    }
    return NULL;
}

int moe_study_view_load(const char *study, const char *stage, struct moe_study_view *v,
                        struct moe_error *err)
{
    static const char *const order[] = { "validate", "retune", "scale", NULL };
    json_t *m, *st, *ref_stage, *ref, *c;
    const char *name;
    size_t i;
    int rc = -1;

    memset(v, 0, sizeof(*v));
    snprintf(v->study, sizeof(v->study), "%s", study);
    m = load_manifest(study, err);
    if (!m)
        return -1;
    name = json_string_value(json_object_get(m, "study"));
    snprintf(v->name, sizeof(v->name), "%s", name ? name : "?");
    if (!stage || !stage[0]) {
        stage = NULL;
        for (const char *const *s = order; *s && !stage; s++)
            if ((st = find_stage(m, *s)) && stage_has_log(study, st, *s))
                stage = *s;
        if (!stage) {
            moe_error_set(err, "%s: no launch log of a scale, retune or validate run under "
                          "results/ yet (submit.sh writes them; or name one: --stage)", study);
            goto out;
        }
    }
    snprintf(v->stage, sizeof(v->stage), "%s", stage);
    st = find_stage(m, stage);
    if (!st) {
        moe_error_set(err, "%s/manifest.json: the study has no %s stage (generated with --stage?)",
                      study, stage);
        goto out;
    }
    ref_stage = strcmp(stage, "retune") == 0 ? find_stage(m, "scale") : st;
    ref = ref_stage ? baseline_of(ref_stage) : NULL;
    if (!ref) {
        moe_error_set(err, "%s/manifest.json: %s has no reference run: %s", study, stage,
                      strcmp(stage, "retune") == 0
                          ? "retune is compared with the scale stage's baseline, and this study "
                            "has no scale stage (generate it, or give the logs by hand)"
                          : "the stage has no baseline candidate");
        goto out;
    }
    if (stage_window(stage, ref, &v->first, &v->last, v->window_note, sizeof(v->window_note),
                     err) < 0)
        goto out;
    cand_of(study, ref_stage == st ? stage : "scale", ref, &v->ref);
    snprintf(v->ref_note, sizeof(v->ref_note), "%s baseline (%s)",
             ref_stage == st ? stage : "the scale stage's", v->ref.id);
    v->cands = calloc(json_array_size(json_object_get(st, "candidates")) + 1,
                      sizeof(*v->cands));
    if (!v->cands) {
        moe_error_set(err, "out of memory");
        goto out;
    }
    json_array_foreach(json_object_get(st, "candidates"), i, c) {
        if (c == ref)
            continue;
        cand_of(study, stage, c, &v->cands[v->n++]);
    }
    rc = 0;
out:
    json_decref(m);
    if (rc < 0)
        moe_study_view_free(v);
    return rc;
}

void moe_study_view_free(struct moe_study_view *v)
{
    free(v->cands);
    v->cands = NULL;
    v->n = 0;
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
    return strcmp(s, "scale") == 0 || strcmp(s, "retune") == 0 || strcmp(s, "validate") == 0 ||
           strcmp(s, "fit") == 0 || strcmp(s, "profile") == 0 || strcmp(s, "contract") == 0;
}

/* Fills w->cand and the window from the manifest entry of id in stage. */
static int candidate_in(const char *study, const char *stage, const char *id,
                        struct moe_study_where *w, struct moe_error *err)
{
    json_t *m = load_manifest(study, err), *st, *c;
    char note[128];
    size_t i;
    int rc = -1;

    if (!m)
        return -1;
    st = find_stage(m, stage);
    json_array_foreach(st ? json_object_get(st, "candidates") : NULL, i, c) {
        const char *cid = json_string_value(json_object_get(c, "id"));

        if (cid && strcmp(cid, id) == 0) {
            cand_of(study, stage, c, &w->cand);
            rc = stage_window(stage, c, &w->first, &w->last, note, sizeof(note), err) < 0 ? -1
                                                                                           : 1;
            break;
        }
    }
    if (rc < 0 && !err->text[0])
        moe_error_set(err, "%s/manifest.json: stage %s has no candidate %.16s", study, stage, id);
    json_decref(m);
    return rc;
}

int moe_study_find_run(const char *study, const char *stage, const char *id, char *run_dir,
                       size_t len, struct moe_error *err)
{
    char dir[4200], file[4600];
    struct dirent **ents = NULL;
    int n, found = 0;

    snprintf(dir, sizeof(dir), "%s/runs", study);
    n = scandir(dir, &ents, NULL, alphasort);
    if (n < 0) {
        if (errno == ENOENT)
            return 0;
        moe_error_set(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        json_t *doc, *run;
        const char *s, *c;

        if (!found && ents[i]->d_name[0] != '.') {
            snprintf(file, sizeof(file), "%s/%s/contract.json", dir, ents[i]->d_name);
            doc = moe_read_json(file, "run record", NULL);
            run = json_object_get(doc, "run");
            s = json_string_value(json_object_get(run, "stage"));
            c = json_string_value(json_object_get(run, "candidate"));
            if (s && c && strcmp(s, stage) == 0 && strcmp(c, id) == 0) {
                snprintf(run_dir, len, "%s/%s", dir, ents[i]->d_name);
                found = 1;
            }
            json_decref(doc);
        }
        free(ents[i]);
    }
    free(ents);
    return found;
}

int moe_study_locate(const char *path, struct moe_study_where *w, struct moe_error *err)
{
    char real[PATH_MAX], up[PATH_MAX], up2[PATH_MAX], file[PATH_MAX + 32];
    struct stat st;

    memset(w, 0, sizeof(*w));
    if (!realpath(path, real) || stat(real, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode) && moe_study_is_dir(real)) {
        snprintf(w->study, sizeof(w->study), "%s", real);
        return 1;
    }
    snprintf(up, sizeof(up), "%s", real);
    parent(up);
    snprintf(up2, sizeof(up2), "%s", up);
    parent(up2);
    /* <study>/results/<stage> */
    if (S_ISDIR(st.st_mode) && is_stage_name(base(real)) && strcmp(base(up), "results") == 0 &&
        moe_study_is_dir(up2)) {
        snprintf(w->study, sizeof(w->study), "%s", up2);
        snprintf(w->stage, sizeof(w->stage), "%.15s", base(real));
        return 1;
    }
    /* <study>/runs/<run id>, with the plugin's record of what ran */
    snprintf(file, sizeof(file), "%s/contract.json", real);
    if (S_ISDIR(st.st_mode) && strcmp(base(up), "runs") == 0 && moe_study_is_dir(up2) &&
        file_exists(file)) {
        json_t *doc = moe_read_json(file, "run record", err), *run;
        const char *stage, *cand;
        int rc = 0;

        if (!doc)
            return -1;
        run = json_object_get(doc, "run");
        stage = json_string_value(json_object_get(run, "stage"));
        cand = json_string_value(json_object_get(run, "candidate"));
        if (stage && cand && is_stage_name(stage)) {
            snprintf(w->study, sizeof(w->study), "%s", up2);
            snprintf(w->stage, sizeof(w->stage), "%s", stage);
            rc = candidate_in(up2, stage, cand, w, err);
        }
        json_decref(doc);
        return rc;
    }
    /* <study>/results/<stage>/<id>.log */
    if (S_ISREG(st.st_mode) && is_stage_name(base(up)) && strlen(base(real)) > 4 &&
        strcmp(base(real) + strlen(base(real)) - 4, ".log") == 0) {
        char study[PATH_MAX], id[80];

        snprintf(study, sizeof(study), "%s", up2);
        parent(study);
        if (strcmp(base(up2), "results") != 0 || !moe_study_is_dir(study))
            return 0;
        snprintf(id, sizeof(id), "%.*s", (int)(strlen(base(real)) - 4), base(real));
        snprintf(w->study, sizeof(w->study), "%s", study);
        snprintf(w->stage, sizeof(w->stage), "%.15s", base(up));
        return candidate_in(study, w->stage, id, w, err);
    }
    return 0;
}
