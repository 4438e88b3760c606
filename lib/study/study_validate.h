/* The validate stage from a study's recorded winners (winners/<sha256>.json,
 * written by `moeflow report --record-winners` or `moeflow contract
 * winner`): the baseline, each winner alone, then -- with two or more -- their
 * combination, as the workflow asks: a gain of separate A/Bs must be
 * measured together, never added up.
 *
 * A winner is traced to its retune candidate through the sealed run record
 * it came from (runs/<id>/contract.json minus "run" has the winner's
 * digest).  Alone, a winner runs its retune candidate's arguments and
 * environment over the validate steps (same declared contract, same id).
 * The combination applies every winner's changes of the arguments and
 * environment, relative to the baseline, to the validate baseline; its
 * declared contract is the baseline's with every winner's changed fields,
 * plus "validation": {"combination": [winner digests]}, which the plugin's
 * validate-combination rule checks.  Two winners that change the same
 * argument differently cannot be combined: an error says which. */
#ifndef MOEFLOW_STUDY_VALIDATE_H
#define MOEFLOW_STUDY_VALIDATE_H

#include <jansson.h>

#include "core/error.h"

/* baseline: the validate baseline candidate as moe_candidates_build makes
 * it.  A new array of candidates (baseline first), or NULL with err; no
 * winner recorded is an error too. */
json_t *moe_validate_from_winners(const char *study_dir, const json_t *baseline,
                                  struct moe_error *err);

#endif
