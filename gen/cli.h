/* Shared by the moeflow subcommands: exit codes and the command table. */
#ifndef MOEFLOW_CLI_H
#define MOEFLOW_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "core/error.h"

/* Documented in moeflow(1); scripts depend on them. */
enum moe_exit {
    MOE_EXIT_OK = 0,
    MOE_EXIT_USAGE = 1,
    MOE_EXIT_INVALID_INPUT = 2,
    MOE_EXIT_INFEASIBLE = 3,
    MOE_EXIT_SYSTEM = 4,
};

struct moe_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is "moeflow <name>" */
};

/* commands.c: the table main() dispatches over, ended by a NULL name. */
extern const struct moe_command moe_commands[];

/* Subcommands, one file each. */
int cmd_contract(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_overlap(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
/* Subcommands (one file each). */
int cmd_fit(int argc, char **argv);
int cmd_layouts(int argc, char **argv);

/* After getopt_long returned '?': names the closest long option to the one
 * just refused ("did you mean --json?"), so a typo costs one retry. */
struct option;
void moe_cli_suggest_option(int argc, char **argv, const struct option *longopts);

/* Colour only on a terminal, never with NO_COLOR set (no-color.org) or
 * TERM=dumb. */
bool moe_cli_colour(FILE *out);

/* Prints "moeflow: <formatted error>" to stderr. */
void moe_cli_report(const struct moe_error *err);

/* Subcommands. */
int cmd_topo(int argc, char **argv);
int cmd_place(int argc, char **argv);

#endif
