/* Profile -> which retune axes run, and retune -> the winners: decisions
 * that adopt no baseline, recorded so that the trail tells the whole
 * study. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "contract/contract_store.h"
#include "core/manifest.h"
#include "core/retune.h"
#include "core/strv.h"
#include "core/study_dir.h"
#include "loop/evidence.h"
#include "loop/evidence_internal.h"
#include "loop/loop.h"
#include "loop/loop_internal.h"

/* The profile stage's runs: what the diagnosis read. */
static json_t *profile_evidence(const char *study, struct moe_error *err)
{
    json_t *ev = json_array(), *e;
    struct moe_strv ids;

    if (moe_manifest_stage_ids(study, MOE_STAGE_PROFILE, &ids, err) < 0) {
        json_decref(ev);
        return NULL;
    }
    for (size_t i = 0; ev && i < ids.n; i++) {
        if (!(e = moe_loop_evidence(study, "profile", ids.v[i], err))) {
            json_decref(ev);
            ev = NULL;
        } else {
            json_array_append_new(ev, e);
        }
    }
    moe_strv_free(&ids);
    return ev;
}

int moe_loop_decide_profile(const char *study, const json_t *diagnosis,
                            struct moe_loop_outcome *out, struct moe_error *err)
{
    const char *b = json_string_value(json_object_get(diagnosis, "bottleneck"));
    json_t *ev, *doc;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!b || moe_bottleneck_parse(b) == MOE_BOTTLENECK_COUNT) {
        moe_error_set(err, "moeflow diagnose named no bottleneck retune could target");
        return -1;
    }
    if (!(ev = profile_evidence(study, err)))
        return -1;
    doc = json_pack("{s:s, s:i, s:s, s:s, s:{s:s, s:O?}, s:O?, s:O?, s:O?, s:O?, s:o}", "stage",
                    "profile", "round", 1, "rule", "retune-targets-bottleneck", "question",
                    "which retune axes run?", "chose", "bottleneck", b, "why",
                    json_object_get(diagnosis, "reason"), "measured",
                    json_object_get(diagnosis, "measured"), "sources",
                    json_object_get(diagnosis, "sources"), "retune_axes",
                    json_object_get(diagnosis, "retune_candidates"), "ruled_out",
                    json_object_get(diagnosis, "skipped_axes"), "evidence", ev);
    rc = doc ? moe_loop_record(study, doc, out, err) : -1;
    if (!doc)
        moe_error_set(err, "out of memory");
    snprintf(out->said, sizeof(out->said), "%s bottleneck: retune runs the axes that target it",
             b);
    json_decref(doc);
    return rc;
}

int moe_loop_decide_retune(const char *study, struct moe_loop_outcome *out,
                           struct moe_error *err)
{
    json_t *w = moe_contract_load_winners(study, err), *chose = json_array(), *x, *doc;
    size_t i;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (!w) {
        json_decref(chose);
        return -1;
    }
    json_array_foreach(w, i, x)
        json_array_append_new(chose, json_pack("{s:O, s:O}", "winner", json_object_get(x, "digest"),
                                               "run", json_object_get(x, "run")));
    doc = json_pack("{s:s, s:i, s:s, s:s, s:o, s:s}", "stage", "retune", "round", 1, "rule",
                    "retune-winners", "question", "which changes does validate measure together?",
                    "chose", chose, "evidence_is",
                    "the winners' sealed records (" MOE_STUDY_WINNERS "/) and the retune report "
                    "(" MOE_STUDY_RESULTS "/retune/report)");
    if (doc && moe_loop_record(study, doc, out, err) == 0)
        rc = 0;
    snprintf(out->said, sizeof(out->said), "%zu winner%s recorded", json_array_size(w),
             json_array_size(w) == 1 ? "" : "s");
    json_decref(doc);
    json_decref(w);
    return rc;
}
