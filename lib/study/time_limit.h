/* cluster.time_limit as Slurm reads it.  sbatch's own parser
 * (time_str2mins) counts seconds in an int and wraps without a word:
 * 99999999-00 comes out negative, 4294967296 as 0, which Slurm takes as no
 * limit.  A time limit is therefore read twice: by our parser, which
 * refuses what would wrap, and, where libslurm exports it, by Slurm's,
 * which must agree. */
#ifndef MOEFLOW_TIME_LIMIT_H
#define MOEFLOW_TIME_LIMIT_H

#include "core/error.h"

/* Slurm counts a time limit's seconds in an int and rounds them up to
 * minutes by adding 59 in the same int: at most 2147483647 - 59 s (68
 * years); one second more and it reads a negative limit. */
#define MOE_TIME_LIMIT_MAX_S (2147483647L - 59)

/* text in one of sbatch's --time forms (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S,
 * UNLIMITED, INFINITE) to whole minutes, rounded up as Slurm rounds;
 * unlimited is -1.  -1 with err's text ("... is more than Slurm can read
 * ...") for anything else, or where Slurm's reading differs. */
int moe_time_limit_minutes(const char *text, long *minutes, struct moe_error *err);

/* Our parser alone (the fallback without libslurm; the tests compare it with
 * Slurm's). */
int moe_time_limit_parse(const char *text, long *minutes, struct moe_error *err);

#endif
