/* moeflow contract show: a contract with every value labelled declared or
 * measured, and beside it what the contract stage's capture measured
 * (contract/measured.json), with each disagreement flagged. */
#ifndef MOEFLOW_CONTRACT_SHOW_H
#define MOEFLOW_CONTRACT_SHOW_H

#include <stdbool.h>

#include <jansson.h>

/* PATH as given to show (a study or run directory, or a file), DOC the
 * contract loaded from it and DIGEST its identity.  Prints to stdout; an
 * exit code of cli.h. */
int moe_contract_show(const char *path, const json_t *doc, const char *digest, bool json);

#endif
