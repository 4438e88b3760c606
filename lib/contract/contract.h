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

/* Checks the top level: every required section present and an object, no
 * unknown section.  err names the offending section. */
int moe_contract_check_shape(const json_t *doc, struct moe_error *err);

/* Loads a JSON file of the user's study: a regular file of at most 16 MiB,
 * opened non-blocking (a FIFO in its place must not hang sbatch or
 * slurmstepd waiting for a writer).  NULL with jerr->text on error. */
json_t *moe_json_load_regular(const char *path, json_error_t *jerr);

/* A contract written by a person or a generator: any JSON formatting,
 * checked for its sections; errors carry the file and position. */
json_t *moe_contract_load_plain(const char *path, struct moe_error *err);

/* Deep copy in canonical number form: integral reals (1.0, 1e0) become
 * integers and -0.0 becomes 0, so equal values hash equal. */
json_t *moe_contract_normalize(const json_t *doc);

/* Canonical text: normalized, sorted keys, compact, 15 significant digits.
 * Caller frees with free(). */
char *moe_contract_dump(const json_t *doc);

/* SHA-256 of moe_contract_dump() as lower-case hex. */
int moe_contract_digest(const json_t *doc, char hex[MOE_SHA256_HEX_LEN + 1],
                        struct moe_error *err);

#endif
