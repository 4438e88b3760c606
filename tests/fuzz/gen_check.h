/* Test oracles for generated scripts (issue 21): how sbatch reads an
 * #SBATCH line, and a script's shell skeleton.  Used by the gen fuzz
 * harness and tests/unit/study/test_hostile_input.c; test code, never linked into
 * moeflow. */
#ifndef MOEFLOW_GEN_CHECK_H
#define MOEFLOW_GEN_CHECK_H

#include <stddef.h>

/* The arguments sbatch 22.05 reads from one "#SBATCH ..." line (a
 * transcription of src/sbatch/opt.c _get_argument and the het-job scan in
 * _opt_batch_script): "hetjob" and "packjob" anywhere are blanked,
 * whitespace separates, quotes group, a backslash escapes the next byte
 * even inside quotes, an unquoted '#' ends the line.  Returns how many;
 * the first is copied to first (truncated to len). */
int gen_check_sbatch_args(const char *line, char *first, size_t len);

/* The shell skeleton of one script line: every word (a run of characters
 * that are not blanks or operators, quoted spans and escaped characters
 * included) becomes "w", operators (; & | < > ( ) ` $ and a word-initial
 * #, which starts a comment) stay, blanks collapse.  Two renderings of a
 * template with different values must have the same skeleton on every
 * line: a value that escaped its quotes adds words or operators.
 * Returns out, NUL-terminated (truncated to len). */
char *gen_check_skeleton(const char *line, size_t n, char *out, size_t len);

/* Why data (a generated script) breaks the structural rules, or NULL: a
 * control character other than newline, or an #SBATCH line after the
 * first command (sbatch stops reading them there). */
const char *gen_check_script(const char *data, size_t len);

#endif
