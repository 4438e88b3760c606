/* Shared by the moeflow subcommands: exit codes and the command table; the
 * command line itself is options.h. */
#ifndef MOEFLOW_CLI_H
#define MOEFLOW_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "options.h"

/* Documented in moeflow(1); scripts depend on them. */
enum moe_exit {
    MOE_EXIT_OK = 0,
    MOE_EXIT_USAGE = 1,
    MOE_EXIT_INVALID_INPUT = 2,
    MOE_EXIT_INFEASIBLE = 3,
    MOE_EXIT_SYSTEM = 4,
    MOE_EXIT_STAGE_FAILED = 5, /* moeflow run: a stage's candidate did not exit 0 */
    MOE_EXIT_STOPPED = 6,      /* moeflow run: interrupted or timed out, jobs still in Slurm */
};

struct moe_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is "moeflow <name>" */
};

/* commands.c: the table main() dispatches over, ended by a NULL name. */
extern const struct moe_command moe_commands[];

/* Subcommands, one file each: parse (options.h), call lib/, print. */
int cmd_contract(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_overlap(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_layouts(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_place(int argc, char **argv);
int cmd_run(int argc, char **argv);

/* Colour only on a terminal, never with NO_COLOR set (no-color.org) or
 * TERM=dumb. */
bool moe_cli_colour(FILE *out);

#endif
