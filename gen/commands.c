#include "config.h"

#include "cli.h"

const struct moe_command moe_commands[] = {
    { "topo", "print the CPU affinity plan for a node", cmd_topo },
    { "place", "order a job's nodes so TP and EP groups stay inside NVLink domains", cmd_place },
    { NULL, NULL, NULL },
};

void moe_cli_report(const struct moe_error *err)
{
    char buf[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 32];

    fprintf(stderr, "moeflow: %s\n", moe_error_format(err, buf, sizeof(buf)));
}
