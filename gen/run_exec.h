/* moeflow run's only way to start another program: an argv handed to
 * posix_spawn, never a shell, so that no string from a study, a manifest
 * or a log is ever read as shell code. */
#ifndef MOEFLOW_RUN_EXEC_H
#define MOEFLOW_RUN_EXEC_H

#include <stddef.h>

/* What a finished program left: its exit status (128 + N for signal N), and
 * the first bytes of its stdout and stderr when they were captured. */
struct run_result {
    int status;
    char out[4096];
    char err[2048];
};

/* Runs argv[0] (looked up in PATH) with argv, in directory dir (NULL: the
 * current one), in a process group of its own: a Ctrl-C at the terminal
 * reaches moeflow run, which lets a half-done sbatch finish and records
 * its job id, instead of killing it between submitting and printing.
 * capture: stdout and stderr into r, bounded (the rest is read and
 * dropped, so the child never blocks on a full pipe); else they are
 * moeflow's own.  0 with r filled, -1 with errno when it cannot start. */
int run_program(const char *dir, char *const argv[], int capture, struct run_result *r);

/* The path of the running moeflow, to run its own subcommands; "" when
 * /proc/self/exe cannot be read. */
const char *run_self_path(void);

#endif
