/* POSIX shell quoting for generated scripts. */
#ifndef MOEFLOW_SHQUOTE_H
#define MOEFLOW_SHQUOTE_H

#include <jansson.h>

#include "core/error.h"
#include "core/strv.h"

/* s unchanged when every byte is safe unquoted, else '...' with each '
 * written as '\''.  Returns a malloc'd string. */
char *moe_shquote(const char *s);

/* Words quoted and joined by single spaces (a NULL word reads as ""). */
char *moe_shquote_words(const char *const *words, size_t n);

/* The same, but a word that starts with under (a folder of the study,
 * relative) is written as root followed by its quoted self: root is a
 * shell expression of the caller's, never data (the scripts' "$study"/),
 * so that the path is absolute wherever the step starts. */
char *moe_shquote_words_rooted(const char *const *words, size_t n, const char *under,
                               const char *root);

/* The strings of a JSON array, the same way. */
char *moe_shquote_argv(const json_t *argv);

/* NAME=value entries quoted and joined, sorted by NAME. */
char *moe_shquote_env(const struct moe_strv *env);

/* The words of a command line as the shell splits a simple command, with
 * no expansion at all ($, `, *, ~ stay as they are: a study is data):
 * blanks separate words; '...' keeps everything inside; "..." keeps
 * everything but a backslash before " \\ $ or `; a backslash outside quotes
 * keeps the next byte.  A JSON array of strings, or NULL with err on an
 * unterminated quote or a trailing backslash. */
json_t *moe_shsplit(const char *s, struct moe_error *err);

/* One argument of an "#SBATCH" line, as sbatch reads it back exactly.
 * sbatch parses those lines itself (src/sbatch/opt.c, _opt_batch_script
 * and _get_argument, Slurm 22.05): quotes group, a backslash escapes the
 * next character even inside single quotes, an unquoted '#' starts a
 * comment, and the end of the line ends everything.  Shell quoting is
 * wrong there: a '\' in a value shifts sbatch's idea of the quotes and the
 * rest of the value becomes further options.  Returns s unchanged when
 * every byte is in the shell's safe set, else "..." with '"' and '\'
 * escaped; malloc'd.
 *
 * Two things no quoting carries, so the value is refused (NULL, err says
 * why): a control character (a newline ends the directive), and the word
 * "hetjob" or "packjob" in any case: sbatch looks for them anywhere in an
 * #SBATCH line, blanks them out and starts a new heterogeneous-job
 * component there. */
char *moe_sbatch_quote(const char *s, struct moe_error *err);

#endif
