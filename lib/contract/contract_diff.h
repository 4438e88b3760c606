/* Leaf-by-leaf comparison of two contracts: "tuning.dispatcher: alltoall → flex". */
#ifndef MOEFLOW_CONTRACT_DIFF_H
#define MOEFLOW_CONTRACT_DIFF_H

#include <jansson.h>
#include <stddef.h>

#include "core/error.h"

struct moe_contract_change {
    char *path;       /* "section.key[.subkey…]"; arrays are single leaves.  A
                       * '.' or '\\' inside a key is escaped with '\\', an empty
                       * key is "\\e": one path names one place only */
    char *frozen;     /* canonical JSON text, NULL when the leaf is absent */
    char *requested;  /* likewise */
};

struct moe_contract_diff {
    struct moe_contract_change *items; /* sorted by path */
    size_t count;
};

/* The "sources" and "run" sections annotate, they are never compared.
 * Otherwise the diff is empty exactly when the two documents' canonical
 * forms, and so their digests, are equal. */
int moe_contract_diff(const json_t *frozen, const json_t *requested,
                      struct moe_contract_diff *diff, struct moe_error *err);

/* The same over the "sources" and "run" sections only: what makes two
 * digests differ when moe_contract_diff finds nothing. */
int moe_contract_diff_annotations(const json_t *frozen, const json_t *requested,
                                  struct moe_contract_diff *diff, struct moe_error *err);

void moe_contract_diff_free(struct moe_contract_diff *diff);

/* "path: frozen → requested" lines, "(absent)" for a missing leaf.  free(). */
char *moe_contract_diff_text(const struct moe_contract_diff *diff);

/* [{"path":…, "frozen":…, "requested":…}], null for a missing leaf; NULL
 * when one change could not be made (out of memory), never a list that
 * lacks it. */
json_t *moe_contract_diff_json(const struct moe_contract_diff *diff);

#endif
