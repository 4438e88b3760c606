/* Quoting only when needed keeps the generated scripts readable; the safe
 * set leaves out every character the shell or sbatch would interpret. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/json_build.h"
#include "core/shquote.h"
#include "core/strbuf.h"
#include "core/text.h"

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

char *moe_shquote_words_rooted(const char *const *words, size_t n, const char *under,
                               const char *root)
{
    char **parts = calloc(n ? n : 1, sizeof(*parts));
    size_t ulen = under ? strlen(under) : 0;
    char *out = NULL;
    size_t i;

    if (!parts)
        return NULL;
    for (i = 0; i < n; i++) {
        const char *w = words[i] ? words[i] : "";
        char *q = moe_shquote(w);

        if (q && ulen && strncmp(w, under, ulen) == 0) {
            char *r = moe_strdup_printf("%s%s", root, q);
            free(q);
            q = r;
        }
        if (!(parts[i] = q))
            goto done;
    }
    out = join(parts, n);
done:
    for (i = 0; i < n; i++)
        free(parts[i]);
    free(parts);
    return out;
}

char *moe_shquote_words(const char *const *words, size_t n)
{
    return moe_shquote_words_rooted(words, n, NULL, NULL);
}

char *moe_shquote_argv(const json_t *argv)
{
    size_t n = json_array_size(argv);
    const char **words = calloc(n ? n : 1, sizeof(*words));
    char *out;

    if (!words)
        return NULL;
    for (size_t i = 0; i < n; i++)
        words[i] = json_string_value(json_array_get(argv, i));
    out = moe_shquote_words(words, n);
    free(words);
    return out;
}

/* Orders NAME=value entries by NAME alone. */
static int cmp_name(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t lx = strcspn(x, "="), ly = strcspn(y, "=");
    int r = strncmp(x, y, lx < ly ? lx : ly);

    return r ? r : (lx > ly) - (lx < ly);
}

char *moe_shquote_env(const struct moe_strv *env)
{
    const char **entries = calloc(env->n ? env->n : 1, sizeof(*entries));
    char *out;

    if (!entries)
        return NULL;
    for (size_t i = 0; i < env->n; i++)
        entries[i] = env->v[i];
    qsort(entries, env->n, sizeof(*entries), cmp_name);
    out = moe_shquote_words(entries, env->n);
    free(entries);
    return out;
}

/* One quoted or unquoted stretch of a word from *p on, appended to word;
 * *p moves past it.  -1 on an unterminated quote or trailing backslash. */
static int split_piece(const char **p, char *word, size_t *n)
{
    const char *s = *p;

    if (*s == '\'') {
        for (s++; *s && *s != '\''; s++)
            word[(*n)++] = *s;
        if (!*s)
            return -1;
        s++;
    } else if (*s == '"') {
        for (s++; *s && *s != '"'; s++) {
            if (*s == '\\' && s[1] && strchr("\"\\$`", s[1]))
                s++;
            word[(*n)++] = *s;
        }
        if (!*s)
            return -1;
        s++;
    } else if (*s == '\\') {
        if (!s[1])
            return -1;
        word[(*n)++] = s[1];
        s += 2;
    } else {
        word[(*n)++] = *s++;
    }
    *p = s;
    return 0;
}

json_t *moe_shsplit(const char *s, struct moe_error *err)
{
    json_t *words = json_array();
    char *word = malloc(strlen(s) + 1);
    struct moe_jb b;

    moe_jb_init(&b, err);
    if (!words || !word) {
        moe_error_set(err, "out of memory");
        goto fail;
    }
    while (*s) {
        size_t n = 0;

        s += strspn(s, " \t");
        if (!*s)
            break;
        while (*s && *s != ' ' && *s != '\t')
            if (split_piece(&s, word, &n) < 0) {
                moe_error_set(err, "%s", *s == '\\' ? "ends in a backslash"
                                                    : "has a quote that is never closed");
                goto fail;
            }
        word[n] = '\0';
        if (moe_jb_append(&b, words, json_string(word)) < 0)
            goto fail;
    }
    free(word);
    return words;
fail:
    free(word);
    json_decref(words);
    return NULL;
}

/* The words sbatch 22.05 treats as a heterogeneous-job separator anywhere
 * in an #SBATCH line, matched without case (xstrcasestr). */
static const char *const sbatch_separators[] = { "hetjob", "packjob" };

char *moe_sbatch_quote(const char *s, struct moe_error *err)
{
    size_t n = strlen(s), escapes = 0;
    long ctrl = moe_text_control_at(s, n);
    char *out, *o, name[48];

    if (ctrl >= 0) {
        moe_error_set(err, "holds %s, which would end the #SBATCH line",
                      moe_text_control_name(s + ctrl, name, sizeof(name)));
        return NULL;
    }
    for (size_t i = 0; i < sizeof(sbatch_separators) / sizeof(sbatch_separators[0]); i++)
        if (strcasestr(s, sbatch_separators[i])) {
            moe_error_set(err, "holds '%s', which sbatch reads as a heterogeneous-job "
                          "separator anywhere in an #SBATCH line", sbatch_separators[i]);
            return NULL;
        }
    if (n && strspn(s, safe) == n)
        return strdup(s);
    for (const char *p = s; *p; p++)
        escapes += *p == '"' || *p == '\\';
    if (!(out = malloc(n + escapes + 3)))
        return NULL;
    o = out;
    *o++ = '"';
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            *o++ = '\\';
        *o++ = *p;
    }
    *o++ = '"';
    *o = '\0';
    return out;
}
