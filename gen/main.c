/* moeflow: dispatches to one subcommand; the work lives in cmd_*.c and lib/. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: moeflow [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
    for (const struct moe_command *c = moe_commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fprintf(out, "\nRun 'moeflow COMMAND --help' for a command's options; see moeflow(1).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return MOE_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("moeflow %s (built against Slurm %s)\n", PACKAGE_VERSION, MOEFLOW_SLURM_VERSION);
        return MOE_EXIT_OK;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return MOE_EXIT_OK;
    }
    for (const struct moe_command *c = moe_commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0)
            return c->run(argc - 1, argv + 1);
    fprintf(stderr, "moeflow: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return MOE_EXIT_USAGE;
}
