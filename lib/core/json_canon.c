#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_build.h"
#include "core/json_canon.h"
#include "core/sha256.h"

/* 2^53: above it a double no longer holds every integer exactly. */
#define EXACT_INT_LIMIT 9007199254740992.0

/* A deep copy with integral reals (1.0, 1e0, -0.0) as integers; a part
 * that could not be made fails b (the caller drops the whole copy). */
static json_t *canonical_numbers(struct moe_jb *b, const json_t *doc)
{
    json_t *out, *value;
    const char *key;
    size_t i;
    double v;

    switch (json_typeof(doc)) {
    case JSON_REAL:
        v = json_real_value(doc);
        if (floor(v) == v && fabs(v) <= EXACT_INT_LIMIT)
            return json_integer((json_int_t)v);
        return json_real(v);
    case JSON_OBJECT:
        out = json_object();
        json_object_foreach((json_t *)doc, key, value)
            moe_jb_set(b, out, key, canonical_numbers(b, value));
        return out;
    case JSON_ARRAY:
        out = json_array();
        json_array_foreach(doc, i, value)
            moe_jb_append(b, out, canonical_numbers(b, value));
        return out;
    default:
        return json_deep_copy(doc);
    }
}

/* The one canonical form, behind every digest (candidate ids, the study
 * hash, contract digests) and every file compared byte for byte.  Sorted
 * keys, compact, any value (a contract diff compares scalars too).
 * Numbers: the contract's rule, because a digest must not depend on who
 * wrote the number.  An integral real within 2^53 is written as an integer
 * (-0.0 as 0), so 1, 1.0 and 1e0 from YAML, Python or a person hash alike,
 * and the text reads back with the types it is written with: canonicalising
 * it again gives the same bytes, an integer never turns real or back.  Other
 * reals get 15 significant digits (DBL_DIG): every 15-digit decimal survives
 * text -> double -> text, so the form is idempotent, and last-bit noise of
 * arithmetic (0.1 + 0.2) does not change a digest. */
char *moe_json_canonical(const json_t *json)
{
    struct moe_jb b;
    json_t *norm;
    char *text;

    moe_jb_init(&b, NULL);
    norm = moe_jb_done(&b, canonical_numbers(&b, json));
    if (!norm)
        return NULL;
    text = json_dumps(norm, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(15) |
                                JSON_ENCODE_ANY);
    json_decref(norm);
    return text;
}


int moe_json_sha256(const json_t *json, char hex[65])
{
    char *text = moe_json_canonical(json);
    int rc = text ? moe_sha256_hex(text, strlen(text), hex, NULL) : -1;

    free(text);
    return rc;
}
