/* Contract JSON, as the plugin reads it at submission and task start:
 * the file loader (canonical form, shape), normalisation and digest, then
 * the diff and every stage's rule between two contracts.  The input holds
 * up to three documents separated by a line "%%": frozen, requested and the
 * recorded winners; a missing one repeats the first. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "contract/contract.h"
#include "contract/contract_diff.h"
#include "contract/contract_rules.h"
#include "contract/contract_store.h"
#include "fuzz.h"

static json_t *part(const char *text, size_t len)
{
    return json_loadb(text, len, JSON_DECODE_ANY, NULL);
}

static void exercise_one(const json_t *doc)
{
    struct moe_error err;
    char hex[MOE_SHA256_HEX_LEN + 1];
    json_t *norm = moe_contract_normalize(doc);
    char *canon = moe_contract_dump(doc);

    moe_contract_check_shape(doc, &err);
    moe_contract_digest(doc, hex, &err);
    json_decref(norm);
    free(canon);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data, *end = text + size;
    const char *cut[3] = { text, NULL, NULL };
    size_t len[3] = { size, 0, 0 };
    json_t *doc[3] = { NULL, NULL, NULL };
    struct moe_error err;
    const char *path = fuzz_file(data, size, ".json");
    int k = 1;

    if (path)
        json_decref(moe_contract_load_file(path, &err));
    /* Split at "\n%%\n" into at most three parts. */
    for (const char *p = text; k < 3 && p + 4 <= end; p++) {
        if (memcmp(p, "\n%%\n", 4) == 0) {
            len[k - 1] = (size_t)(p - cut[k - 1]);
            cut[k] = p + 4;
            len[k] = (size_t)(end - cut[k]);
            k++;
            p += 3;
        }
    }
    for (int i = 0; i < k; i++)
        doc[i] = part(cut[i], len[i]);
    if (!doc[0])
        goto out;
    exercise_one(doc[0]);
    if (!doc[1])
        doc[1] = json_incref(doc[0]);
    else
        exercise_one(doc[1]);

    struct moe_contract_diff diff;
    if (moe_contract_diff(doc[0], doc[1], &diff, &err) == 0) {
        char *t = moe_contract_diff_text(&diff);
        json_t *j = moe_contract_diff_json(&diff);

        free(t);
        json_decref(j);
        for (size_t i = 0; i < diff.count; i++) {
            char buf[128];

            moe_contract_variable(diff.items[i].path, buf, sizeof(buf));
            moe_contract_change_in(&diff.items[i], "tuning");
        }
        moe_contract_diff_free(&diff);
    }
    for (int s = MOE_STAGE_CONTRACT; s < MOE_STAGE_COUNT; s++) {
        struct moe_verdict v;

        memset(&diff, 0, sizeof(diff));
        moe_contract_check_stage((enum moe_stage)s, doc[0], doc[1], doc[2], &diff, &v, &err);
        moe_contract_diff_free(&diff);
    }
out:
    for (int i = 0; i < 3; i++)
        json_decref(doc[i]);
    return 0;
}
