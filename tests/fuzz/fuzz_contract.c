/* Contract JSON, as the plugin reads it at submission and task start:
 * the file loader (canonical form, shape), normalisation and digest, then
 * the diff and every stage's rule between two contracts.  The input holds
 * up to three documents separated by a line "%%": frozen, requested and the
 * recorded winners; a missing one repeats the first.
 *
 * Property (issue 21): the diff of two documents is empty exactly when
 * their canonical forms, and so their digests, are equal, the annotation
 * sections (sources, run) left out; with those, a non-empty annotation diff
 * makes up the difference. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "contract/contract.h"
#include "contract/contract_diff.h"
#include "contract/contract_rules.h"
#include "contract/contract_store.h"
#include "fuzz.h"
#include "core/json_canon.h"
#include "contract/contract_internal.h"
#include "contract/contract_store_internal.h"
#include "contract/contract_rules_internal.h"
#include "contract/contract_diff_internal.h"

static json_t *part(const char *text, size_t len)
{
    return json_loadb(text, len, JSON_DECODE_ANY, NULL);
}

static void exercise_one(const json_t *doc)
{
    struct moe_error err;
    char hex[MOE_SHA256_HEX_LEN + 1];
    char *canon = moe_json_canonical(doc);
    json_t *again = canon ? json_loads(canon, JSON_DECODE_ANY, NULL) : NULL;
    char *canon2 = again ? moe_json_canonical(again) : NULL;

    /* The canonical form is a fixed point: re-reading it changes nothing. */
    if (canon && (!canon2 || strcmp(canon, canon2) != 0))
        abort();
    moe_contract_check_shape(doc, &err);
    moe_contract_digest(doc, hex, &err);
    json_decref(again);
    free(canon);
    free(canon2);
}

/* doc without its top-level annotation sections, canonical; NULL on
 * allocation failure. */
static char *compared_part(const json_t *doc)
{
    json_t *copy = json_deep_copy(doc);
    char *canon;

    if (json_is_object(copy)) {
        json_object_del(copy, "sources");
        json_object_del(copy, "run");
    }
    canon = copy ? moe_json_canonical(copy) : NULL;
    json_decref(copy);
    return canon;
}

static void check_diff_property(const json_t *a, const json_t *b, size_t changes)
{
    char *ca = compared_part(a), *cb = compared_part(b), *fa, *fb;
    struct moe_contract_diff notes;
    struct moe_error err;

    if (ca && cb && (changes == 0) != (strcmp(ca, cb) == 0))
        abort(); /* the diff hides a difference, or invents one */
    fa = moe_json_canonical(a);
    fb = moe_json_canonical(b);
    if (changes == 0 && fa && fb && strcmp(fa, fb) != 0 &&
        moe_contract_diff_annotations(a, b, &notes, &err) == 0) {
        if (notes.count == 0)
            abort(); /* different digests, and nothing to show for it */
        moe_contract_diff_free(&notes);
    }
    free(fa);
    free(fb);
    free(ca);
    free(cb);
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

        check_diff_property(doc[0], doc[1], diff.count);
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
