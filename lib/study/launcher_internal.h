/* launcher.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_LAUNCHER_INTERNAL_H
#define MOEFLOW_STUDY_LAUNCHER_INTERNAL_H

#include "study/launcher.h"

/* Splits COMMAND.  python: the first word before the entry script (or
 * before the end, without one) that names a Python interpreter (python,
 * python3, /usr/bin/python3.11 ...); else "python3", as for torchrun or a
 * wrapper script.  0, or -1 with err (an unterminated quote, no word). */
int moe_launcher_parse(const char *command, struct moe_launcher *l, struct moe_error *err);

void moe_launcher_free(struct moe_launcher *l);

#endif
