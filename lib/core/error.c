#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

void moe_error_clear(struct moe_error *err)
{
    if (err)
        memset(err, 0, sizeof(*err));
}

void moe_error_set(struct moe_error *err, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return;
    va_start(ap, fmt);
    /* a message: cut, it still reads (at one message's length: only a
     * list's text uses the rest) */
    vsnprintf(err->text, MOE_ERROR_MESSAGE_MAX, fmt, ap);
    va_end(ap);
    err->count = 0;
}

void moe_error_at(struct moe_error *err, const char *source, int line, int column,
                  const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return;
    /* a message: cut, it still reads (its source is a name shown, never opened) */
    snprintf(err->source, sizeof(err->source), "%s", source ? source : "");
    err->line = line;
    err->column = column;
    va_start(ap, fmt);
    /* a message: cut, it still reads (at one message's length: only a
     * list's text uses the rest) */
    vsnprintf(err->text, MOE_ERROR_MESSAGE_MAX, fmt, ap);
    va_end(ap);
    err->count = 0;
}

void moe_error_locate(struct moe_error *err, const char *source, int line, int column)
{
    if (!err)
        return;
    /* a message: cut, it still reads (its source is a name shown, never opened) */
    snprintf(err->source, sizeof(err->source), "%s", source ? source : "");
    err->line = line;
    err->column = column;
}

void moe_error_within(struct moe_error *err, const char *fmt, ...)
{
    char text[MOE_ERROR_MESSAGE_MAX], where[MOE_ERROR_MESSAGE_MAX / 2];
    va_list ap;

    if (!err)
        return;
    /* a message: a list's text is cut to one message's, and still reads */
    snprintf(text, sizeof(text), "%.*s", (int)sizeof(text) - 1, err->text);
    va_start(ap, fmt);
    /* a message: a cut context still says where it starts */
    vsnprintf(where, sizeof(where), fmt, ap);
    va_end(ap);
    moe_error_set(err, "%s: %s", where, text);
}

static void format_at(char *buf, size_t len, const char *source, int line, int column,
                      const char *text)
{
    if (!source[0])
        snprintf(buf, len, "%s", text); /* a message */
    else if (line > 0 && column > 0)
        snprintf(buf, len, "%s:%d:%d: %s", source, line, column, text); /* a message */
    else if (line > 0)
        snprintf(buf, len, "%s:%d: %s", source, line, text); /* a message */
    else
        snprintf(buf, len, "%s: %s", source, text); /* a message */
}

void moe_error_list_add(struct moe_error_list *list, const struct moe_error *err)
{
    struct moe_error_item *it;

    if (list->n++ >= MOE_ERROR_LIST_MAX)
        return; /* counted: "... N more" */
    it = &list->v[list->n - 1];
    /* the source's own size; one message's, as moe_error_set made it */
    snprintf(it->source, sizeof(it->source), "%s", err->source);
    snprintf(it->text, sizeof(it->text), "%.*s", (int)sizeof(it->text) - 1, err->text);
    it->line = err->line;
    it->column = err->column;
}

/* The order of the file: by line, then column; an error with no line (a
 * key that is missing, a rule of the whole study) after those with one. */
static bool before(const struct moe_error_item *a, const struct moe_error_item *b)
{
    if ((a->line > 0) != (b->line > 0))
        return a->line > 0;
    return a->line != b->line ? a->line < b->line : a->column < b->column;
}

int moe_error_list_take(const struct moe_error_list *list, struct moe_error *err)
{
    int kept = list->n < MOE_ERROR_LIST_MAX ? list->n : MOE_ERROR_LIST_MAX, order[MOE_ERROR_LIST_MAX];
    /* room left for the last line, "... N more" */
    const size_t tail = 32;
    size_t off;
    int shown = 0;

    if (list->n <= 1) {
        if (list->n == 1)
            moe_error_at(err, list->v[0].source, list->v[0].line, list->v[0].column, "%s",
                         list->v[0].text);
        return list->n;
    }
    /* insertion sort, stable: errors at one place keep the order found */
    for (int i = 0; i < kept; i++) {
        int j = i;

        for (; j > 0 && before(&list->v[i], &list->v[order[j - 1]]); j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    moe_error_locate(err, list->v[order[0]].source, list->v[order[0]].line,
                     list->v[order[0]].column);
    /* fits: a count and a source name (at most MOE_ERROR_SOURCE_MAX) */
    off = (size_t)snprintf(err->text, sizeof(err->text), "%d errors in %s:", list->n,
                           err->source[0] ? err->source : "the input");
    for (; shown < kept; shown++) {
        const struct moe_error_item *it = &list->v[order[shown]];
        char line[MOE_ERROR_SOURCE_MAX + MOE_ERROR_MESSAGE_MAX + 32];
        size_t n;

        format_at(line, sizeof(line), it->source, it->line, it->column, it->text);
        n = strlen(line);
        if (off + 3 + n + tail >= sizeof(err->text))
            break; /* no room: counted in "... N more" */
        /* fits: checked above */
        off += (size_t)snprintf(err->text + off, sizeof(err->text) - off, "\n  %s", line);
    }
    if (shown < list->n)
        /* fits: tail bytes are kept for it */
        snprintf(err->text + off, sizeof(err->text) - off, "\n  ... %d more", list->n - shown);
    err->count = list->n;
    return list->n;
}

const char *moe_error_format(const struct moe_error *err, char *buf, size_t len)
{
    if (err->count > 1)
        snprintf(buf, len, "%s", err->text); /* a message: its text names each place */
    else
        format_at(buf, len, err->source, err->line, err->column, err->text);
    return buf;
}
