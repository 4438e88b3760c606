/* The trail as the deciders use it: read back a decision already made,
 * record a new one. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "contract/contract_store.h"
#include "core/strbuf.h"
#include "loop/loop.h"
#include "loop/loop_internal.h"

json_t *moe_loop_decided(const char *study, const char *stage, int round, struct moe_error *err)
{
    json_t *trail = moe_contract_load_trail(study, err), *found = NULL, *t;
    size_t i;

    if (!trail)
        return NULL;
    json_array_foreach(trail, i, t) {
        const json_t *d = json_object_get(t, "decision");
        const char *s = json_string_value(json_object_get(d, "stage"));

        if (s && strcmp(s, stage) == 0 &&
            (!round || json_integer_value(json_object_get(d, "round")) == round)) {
            json_decref(found);
            found = json_incref(t);
        }
    }
    json_decref(trail);
    return found;
}

int moe_loop_record(const char *study, json_t *doc, struct moe_loop_outcome *out,
                    struct moe_error *err)
{
    const char *stage = json_string_value(json_object_get(doc, "stage"));
    int round = (int)json_integer_value(json_object_get(doc, "round"));
    json_t *had = moe_loop_decided(study, stage ? stage : "", round, err);
    int rc;

    if (!had && err->text[0])
        return -1;
    if (had) {
        rc = moe_fmt_fixed(out->file, sizeof(out->file), err, "%s/%s", study,
                           json_string_value(json_object_get(had, "file")));
        out->recorded = false;
        json_decref(had);
        return rc;
    }
    out->recorded = true;
    return moe_contract_record_decision(study, doc, out->file, sizeof(out->file), err);
}
