#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/json_canon.h"
#include "core/sha256.h"

char *moe_json_canonical(const json_t *json)
{
    return json_dumps(json, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(15));
}

int moe_json_sha256(const json_t *json, char hex[65])
{
    char *text = moe_json_canonical(json);
    int rc = text ? moe_sha256_hex(text, strlen(text), hex, NULL) : -1;

    free(text);
    return rc;
}
