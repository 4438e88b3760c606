#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/candidates.h"
#include "contract/contract.h"
#include "contract/contract_store.h"
#include "core/readfile.h"
#include "study/study_validate.h"

/* [["--flag", [values...]], ...] in argv order. */
static json_t *options(const json_t *argv)
{
    json_t *out = json_array(), *cur = NULL, *w;
    size_t i;

    json_array_foreach(argv, i, w) {
        const char *s = json_string_value(w);

        if (s && strncmp(s, "--", 2) == 0) {
            cur = json_array();
            json_array_append_new(out, json_pack("[s,o]", s, cur));
        } else if (cur) {
            json_array_append(cur, w);
        } else {
            json_array_append_new(out, json_pack("[O,[]]", w)); /* a leading bare word */
        }
    }
    return out;
}

static json_t *find_opt(const json_t *opts, const char *flag)
{
    json_t *o;
    size_t i;

    json_array_foreach(opts, i, o)
        if (strcmp(json_string_value(json_array_get(o, 0)), flag) == 0)
            return o;
    return NULL;
}

static json_t *argv_of(const json_t *opts)
{
    json_t *out = json_array(), *o, *v;
    size_t i, j;

    json_array_foreach(opts, i, o) {
        json_array_append(out, json_array_get(o, 0));
        json_array_foreach(json_array_get(o, 1), j, v)
            json_array_append(out, v);
    }
    return out;
}

/* argv with --train-iters' value taken from ref. */
static json_t *with_iters(const json_t *argv, const json_t *ref)
{
    json_t *opts = options(argv), *ro = options(ref), *mine = find_opt(opts, "--train-iters");
    json_t *theirs = find_opt(ro, "--train-iters"), *out;

    if (mine && theirs)
        json_array_set(mine, 1, json_array_get(theirs, 1));
    out = argv_of(opts);
    json_decref(opts);
    json_decref(ro);
    return out;
}

/* Records that who sets key to value; -1 when an earlier winner set it to
 * something else (null: removed). */
static int claim(json_t *changes, const char *key, json_t *value, const char *who,
                 struct moe_error *err)
{
    json_t *prior = json_object_get(changes, key);

    if (prior && !json_equal(prior, value)) {
        moe_error_set(err, "winners cannot be combined: %s sets %s differently from an "
                      "earlier winner (record one of them only)", who, key);
        return -1;
    }
    json_object_set(changes, key, value);
    return 0;
}

/* Applies what cand changes relative to base (arguments: set or removed;
 * --train-iters never) onto combo; changes: flag -> what a previous winner
 * set it to (null: removed), to find two winners that disagree. */
static int merge_args(json_t *combo, const json_t *base, const json_t *cand, json_t *changes,
                      const char *who, struct moe_error *err)
{
    json_t *o, *prior;
    size_t i;

    json_array_foreach(cand, i, o) {
        const char *flag = json_string_value(json_array_get(o, 0));
        json_t *b = find_opt(base, flag), *c;

        if (strcmp(flag, "--train-iters") == 0 || (b && json_equal(b, o)))
            continue;
        if (claim(changes, flag, o, who, err) < 0)
            return -1;
        c = find_opt(combo, flag);
        if (c)
            json_array_set(c, 1, json_array_get(o, 1));
        else
            json_array_append(combo, o);
    }
    json_array_foreach(base, i, o) {
        const char *flag = json_string_value(json_array_get(o, 0));

        if (find_opt(cand, flag))
            continue;
        prior = json_object_get(changes, flag);
        if (prior && !json_is_null(prior)) {
            moe_error_set(err, "winners cannot be combined: %s drops %s, which an earlier "
                          "winner sets", who, flag);
            return -1;
        }
        json_object_set_new(changes, flag, json_null());
        for (size_t k = 0; k < json_array_size(combo); k++)
            if (strcmp(json_string_value(json_array_get(json_array_get(combo, k), 0)), flag) ==
                0)
                json_array_remove(combo, k--);
    }
    return 0;
}

/* KEY=VALUE lists, merged the same way (never removed: the generator only
 * adds variables). */
