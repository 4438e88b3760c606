/* The measurement contract: a canonical JSON document whose SHA-256 is its
 * identity.  Sections: environment, hardware, workload, semantics, parallel,
 * tuning, timing (all required), plus optional "profiling" (switches only the
 * profile stage may turn on), "validation" ({"combination": [winner digests]}
 * for a validate run of several winners together), "sources" (where each
 * value came from) and "run" (stage, candidate, job of one run); the last two
 * are kept for people and ignored by comparisons. */
#ifndef MOEFLOW_CONTRACT_H
#define MOEFLOW_CONTRACT_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"
#include "core/sha256.h"

/* Sections that must be present, in a stable order for messages. */
extern const char *const moe_contract_sections[];

/* A contract written by a person or a generator: any JSON formatting,
 * checked for its sections; errors carry the file and position. */
json_t *moe_contract_load_plain(const char *path, struct moe_error *err);

/* SHA-256 of the contract's canonical form (moe_json_canonical()) as
 * lower-case hex. */
int moe_contract_digest(const json_t *doc, char hex[MOE_SHA256_HEX_LEN + 1],
                        struct moe_error *err);

#endif
