/* evidence.h's functions that only lib/loop (and its unit tests) use. */
#ifndef MOEFLOW_LOOP_EVIDENCE_INTERNAL_H
#define MOEFLOW_LOOP_EVIDENCE_INTERNAL_H

#include "loop/evidence.h"

/* {"candidate", "log", "log_sha256", "run", "record_sha256"} for candidate
 * id of stage in study; the log and run parts are null when absent (a run
 * that left no log, a study run without the plugin).  NULL with err only
 * for a log that cannot be read. */
json_t *moe_loop_evidence(const char *study, const char *stage, const char *id,
                          struct moe_error *err);

/* The contract (without its "run" part) of the sealed run record of
 * candidate id of stage, accepted by contract verify's rule for its
 * stage: the baseline a decision adopts.  NULL with err. */
json_t *moe_loop_run_contract(const char *study, const char *stage, const char *id,
                              struct moe_error *err);

/* The baseline in force for stage (contract_check.h
 * moe_contract_reference): the frozen one or the one the trail adopted.
 * Here so that a decider need not see the contract rules' names, which
 * analysis/report.h's verdicts share.  NULL with err. */
json_t *moe_loop_in_force(const char *study, enum moe_stage stage, struct moe_error *err);

#endif
