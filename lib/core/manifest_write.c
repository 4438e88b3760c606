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
#include "core/json_build.h"
#include "core/json_canon.h"
#include "core/manifest.h"
#include "core/sha256.h"
#include "core/strbuf.h"

/* o, or NULL (o released) when building it failed, so that the key it
 * goes under joins the failure's path; a failure before it is not its
 * own and leaves it as it is (the whole document is dropped anyway). */
static json_t *built(struct moe_jb *b, bool failed_before, json_t *o)
{
    if (failed_before || !b->failed)
        return o;
    json_decref(o);
    return NULL;
}

static json_t *strv_json(struct moe_jb *b, const struct moe_strv *l)
{
    bool was = b->failed;
    json_t *a = json_array();

    for (size_t i = 0; i < l->n; i++)
        moe_jb_append(b, a, json_string(l->v[i]));
    return built(b, was, a);
}

/* NAME=value entries as one object.  The generator writes every entry as
 * NAME=value (megatron_args.c); one without '=' has no value to write and
 * fails the candidate rather than vanish from the file. */
static json_t *env_json(struct moe_jb *b, const struct moe_strv *env)
{
    bool was = b->failed;
    json_t *o = json_object();

    for (size_t i = 0; i < env->n; i++) {
        const char *eq = strchr(env->v[i], '=');
        char *name = eq ? strndup(env->v[i], (size_t)(eq - env->v[i])) : NULL;

        if (!name) { /* no '=', or out of memory */
            moe_jb_set(b, o, env->v[i], NULL);
            continue;
        }
        moe_jb_str(b, o, name, eq + 1);
        free(name);
    }
    return built(b, was, o);
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

static json_t *candidate_json(struct moe_jb *b, const struct moe_candidate *c, bool without_id)
{
    bool was = b->failed;
    json_t *o = json_object();

    moe_jb_str(b, o, "stage", or_empty(moe_stage_name(c->stage)));
    moe_jb_str(b, o, "variable", or_empty(c->variable));
    moe_jb_copy(b, o, "value", c->value ? c->value : json_null());
    moe_jb_str(b, o, "label", without_id ? id_label(c) : or_empty(c->label));
    moe_jb_str(b, o, "bottleneck", or_empty(c->bottleneck));
    moe_jb_set(b, o, "argv", strv_json(b, &c->argv));
    moe_jb_set(b, o, "env", env_json(b, &c->env));
    moe_jb_int(b, o, "nodes", c->nodes);
    moe_jb_int(b, o, "tasks_per_node", c->tasks_per_node);
    moe_jb_int(b, o, "world_size", c->world_size);
    moe_jb_str(b, o, "note", or_empty(c->note));
    moe_jb_copy(b, o, "contract", c->contract ? c->contract : json_null());
    if (c->rank >= 0)
        moe_jb_int(b, o, "rank", c->rank);
    if (!without_id)
        moe_jb_set(b, o, "label_reasons", strv_json(b, &c->label_reasons));
    if (!without_id && c->id)
        moe_jb_str(b, o, "id", c->id);
    if (!without_id && c->twin_of)
        moe_jb_str(b, o, "twin_of", c->twin_of);
    /* NaN is "no model" (manifest.h) and leaves the key out, as it always
     * has; an infinite model is null and named in "non_finite". */
    if (!without_id && !isnan(c->predicted_mib))
        moe_jb_num(b, o, "predicted_mib", c->predicted_mib);
    return built(b, was, o);
}

json_t *moe_candidate_json(const struct moe_candidate *c, bool without_id,
                           struct moe_error *err)
{
    struct moe_jb b;

    moe_jb_init(&b, err);
    return moe_jb_done(&b, candidate_json(&b, c, without_id));
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
    /* -1 is its whole report: callers say which candidate they hashed. */
    json_t *doc = moe_candidate_json(c, true, NULL);
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

static json_t *chunk_json(struct moe_jb *b, const struct moe_chunk *k,
                          const struct moe_manifest_stage *st)
{
    const char *first = (size_t)k->offset < st->n ? st->cands[k->offset].id : NULL;
    bool was = b->failed;
    json_t *o = json_object();

    moe_jb_int(b, o, "offset", k->offset);
    moe_jb_int(b, o, "count", k->count);
    moe_jb_str(b, o, "candidate", or_empty(first));
    moe_jb_str(b, o, "array", k->array);
    moe_jb_str(b, o, "sbatch", k->sbatch);
    moe_jb_str(b, o, "args", k->args);
    return built(b, was, o);
}

static json_t *skip_json(struct moe_jb *b, const struct moe_skip *k)
{
    bool was = b->failed;
    json_t *o = json_object();

    moe_jb_str(b, o, "variable", k->variable);
    moe_jb_copy(b, o, "value", k->value ? k->value : json_null());
    moe_jb_str(b, o, "reason", k->reason);
    return built(b, was, o);
}

static json_t *chunks_json(struct moe_jb *b, const struct moe_manifest_stage *st)
{
    bool was = b->failed;
    json_t *chunks = json_array();

    for (size_t i = 0; i < st->n_chunks; i++)
        moe_jb_append(b, chunks, chunk_json(b, &st->chunks[i], st));
    return built(b, was, chunks);
}

json_t *moe_manifest_chunks_json(const struct moe_manifest_stage *st, struct moe_error *err)
{
    struct moe_jb b;

    moe_jb_init(&b, err);
    return moe_jb_done(&b, chunks_json(&b, st));
}

json_t *moe_manifest_stage_json(const struct moe_manifest_stage *st, struct moe_error *err)
{
    struct moe_jb b;
    json_t *o = json_object(), *cands = json_array(), *skipped = json_array();

    moe_jb_init(&b, err);
    moe_jb_str(&b, o, "stage", or_empty(moe_stage_name(st->stage)));
    moe_jb_str(&b, o, "script", st->script);
    moe_jb_bool(&b, o, "array", st->array);
    moe_jb_set(&b, o, "chunks", chunks_json(&b, st));
    for (size_t i = 0; !b.failed && i < st->n; i++)
        if (moe_jb_append(&b, cands, candidate_json(&b, &st->cands[i], false)) < 0)
            moe_jb_within(&b, "candidates"); /* "[i].note" is the list's */
    moe_jb_set(&b, o, "candidates", cands);
    for (size_t i = 0; !b.failed && i < st->n_skipped; i++)
        if (moe_jb_append(&b, skipped, skip_json(&b, &st->skipped[i])) < 0)
            moe_jb_within(&b, "skipped");
    moe_jb_set(&b, o, "skipped", skipped);
    if (st->reference && !b.failed)
        moe_jb_set(&b, o, "reference", candidate_json(&b, st->reference, false));
    return moe_jb_done(&b, o);
}

json_t *moe_manifest_json(const char *version, const char *study, const char *study_hash,
                          int max_array_size, json_t *stages, struct moe_error *err)
{
    struct moe_jb b;
    json_t *o = json_object();

    moe_jb_init(&b, err);
    moe_jb_str(&b, o, "moeflow_version", version);
    moe_jb_str(&b, o, "study", study);
    moe_jb_str(&b, o, "study_hash", study_hash);
    moe_jb_int(&b, o, "max_array_size", max_array_size);
    moe_jb_copy(&b, o, "stages", stages);
    return moe_jb_done(&b, o);
}

char *moe_manifest_text(const json_t *manifest)
{
    char *text = json_dumps(manifest, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    char *out = text ? moe_strdup_printf("%s\n", text) : NULL;

    free(text);
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

int moe_manifest_put_stage(json_t *manifest, json_t *entry)
{
    json_t *stages = json_object_get(manifest, "stages"), *st;
    json_t *old = moe_manifest_entry(
        manifest, moe_stage_parse(json_string_value(json_object_get(entry, "stage"))));
    size_t i;

    /* Jansson's result is this function's: -1, entry released, when it
     * could not be put in place (no "stages" array, or out of memory). */
    json_array_foreach(stages, i, st)
        if (st == old)
            return json_array_set_new(stages, i, entry);
    return json_array_append_new(stages, entry);
}
