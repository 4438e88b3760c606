/* capture.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_CAPTURE_INTERNAL_H
#define MOEFLOW_STUDY_CAPTURE_INTERNAL_H

#include "core/error.h"
#include "study/capture.h"

/* The script's arguments after --out: --entry (empty for a launcher that
 * names no .py script) and the declared software.  NULL with err for a
 * dialect without an expected version, or an argument not made. */
json_t *moe_capture_argv(const struct moe_study *study, const struct moe_launcher *launcher,
                         struct moe_error *err);

#endif
