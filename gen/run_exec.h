/* moeflow run's only way to start another program: an argv handed to
 * posix_spawn, never a shell, so that no string from a study, a manifest
 * or a log is ever read as shell code. */
#ifndef MOEFLOW_RUN_EXEC_H
#define MOEFLOW_RUN_EXEC_H

#include <signal.h>
#include <stddef.h>
#include <time.h>

/* What a finished program left: its exit status (128 + N for signal N), and
 * the first bytes of its stdout and stderr when they were captured;
 * stopped: why moeflow ended it before it ended by itself. */
enum run_stopped { RUN_RAN_OUT = 0, RUN_STOPPED_SIGNAL, RUN_STOPPED_DEADLINE };

struct run_result {
    int status;
    enum run_stopped stopped;
    char out[65536];         /* moeflow diagnose --json fits whole */
    char err[2048];
};

/* When moeflow run stops waiting for a child: a controller that does not
 * answer leaves squeue or sbatch hanging, and neither --timeout nor a
 * Ctrl-C may wait for it.  deadline: 0 for none; stop: a flag the signal
 * handler sets (NULL: none); grace: seconds the child keeps after the
 * stop before SIGTERM (sbatch gets some, to print the id of a job it has
 * submitted), then SIGKILL RUN_KILL_AFTER seconds later. */
#define RUN_KILL_AFTER 2
struct run_limits {
    time_t deadline;
    const volatile sig_atomic_t *stop;
    int grace;
};

/* Runs argv[0] (looked up in PATH) with argv, in directory dir (NULL: the
 * current one), in a process group of its own: a Ctrl-C at the terminal
 * reaches moeflow run, which lets a half-done sbatch finish and records
 * its job id, instead of killing it between submitting and printing.
 * capture: stdout and stderr into r, bounded (the rest is read and
 * dropped, so the child never blocks on a full pipe); else they are
 * moeflow's own.  lim (NULL: none) ends the child's process group when
 * the deadline passes or the stop flag is set (r->stopped says which).
 * 0 with r filled, -1 with errno when it cannot start. */
int run_program(const char *dir, char *const argv[], int capture, const struct run_limits *lim,
                struct run_result *r);

/* The path of the running moeflow, to run its own subcommands; "" when
 * /proc/self/exe cannot be read. */
const char *run_self_path(void);

/* moeflow's own subcommand argv (argv[0] filled in here), as a child
 * whose output is moeflow run's, stopped by the signal flag; its exit
 * status, -1 when it cannot start (said). */
int run_self(const char *what, char *argv[]);

#endif
