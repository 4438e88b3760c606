/* Errors are values: library functions return -1 or NULL and fill a
 * moe_error that the front end (CLI or plugin) prints the way it must. */
#ifndef MOEFLOW_ERROR_H
#define MOEFLOW_ERROR_H

#include <stddef.h>

/* One message: moe_error_set and moe_error_at cut there. */
#define MOE_ERROR_MESSAGE_MAX 512
#define MOE_ERROR_SOURCE_MAX 256
/* A reader that reports every error of a file in one pass (the study's)
 * names at most this many, then "... N more": a hostile file's thousand
 * errors stay one screen. */
#define MOE_ERROR_LIST_MAX 50
/* An error's text: one message, or a list's header and one line each,
 * cut (with "... N more") where the room ends. */
#define MOE_ERROR_TEXT_MAX 8192

struct moe_error {
    char source[MOE_ERROR_SOURCE_MAX]; /* file name or argument, may be empty */
    int line;                          /* 1-based; 0 when not applicable */
    int column;                        /* 1-based; 0 when not applicable */
    /* 0 or 1: text is one message.  More: text is "N errors in SOURCE:"
     * and then each as "  source:line:column: message" on a line of its
     * own; source, line and column are the first one's. */
    int count;
    char text[MOE_ERROR_TEXT_MAX];
};

/* Errors gathered by a reader that goes on after one: each is kept
 * (the first MOE_ERROR_LIST_MAX of them) and all are counted. */
struct moe_error_item {
    char source[MOE_ERROR_SOURCE_MAX];
    int line, column;
    char text[MOE_ERROR_MESSAGE_MAX];
};

struct moe_error_list {
    int n; /* errors added, past the cap included */
    struct moe_error_item v[MOE_ERROR_LIST_MAX];
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

/* Adds err (one message) to list. */
void moe_error_list_add(struct moe_error_list *list, const struct moe_error *err);

/* The list as one error, in err: nothing when it is empty (0), the one
 * error as it was added (1), or the count and each error on a line of its
 * own, in the order of the file (line, then column; those with no line
 * last).  Returns list->n. */
int moe_error_list_take(const struct moe_error_list *list, struct moe_error *err);

/* "source:line:column: text", dropping the parts that are unset; an error
 * standing for several (count > 1) is its text, which names them. */
const char *moe_error_format(const struct moe_error *err, char *buf, size_t len);

#endif
