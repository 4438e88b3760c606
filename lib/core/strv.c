#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/strv.h"

static int grow(struct moe_strv *l)
{
    char **v = moe_grow_array(l->v, &l->cap, l->n + 1, sizeof(*v));

    if (!v)
        return -1;
    l->v = v;
    return 0;
}

int moe_strv_insert(struct moe_strv *l, size_t i, const char *s)
{
    char *copy = strdup(s);

    if (!copy || grow(l) < 0) {
        free(copy);
        l->oom = true;
        return -1;
    }
    memmove(l->v + i + 1, l->v + i, (l->n - i) * sizeof(*l->v));
    l->v[i] = copy;
    l->n++;
    return 0;
}

int moe_strv_push(struct moe_strv *l, const char *s)
{
    return moe_strv_insert(l, l->n, s);
}

int moe_strv_pushf(struct moe_strv *l, const char *fmt, ...)
{
    va_list ap;
    char *s;
    int rc;

    va_start(ap, fmt);
    rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (rc < 0) {
        l->oom = true;
        return -1;
    }
    rc = moe_strv_push(l, s);
    free(s);
    return rc;
}

int moe_strv_set(struct moe_strv *l, size_t i, const char *s)
{
    char *copy = strdup(s);

    if (!copy)
        return -1;
    free(l->v[i]);
    l->v[i] = copy;
    return 0;
}

void moe_strv_remove(struct moe_strv *l, size_t i)
{
    free(l->v[i]);
    memmove(l->v + i, l->v + i + 1, (l->n - i - 1) * sizeof(*l->v));
    l->n--;
}

int moe_strv_copy(struct moe_strv *dst, const struct moe_strv *src)
{
    *dst = (struct moe_strv){ 0 };
    for (size_t i = 0; i < src->n; i++)
        if (moe_strv_push(dst, src->v[i]) < 0) {
            moe_strv_free(dst);
            return -1;
        }
    return 0;
}

bool moe_strv_equal(const struct moe_strv *a, const struct moe_strv *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0)
            return false;
    return true;
}

long moe_strv_find(const struct moe_strv *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return (long)i;
    return -1;
}

size_t moe_strv_flag_values(const struct moe_strv *l, size_t i)
{
    size_t n = 0;

    while (i + 1 + n < l->n && strncmp(l->v[i + 1 + n], "--", 2) != 0)
        n++;
    return n;
}

const char *moe_strv_flag_value(const struct moe_strv *l, const char *flag)
{
    long i = moe_strv_find(l, flag);

    return i >= 0 && moe_strv_flag_values(l, (size_t)i) > 0 ? l->v[i + 1] : NULL;
}

long moe_strv_env_find(const struct moe_strv *env, const char *entry)
{
    size_t n = strcspn(entry, "=");

    for (size_t i = 0; i < env->n; i++)
        if (strncmp(env->v[i], entry, n) == 0 && env->v[i][n] == '=')
            return (long)i;
    return -1;
}

int moe_strv_env_set(struct moe_strv *env, const char *entry)
{
    long i = moe_strv_env_find(env, entry);

    return i >= 0 ? moe_strv_set(env, (size_t)i, entry) : moe_strv_push(env, entry);
}

void moe_strv_free(struct moe_strv *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    *l = (struct moe_strv){ 0 };
}
