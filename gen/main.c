/* moeflow: dispatches to one subcommand; the work lives in cmd_*.c and lib/. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/suggest.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: moeflow [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
    for (const struct moe_command *c = moe_commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fprintf(out, "\nRun 'moeflow COMMAND --help' for a command's options; see moeflow(1).\n");
}

static void suggest_command(const char *word)
{
    const char *names[64], *near;
    int n = 0;

    for (const struct moe_command *c = moe_commands; c->name && n < 64; c++)
        names[n++] = c->name;
    near = moe_suggest(word, names, n);
    if (near)
        fprintf(stderr, "moeflow: unknown command '%s' (did you mean '%s'?)\n", word, near);
    else
        fprintf(stderr, "moeflow: unknown command '%s'\n", word);
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
    for (const struct moe_command *c = moe_commands; c->name; c++) {
        if (strcmp(argv[1], c->name) == 0) {
            char prog[64];
            /* getopt names argv[0] in its messages: "moeflow fit: ..." */
            snprintf(prog, sizeof(prog), "moeflow %s", c->name);
            argv[1] = prog;
            return c->run(argc - 1, argv + 1);
        }
    }
    suggest_command(argv[1]);
    usage(stderr);
    return MOE_EXIT_USAGE;
}
