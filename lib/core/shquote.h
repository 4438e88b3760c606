/* POSIX shell quoting for generated scripts. */
#ifndef MOEFLOW_SHQUOTE_H
#define MOEFLOW_SHQUOTE_H

#include <jansson.h>

/* s unchanged when every byte is safe unquoted, else '...' with each '
 * written as '\''.  Returns a malloc'd string. */
char *moe_shquote(const char *s);

/* The strings of a JSON array quoted and joined by single spaces. */
char *moe_shquote_argv(const json_t *argv);

/* An object's "KEY=value" pairs, quoted and joined, keys sorted. */
char *moe_shquote_env(const json_t *env);

#endif
