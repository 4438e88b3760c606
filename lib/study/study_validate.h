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
 * The combination applies every winner's changes of the arguments,
 * relative to the baseline, to the validate baseline, and so every
 * winner's changes of the baseline's environment (ep_overlap's
 * CUDA_DEVICE_MAX_CONNECTIONS, CUDA graphs' NCCL_GRAPH_REGISTER=0): it
 * runs as each winner ran alone (until 2026-12 it ran in the baseline's
 * environment, so a gain measured with a winner's variable was validated
 * without it); its
 * declared contract is the baseline's with every winner's changed fields,
 * plus "validation": {"combination": [winner digests]}, which the plugin's
 * validate-combination rule checks.  Two winners that change the same
 * argument or environment variable differently cannot be combined: an
 * error says which. */
#ifndef MOEFLOW_STUDY_VALIDATE_H
#define MOEFLOW_STUDY_VALIDATE_H

#include "core/error.h"
#include "core/manifest.h"
#include "study/candidates.h"
#include "study/study.h"

/* The same for STUDY, whose generated directory is study_dir: its validate
 * baseline first planned and rendered as moe_candidates_build and
 * moe_candidates_render do.  out: a new plan. */
int moe_validate_candidates(const struct moe_study *study, const char *study_dir,
                            struct moe_stage_plan *out, struct moe_error *err);

#endif
