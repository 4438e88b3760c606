#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contract/contract.h"

const char *const moe_contract_sections[] = {
    "environment", "hardware", "workload", "semantics", "parallel", "tuning", "timing", NULL,
};

static const char *const optional_sections[] = { "profiling", "sources", "validation", "run", NULL };

static int in_list(const char *key, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(key, *list) == 0)
            return 1;
    return 0;
}

int moe_contract_check_shape(const json_t *doc, struct moe_error *err)
{
    const char *key;
    json_t *value;

    if (!json_is_object(doc)) {
        moe_error_set(err, "a contract is a JSON object with sections");
        return -1;
    }
    for (const char *const *s = moe_contract_sections; *s; s++) {
        if (!json_is_object(json_object_get(doc, *s))) {
            moe_error_set(err, "contract section '%s' is missing or not an object", *s);
            return -1;
        }
    }
    json_object_foreach((json_t *)doc, key, value) {
        if (!in_list(key, moe_contract_sections) && !in_list(key, optional_sections)) {
            moe_error_set(err, "unknown contract section '%s'", key);
            return -1;
        }
    }
    return 0;
}

#define STUDY_JSON_MAX_BYTES (16L * 1024 * 1024)

json_t *moe_json_load_regular(const char *path, json_error_t *jerr)
{
    struct stat st;
    json_t *doc = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

    memset(jerr, 0, sizeof(*jerr));
    if (fd < 0) {
        snprintf(jerr->text, sizeof(jerr->text), "%s", strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > STUDY_JSON_MAX_BYTES)
        snprintf(jerr->text, sizeof(jerr->text), "not a regular file of at most 16 MiB");
    else
        doc = json_loadfd(fd, 0, jerr);
    close(fd);
    return doc;
}

json_t *moe_contract_load_plain(const char *path, struct moe_error *err)
{
    json_error_t jerr;
    json_t *doc = moe_json_load_regular(path, &jerr);

    if (!doc) {
        moe_error_at(err, path, jerr.line, jerr.column, "%s", jerr.text);
        return NULL;
    }
    if (moe_contract_check_shape(doc, err) != 0) {
        moe_error_locate(err, path, 0, 0);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* 2^53: above it a double no longer holds every integer exactly. */
#define EXACT_INT_LIMIT 9007199254740992.0

static json_t *normalize_real(double v)
{
    if (v == 0.0)
        return json_integer(0);
    if (isfinite(v) && floor(v) == v && fabs(v) <= EXACT_INT_LIMIT)
        return json_integer((json_int_t)v);
    return json_real(v);
}

json_t *moe_contract_normalize(const json_t *doc)
{
    json_t *out, *value;
    const char *key;
    size_t i;

    switch (json_typeof(doc)) {
    case JSON_REAL:
        return normalize_real(json_real_value(doc));
    case JSON_OBJECT:
        out = json_object();
        json_object_foreach((json_t *)doc, key, value)
            json_object_set_new(out, key, moe_contract_normalize(value));
        return out;
    case JSON_ARRAY:
        out = json_array();
        json_array_foreach(doc, i, value)
            json_array_append_new(out, moe_contract_normalize(value));
        return out;
    default:
        return json_deep_copy(doc);
    }
}

char *moe_contract_dump(const json_t *doc)
{
    json_t *norm = moe_contract_normalize(doc);
    char *text;

    if (!norm)
        return NULL;
    text = json_dumps(norm, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(15) |
                                JSON_ENCODE_ANY);
    json_decref(norm);
    return text;
}

int moe_contract_digest(const json_t *doc, char hex[MOE_SHA256_HEX_LEN + 1],
                        struct moe_error *err)
{
    char *text = moe_contract_dump(doc);
    int rc;

    if (!text) {
        moe_error_set(err, "cannot serialise the contract");
        return -1;
    }
    rc = moe_sha256_hex(text, strlen(text), hex, err);
    free(text);
    return rc;
}
