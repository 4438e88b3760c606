/* One check of a run against its study's frozen baseline, shared by the
 * plugin (at submission and at task start) and the CLI.  A generated study
 * directory holds the declared contracts:
 *   <study>/contracts/baseline.json, <study>/contracts/<candidate>.json
 * and recorded winners (validate stage) in <study>/winners/<digest>.json. */
#ifndef MOEFLOW_CONTRACT_CHECK_H
#define MOEFLOW_CONTRACT_CHECK_H

#include <jansson.h>
#include <stdbool.h>

#include "contract/contract.h"
#include "contract/contract_diff.h"
#include "contract/contract_rules.h"
#include "core/error.h"
#include "core/manifest.h"
#include "core/stage.h"

struct moe_contract_outcome {
    bool allowed;
    bool froze;          /* this check froze the baseline */
    char rule[64];
    char reason[512];
    char *diff_text;     /* "path: frozen → requested" lines; NULL when equal */
    char frozen_digest[MOE_SHA256_HEX_LEN + 1];
};

/* The candidate ids of a stage: moe_manifest_stage_ids (core/manifest.h). */

/* The candidate a task runs: its array index in the stage's candidate list,
 * or the stage's only candidate when index < 0.  -1 with err otherwise. */
int moe_manifest_candidate(const char *study, enum moe_stage stage, long index, char *id,
                           size_t len, struct moe_error *err);

/* The declared contract of a candidate ("" or NULL: the baseline). */
json_t *moe_contract_declared(const char *study, const char *candidate, struct moe_error *err);

/* The contracts of the study's recorded winners, as the validate rule takes
 * them (contract_rules.h): each sealed winner traced to a sealed retune run
 * (moe_contract_load_winners).  NULL with err. */
json_t *moe_contract_winner_contracts(const char *study, struct moe_error *err);

/* The baseline a run of stage is judged against: the frozen one, or --
 * from scale on -- the "baseline" the last decision of moeflow run's trail
 * (contract_store.h, decisions/) adopted at fit or scale before stage,
 * which may differ from frozen only as fit may (layout, recompute).  A
 * validate run may also be the frozen baseline itself (rule
 * validate-written-baseline).  New reference; NULL with err when the
 * trail does not load or a decision adopts what no decision may. */
json_t *moe_contract_reference(const char *study, enum moe_stage stage, const json_t *frozen,
                               struct moe_error *err);

/* The same from a trail the caller loaded (moe_contract_load_trail), for
 * one that asks of several stages at once. */
json_t *moe_contract_reference_in(const json_t *trail, enum moe_stage stage,
                                  const json_t *frozen, struct moe_error *err);

/* runtime: requested already carries this node's facts (task start); else
 * they are taken from the frozen baseline (submission).  may_freeze: with
 * nothing frozen yet, freeze the study's baseline (at task start) or let
 * the submission through; without it, refuse.  -1 only when the check
 * itself cannot be made (corrupt or tampered baseline, I/O error). */
int moe_contract_enforce(const char *study, enum moe_stage stage, json_t *requested, bool runtime,
                         bool may_freeze, struct moe_contract_outcome *out, struct moe_error *err);

void moe_contract_outcome_free(struct moe_contract_outcome *out);

/* The contract a run of candidate ("" or NULL: the baseline) asks for at
 * its start: the declared one, with this node's facts (from
 * moe_node_facts_gather) where it lacks them, and its run section
 * (stage, candidate, run id).  Shared by the plugin's task start and
 * `moeflow contract check`, so that both record the same document.  New
 * reference; NULL with err. */
json_t *moe_contract_runtime(const char *study, enum moe_stage stage, const char *candidate,
                             const char *run_id, const json_t *facts, struct moe_error *err);

/* A run record as `contract verify RUN_DIR` judges it. */
struct moe_run_check {
    json_t *record;                 /* the sealed record, its "run" part included */
    json_t *frozen;                 /* the study's frozen baseline */
    char digest[MOE_SHA256_HEX_LEN + 1];
    enum moe_stage stage;
    struct moe_contract_diff diff;  /* frozen → record */
    struct moe_verdict verdict;     /* the stage's rule */
};

/* Rule 3's one acceptance of a run record, for `contract verify RUN_DIR`,
 * `contract winner`, gen --winners and the plugin's validate stage alike.
 * run_dir is <study>/runs/<id>; its record is sealed and the study owner's
 * (moe_contract_load_run), names that id and a stage, and is judged by the
 * stage's rule against the frozen baseline; one the rule allows must also
 * be a candidate of that stage of this study, with that candidate's
 * declared contract and only this run's node facts added.  -1 with err
 * when it is not such a record or the check cannot be made; 0 with
 * out->verdict otherwise.  Free out with moe_run_check_free in any case. */
int moe_contract_check_run(const char *run_dir, struct moe_run_check *out,
                           struct moe_error *err);

void moe_run_check_free(struct moe_run_check *out);

#endif
