/* time_limit.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_TIME_LIMIT_INTERNAL_H
#define MOEFLOW_STUDY_TIME_LIMIT_INTERNAL_H

#include "study/time_limit.h"

/* text in one of sbatch's --time forms (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S,
 * UNLIMITED, INFINITE) to whole minutes, rounded up as Slurm rounds;
 * unlimited is -1.  -1 with err's text ("... is more than Slurm can read
 * ...") for anything else, or where Slurm's reading differs. */
int moe_time_limit_minutes(const char *text, long *minutes, struct moe_error *err);

/* Our parser alone (the fallback without libslurm; the tests compare it with
 * Slurm's). */
int moe_time_limit_parse(const char *text, long *minutes, struct moe_error *err);

#endif
