/* Profile -> which retune axes run, and retune -> the winners: decisions
 * that adopt no baseline, recorded so that the trail tells the whole
 * study. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "contract/contract_store.h"
#include "core/json_build.h"
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
        } else if (json_array_append_new(ev, e) < 0) { /* checked: the array is ours */
            moe_error_set(err, MOE_STUDY_DECISIONS "/profile: evidence[%zu]: out of memory", i);
            json_decref(ev);
            ev = NULL;
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
    struct moe_jb jb;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!b || moe_bottleneck_parse(b) == MOE_BOTTLENECK_COUNT) {
        moe_error_set(err, "moeflow diagnose named no bottleneck retune could target");
        return -1;
    }
    if (!(ev = profile_evidence(study, err)))
        return -1;
    moe_jb_init(&jb, err);
    /* the diagnosis's parts may be absent (null); ev is taken, made or not */
    doc = moe_jb_pack(&jb, "{s:s, s:i, s:s, s:s, s:{s:s, s:O?}, s:O?, s:O?, s:O?, s:O?, s:O?, s:o}",
                    "stage",
                    "profile", "round", 1, "rule", "retune-targets-bottleneck", "question",
                    "which retune axes run?", "chose", "bottleneck", b, "why",
                    json_object_get(diagnosis, "reason"), "measured",
                    json_object_get(diagnosis, "measured"), "sources",
                    json_object_get(diagnosis, "sources"), "retune_axes",
                    json_object_get(diagnosis, "retune_candidates"), "ruled_out",
                    json_object_get(diagnosis, "skipped_axes"), "contention",
                    json_object_get(diagnosis, "contention"), "evidence", ev);
    if (!doc)
        moe_jb_within(&jb, MOE_STUDY_DECISIONS "/profile");
    rc = doc ? moe_loop_record(study, doc, out, err) : -1;
    /* a message: the decision's one line */
    snprintf(out->said, sizeof(out->said), "%s bottleneck: retune runs the axes that target it",
             b);
    json_decref(doc);
    return rc;
}

int moe_loop_decide_retune(const char *study, struct moe_loop_outcome *out,
                           struct moe_error *err)
{
    json_t *w = moe_contract_load_winners(study, err), *chose = json_array(), *x, *doc;
    struct moe_jb b;
    size_t i;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (!w) {
        json_decref(chose);
        return -1;
    }
    moe_jb_init(&b, err);
    /* a winner without its digest or run fails the pack, named by its index */
    json_array_foreach(w, i, x)
        moe_jb_append(&b, chose, moe_jb_pack(&b, "{s:O, s:O}", "winner",
                                             json_object_get(x, "digest"), "run",
                                             json_object_get(x, "run")));
    doc = json_object();
    moe_jb_str(&b, doc, "stage", "retune");
    moe_jb_int(&b, doc, "round", 1);
    moe_jb_str(&b, doc, "rule", "retune-winners");
    moe_jb_str(&b, doc, "question", "which changes does validate measure together?");
    moe_jb_set(&b, doc, "chose", chose);
    moe_jb_str(&b, doc, "evidence_is",
               "the winners' sealed records (" MOE_STUDY_WINNERS "/) and the retune report "
               "(" MOE_STUDY_RESULTS "/retune/report)");
    moe_jb_within(&b, MOE_STUDY_DECISIONS "/retune");
    if ((doc = moe_jb_done(&b, doc)) && moe_loop_record(study, doc, out, err) == 0)
        rc = 0;
    /* a message: the decision's one line */
    snprintf(out->said, sizeof(out->said), "%zu winner%s recorded", json_array_size(w),
             json_array_size(w) == 1 ? "" : "s");
    json_decref(doc);
    json_decref(w);
    return rc;
}
