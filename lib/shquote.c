/* Quoting only when needed keeps the generated scripts readable; the safe
 * set leaves out every character the shell or sbatch would interpret. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "shquote.h"

static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                           "_@%+=:,./-";

char *moe_shquote(const char *s)
{
    size_t n = strlen(s), quotes = 0;
    char *out, *o;

    if (n && strspn(s, safe) == n)
        return strdup(s);
    for (const char *p = s; *p; p++)
        quotes += *p == '\'';
    if (!(out = malloc(n + 3 * quotes + 3)))
        return NULL;
    o = out;
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

static char *join(char **parts, size_t n)
{
    size_t len = 1;
    char *out, *o;

    for (size_t i = 0; i < n; i++)
        len += strlen(parts[i]) + 1;
    if (!(out = malloc(len)))
        return NULL;
    o = out;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(parts[i]);
        if (i)
            *o++ = ' ';
        memcpy(o, parts[i], l);
        o += l;
    }
    *o = '\0';
    return out;
}

char *moe_shquote_argv(const json_t *argv)
{
    size_t n = json_array_size(argv), i;
    char **parts = calloc(n ? n : 1, sizeof(*parts));
    char *out = NULL;
    if (!parts)
        return NULL;
    for (i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(argv, i));

        if (!(parts[i] = moe_shquote(s ? s : "")))
            goto done;
    }
    out = join(parts, n);
done:
    for (i = 0; i < n; i++)
        free(parts[i]);
    free(parts);
    return out;
}

char *moe_shquote_env(const json_t *env)
{
    json_t *pairs = json_array();
    const char *key;
    const json_t *v;
    char *out;

    /* json_object_foreach order is not sorted: sort the keys first. */
    const char **keys = calloc(json_object_size(env) + 1, sizeof(*keys));
    size_t n = 0;

    if (!keys || !pairs) {
        free(keys);
        json_decref(pairs);
        return NULL;
    }
    json_object_foreach((json_t *)env, key, v) {
        keys[n++] = key;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(keys[j - 1], keys[j]) > 0; j--) {
            const char *t = keys[j];
            keys[j] = keys[j - 1];
            keys[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        const char *val = json_string_value(json_object_get(env, keys[i]));
        size_t len = strlen(keys[i]) + strlen(val ? val : "") + 2;
        char *kv = malloc(len);

        if (!kv) {
            free(keys);
            json_decref(pairs);
            return NULL;
        }
        snprintf(kv, len, "%s=%s", keys[i], val ? val : "");
        json_array_append_new(pairs, json_string(kv));
        free(kv);
    }
    free(keys);
    out = moe_shquote_argv(pairs);
    json_decref(pairs);
    return out;
}
