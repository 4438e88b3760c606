/* manifest.json and its candidates, read back from JSON; manifest_write.c
 * writes them.  The two are the only places that name their keys: the
 * plugin links this half alone. */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/atomic_set.h"
#include "core/atomic_set_internal.h"
#include "core/contract_keys.h"
#include "core/manifest.h"
#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

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
    free(c->twin_of);
    json_decref(c->value);
    json_decref(c->contract);
    moe_strv_free(&c->argv);
    moe_strv_free(&c->env);
    moe_strv_free(&c->label_reasons);
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
    dst->variable = dst->label = dst->bottleneck = dst->note = dst->id = dst->twin_of = NULL;
    dst->argv = dst->env = dst->label_reasons = (struct moe_strv){ 0 };
    json_incref(dst->value);
    json_incref(dst->contract);
    if (moe_candidate_set(&dst->variable, src->variable) < 0 ||
        moe_candidate_set(&dst->label, src->label) < 0 ||
        moe_candidate_set(&dst->bottleneck, src->bottleneck) < 0 ||
        moe_candidate_set(&dst->note, src->note) < 0 || moe_candidate_set(&dst->id, src->id) < 0 ||
        moe_candidate_set(&dst->twin_of, src->twin_of) < 0 ||
        moe_strv_copy(&dst->argv, &src->argv) < 0 || moe_strv_copy(&dst->env, &src->env) < 0 ||
        moe_strv_copy(&dst->label_reasons, &src->label_reasons) < 0) {
        moe_candidate_free(dst);
        return -1;
    }
    return 0;
}

/* The reasons the contract gives, in the generator's words
 * (study/study_contract.c, moe_study_label). */
static size_t contract_reasons(const json_t *contract, const char **reasons)
{
    const char *routing = json_string_value(
        json_object_get(json_object_get(contract, MOE_CONTRACT_SEMANTICS), "routing"));
    const json_t *workload = json_object_get(contract, MOE_CONTRACT_WORKLOAD);
    const char *data = json_string_value(json_object_get(workload, "data"));
    size_t n = 0;

    if (routing && strcmp(routing, "force-balance") == 0)
        reasons[n++] = MOE_REASON_FORCED_BALANCE;
    if (data && strcmp(data, "mock") == 0)
        reasons[n++] = MOE_REASON_MOCK_DATA;
    /* absent: the run took Megatron's defaults, as every run did before
     * a study could state them (issue 41) */
    if (!json_object_get(workload, MOE_CONTRACT_LR_SCHEDULE))
        reasons[n++] = MOE_REASON_NO_LR_SCHEDULE;
    if (!json_object_get(json_object_get(contract, MOE_CONTRACT_SEMANTICS),
                         MOE_CONTRACT_AUX_LOSS_COEFF))
        reasons[n++] = MOE_REASON_NO_AUX_LOSS;
    if (!json_object_get(workload, MOE_CONTRACT_TOKENIZER))
        reasons[n++] = MOE_REASON_NULL_TOKENIZER;
    return n;
}

const char *moe_candidate_semantics(const struct moe_candidate *c, const char **reasons,
                                    size_t *n)
{
    *n = 0;
    if (json_is_object(c->contract)) {
        *n = contract_reasons(c->contract, reasons);
        return *n ? "benchmark-only" : "training-equivalent";
    }
    for (size_t i = 0; i < c->label_reasons.n && *n < MOE_LABEL_REASONS_MAX; i++)
        reasons[(*n)++] = c->label_reasons.v[i];
    return c->label && c->label[0] ? c->label : "unlabelled";
}

void moe_candidate_label_text(const struct moe_candidate *c, char *buf, size_t len)
{
    const char *reasons[MOE_LABEL_REASONS_MAX];
    size_t n, used;

    /* a message: a label for people, cut at worst (manifest.h) */
    snprintf(buf, len, "%s", moe_candidate_semantics(c, reasons, &n));
    for (size_t i = 0; i < n; i++) {
        used = strlen(buf);
        /* a message, as above */
        snprintf(buf + used, len - used, "%s%s", i ? ", " : ": ", reasons[i]);
    }
}

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

int moe_candidate_from_json(const json_t *o, struct moe_candidate *c)
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
           str_field(o, "id", &c->id) | str_field(o, "twin_of", &c->twin_of) |
           strv_of(json_object_get(o, "argv"), &c->argv) |
           strv_of(json_object_get(o, "label_reasons"), &c->label_reasons) |
           env_of(json_object_get(o, "env"), &c->env);
}

static int stage_of(const json_t *o, struct moe_manifest_stage *st)
{
    const json_t *cands = json_object_get(o, "candidates"), *c;
    size_t i;

    st->stage = moe_stage_parse(json_string_value(json_object_get(o, "stage")));
    st->script = json_string_value(json_object_get(o, "script"));
    if (json_is_object(json_object_get(o, "reference"))) {
        if (!(st->reference = calloc(1, sizeof(*st->reference))))
            return -1;
        if (moe_candidate_from_json(json_object_get(o, "reference"), st->reference) < 0)
            return -1;
    }
    st->array = json_is_true(json_object_get(o, "array"));
    st->cands = calloc(json_array_size(cands) + 1, sizeof(*st->cands));
    if (!st->cands)
        return -1;
    json_array_foreach(cands, i, c) {
        if (moe_candidate_from_json(c, &st->cands[i]) < 0) {
            moe_candidate_free(&st->cands[i]);
            return -1;
        }
        st->n++;
    }
    return 0;
}

