#include "config.h"

#include <string.h>

#include "contract/contract.h"
#include "contract/contract_internal.h"
#include "core/contract_keys.h"
#include "core/json_canon.h"
#include "core/readfile.h"

const char *const moe_contract_sections[] = {
    MOE_CONTRACT_ENVIRONMENT, MOE_CONTRACT_HARDWARE, MOE_CONTRACT_WORKLOAD, MOE_CONTRACT_SEMANTICS,
    MOE_CONTRACT_PARALLEL,    MOE_CONTRACT_TUNING,   MOE_CONTRACT_TIMING,   NULL,
};

static const char *const optional_sections[] = {
    MOE_CONTRACT_PROFILING, MOE_CONTRACT_SOURCES, MOE_CONTRACT_VALIDATION, MOE_CONTRACT_RUN, NULL,
};

static int in_list(const char *key, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(key, *list) == 0)
            return 1;
    return 0;
}

int moe_contract_check_shape(const json_t *doc, struct moe_error *err)
{
    const char *key;
    json_t *value;

    if (!json_is_object(doc)) {
        moe_error_set(err, "a contract is a JSON object with sections");
        return -1;
    }
    for (const char *const *s = moe_contract_sections; *s; s++) {
        if (!json_is_object(json_object_get(doc, *s))) {
            moe_error_set(err, "contract section '%s' is missing or not an object", *s);
            return -1;
        }
    }
    json_object_foreach((json_t *)doc, key, value) {
        if (!in_list(key, moe_contract_sections) && !in_list(key, optional_sections)) {
            moe_error_set(err, "unknown contract section '%s'", key);
            return -1;
        }
        /* an optional section is an object too, so that the diff and the
         * rules compare its fields, not one opaque leaf */
        if (!json_is_object(value)) {
            moe_error_set(err, "contract section '%s' is not an object", key);
            return -1;
        }
    }
    return 0;
}

json_t *moe_contract_load_plain(const char *path, struct moe_error *err)
{
    json_t *doc = moe_read_json(path, "contract", err);

    if (!doc)
        return NULL;
    if (moe_contract_check_shape(doc, err) != 0) {
        moe_error_locate(err, path, 0, 0);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

int moe_contract_digest(const json_t *doc, char hex[MOE_SHA256_HEX_LEN + 1],
                        struct moe_error *err)
{
    if (moe_json_sha256(doc, hex) == 0)
        return 0;
    moe_error_set(err, "cannot serialise the contract");
    return -1;
}
