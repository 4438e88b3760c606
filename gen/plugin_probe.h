/* Does the Slurm this machine submits to load the moeflow plugin?
 * (gen/plugin_probe.c) */
#ifndef MOEFLOW_GEN_PLUGIN_PROBE_H
#define MOEFLOW_GEN_PLUGIN_PROBE_H

#include <stddef.h>

enum plugin_probe {
    PLUGIN_PRESENT,  /* sbatch --help lists --moe-stage */
    PLUGIN_ABSENT,   /* sbatch answers, without it */
    PLUGIN_UNKNOWN,  /* no sbatch here, or it cannot read a configuration */
};

/* The answer, and in why what it rests on (a line for a message). */
enum plugin_probe plugin_probe(char *why, size_t len);

#endif
