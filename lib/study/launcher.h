/* The study's trainer command (cluster.launcher.command) as every stage
 * runs it, and what the contract stage's capture learns from it: the
 * Python that runs the trainer and the entry script, whose folder is where
 * Python imports Megatron from (it is sys.path[0] of `python SCRIPT.py`). */
#ifndef MOEFLOW_LAUNCHER_H
#define MOEFLOW_LAUNCHER_H

#include <jansson.h>

#include "core/error.h"

struct moe_launcher {
    json_t *words;          /* the command split into words (core/shquote.h) */
    const char *python;     /* a word of words, or "python3" */
    const char *entry;      /* the first word ending in ".py", or NULL */
};

#endif
