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

#endif
