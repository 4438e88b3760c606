#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "contract/contract.h"
#include "contract/contract_rules.h"
#include "contract/contract_rules_internal.h"
#include "core/contract_keys.h"
#include "contract/contract_diff_internal.h"

/* Never change, whatever the stage. */
static const char *const invariant_sections[] = {
    MOE_CONTRACT_ENVIRONMENT, MOE_CONTRACT_HARDWARE, MOE_CONTRACT_WORKLOAD, MOE_CONTRACT_SEMANTICS,
    MOE_CONTRACT_TIMING,      NULL,
};

/* MBS sits in the workload section but is a retune axis: with GBS fixed it
 * changes micro-batching, not what is trained. */
static const char retunable_workload_path[] = MOE_CONTRACT_PATH(MOE_CONTRACT_WORKLOAD,
                                                                 MOE_CONTRACT_MBS);

static void decide(struct moe_verdict *v, bool allowed, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void decide(struct moe_verdict *v, bool allowed, const char *rule, const char *fmt, ...)
{
    va_list ap;

    v->allowed = allowed;
    /* a message: cut, it still reads and names no file */
    snprintf(v->rule, sizeof(v->rule), "%s", rule);
    va_start(ap, fmt);
    vsnprintf(v->reason, sizeof(v->reason), fmt, ap); /* a message */
    va_end(ap);
}

const char *moe_contract_variable(const char *path, char *buf, size_t len)
{
    static const char tuning[] = MOE_CONTRACT_TUNING ".";
    const char *name;

    /* a variable's name cut short would be another variable: none */
    if (strcmp(path, retunable_workload_path) == 0)
        return (size_t)snprintf(buf, len, MOE_CONTRACT_MBS) < len ? buf : NULL;
    if (strncmp(path, tuning, sizeof(tuning) - 1) != 0)
        return NULL;
    name = path + sizeof(tuning) - 1;
    if ((size_t)snprintf(buf, len, "%.*s", (int)moe_contract_path_segment(name), name) >= len)
        return NULL;
    /* the dispatcher type and its backend are one choice */
    if (strcmp(buf, MOE_CONTRACT_DISPATCHER_BACKEND) == 0)
        return (size_t)snprintf(buf, len, MOE_CONTRACT_DISPATCHER) < len ? buf : NULL;
    return buf;
}

static const struct moe_contract_change *first_invariant_change(const struct moe_contract_diff *d)
{
    for (size_t i = 0; i < d->count; i++) {
        if (strcmp(d->items[i].path, retunable_workload_path) == 0)
            continue;
        for (const char *const *s = invariant_sections; *s; s++)
            if (moe_contract_change_in(&d->items[i], *s))
                return &d->items[i];
    }
    return NULL;
}

/* First change outside the sections (or exact paths' prefixes) a stage may touch. */
static const struct moe_contract_change *first_outside(const struct moe_contract_diff *d,
                                                       const char *const *allowed)
{
    for (size_t i = 0; i < d->count; i++) {
        bool ok = false;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strncmp(d->items[i].path, *a, strlen(*a)) == 0;
        if (!ok)
            return &d->items[i];
    }
    return NULL;
}

/* What a stage that changes nothing or one scope may change.  No default:
 * -Wswitch names a stage added without a scope, and a stage that has
 * its own rule (retune, validate) or none is an error here. */
static int check_scope(enum moe_stage stage, const struct moe_contract_diff *d,
                       struct moe_verdict *v, struct moe_error *err)
{
    /* no offload: no stage emits one (fit's ladder stops at full recompute) */
    static const char *const fit[] = {
        MOE_CONTRACT_PARALLEL ".", MOE_CONTRACT_PATH(MOE_CONTRACT_TUNING, MOE_CONTRACT_RECOMPUTE),
        NULL,
    };
    static const char *const scale[] = { MOE_CONTRACT_PARALLEL ".", NULL };
    static const char *const profile[] = { MOE_CONTRACT_PROFILING ".", NULL };
    static const char *const none[] = { NULL };
    const char *const *allowed = NULL, *rule = NULL, *what = NULL;
    const struct moe_contract_change *c;

    switch (stage) {
    case MOE_STAGE_FIT:
        allowed = fit, rule = "fit-scope", what = "fit may change only the layout and recompute";
        break;
    case MOE_STAGE_SCALE:
        allowed = scale, rule = "scale-scope", what = "scale may change only the parallel layout";
        break;
    case MOE_STAGE_PROFILE:
        allowed = profile, rule = "profile-equal",
        what = "profile must equal the baseline apart from profiling switches";
        break;
    case MOE_STAGE_CONTRACT:
        allowed = none, rule = "contract-equal",
        what = "the contract stage re-runs the frozen baseline unchanged";
        break;
    case MOE_STAGE_RETUNE:
    case MOE_STAGE_VALIDATE:
    case MOE_STAGE_NONE:
    case MOE_STAGE_COUNT:
        break;
    }
    if (!allowed) {
        moe_error_set(err, "stage %d (%s): no contract scope rule for it", (int)stage,
                      moe_stage_name(stage) ? moe_stage_name(stage) : "not a stage");
        return -1;
    }
    if (!(c = first_outside(d, allowed)))
        decide(v, true, "stage-scope", "%s may change what it changes here", moe_stage_name(stage));
    else
        decide(v, false, rule, "%s; %s changed", what, c->path);
    return 0;
}

static void check_retune(const struct moe_contract_diff *d, struct moe_verdict *v)
{
    char first[64] = "", name[64];
    size_t variables = 0;

    for (size_t i = 0; i < d->count; i++) {
        if (!moe_contract_variable(d->items[i].path, name, sizeof(name))) {
            decide(v, false, "retune-scope",
                   "retune may change only tuning variables; %s changed", d->items[i].path);
            return;
        }
        if (variables == 0) {
            /* fits: name is as large as first */
            snprintf(first, sizeof(first), "%s", name);
            variables = 1;
        } else if (strcmp(name, first) != 0) {
            decide(v, false, "retune-one-variable",
                   "retune must change exactly one tuning variable; this run changes %s and %s",
                   first, name);
            return;
        }
    }
    if (variables == 0)
        decide(v, false, "retune-one-variable",
               "retune must change exactly one tuning variable; this run changes none");
    else
        decide(v, true, "retune-one-variable", "changes one tuning variable: %s", first);
}

/* Applies a winner's own changes (relative to frozen) on top of expected. */
static int merge_winner(json_t *expected, const json_t *frozen, const json_t *winner,
                        struct moe_verdict *v)
{
    json_t *result = json_deep_copy(expected);
    int rc = 0;
    const char *key;
    json_t *value;

    json_object_foreach((json_t *)winner, key, value) {
        json_t *section = json_object_get(result, key);
        const char *k2;
        json_t *v2;

        if (!json_is_object(value) || !section || strcmp(key, MOE_CONTRACT_SOURCES) == 0 ||
            strcmp(key, MOE_CONTRACT_RUN) == 0)
            continue;
        json_object_foreach(value, k2, v2) {
            json_t *base = json_object_get(json_object_get(frozen, key), k2);
            json_t *cur = json_object_get(section, k2);
            if (base && json_equal(base, v2))
                continue; /* the winner keeps the baseline here */
            if (cur && !json_equal(cur, base) && !json_equal(cur, v2)) {
                decide(v, false, "validate-combination",
                       "the combined winners disagree on %s.%s", key, k2);
                rc = 1;
                goto out;
            }
            json_object_set(section, k2, v2);
        }
    }
    json_object_update(expected, result);
out:
    json_decref(result);
    return rc;
}

static const json_t *find_winner(const json_t *winners, const char *digest)
{
    size_t i;
    json_t *w;
    char hex[MOE_SHA256_HEX_LEN + 1];

    json_array_foreach(winners, i, w)
        if (moe_contract_digest(w, hex, NULL) == 0 && strcmp(hex, digest) == 0)
            return w;
    return NULL;
}

static int check_combination(const json_t *frozen, const json_t *requested, const json_t *winners,
                             const json_t *combination, struct moe_verdict *v,
                             struct moe_error *err)
{
    json_t *expected = json_deep_copy(frozen), *digest;
    struct moe_contract_diff d;
    size_t i;
    int rc = 0;

    json_object_del(expected, MOE_CONTRACT_VALIDATION);
    json_array_foreach(combination, i, digest) {
        const json_t *w = json_is_string(digest) && winners
                              ? find_winner(winners, json_string_value(digest))
                              : NULL;
        if (!w) {
            decide(v, false, "validate-combination", "combination entry %zu is not a recorded winner", i);
            goto out;
        }
        if (merge_winner(expected, frozen, w, v) != 0)
            goto out;
    }
    json_object_set(expected, MOE_CONTRACT_VALIDATION,
                    json_object_get(requested, MOE_CONTRACT_VALIDATION));
    if (moe_contract_diff(expected, requested, &d, err) != 0) {
        rc = -1;
        goto out;
    }
    if (d.count == 0)
        decide(v, true, "validate-combination", "a declared combination of %zu recorded winners",
               json_array_size(combination));
    else
        decide(v, false, "validate-combination",
               "the run is not the declared combination of winners: %s differs", d.items[0].path);
    moe_contract_diff_free(&d);
out:
    json_decref(expected);
    return rc;
}

static int check_validate(const json_t *frozen, const json_t *requested, const json_t *winners,
                          const struct moe_contract_diff *d, struct moe_verdict *v,
                          struct moe_error *err);

/* requested without what makes it a profiling twin: its profiling block
 * and its declaration (and the validation section, when that was all it
 * held). */
static json_t *unprofiled_sibling(const json_t *requested)
{
    json_t *sibling = json_deep_copy(requested);
    json_t *validation = json_object_get(sibling, MOE_CONTRACT_VALIDATION);

    json_object_del(sibling, MOE_CONTRACT_PROFILING);
    json_object_del(validation, MOE_CONTRACT_PROFILING_TWIN);
    if (json_object_size(validation) == 0)
        json_object_del(sibling, MOE_CONTRACT_VALIDATION);
    return sibling;
}

/* A declared profiling twin (study/validate_profile.h): allowed when it
 * profiles something and the rest of it is a run validate allows -- the
 * profile stage's "profile-equal", applied to validate's own runs.  The
 * declaration is what lets the profiling block through: a profiled run that
 * does not declare itself a twin stays refused. */
static int check_twin(const json_t *frozen, const json_t *requested, const json_t *winners,
                      struct moe_verdict *v, struct moe_error *err)
{
    json_t *sibling;
    struct moe_contract_diff d;
    char why[sizeof(v->reason)];
    int rc;

    if (!json_is_object(json_object_get(requested, MOE_CONTRACT_PROFILING))) {
        decide(v, false, "validate-profiling-twin",
               "a declared profiling twin must profile: its contract has no %s block",
               MOE_CONTRACT_PROFILING);
        return 0;
    }
    if (!(sibling = unprofiled_sibling(requested))) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    rc = moe_contract_diff(frozen, sibling, &d, err);
    if (rc == 0) {
        rc = check_validate(frozen, sibling, winners, &d, v, err);
        moe_contract_diff_free(&d);
    }
    json_decref(sibling);
    if (rc != 0)
        return -1;
    /* a message: cut, it still reads and names no file */
    snprintf(why, sizeof(why), "%s", v->reason);
    if (v->allowed)
        decide(v, true, "validate-profiling-twin",
               "a declared profiling twin; apart from profiling: %s", why);
    else
        decide(v, false, "validate-profiling-twin",
               "a profiling twin must equal a run validate allows apart from its profiling "
               "block: %s", why);
    return 0;
}

static int check_validate(const json_t *frozen, const json_t *requested, const json_t *winners,
                          const struct moe_contract_diff *d, struct moe_verdict *v,
                          struct moe_error *err)
{
    const json_t *validation = json_object_get(requested, MOE_CONTRACT_VALIDATION);
    const json_t *combination = json_object_get(validation, MOE_CONTRACT_COMBINATION);
    size_t i;
    json_t *w;

    if (json_is_true(json_object_get(validation, MOE_CONTRACT_PROFILING_TWIN)))
        return check_twin(frozen, requested, winners, v, err);
    if (d->count == 0) {
        decide(v, true, "validate-equal", "equals the frozen baseline");
        return 0;
    }
    if (json_is_array(combination))
        return check_combination(frozen, requested, winners, combination, v, err);
    json_array_foreach(winners, i, w) {
        struct moe_contract_diff same;
        bool equal;

        if (moe_contract_diff(w, requested, &same, err) != 0)
            return -1;
        equal = same.count == 0;
        moe_contract_diff_free(&same);
        if (equal) {
            decide(v, true, "validate-winner", "equals recorded winner %zu", i);
            return 0;
        }
    }
    decide(v, false, "validate-equal",
           "validate must equal the baseline, a recorded winner or a declared combination; %s changed",
           d->items[0].path);
    return 0;
}

int moe_contract_check_stage(enum moe_stage stage, const json_t *frozen, const json_t *requested,
                             const json_t *winners, struct moe_contract_diff *diff,
                             struct moe_verdict *verdict, struct moe_error *err)
{
    const struct moe_contract_change *c;

    memset(verdict, 0, sizeof(*verdict));
    if (moe_contract_diff(frozen, requested, diff, err) != 0)
        return -1;
    c = first_invariant_change(diff);
    if (c) {
        decide(verdict, false, "invariant",
               "%s is an invariant of the study and may never change", c->path);
        return 0;
    }
    if (stage == MOE_STAGE_RETUNE) {
        check_retune(diff, verdict);
        return 0;
    }
    if (stage == MOE_STAGE_VALIDATE)
        return check_validate(frozen, requested, winners, diff, verdict, err);
    return check_scope(stage, diff, verdict, err);
}
