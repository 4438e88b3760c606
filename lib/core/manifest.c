/* manifest.json and its candidates, to and from JSON: the one place that
 * names their keys. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json_canon.h"
#include "core/manifest.h"
#include "core/readfile.h"
#include "core/sha256.h"

void moe_candidate_init(struct moe_candidate *c)
{
    *c = (struct moe_candidate){ .stage = MOE_STAGE_NONE, .rank = -1, .predicted_mib = NAN };
}

void moe_candidate_free(struct moe_candidate *c)
{
    free(c->variable);
    free(c->label);
    free(c->bottleneck);
    free(c->note);
    free(c->id);
    json_decref(c->value);
    json_decref(c->contract);
    moe_strv_free(&c->argv);
    moe_strv_free(&c->env);
    moe_candidate_init(c);
}

int moe_candidate_set(char **field, const char *s)
{
    char *copy = s ? strdup(s) : NULL;

    if (s && !copy)
        return -1;
    free(*field);
    *field = copy;
    return 0;
}

int moe_candidate_copy(struct moe_candidate *dst, const struct moe_candidate *src)
{
    *dst = *src;
    dst->variable = dst->label = dst->bottleneck = dst->note = dst->id = NULL;
    dst->argv = dst->env = (struct moe_strv){ 0 };
    json_incref(dst->value);
    json_incref(dst->contract);
    if (moe_candidate_set(&dst->variable, src->variable) < 0 ||
        moe_candidate_set(&dst->label, src->label) < 0 ||
        moe_candidate_set(&dst->bottleneck, src->bottleneck) < 0 ||
        moe_candidate_set(&dst->note, src->note) < 0 || moe_candidate_set(&dst->id, src->id) < 0 ||
        moe_strv_copy(&dst->argv, &src->argv) < 0 || moe_strv_copy(&dst->env, &src->env) < 0) {
        moe_candidate_free(dst);
        return -1;
    }
    return 0;
}

static json_t *strv_json(const struct moe_strv *l)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < l->n; i++)
        json_array_append_new(a, json_string(l->v[i]));
    return a;
}

/* NAME=value entries as one object. */
static json_t *env_json(const struct moe_strv *env)
{
    json_t *o = json_object();

    for (size_t i = 0; o && i < env->n; i++) {
        const char *eq = strchr(env->v[i], '=');
        char name[256];

        if (!eq)
            continue;
        snprintf(name, sizeof(name), "%.*s", (int)(eq - env->v[i]), env->v[i]);
        json_object_set_new(o, name, json_string(eq + 1));
    }
    return o;
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

json_t *moe_candidate_json(const struct moe_candidate *c, bool without_id)
{
    json_t *o = json_pack("{s:s, s:s, s:O, s:s, s:s, s:o, s:o, s:i, s:i, s:i, s:s, s:O}",
                          "stage", or_empty(moe_stage_name(c->stage)), "variable",
                          or_empty(c->variable), "value", c->value ? c->value : json_null(),
                          "label", or_empty(c->label), "bottleneck", or_empty(c->bottleneck),
                          "argv", strv_json(&c->argv), "env", env_json(&c->env), "nodes",
                          c->nodes, "tasks_per_node", c->tasks_per_node, "world_size",
                          c->world_size, "note", or_empty(c->note), "contract",
                          c->contract ? c->contract : json_null());

    if (o && c->rank >= 0)
        json_object_set_new(o, "rank", json_integer(c->rank));
    if (o && !without_id && c->id)
        json_object_set_new(o, "id", json_string(c->id));
    if (o && !without_id && !isnan(c->predicted_mib))
        json_object_set_new(o, "predicted_mib", json_real(c->predicted_mib));
    return o;
}

int moe_candidate_hash(struct moe_candidate *c)
{
    json_t *doc = moe_candidate_json(c, true);
    char id[MOE_SHA256_HEX_LEN + 1];
    int rc = doc ? moe_json_sha256(doc, id) : -1;

    json_decref(doc);
    return rc < 0 ? -1 : moe_candidate_set(&c->id, id);
}

char *moe_value_text(const json_t *value)
{
    if (json_is_string(value))
        return strdup(json_string_value(value));
    return json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
}

static json_t *chunk_json(const struct moe_chunk *k, const struct moe_manifest_stage *st)
{
    const char *first = (size_t)k->offset < st->n ? st->cands[k->offset].id : NULL;

    return json_pack("{s:i, s:i, s:s, s:s, s:s, s:s}", "offset", k->offset, "count", k->count,
                     "candidate", or_empty(first), "array", k->array, "sbatch", k->sbatch,
                     "args", k->args);
}

static json_t *skip_json(const struct moe_skip *k)
{
    return json_pack("{s:s, s:O, s:s}", "variable", k->variable, "value",
                     k->value ? k->value : json_null(), "reason", k->reason);
}

json_t *moe_manifest_chunks_json(const struct moe_manifest_stage *st)
{
    json_t *chunks = json_array();

    for (size_t i = 0; i < st->n_chunks; i++)
        json_array_append_new(chunks, chunk_json(&st->chunks[i], st));
    return chunks;
}

json_t *moe_manifest_stage_json(const struct moe_manifest_stage *st)
{
    json_t *chunks = moe_manifest_chunks_json(st), *cands = json_array(), *skipped = json_array();

    for (size_t i = 0; i < st->n; i++)
        json_array_append_new(cands, moe_candidate_json(&st->cands[i], false));
    for (size_t i = 0; i < st->n_skipped; i++)
        json_array_append_new(skipped, skip_json(&st->skipped[i]));
    return json_pack("{s:s, s:s, s:b, s:o, s:o, s:o}", "stage",
                     or_empty(moe_stage_name(st->stage)), "script", st->script, "array",
                     st->array, "chunks", chunks, "candidates", cands, "skipped", skipped);
}

json_t *moe_manifest_json(const char *version, const char *study, const char *study_hash,
                          int max_array_size, json_t *stages)
{
    return json_pack("{s:s, s:s, s:s, s:i, s:O}", "moeflow_version", version, "study", study,
                     "study_hash", study_hash, "max_array_size", max_array_size, "stages",
                     stages);
}

char *moe_manifest_text(const json_t *manifest)
{
    char *text = json_dumps(manifest, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    size_t n = text ? strlen(text) : 0;
    char *out = text ? realloc(text, n + 2) : NULL;

    if (!out) {
        free(text);
        return NULL;
    }
    out[n] = '\n';
    out[n + 1] = '\0';
    return out;
}

/* ---- reading ---- */

static int str_field(const json_t *o, const char *key, char **out)
{
    return moe_candidate_set(out, json_string_value(json_object_get(o, key)));
}

/* A JSON array's strings; anything else in it reads as "" (as the scripts
 * would quote it). */
static int strv_of(const json_t *a, struct moe_strv *out)
{
    const json_t *w;
    size_t i;

    json_array_foreach(a, i, w)
        if (moe_strv_push(out, json_is_string(w) ? json_string_value(w) : "") < 0)
            return -1;
    return 0;
}

static int env_of(const json_t *o, struct moe_strv *out)
{
    const char *name;
    json_t *v;

    json_object_foreach((json_t *)o, name, v)
        if (moe_strv_pushf(out, "%s=%s", name, json_is_string(v) ? json_string_value(v) : "") < 0)
            return -1;
    return 0;
}

static int int_field(const json_t *o, const char *key)
{
    return (int)json_integer_value(json_object_get(o, key));
}

static int candidate_of(const json_t *o, struct moe_candidate *c)
{
    const json_t *rank = json_object_get(o, "rank");
    const json_t *mib = json_object_get(o, "predicted_mib");

    moe_candidate_init(c);
    c->stage = moe_stage_parse(json_string_value(json_object_get(o, "stage")));
    c->value = json_incref(json_object_get(o, "value"));
    c->contract = json_incref(json_object_get(o, "contract"));
    c->nodes = int_field(o, "nodes");
    c->tasks_per_node = int_field(o, "tasks_per_node");
    c->world_size = int_field(o, "world_size");
    /* present but no integer: 0, as the TSV and the fit report read it */
    c->rank = rank ? (int)json_integer_value(rank) : -1;
    c->predicted_mib = json_is_number(mib) ? json_number_value(mib) : NAN;
    return str_field(o, "variable", &c->variable) | str_field(o, "label", &c->label) |
           str_field(o, "bottleneck", &c->bottleneck) | str_field(o, "note", &c->note) |
           str_field(o, "id", &c->id) | strv_of(json_object_get(o, "argv"), &c->argv) |
           env_of(json_object_get(o, "env"), &c->env);
}

static int stage_of(const json_t *o, struct moe_manifest_stage *st)
{
    const json_t *cands = json_object_get(o, "candidates"), *c;
    size_t i;

    st->stage = moe_stage_parse(json_string_value(json_object_get(o, "stage")));
    st->script = json_string_value(json_object_get(o, "script"));
    st->array = json_is_true(json_object_get(o, "array"));
    st->cands = calloc(json_array_size(cands) + 1, sizeof(*st->cands));
    if (!st->cands)
        return -1;
    json_array_foreach(cands, i, c) {
        if (candidate_of(c, &st->cands[i]) < 0) {
            moe_candidate_free(&st->cands[i]);
            return -1;
        }
        st->n++;
    }
    return 0;
}

enum moe_study_dir moe_study_dir(const char *path)
{
    char manifest[4200];
    struct stat st;

    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return MOE_STUDY_NOT_DIR;
    snprintf(manifest, sizeof(manifest), "%s/manifest.json", path);
    if (stat(manifest, &st) != 0)
        return MOE_STUDY_PLAIN_DIR;
    return S_ISREG(st.st_mode) ? MOE_STUDY_GENERATED : MOE_STUDY_ODD_MANIFEST;
}

bool moe_study_is_dir(const char *path)
{
    return moe_study_dir(path) == MOE_STUDY_GENERATED;
}

int moe_manifest_load(const char *dir, struct moe_manifest *m, struct moe_error *err)
{
    const json_t *stages, *st;
    size_t i;

    memset(m, 0, sizeof(*m));
    snprintf(m->path, sizeof(m->path), "%s/manifest.json", dir);
    if (!(m->json = moe_read_json(m->path, "manifest", err)))
        return -1;
    m->study = json_string_value(json_object_get(m->json, "study"));
    m->study_hash = json_string_value(json_object_get(m->json, "study_hash"));
    stages = json_object_get(m->json, "stages");
    m->has_stages = json_is_array(stages);
    if (!(m->stages = calloc(json_array_size(stages) + 1, sizeof(*m->stages))))
        goto oom;
    json_array_foreach(stages, i, st) {
        if (stage_of(st, &m->stages[i]) < 0) {
            m->n_stages++;
            goto oom;
        }
        m->n_stages++;
    }
    return 0;
oom:
    moe_manifest_free(m);
    moe_error_set(err, "%s: out of memory", dir);
    return -1;
}

void moe_manifest_free(struct moe_manifest *m)
{
    for (size_t i = 0; m->stages && i < m->n_stages; i++) {
        for (size_t j = 0; j < m->stages[i].n; j++)
            moe_candidate_free(&m->stages[i].cands[j]);
        free(m->stages[i].cands);
    }
    free(m->stages);
    json_decref(m->json);
    memset(m, 0, sizeof(*m));
}

const struct moe_manifest_stage *moe_manifest_find(const struct moe_manifest *m,
                                                   enum moe_stage st)
{
    for (size_t i = 0; st != MOE_STAGE_NONE && i < m->n_stages; i++)
        if (m->stages[i].stage == st)
            return &m->stages[i];
    return NULL;
}

const struct moe_candidate *moe_manifest_candidate_by_id(const struct moe_manifest *m,
                                                         enum moe_stage st, const char *id)
{
    for (size_t i = 0; i < m->n_stages; i++) {
        const struct moe_manifest_stage *s = &m->stages[i];

        for (size_t j = 0; s->stage == st && j < s->n; j++)
            if (s->cands[j].id && strcmp(s->cands[j].id, id) == 0)
                return &s->cands[j];
    }
    return NULL;
}

int moe_manifest_stage_ids(const char *dir, enum moe_stage st, struct moe_strv *ids,
                           struct moe_error *err)
{
    enum moe_study_dir kind = moe_study_dir(dir);
    struct moe_manifest m;
    int rc = 0;

    *ids = (struct moe_strv){ 0 };
    if (kind == MOE_STUDY_NOT_DIR || kind == MOE_STUDY_PLAIN_DIR)
        return 0;
    if (moe_manifest_load(dir, &m, err) < 0)
        return -1;
    /* every entry of the stage, as the plugin always read them; a candidate
     * without an id has no index */
    for (size_t i = 0; i < m.n_stages && rc == 0; i++)
        for (size_t j = 0; m.stages[i].stage == st && j < m.stages[i].n && rc == 0; j++)
            if (m.stages[i].cands[j].id)
                rc = moe_strv_push(ids, m.stages[i].cands[j].id);
    moe_manifest_free(&m);
    if (rc < 0)
        moe_error_set(err, "%s: out of memory", dir);
    return rc;
}

json_t *moe_manifest_entry(const json_t *manifest, enum moe_stage st)
{
    json_t *entry;
    size_t i;

    json_array_foreach(json_object_get(manifest, "stages"), i, entry)
        if (moe_stage_parse(json_string_value(json_object_get(entry, "stage"))) == st &&
            st != MOE_STAGE_NONE)
            return entry;
    return NULL;
}

void moe_manifest_put_stage(json_t *manifest, json_t *entry)
{
    json_t *stages = json_object_get(manifest, "stages"), *st;
    json_t *old = moe_manifest_entry(
        manifest, moe_stage_parse(json_string_value(json_object_get(entry, "stage"))));
    size_t i;

    json_array_foreach(stages, i, st) {
        if (st == old) {
            json_array_set_new(stages, i, entry);
            return;
        }
    }
    json_array_append_new(stages, entry);
}
