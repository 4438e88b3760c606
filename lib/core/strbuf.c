#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/strbuf_internal.h"

void *moe_grow_array(void *arr, size_t *cap, size_t need, size_t elem)
{
    size_t n = *cap ? *cap : 8;
    void *grown;

    if (arr && need <= *cap)
        return arr;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (!elem || n > SIZE_MAX / elem)
        return NULL;
    /* on failure realloc leaves arr alone, and so do we: the caller frees it */
    if (!(grown = realloc(arr, n * elem)))
        return NULL;
    *cap = n;
    return grown;
}

int moe_strbuf_grow(struct moe_strbuf *b, size_t more)
{
    char *grown;

    if (b->oom || more > SIZE_MAX - b->len - 1 ||
        !(grown = moe_grow_array(b->buf, &b->cap, b->len + more + 1, 1))) {
        b->oom = true;
        return -1;
    }
    b->buf = grown;
    b->buf[b->len] = '\0';
    return 0;
}

int moe_strbuf_add(struct moe_strbuf *b, const char *s, size_t n)
{
    if (moe_strbuf_grow(b, n) != 0)
        return -1;
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return 0;
}

int moe_strbuf_puts(struct moe_strbuf *b, const char *s)
{
    return moe_strbuf_add(b, s, strlen(s));
}

static int strbuf_vprintf(struct moe_strbuf *b, const char *fmt, va_list ap)
{
    va_list again;
    int n;

    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0 || moe_strbuf_grow(b, (size_t)n) != 0) {
        b->oom = true;
        va_end(again);
        return -1;
    }
    /* fits: the room was measured by the first call */
    vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, again);
    va_end(again);
    b->len += (size_t)n;
    return 0;
}

int moe_strbuf_printf(struct moe_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = strbuf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

char *moe_strbuf_take(struct moe_strbuf *b)
{
    char *s;

    if (!b->oom && !b->buf)
        moe_strbuf_grow(b, 0);
    if (b->oom) {
        moe_strbuf_free(b);
        return NULL;
    }
    s = b->buf;
    *b = (struct moe_strbuf){ 0 };
    return s;
}

void moe_strbuf_free(struct moe_strbuf *b)
{
    free(b->buf);
    *b = (struct moe_strbuf){ 0 };
}

char *moe_strdup_printf(const char *fmt, ...)
{
    struct moe_strbuf b = { 0 };
    va_list ap;

    va_start(ap, fmt);
    strbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    return moe_strbuf_take(&b);
}

char *moe_path_join(const char *dir, const char *name)
{
    return moe_strdup_printf("%s/%s", dir, name);
}

int moe_fmt_fixed(char *buf, size_t len, struct moe_error *err, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < len)
        return 0;
    moe_error_set(err, "%.64s...: too long (at most %zu bytes)", len ? buf : "",
                  len ? len - 1 : 0);
    return -1;
}
