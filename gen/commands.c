#include "config.h"

#include "cli.h"

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
