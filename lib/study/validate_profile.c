#include "config.h"

#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/contract_keys.h"
#include "core/json_build.h"
#include "core/strbuf.h"
#include "study/megatron_args.h"
#include "study/megatron_args_internal.h"
#include "study/megatron_rules.h"
#include "study/megatron_rules_internal.h"
#include "study/study_contract.h"
#include "study/study_contract_internal.h"
#include "study/validate_profile.h"
#include "study/validate_profile_internal.h"
#include "study/candidates_internal.h"

/* The twin's declared contract: the sibling's, plus what it profiles and
 * that it is a declared twin (kept beside a combination's winner list). */
static json_t *twin_contract(const struct moe_study *s, const json_t *sibling,
                             struct moe_error *err)
{
    json_t *doc = json_deep_copy(sibling), *validation;
    struct moe_jb b;

    if (!doc)
        return NULL;
    moe_jb_init(&b, err);
    validation = json_object_get(doc, MOE_CONTRACT_VALIDATION);
    if (!json_is_object(validation)) {
        /* borrowed after the set, which the builder checks */
        validation = json_object();
        if (moe_jb_set(&b, doc, MOE_CONTRACT_VALIDATION, validation) < 0)
            return moe_jb_done(&b, doc);
    }
    moe_jb_set(&b, doc, MOE_CONTRACT_PROFILING, moe_contract_profiling(&b, s));
    moe_jb_bool(&b, validation, MOE_CONTRACT_PROFILING_TWIN, true);
    return moe_jb_done(&b, doc);
}

/* twin: sibling under the study's profiler, writing into the folder
 * named by sibling's id (core/manifest.h). */
static int make_twin(const struct moe_study *s, const struct moe_candidate *sibling,
                     struct moe_candidate *twin, struct moe_error *err)
{
    char dir[256], note[512];

    if (moe_candidate_copy(twin, sibling) < 0 ||
        moe_fmt_fixed(dir, sizeof(dir), err, MOE_TWIN_PROFILE_DIR_FMT "/tensorboard",
                      sibling->id) < 0)
        return -1;
    /* a message: the note is read by people, a cut one still says twin */
    snprintf(note, sizeof(note), "profiling twin%s%s, profiled over steps %d..%d; never timed",
             sibling->note && sibling->note[0] ? ": " : "", sibling->note ? sibling->note : "",
             s->measure.profile_first, s->measure.profile_last);
    json_decref(twin->contract);
    twin->contract = twin_contract(s, sibling->contract, err);
    if (!twin->contract || moe_megatron_profile_args(s, dir, &twin->argv) < 0 ||
        moe_candidate_set(&twin->twin_of, sibling->id) < 0 ||
        moe_candidate_set(&twin->note, note) < 0)
        return -1;
    return moe_candidate_hash(twin);
}

/* Whether a candidate of plan is already the twin of c. */
static bool has_twin(const struct moe_stage_plan *plan, const struct moe_candidate *c)
{
    for (size_t i = 0; i < plan->n; i++)
        if (plan->cands[i].twin_of && c->id && strcmp(plan->cands[i].twin_of, c->id) == 0)
            return true;
    return false;
}

/* Lists the twins as skipped, with why; -1 when out of memory. */
static int skip_twins(struct moe_stage_plan *plan, const char *why)
{
    char reason[512];

    /* a message: people read it, and a cut one still reads */
    snprintf(reason, sizeof(reason), "no profiling twin: %.480s", why);
    return moe_stage_plan_skip(plan, "profiling_twin", json_null(), reason);
}

/* Why Megatron would not profile the validate runs (their --train-iters
 * ends before the profile window does), into buf; NULL when it would. */
static const char *unprofilable(const struct moe_study *s, char *buf, size_t size)
{
    const struct moe_megatron_rule *rule;
    struct moe_run run;

    moe_run_from_baseline(&run, s, s->measure.validate_steps);
    run.profile = true;
    if (!(rule = moe_megatron_rule_broken(s, &run)))
        return NULL;
    moe_megatron_rule_describe(rule, s->software.dialect, buf, size);
    return buf;
}

int moe_validate_add_twins(const struct moe_study *s, struct moe_stage_plan *plan,
                           struct moe_error *err)
{
    size_t n = plan->n;
    char why[512];

    if (unprofilable(s, why, sizeof(why))) {
        if (skip_twins(plan, why) == 0)
            return 0;
        moe_error_set(err, "validate stage: out of memory");
        return -1;
    }

    for (size_t i = 0; i < n; i++) {
        struct moe_candidate twin;
        struct moe_error why_twin;
        int rc;

        if (plan->cands[i].twin_of || has_twin(plan, &plan->cands[i]))
            continue;
        if (!moe_candidate_id_is_hash(plan->cands[i].id)) {
            moe_error_set(err, "validate stage: candidate %zu: id '%.80s' is not a candidate "
                          "id (64 hex digits): no folder is named after it", i,
                          plan->cands[i].id ? plan->cands[i].id : "");
            return -1;
        }
        moe_candidate_init(&twin);
        moe_error_clear(&why_twin);
        rc = make_twin(s, &plan->cands[i], &twin, &why_twin);
        if (rc == 0)
            rc = moe_stage_plan_add(plan, &twin);
        moe_candidate_free(&twin);
        if (rc < 0) {
            moe_error_set(err, "validate stage: cannot add the profiling twin of candidate "
                          "%zu: %s", i, why_twin.text[0] ? why_twin.text : "out of memory");
            return -1;
        }
    }
    return 0;
}
