/* The workflow's one-variable-at-a-time rules, per stage, over a diff
 * between the frozen baseline and the contract a run requests. */
#ifndef MOEFLOW_CONTRACT_RULES_H
#define MOEFLOW_CONTRACT_RULES_H

#include <jansson.h>
#include <stdbool.h>

#include "contract/contract_diff.h"
#include "core/error.h"
#include "core/stage.h"

struct moe_verdict {
    bool allowed;
    char rule[64];    /* which rule decided, e.g. "invariant", "retune-one-variable" */
    char reason[512]; /* one sentence a user can act on */
};

/* winners: JSON array of recorded winner contracts (validate only; may be
 * NULL).  diff receives frozen → requested; free it with
 * moe_contract_diff_free() whatever the verdict. */
int moe_contract_check_stage(enum moe_stage stage, const json_t *frozen, const json_t *requested,
                             const json_t *winners, struct moe_contract_diff *diff,
                             struct moe_verdict *verdict, struct moe_error *err);

#endif
