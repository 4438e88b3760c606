/* Errors are values: library functions return -1 or NULL and fill a
 * moe_error that the front end (CLI or plugin) prints the way it must. */
#ifndef MOEFLOW_ERROR_H
#define MOEFLOW_ERROR_H

#include <stddef.h>

#define MOE_ERROR_TEXT_MAX 512
#define MOE_ERROR_SOURCE_MAX 256

struct moe_error {
    char source[MOE_ERROR_SOURCE_MAX]; /* file name or argument, may be empty */
    int line;                          /* 1-based; 0 when not applicable */
    int column;                        /* 1-based; 0 when not applicable */
    char text[MOE_ERROR_TEXT_MAX];
};

void moe_error_clear(struct moe_error *err);

/* Sets text only; source/line/column are left untouched. err may be NULL. */
void moe_error_set(struct moe_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets source, position and text in one call. */
void moe_error_at(struct moe_error *err, const char *source, int line, int column,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Attaches a source and position to an error whose text is already set. */
void moe_error_locate(struct moe_error *err, const char *source, int line, int column);

/* err's text with a context in front, "stages[2]: candidates[0].note: not
 * UTF-8": an inner build's failure as its caller names it. */
void moe_error_within(struct moe_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "source:line:column: text", dropping the parts that are unset. */
const char *moe_error_format(const struct moe_error *err, char *buf, size_t len);

#endif