static int merge_env(json_t *combo, const json_t *base, const json_t *cand, json_t *changes,
                     const char *who, struct moe_error *err)
{
    json_t *e;
    size_t i;

    json_array_foreach(cand, i, e) {
        const char *kv = json_string_value(e), *eq = kv ? strchr(kv, '=') : NULL;
        char key[128];
        size_t k;
        int found = 0;

        if (!eq)
            continue;
        snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
        for (k = 0; k < json_array_size(base); k++)
            if (json_equal(json_array_get(base, k), e))
                found = 1;
        if (found)
            continue;
        if (claim(changes, key, e, who, err) < 0)
            return -1;
        for (k = 0; k < json_array_size(combo); k++) {
            const char *c = json_string_value(json_array_get(combo, k));

            if (c && strncmp(c, key, strlen(key)) == 0 && c[strlen(key)] == '=')
                json_array_remove(combo, k--);
        }
        json_array_append(combo, e);
    }
    return 0;
}

/* The declared contract's changed fields (section.key), merged. */
static int merge_contract(json_t *combo, const json_t *base, const json_t *cand, json_t *changes,
                          const char *who, struct moe_error *err)
{
    const char *sec, *key;
    json_t *sv, *v;

    json_object_foreach((json_t *)cand, sec, sv) {
        if (!json_is_object(sv))
            continue;
        json_object_foreach(sv, key, v) {
            json_t *b = json_object_get(json_object_get(base, sec), key);
            char path[256];

            if (b && json_equal(b, v))
                continue;
            snprintf(path, sizeof(path), "%s.%s", sec, key);
            if (claim(changes, path, v, who, err) < 0)
                return -1;
            if (!json_object_get(combo, sec))
                json_object_set_new(combo, sec, json_object());
            json_object_set(json_object_get(combo, sec), key, v);
        }
    }
    return 0;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "";
}

static json_t *retune_candidate(const json_t *manifest, const char *id)
{
    json_t *st, *c;
    size_t i, j;

    json_array_foreach(json_object_get(manifest, "stages"), i, st) {
        if (strcmp(str(st, "stage"), "retune") != 0)
            continue;
        json_array_foreach(json_object_get(st, "candidates"), j, c) {
            if (strcmp(str(c, "id"), id) == 0)
                return c;
        }
    }
    return NULL;
}

static json_t *label(const json_t *c)
{
    const json_t *val = json_object_get(c, "value");
    char *text = json_is_string(val) ? strdup(json_string_value(val))
                                     : json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *out = json_sprintf("%s=%s", str(c, "variable"), text ? text : "?");

    free(text);
    return out;
}

/* The validate candidate of one recorded winner: the retune run that
 * sealed its contract, run alone with the baseline's iterations. */
static json_t *winner_alone(const json_t *manifest, const json_t *winner, const json_t *baseline,
                            const char *dir, struct moe_error *err)
{
    const char *digest = json_string_value(json_object_get(winner, "digest"));
    const char *id = json_string_value(json_object_get(json_object_get(winner, "run"),
                                                       "candidate"));
    json_t *cand = id ? retune_candidate(manifest, id) : NULL, *c;

    if (!cand) {
        moe_error_set(err, "%s/%s.json: its retune run ran candidate '%s', which this study's "
                      "manifest does not list", dir, digest, id ? id : "");
        return NULL;
    }
    c = json_deep_copy(cand);
    json_object_set_new(c, "stage", json_string("validate"));
    json_object_set_new(c, "argv", with_iters(json_object_get(cand, "argv"),
                                              json_object_get(baseline, "argv")));
    json_object_set_new(c, "note", json_string("a recorded winner, alone"));
    return c;
}

/* Appends each recorded winner (sealed, traced to its sealed retune run:
 * moe_contract_load_winners) to alone, its contract digest to digests and
 * its label to names, in file name order; 0 or -1. */
