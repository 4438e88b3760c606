/* jobopts.h's functions that only lib/contract (and its unit tests) use. */
#ifndef MOEFLOW_CONTRACT_JOBOPTS_INTERNAL_H
#define MOEFLOW_CONTRACT_JOBOPTS_INTERNAL_H

#include "contract/jobopts.h"

/* Candidate ids end up in file names and job names: [A-Za-z0-9][A-Za-z0-9._-]*,
 * at most 64 characters, never "." or "..". */
bool moe_candidate_id_valid(const char *id);

#endif
