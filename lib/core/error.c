#include "config.h"

#include <stdarg.h>
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
    /* a message: cut, it still reads */
    vsnprintf(err->text, sizeof(err->text), fmt, ap);
    va_end(ap);
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
    /* a message: cut, it still reads */
    vsnprintf(err->text, sizeof(err->text), fmt, ap);
    va_end(ap);
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
    char text[sizeof(err->text)], where[MOE_ERROR_TEXT_MAX / 2];
    va_list ap;

    if (!err)
        return;
    memcpy(text, err->text, sizeof(text));
    va_start(ap, fmt);
    /* a message: a cut context still says where it starts */
    vsnprintf(where, sizeof(where), fmt, ap);
    va_end(ap);
    moe_error_set(err, "%s: %s", where, text);
}

const char *moe_error_format(const struct moe_error *err, char *buf, size_t len)
{
    if (!err->source[0])
        snprintf(buf, len, "%s", err->text); /* a message */
    else if (err->line > 0 && err->column > 0)
        snprintf(buf, len, "%s:%d:%d: %s", /* a message */
                 err->source, err->line, err->column, err->text);
    else if (err->line > 0)
        snprintf(buf, len, "%s:%d: %s", err->source, err->line, err->text); /* a message */
    else
        snprintf(buf, len, "%s: %s", err->source, err->text); /* a message */
    return buf;
}
