/* What lib/topology shares among its own files (and the tests) beside
 * topology/domains.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_DOMAINS_INTERNAL_H
#define MOEFLOW_DOMAINS_INTERNAL_H

#include "topology/domains.h"

int moe_domains_load_slurm(struct moe_domains *d, const char *path, struct moe_error *err);

int moe_domains_load_yaml(struct moe_domains *d, const char *path, struct moe_error *err);

#endif
