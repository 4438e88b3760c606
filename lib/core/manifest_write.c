/* manifest.json and its candidates, written as JSON (manifest.c reads
 * them back).  Apart from the reader, the only place that names their
 * keys; the CLI's generator and `gen --winners` write, the plugin never
 * does, so it does not link this half. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/contract_keys.h"
#include "core/json_canon.h"
#include "core/manifest.h"
#include "core/sha256.h"

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

/* The label the id hashes: the contract's routing class where the
 * contract has one (manifest.h says why). */
static const char *id_label(const struct moe_candidate *c)
{
    const char *cls = json_string_value(
        json_object_get(json_object_get(c->contract, MOE_CONTRACT_SEMANTICS), "class"));

    return cls ? cls : or_empty(c->label);
}

json_t *moe_candidate_json(const struct moe_candidate *c, bool without_id)
{
    json_t *o = json_pack("{s:s, s:s, s:O, s:s, s:s, s:o, s:o, s:i, s:i, s:i, s:s, s:O}",
                          "stage", or_empty(moe_stage_name(c->stage)), "variable",
                          or_empty(c->variable), "value", c->value ? c->value : json_null(),
                          "label", without_id ? id_label(c) : or_empty(c->label), "bottleneck", or_empty(c->bottleneck),
                          "argv", strv_json(&c->argv), "env", env_json(&c->env), "nodes",
                          c->nodes, "tasks_per_node", c->tasks_per_node, "world_size",
                          c->world_size, "note", or_empty(c->note), "contract",
                          c->contract ? c->contract : json_null());

    if (o && c->rank >= 0)
        json_object_set_new(o, "rank", json_integer(c->rank));
    if (o && !without_id)
        json_object_set_new(o, "label_reasons", strv_json(&c->label_reasons));
    if (o && !without_id && c->id)
        json_object_set_new(o, "id", json_string(c->id));
    if (o && !without_id && c->twin_of)
        json_object_set_new(o, "twin_of", json_string(c->twin_of));
    if (o && !without_id && !isnan(c->predicted_mib))
        json_object_set_new(o, "predicted_mib", json_real(c->predicted_mib));
    return o;
}

bool moe_candidate_id_is_hash(const char *id)
{
    size_t n = 0;

    for (; id && id[n]; n++)
        if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
            return false;
    return n == MOE_SHA256_HEX_LEN;
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

bool moe_candidate_is_timed(const struct moe_candidate *c)
{
    return !c->twin_of && !(c->variable && strcmp(c->variable, MOE_CANDIDATE_CHECKPOINT) == 0);
}

char *moe_candidate_label(const struct moe_candidate *c)
{
    char *text = moe_value_text(c->value), *out = NULL;

    if (asprintf(&out, "%s=%s", c->variable ? c->variable : "?", text ? text : "?") < 0)
        out = NULL;
    free(text);
    return out;
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
    return json_pack("{s:s, s:s, s:b, s:o, s:o, s:o, s:o*}", "stage",
                     or_empty(moe_stage_name(st->stage)), "script", st->script, "array",
                     st->array, "chunks", chunks, "candidates", cands, "skipped", skipped,
                     "reference", st->reference ? moe_candidate_json(st->reference, false)
                                                : NULL);
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
