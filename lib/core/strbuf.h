/* A growable string and the one growth rule for arrays.  Paths and texts
 * whose length the input decides are built here instead of in fixed
 * buffers, where snprintf would cut a long path and silently name another
 * file. */
#ifndef MOEFLOW_STRBUF_H
#define MOEFLOW_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

/* Zero-initialise ({0}); buf is NUL-terminated whenever it is not NULL. */
struct moe_strbuf {
    char *buf;
    size_t len, cap;
    bool oom;       /* an append failed: the text is short (a builder checks once) */
};

/* Appends n bytes of s; -1 when out of memory. */
int moe_strbuf_add(struct moe_strbuf *b, const char *s, size_t n);

int moe_strbuf_puts(struct moe_strbuf *b, const char *s);

/* Appends the formatted text; -1 when out of memory or on a format error. */
int moe_strbuf_printf(struct moe_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The text, now the caller's to free ("" for an empty buffer), and b is
 * empty again; NULL, with b freed, when an append had failed. */
char *moe_strbuf_take(struct moe_strbuf *b);

void moe_strbuf_free(struct moe_strbuf *b);

/* A new string "dir/name" (free() it); NULL when out of memory. */
char *moe_path_join(const char *dir, const char *name);

/* A new formatted string (free() it); NULL when out of memory. */
char *moe_strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* snprintf into a fixed buffer that is kept on purpose (the plugin, a
 * path the kernel bounds), checked: -1 with err ("TEXT...: too long (at
 * most N bytes)") instead of a cut text that names another file. */
/* The rule for every other snprintf into a fixed buffer: a path or a name
 * goes through moe_fmt_fixed or is checked where it is built; one that
 * cannot be cut says why beside it ("fits: ..."); only text for people
 * (messages, labels) may be cut, marked "a message". */
int moe_fmt_fixed(char *buf, size_t len, struct moe_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The array arr with room for need elements of size elem (*cap doubles
 * until it is enough): arr itself when it has room, else its moved copy.
 * NULL on overflow or when out of memory, with arr and *cap unchanged:
 * the caller still owns, and frees, the old array.
 *     T *g = moe_grow_array(a, &cap, n + 1, sizeof(*a));
 *     if (!g) goto fail;
 *     a = g; */
void *moe_grow_array(void *arr, size_t *cap, size_t need, size_t elem);

#endif
