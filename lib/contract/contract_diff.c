#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_build.h"
#include "contract/contract.h"
#include "contract/contract_diff.h"
#include "contract/contract_diff_internal.h"
#include "core/contract_keys.h"
#include "core/json_canon.h"

/* Sections that describe a contract rather than belong to it. */
static int is_annotation(const char *section)
{
    return strcmp(section, MOE_CONTRACT_SOURCES) == 0 || strcmp(section, MOE_CONTRACT_RUN) == 0;
}

/* key as one path segment: '.' and '\\' escaped with '\\', and the empty
 * key as "\\e", so that no two different documents flatten alike
 * ({"seq_len.x":5} and {"seq_len":{"x":5}} once did: "no differences"
 * between contracts whose digests differ).  Keys without those characters,
 * which is every key a generator writes, read as before. */
static char *join(const char *prefix, const char *key)
{
    size_t plen = strlen(prefix), n = plen + 2 * strlen(key) + 4;
    char *path = malloc(n), *p;

    if (!path)
        return NULL;
    p = path + snprintf(path, n, "%s%s", prefix, plen ? "." : "");
    if (!key[0]) {
        *p++ = '\\';
        *p++ = 'e';
    }
    for (; *key; key++) {
        if (*key == '.' || *key == '\\')
            *p++ = '\\';
        *p++ = *key;
    }
    *p = '\0';
    return path;
}

/* Flattens objects into path -> leaf; the map borrows no references.  A
 * leaf is a non-object or an empty object; the document itself, when not
 * an object, is the leaf of the empty path, which no key makes.  notes:
 * the top level's annotation sections instead of the others. */
static int flatten(const json_t *node, const char *prefix, json_t *map, int notes)
{
    const char *key;
    json_t *value;

    if (!json_is_object(node))
        return notes && !prefix[0] ? 0 : json_object_set(map, prefix, (json_t *)node);
    if (json_object_size(node) == 0 && prefix[0])
        return json_object_set(map, prefix, (json_t *)node);
    json_object_foreach((json_t *)node, key, value) {
        char *path;
        int rc;

        if (!prefix[0] && is_annotation(key) != notes)
            continue;
        if (!(path = join(prefix, key)))
            return -1;
        rc = flatten(value, path, map, notes);
        free(path);
        if (rc != 0)
            return -1;
    }
    return 0;
}

size_t moe_contract_path_segment(const char *path)
{
    size_t i = 0;

    while (path[i] && path[i] != '.')
        i += path[i] == '\\' && path[i + 1] ? 2 : 1;
    return i;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted union of the two maps' keys; the strings belong to the maps. */
static const char **union_keys(json_t *a, json_t *b, size_t *count)
{
    size_t n = 0, cap = json_object_size(a) + json_object_size(b);
    const char **keys = calloc(cap ? cap : 1, sizeof(*keys));
    const char *key;
    json_t *value;

    if (!keys)
        return NULL;
    json_object_foreach(a, key, value)
        keys[n++] = key;
    json_object_foreach(b, key, value)
        if (!json_object_get(a, key))
            keys[n++] = key;
    qsort(keys, n, sizeof(*keys), compare_strings);
    *count = n;
    return keys;
}

static char *leaf_text(json_t *value)
{
    return value ? moe_json_canonical(value) : NULL;
}

static int texts_equal(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static int collect_changes(json_t *fa, json_t *fb, struct moe_contract_diff *diff)
{
    size_t n = 0;
    const char **keys = union_keys(fa, fb, &n);

    if (!keys)
        return -1;
    diff->items = calloc(n ? n : 1, sizeof(*diff->items));
    if (!diff->items) {
        free(keys);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char *ta = leaf_text(json_object_get(fa, keys[i]));
        char *tb = leaf_text(json_object_get(fb, keys[i]));

        if (texts_equal(ta, tb)) {
            free(ta);
            free(tb);
            continue;
        }
        diff->items[diff->count].path = strdup(keys[i]);
        diff->items[diff->count].frozen = ta;
        diff->items[diff->count].requested = tb;
        diff->count++;
    }
    free(keys);
    return 0;
}

static int diff_of(const json_t *frozen, const json_t *requested, int notes,
                   struct moe_contract_diff *diff, struct moe_error *err)
{
    json_t *fa = json_object(), *fb = json_object();
    int rc = -1;

    memset(diff, 0, sizeof(*diff));
    if (!fa || !fb || flatten(frozen, "", fa, notes) != 0 ||
        flatten(requested, "", fb, notes) != 0) {
        moe_error_set(err, "out of memory while comparing contracts");
        goto out;
    }
    if (collect_changes(fa, fb, diff) != 0) {
        moe_error_set(err, "out of memory while comparing contracts");
        moe_contract_diff_free(diff);
        goto out;
    }
    rc = 0;
out:
    json_decref(fa);
    json_decref(fb);
    return rc;
}

int moe_contract_diff(const json_t *frozen, const json_t *requested,
                      struct moe_contract_diff *diff, struct moe_error *err)
{
    return diff_of(frozen, requested, 0, diff, err);
}

int moe_contract_diff_annotations(const json_t *frozen, const json_t *requested,
                                  struct moe_contract_diff *diff, struct moe_error *err)
{
    return diff_of(frozen, requested, 1, diff, err);
}

void moe_contract_diff_free(struct moe_contract_diff *diff)
{
    for (size_t i = 0; i < diff->count; i++) {
        free(diff->items[i].path);
        free(diff->items[i].frozen);
        free(diff->items[i].requested);
    }
    free(diff->items);
    memset(diff, 0, sizeof(*diff));
}

int moe_contract_change_in(const struct moe_contract_change *change, const char *section)
{
    size_t len = strlen(section);

    return strncmp(change->path, section, len) == 0 &&
           (change->path[len] == '\0' || change->path[len] == '.');
}

char *moe_contract_diff_text(const struct moe_contract_diff *diff)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&buf, &size);

    if (!out)
        return NULL;
    for (size_t i = 0; i < diff->count; i++) {
        const struct moe_contract_change *c = &diff->items[i];
        fprintf(out, "%s: %s \u2192 %s\n", c->path, c->frozen ? c->frozen : "(absent)",
                c->requested ? c->requested : "(absent)");
    }
    fclose(out);
    return buf;
}

static json_t *text_value(const char *text)
{
    return text ? json_loads(text, JSON_DECODE_ANY, NULL) : json_null();
}

json_t *moe_contract_diff_json(const struct moe_contract_diff *diff)
{
    json_t *list = json_array();
    struct moe_jb b;

    /* no err here: a change that cannot be made is NULL for the whole
     * list, which the caller's builder names by its key */
    moe_jb_init(&b, NULL);
    for (size_t i = 0; i < diff->count; i++) {
        const struct moe_contract_change *c = &diff->items[i];
        json_t *o = json_object();

        moe_jb_str(&b, o, "path", c->path);
        moe_jb_set(&b, o, "frozen", text_value(c->frozen));
        moe_jb_set(&b, o, "requested", text_value(c->requested));
        moe_jb_append(&b, list, moe_jb_done(&b, o));
    }
    return moe_jb_done(&b, list);
}
