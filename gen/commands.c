#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/suggest.h"

const struct moe_command moe_commands[] = {
    { "gen", "write sbatch scripts and job arrays for every stage of a study", cmd_gen },
    { "contract", "show, compare, verify or freeze a measurement contract", cmd_contract },
    { "overlap", "hidden communication per GPU from nsys / PyTorch-profiler traces",
      cmd_overlap },
    { "report", "step-time evidence and A/B verdicts from Megatron logs", cmd_report },
    { "diagnose", "main bottleneck and its retune candidates", cmd_diagnose },
    { "fit", "peak memory per GPU, ours next to Megatron's estimate", cmd_fit },
    { "layouts", "rank every valid parallel layout by the scale rules", cmd_layouts },
    { "topo", "print the CPU affinity plan for a node", cmd_topo },
    { "place", "order a job's nodes so TP and EP groups stay inside NVLink domains", cmd_place },
    { NULL, NULL, NULL },
};

void moe_cli_report(const struct moe_error *err)
{
    char buf[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 32];

    fprintf(stderr, "moeflow: %s\n", moe_error_format(err, buf, sizeof(buf)));
}

void moe_cli_suggest_option(int argc, char **argv, const struct option *longopts)
{
    const char *names[128], *near;
    char word[128];
    int n = 0;

    if (optind < 1 || optind > argc || strncmp(argv[optind - 1], "--", 2) != 0)
        return;
    snprintf(word, sizeof(word), "%s", argv[optind - 1] + 2);
    word[strcspn(word, "=")] = '\0';
    for (; longopts->name && n < 128; longopts++)
        names[n++] = longopts->name;
    near = moe_suggest(word, names, n);
    if (near)
        fprintf(stderr, "%s: did you mean --%s?\n", argv[0], near);
}

bool moe_cli_colour(FILE *out)
{
    const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");

    if (no_color && no_color[0])
        return false;
    if (term && strcmp(term, "dumb") == 0)
        return false;
    return isatty(fileno(out));
}
