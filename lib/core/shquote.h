/* POSIX shell quoting for generated scripts. */
#ifndef MOEFLOW_SHQUOTE_H
#define MOEFLOW_SHQUOTE_H

#include <jansson.h>

#include "core/error.h"

/* s unchanged when every byte is safe unquoted, else '...' with each '
 * written as '\''.  Returns a malloc'd string. */
char *moe_shquote(const char *s);

/* The strings of a JSON array quoted and joined by single spaces. */
char *moe_shquote_argv(const json_t *argv);

/* An object's "KEY=value" pairs, quoted and joined, keys sorted. */
char *moe_shquote_env(const json_t *env);

/* The words of a command line as the shell splits a simple command, with
 * no expansion at all ($, `, *, ~ stay as they are: a study is data):
 * blanks separate words; '...' keeps everything inside; "..." keeps
 * everything but a backslash before " \\ $ or `; a backslash outside quotes
 * keeps the next byte.  A JSON array of strings, or NULL with err on an
 * unterminated quote or a trailing backslash. */
json_t *moe_shsplit(const char *s, struct moe_error *err);

#endif