static int collect_winners(const char *study_dir, const json_t *baseline, json_t *alone,
                           json_t *digests, json_t *names, struct moe_error *err)
{
    char dir[4200], path[4600];
    json_t *manifest, *winners = NULL, *w, *c;
    size_t i;
    int rc = 0;

    snprintf(path, sizeof(path), "%s/manifest.json", study_dir);
    if (!(manifest = moe_read_json(path, "manifest", err)))
        return -1;
    snprintf(dir, sizeof(dir), "%s/winners", study_dir);
    if (!(winners = moe_contract_load_winners(study_dir, err)))
        rc = -1;
    json_array_foreach(winners, i, w) {
        if (rc == 0 && !(c = winner_alone(manifest, w, baseline, dir, err)))
            rc = -1;
        if (rc != 0)
            break;
        json_array_append_new(names, label(c));
        json_array_append_new(alone, c);
        json_array_append(digests, json_object_get(w, "digest"));
    }
    if (rc == 0 && json_array_size(alone) == 0) {
        moe_error_set(err, "%s: no winner recorded (moeflow report STUDY --stage retune "
                      "--record-winners)", dir);
        rc = -1;
    }
    json_decref(manifest);
    json_decref(winners);
    return rc;
}

/* The winners together as one run: each one's changes to the baseline's
 * options, environment and contract, refused where two disagree. */
static json_t *combination(const json_t *baseline, const json_t *alone, json_t *names,
                           json_t *digests, struct moe_error *err)
{
    json_t *combo = json_deep_copy(baseline);
    json_t *bopts = options(json_object_get(baseline, "argv")), *copts = json_deep_copy(bopts);
    json_t *env = json_deep_copy(json_object_get(baseline, "env"));
    json_t *contract = json_deep_copy(json_object_get(baseline, "contract"));
    json_t *ach = json_object(), *ech = json_object(), *cch = json_object(), *w;
    char digest[MOE_SHA256_HEX_LEN + 1];
    size_t i;
    int rc = 0;

    json_array_foreach(alone, i, w) {
        const char *who = json_string_value(json_array_get(names, i));
        json_t *wo = options(json_object_get(w, "argv"));

        if (rc == 0)
            rc = merge_args(copts, bopts, wo, ach, who, err);
        if (rc == 0)
            rc = merge_env(env, json_object_get(baseline, "env"), json_object_get(w, "env"), ech,
                           who, err);
        if (rc == 0)
            rc = merge_contract(contract, json_object_get(baseline, "contract"),
                                json_object_get(w, "contract"), cch, who, err);
        json_decref(wo);
    }
    json_object_set_new(contract, "validation", json_pack("{s:O}", "combination", digests));
    if (rc == 0)
        rc = moe_contract_digest(contract, digest, err);
    if (rc == 0) {
        json_object_set_new(combo, "id", json_string(digest));
        json_object_set_new(combo, "argv", argv_of(copts));
        json_object_set(combo, "env", env);
        json_object_set(combo, "contract", contract);
        json_object_set_new(combo, "variable", json_string("combination"));
        json_object_set(combo, "value", names);
        json_object_set_new(combo, "note",
                            json_string("the recorded winners together, measured as one run"));
    }
    json_decref(bopts);
    json_decref(copts);
    json_decref(env);
    json_decref(contract);
    json_decref(ach);
    json_decref(ech);
    json_decref(cch);
    if (rc != 0) {
        json_decref(combo);
        return NULL;
    }
    return combo;
}

json_t *moe_validate_from_winners(const char *study_dir, const json_t *baseline,
                                  struct moe_error *err)
{
    json_t *out = json_array(), *digests = json_array(), *names = json_array();
    json_t *alone = json_array(), *combo;

    if (collect_winners(study_dir, baseline, alone, digests, names, err) != 0)
        goto fail;
    json_array_append(out, (json_t *)baseline);
    json_array_extend(out, alone);
    if (json_array_size(alone) > 1) {
        if (!(combo = combination(baseline, alone, names, digests, err)))
            goto fail;
        json_array_append_new(out, combo);
    }
    goto done;
fail:
    json_decref(out);
    out = NULL;
done:
    json_decref(digests);
    json_decref(names);
    json_decref(alone);
    return out;
}

json_t *moe_validate_candidates(const struct moe_study *study, const char *study_dir,
                                struct moe_error *err)
{
    struct moe_stage_plan plan = { .candidates = NULL };
    json_t *cands = NULL;

    if (moe_candidates_build(study, MOE_STAGE_VALIDATE, &plan, err) == 0)
        cands = moe_validate_from_winners(study_dir, json_array_get(plan.candidates, 0), err);
    moe_stage_plan_free(&plan);
    return cands;
}
