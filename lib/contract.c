#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "contract.h"
#include "readfile.h"
#include "study.h"

const char *const moe_contract_sections[] = {
    "environment", "hardware", "workload", "semantics", "parallel", "tuning", "timing", NULL,
};

static const char *const optional_sections[] = { "profiling", "sources", "validation", "run", NULL };

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

int moe_sha256_hex(const void *data, size_t len, char hex[MOE_SHA256_HEX_LEN + 1],
                   struct moe_error *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
        moe_error_set(err, "SHA-256 failed in libcrypto");
        return -1;
    }
    for (unsigned int i = 0; i < mdlen; i++) {
        static const char digits[] = "0123456789abcdef";
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[MOE_SHA256_HEX_LEN] = '\0';
    return 0;
}

int moe_contract_digest(const json_t *doc, char hex[MOE_SHA256_HEX_LEN + 1],
                        struct moe_error *err)
{
    if (moe_json_sha256(doc, hex) == 0)
        return 0;
    moe_error_set(err, "cannot serialise the contract");
    return -1;
}
