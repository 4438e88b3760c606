/* Where contracts live on disk, written once and never overwritten:
 *   <study>/contract/frozen.json (+ frozen.json.sha256, sha256sum format)
 *   <study>/runs/<run-id>/contract.json (+ contract.json.sha256)
 *   <study>/winners/<sha256>.json (+ <sha256>.json.sha256)
 *   <study>/decisions/NN-<stage>.json (+ .sha256): moeflow run's trail
 * A contract file holds exactly its canonical text, so its SHA-256 is the
 * contract's identity and `sha256sum -c frozen.json.sha256` checks it.
 * Files appear atomically (O_TMPFILE + linkat), are mode 0444, and are never
 * written as root or through a symlink another user owns. */
#ifndef MOEFLOW_CONTRACT_STORE_H
#define MOEFLOW_CONTRACT_STORE_H

#include <jansson.h>

#include "contract/contract.h"
#include "core/error.h"

/* 0: this call froze doc; 1: the same contract was already frozen;
 * -1: error, including a different contract frozen before (err says which). */
int moe_contract_freeze(const char *study, const json_t *doc,
                        char digest[MOE_SHA256_HEX_LEN + 1], struct moe_error *err);

/* The frozen contract, verified against its .sha256 and canonical form;
 * NULL with err when missing, torn or tampered with. */
json_t *moe_contract_load_frozen(const char *study, char digest[MOE_SHA256_HEX_LEN + 1],
                                 struct moe_error *err);

/* Records a run's own contract; 1 when an identical one is already there.  A
 * record of another run there (a job id used before) moves that run's folder
 * whole to runs/<id>.reused-<digest> first (spank_moeflow(8)). */
int moe_contract_record_run(const char *study, const char *run_id, const json_t *doc,
                            struct moe_error *err);

/* A run's contract, verified against its .sha256 and canonical form; NULL
 * with err when missing, unsealed or edited. */
json_t *moe_contract_load_run(const char *run_dir, char digest[MOE_SHA256_HEX_LEN + 1],
                              struct moe_error *err);

/* Records the sealed retune run at run_dir (<study>/runs/<id>) as a winner
 * of study: its contract without the "run" part, in
 * <study>/winners/<sha256>.json with a .sha256 seal, each written once,
 * never as root, refused in a world-writable study or a winners/ that
 * anyone else can write (as freeze is).  0 recorded, 1 already recorded,
 * -1 error; path gets the file. */
int moe_contract_record_winner(const char *study, const char *run_dir, char *path, size_t len,
                               struct moe_error *err);

/* The study's recorded winners, in file-name order: each
 * winners/<sha256>.json that holds its own digest's canonical contract,
 * matches its seal, and is the contract (without "run") of a sealed retune
 * run record under runs/.  An array of {"digest", "contract", "run"};
 * empty without winners/; NULL with err naming the first file that is not
 * such a winner, or a winners/ or runs/ that someone else can write. */
json_t *moe_contract_load_winners(const char *study, struct moe_error *err);

/* Records one decision of moeflow run (lib/loop/) as the next
 * decisions/NN-<stage>.json of study (NN from 01; stage: doc's "stage"),
 * canonical and sealed, written once, never as root, in a decisions/ only
 * the user can write.  path gets the file.  0, or -1 with err (also when a
 * second writer took the number). */
int moe_contract_record_decision(const char *study, const json_t *doc, char *path, size_t len,
                                 struct moe_error *err);

/* The study's decisions in order, each {"file", "digest", "decision"}:
 * read whole, the owner's and writable by nobody else, canonical, matching
 * its seal, naming its stage, and its "baseline" (when it adopts one)
 * shaped as a contract.  Empty without decisions/; NULL with err naming
 * the first file that is not such a decision. */
json_t *moe_contract_load_trail(const char *study, struct moe_error *err);

#endif
