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

/* Splits COMMAND.  python: the first word before the entry script (or
 * before the end, without one) that names a Python interpreter (python,
 * python3, /usr/bin/python3.11 ...); else "python3", as for torchrun or a
 * wrapper script.  0, or -1 with err (an unterminated quote, no word). */
int moe_launcher_parse(const char *command, struct moe_launcher *l, struct moe_error *err);

void moe_launcher_free(struct moe_launcher *l);

#endif
