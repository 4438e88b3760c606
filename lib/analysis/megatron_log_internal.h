/* What lib/analysis shares among its own files (and the tests) beside
 * analysis/megatron_log.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_MEGATRON_LOG_INTERNAL_H
#define MOEFLOW_MEGATRON_LOG_INTERNAL_H

#include "analysis/megatron_log.h"

/* The argument dump's value for key, or NULL. */
const char *moe_log_arg(const struct moe_log *log, const char *key);

/* Adds the records of one line (no newline needed). */
int moe_log_feed_line(struct moe_log *log, const char *line, int lineno);

/* After the last line fed by hand (moe_log_read_file does this itself, once
 * per file): an iteration logged more than once since the previous call
 * keeps its last record (a requeued job appends its resumed run to the same
 * log; the earlier records are marked superseded), with one warning naming
 * the iterations and the count; then warns about iteration records that
 * never got a step time. */
void moe_log_finish(struct moe_log *log);

#endif