enum moe_study_dir moe_study_dir(const char *path)
{
    char *manifest;
    struct stat st;
    enum moe_study_dir kind;

    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return MOE_STUDY_NOT_DIR;
    /* out of memory reads as no manifest: the caller's next read reports it */
    if (!(manifest = moe_path_join(path, MOE_STUDY_MANIFEST)) || stat(manifest, &st) != 0)
        kind = MOE_STUDY_PLAIN_DIR;
    else
        kind = S_ISREG(st.st_mode) ? MOE_STUDY_GENERATED : MOE_STUDY_ODD_MANIFEST;
    free(manifest);
    return kind;
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
    if (!(m->path = moe_path_join(dir, MOE_STUDY_MANIFEST))) {
        moe_error_set(err, "%s: out of memory", dir);
        return -1;
    }
    /* rule 9: a killed gen --winners may have renamed some of its files */
    if (moe_atomic_set_pending(dir)) {
        moe_error_at(err, dir, 0, 0, "an interrupted moeflow gen --winners left its files half "
                     "in place (%s is there): run it again to finish it",
                     MOE_ATOMIC_SET_JOURNAL);
        moe_manifest_free(m);
        return -1;
    }
    if (!(m->json = moe_read_json(m->path, "manifest", err))) {
        moe_manifest_free(m);
        return -1;
    }
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
        if (m->stages[i].reference)
            moe_candidate_free(m->stages[i].reference);
        free(m->stages[i].reference);
    }
    free(m->stages);
    json_decref(m->json);
    free(m->path);
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

/* k[key] as an int; -1 with err naming stages[i].chunks[j].key. */
static int chunk_int(const json_t *k, const char *key, const char *where, int *out,
                     struct moe_error *err)
{
    const json_t *v = json_object_get(k, key);

    if (!json_is_integer(v)) {
        moe_error_set(err, "%s.%s: %s", where, key, v ? "not an integer" : "missing");
        return -1;
    }
    if (json_integer_value(v) < INT_MIN || json_integer_value(v) > INT_MAX) {
        moe_error_set(err, "%s.%s: %" JSON_INTEGER_FORMAT " is out of range", where, key,
                      json_integer_value(v));
        return -1;
    }
    *out = (int)json_integer_value(v);
    return 0;
}

/* k[key] into buf; too long is an error, never a command cut short. */
static int chunk_str(const json_t *k, const char *key, const char *where, char *buf, size_t len,
                     struct moe_error *err)
{
    const json_t *v = json_object_get(k, key);
    const char *s = json_string_value(v);

    if (!s) {
        moe_error_set(err, "%s.%s: %s", where, key, v ? "not a string" : "missing");
        return -1;
    }
    if (strlen(s) >= len) {
        moe_error_set(err, "%s.%s: longer than the %zu bytes moeflow gen writes", where, key,
                      len - 1);
        return -1;
    }
    memcpy(buf, s, strlen(s) + 1);
    return 0;
}

static int chunk_of(const json_t *k, const char *where, struct moe_chunk *c,
                    struct moe_error *err)
{
    if (!json_is_object(k)) {
        moe_error_set(err, "%s: not an object", where);
        return -1;
    }
    return chunk_int(k, "offset", where, &c->offset, err) < 0 ||
                   chunk_int(k, "count", where, &c->count, err) < 0 ||
                   chunk_str(k, "array", where, c->array, sizeof(c->array), err) < 0 ||
                   chunk_str(k, "args", where, c->args, sizeof(c->args), err) < 0 ||
                   chunk_str(k, "sbatch", where, c->sbatch, sizeof(c->sbatch), err) < 0
               ? -1
               : 0;
}

int moe_manifest_stage_chunks(const struct moe_manifest *m, enum moe_stage st,
                              struct moe_chunk **chunks, size_t *n, struct moe_error *err)
{
    const struct moe_manifest_stage *found = moe_manifest_find(m, st);
    size_t i = found ? (size_t)(found - m->stages) : 0, j;
    const json_t *list, *k;
    char where[64];

    *chunks = NULL;
    *n = 0;
    if (!found) {
        moe_error_at(err, m->path, 0, 0, "stages: no %s entry", moe_stage_name(st));
        return -1;
    }
    list = json_object_get(json_array_get(json_object_get(m->json, "stages"), i), "chunks");
    if (!json_is_array(list)) {
        moe_error_at(err, m->path, 0, 0, "stages[%zu].chunks: %s", i,
                     list ? "not an array" : "missing");
        return -1;
    }
    if (!(*chunks = calloc(json_array_size(list) + 1, sizeof(**chunks)))) {
        moe_error_at(err, m->path, 0, 0, "stages[%zu].chunks: out of memory", i);
        return -1;
    }
    json_array_foreach(list, j, k) {
        /* fits: two size_t in decimal and the literal text, under 64 */
        snprintf(where, sizeof(where), "stages[%zu].chunks[%zu]", i, j);
        if (chunk_of(k, where, &(*chunks)[j], err) < 0) {
            moe_error_locate(err, m->path, 0, 0);
            free(*chunks);
            *chunks = NULL;
            return -1;
        }
    }
    *n = json_array_size(list);
    return 0;
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
