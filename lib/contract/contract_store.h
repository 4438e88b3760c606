/* Where contracts live on disk, written once and never overwritten:
 *   <study>/contract/frozen.json (+ frozen.json.sha256, sha256sum format)
 *   <study>/runs/<run-id>/contract.json (+ contract.json.sha256)
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

/* Records a run's own contract; 1 when an identical one is already there. */
int moe_contract_record_run(const char *study, const char *run_id, const json_t *doc,
                            struct moe_error *err);

/* A run's contract, verified against its .sha256 and canonical form; NULL
 * with err when missing, unsealed or edited. */
json_t *moe_contract_load_run(const char *run_dir, char digest[MOE_SHA256_HEX_LEN + 1],
                              struct moe_error *err);

/* Records the sealed run at run_dir (its contract without the "run" part)
 * as a winner of study: <study>/winners/<sha256>.json, written once, never
 * as root.  0 recorded, 1 already recorded, -1 error; path gets the file. */
int moe_contract_record_winner(const char *study, const char *run_dir, char *path, size_t len,
                               struct moe_error *err);

/* Writes doc's canonical text to path once (mode 0444, no symlinks, never
 * as root); 1 when the file already exists. */
int moe_contract_write_file(const char *path, const json_t *doc, struct moe_error *err);

/* Loads and checks one contract file (any path); NULL with err. */
json_t *moe_contract_load_file(const char *path, struct moe_error *err);

#endif
