#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

const struct moe_command moe_commands[] = {
    { "gen", "write sbatch scripts and job arrays for every stage of a study", cmd_gen },
    { "run", "drive a generated study through its stages on Slurm, resumably", cmd_run },
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

bool moe_cli_colour(FILE *out)
{
    const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");

    if (no_color && no_color[0])
        return false;
    if (term && strcmp(term, "dumb") == 0)
        return false;
    return isatty(fileno(out));
}
