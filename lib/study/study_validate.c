#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "contract/contract_store.h"
#include "core/contract_keys.h"
#include "core/json_build.h"
#include "core/strbuf.h"
#include "core/study_dir.h"
#include "study/study_validate.h"
#include "study/study_validate_internal.h"
#include "study/validate_profile.h"
#include "study/validate_profile_internal.h"
#include "study/candidates_internal.h"

/* One option of an argument list: a word starting with "--" and the words
 * after it up to the next such word.  A bare word before the first option
 * (an entry script) is an option with no values. */
struct opt {
    char *flag;
    struct moe_strv vals;
};

struct opts {
    struct opt *v;
    size_t n, cap;
};

static void opts_free(struct opts *o)
{
    for (size_t i = 0; i < o->n; i++) {
        free(o->v[i].flag);
        moe_strv_free(&o->v[i].vals);
    }
    free(o->v);
    *o = (struct opts){ 0 };
}

/* Appends an option named flag with a copy of vals (NULL: none). */
static int opt_append(struct opts *o, const char *flag, const struct moe_strv *vals)
{
    struct opt *n;

    if (!(n = moe_grow_array(o->v, &o->cap, o->n + 1, sizeof(*n))))
        return -1;
    o->v = n;
    n = &o->v[o->n];
    n->vals = (struct moe_strv){ 0 };
    if (!(n->flag = strdup(flag)) || (vals && moe_strv_copy(&n->vals, vals) < 0)) {
        free(n->flag);
        return -1;
    }
    o->n++;
    return 0;
}

static int opts_of(const struct moe_strv *argv, struct opts *out)
{
    struct opt *cur = NULL;

    *out = (struct opts){ 0 };
    for (size_t i = 0; i < argv->n; i++) {
        const char *w = argv->v[i];
        int rc;

        if (strncmp(w, "--", 2) == 0 || !cur)
            rc = opt_append(out, w, NULL);
        else
            rc = moe_strv_push(&cur->vals, w);
        if (rc < 0) {
            opts_free(out);
            return -1;
        }
        cur = strncmp(w, "--", 2) == 0 ? &out->v[out->n - 1] : cur;
    }
    return 0;
}

static int argv_of(const struct opts *o, struct moe_strv *argv)
{
    *argv = (struct moe_strv){ 0 };
    for (size_t i = 0; i < o->n; i++) {
        moe_strv_push(argv, o->v[i].flag);
        for (size_t j = 0; j < o->v[i].vals.n; j++)
            moe_strv_push(argv, o->v[i].vals.v[j]);
    }
    return argv->oom ? -1 : 0;
}

static struct opt *find_opt(const struct opts *o, const char *flag)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->v[i].flag, flag) == 0)
            return &o->v[i];
    return NULL;
}

static bool opt_equal(const struct opt *a, const struct opt *b)
{
    return strcmp(a->flag, b->flag) == 0 && moe_strv_equal(&a->vals, &b->vals);
}

/* argv with --train-iters' value taken from ref. */
static int with_iters(struct moe_strv *argv, const struct moe_strv *ref)
{
    struct opts mine, theirs;
    struct opt *m, *t;
    int rc = -1;

    if (opts_of(argv, &mine) < 0)
        return -1;
    if (opts_of(ref, &theirs) == 0) {
        m = find_opt(&mine, "--train-iters");
        t = find_opt(&theirs, "--train-iters");
        if (m && t) {
            moe_strv_free(&m->vals);
            moe_strv_copy(&m->vals, &t->vals);
        }
        moe_strv_free(argv);
        rc = argv_of(&mine, argv);
        opts_free(&theirs);
    }
    opts_free(&mine);
    return rc;
}

/* What earlier winners set each argument to (an option's words; removed:
 * dropped), to find two winners that disagree. */
struct claim {
    char *key;
    bool removed;
    struct moe_strv words;
};

struct claims {
    struct claim *v;
    size_t n, cap;
};

static void claims_free(struct claims *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].key);
        moe_strv_free(&c->v[i].words);
    }
    free(c->v);
    *c = (struct claims){ 0 };
}

static struct claim *claim_of(struct claims *c, const char *key)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].key, key) == 0)
            return &c->v[i];
    return NULL;
}

/* The claim on key, new and empty when there is none; NULL when out of
 * memory. */
static struct claim *claim_slot(struct claims *c, const char *key)
{
    struct claim *k = claim_of(c, key);

    if (k)
        return k;
    if (!(k = moe_grow_array(c->v, &c->cap, c->n + 1, sizeof(*k))))
        return NULL;
    c->v = k;
    k = &c->v[c->n];
    *k = (struct claim){ .key = strdup(key) };
    if (!k->key)
        return NULL;
    c->n++;
    return k;
}

/* Records that who sets key to words (NULL: removes it); -1 when an earlier
 * winner set it to something else, or out of memory. */
static int claim(struct claims *c, const char *key, const struct moe_strv *words,
                 const char *who, struct moe_error *err)
{
    struct claim *prior = claim_of(c, key);

    if (prior && (prior->removed || !words || !moe_strv_equal(&prior->words, words))) {
        moe_error_set(err, "winners cannot be combined: %s sets %s differently from an "
                      "earlier winner (record one of them only)", who, key);
        return -1;
    }
    if (!(prior = claim_slot(c, key))) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    moe_strv_free(&prior->words);
    prior->removed = !words;
    return words && moe_strv_copy(&prior->words, words) < 0 ? -1 : 0;
}

/* An option's words: its flag, then its values. */
static int opt_words(const struct opt *o, struct moe_strv *words)
{
    *words = (struct moe_strv){ 0 };
    moe_strv_push(words, o->flag);
    for (size_t i = 0; i < o->vals.n; i++)
        moe_strv_push(words, o->vals.v[i]);
    return words->oom ? -1 : 0;
}

/* Sets (or adds) what the winner's option o changes from the baseline. */
static int merge_set(struct opts *combo, const struct opts *base, const struct opt *o,
                     struct claims *changes, const char *who, struct moe_error *err)
{
    const struct opt *b = find_opt(base, o->flag);
    struct opt *c;
    struct moe_strv words;
    int rc;

    if (strcmp(o->flag, "--train-iters") == 0 || (b && opt_equal(b, o)))
        return 0;
    rc = opt_words(o, &words) < 0 ? -1 : claim(changes, o->flag, &words, who, err);
    moe_strv_free(&words);
    if (rc < 0)
        return -1;
    if (!(c = find_opt(combo, o->flag)))
        return opt_append(combo, o->flag, &o->vals);
    moe_strv_free(&c->vals);
    return moe_strv_copy(&c->vals, &o->vals);
}

/* Drops from combo a baseline option the winner does not have. */
static int merge_drop(struct opts *combo, const char *flag, struct claims *changes,
                      const char *who, struct moe_error *err)
{
    struct claim *prior = claim_of(changes, flag);

    if (prior && !prior->removed) {
        moe_error_set(err, "winners cannot be combined: %s drops %s, which an earlier "
                      "winner sets", who, flag);
        return -1;
    }
    if (!(prior = claim_slot(changes, flag)))
        return -1;
    moe_strv_free(&prior->words);
    prior->removed = true;
    for (size_t k = 0; k < combo->n; k++) {
        if (strcmp(combo->v[k].flag, flag) != 0)
            continue;
        free(combo->v[k].flag);
        moe_strv_free(&combo->v[k].vals);
        memmove(&combo->v[k], &combo->v[k + 1], (combo->n - k - 1) * sizeof(*combo->v));
        combo->n--;
        k--;
    }
    return 0;
}

/* Applies what cand changes relative to base (arguments: set or removed;
 * --train-iters never) onto combo. */
static int merge_args(struct opts *combo, const struct opts *base, const struct opts *cand,
                      struct claims *changes, const char *who, struct moe_error *err)
{
    for (size_t i = 0; i < cand->n; i++)
        if (merge_set(combo, base, &cand->v[i], changes, who, err) < 0)
            return -1;
    for (size_t i = 0; i < base->n; i++)
        if (!find_opt(cand, base->v[i].flag) &&
            merge_drop(combo, base->v[i].flag, changes, who, err) < 0)
            return -1;
    return 0;
}

/* The declared contract's changed fields (section.key), merged.  JSON:
 * the contract is a JSON document (contract/contract.h). */
static int merge_contract(json_t *combo, const json_t *base, const json_t *cand, json_t *changes,
                          const char *who, struct moe_error *err)
{
    const char *sec, *key;
    json_t *sv, *v;

    json_object_foreach((json_t *)cand, sec, sv) {
        if (!json_is_object(sv))
            continue;
        json_object_foreach(sv, key, v) {
            json_t *b = json_object_get(json_object_get(base, sec), key), *prior;
            char path[256];
            struct moe_jb jb;

            if (b && json_equal(b, v))
                continue;
            if (moe_fmt_fixed(path, sizeof(path), err, "%s.%s", sec, key) < 0)
                return -1;
            if ((prior = json_object_get(changes, path)) && !json_equal(prior, v)) {
                moe_error_set(err, "winners cannot be combined: %s sets %s differently from "
                              "an earlier winner (record one of them only)", who, path);
                return -1;
            }
            moe_jb_init(&jb, err);
            moe_jb_copy(&jb, changes, path, v);
            if (!json_object_get(combo, sec))
                moe_jb_set(&jb, combo, sec, json_object());
            if (!jb.failed)
                moe_jb_copy(&jb, json_object_get(combo, sec), key, v);
            if (jb.failed) {
                moe_jb_within(&jb, "contract");
                return -1;
            }
        }
    }
    return 0;
}

/* The validate candidate of one recorded winner: the retune run that
 * sealed its contract, run alone with the baseline's iterations. */
static int winner_alone(const struct moe_manifest *m, const json_t *winner,
                        const struct moe_candidate *baseline, const char *dir,
                        struct moe_candidate *out, struct moe_error *err)
{
    const char *digest = json_string_value(json_object_get(winner, "digest"));
    const char *id = json_string_value(json_object_get(
        json_object_get(winner, MOE_CONTRACT_RUN), MOE_CONTRACT_RUN_CANDIDATE));
    const struct moe_candidate *cand = id ? moe_manifest_candidate_by_id(m, MOE_STAGE_RETUNE, id)
                                          : NULL;

    if (!cand) {
        moe_error_set(err, "%s/%s.json: its retune run ran candidate '%s', which this study's "
                      "manifest does not list", dir, digest, id ? id : "");
        return -1;
    }
    if (moe_candidate_copy(out, cand) < 0 || with_iters(&out->argv, &baseline->argv) < 0 ||
        moe_candidate_set(&out->note, "a recorded winner, alone") < 0) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    out->stage = MOE_STAGE_VALIDATE;
    return 0;
}

/* Appends one winner, alone, to alone, its label to names and its
 * contract digest to digests. */
static int add_winner(const struct moe_manifest *m, const json_t *w,
                      const struct moe_candidate *baseline, const char *dir,
                      struct moe_stage_plan *alone, struct moe_strv *names, json_t *digests,
                      struct moe_error *err)
{
    struct moe_candidate c;
    char *name;
    int rc;

    moe_candidate_init(&c);
    if (winner_alone(m, w, baseline, dir, &c, err) < 0) {
        moe_candidate_free(&c);
        return -1;
    }
    name = moe_candidate_label(&c);
    rc = !name || moe_strv_push(names, name) < 0 || moe_stage_plan_add(alone, &c) < 0 ? -1 : 0;
    if (rc == 0 && json_array_append(digests, json_object_get(w, "digest")) < 0)
        rc = -1; /* no digest (a winner record without one) or out of memory */
    if (rc < 0)
        moe_error_set(err, "winner %s: out of memory, or a record without a digest",
                      name ? name : "?");
    free(name);
    moe_candidate_free(&c);
    return rc;
}

/* Each recorded winner (sealed, traced to its sealed retune run:
 * moe_contract_load_winners) alone, in file name order; 0 or -1. */
static int collect_winners(const char *study_dir, const struct moe_candidate *baseline,
                           struct moe_stage_plan *alone, json_t *digests, struct moe_strv *names,
                           struct moe_error *err)
{
    char *dir;
    struct moe_manifest m;
    json_t *winners, *w;
    size_t i;
    int rc = 0;

    if (!(dir = moe_path_join(study_dir, MOE_STUDY_WINNERS))) {
        moe_error_at(err, study_dir, 0, 0, "out of memory");
        return -1;
    }
    if (moe_manifest_load(study_dir, &m, err) < 0) {
        free(dir);
        return -1;
    }
    if (!(winners = moe_contract_load_winners(study_dir, err)))
        rc = -1;
    json_array_foreach(winners, i, w)
        if ((rc = add_winner(&m, w, baseline, dir, alone, names, digests, err)) < 0)
            break;
    if (rc == 0 && alone->n == 0) {
        moe_error_set(err, "%s: no winner recorded (moeflow report STUDY --stage retune "
                      "--record-winners)", dir);
        rc = -1;
    }
    moe_manifest_free(&m);
    json_decref(winners);
    free(dir);
    return rc;
}

/* The combination's own fields: its merged arguments and contract, its
 * digest as its id, and the winners it joins as its value. */
static int name_combination(struct moe_candidate *combo, const struct opts *args,
                            json_t *contract, const struct moe_strv *names, const char *digest,
                            struct moe_error *err)
{
    json_t *value = json_array();
    struct moe_jb b;

    moe_jb_init(&b, err);
    for (size_t i = 0; i < names->n; i++)
        moe_jb_append(&b, value, json_string(names->v[i]));
    if (!(value = moe_jb_done(&b, value))) {
        moe_jb_within(&b, "combination value");
        return -1;
    }
    json_decref(combo->value);
    json_decref(combo->contract);
    combo->value = value;
    combo->contract = json_incref(contract);
    moe_strv_free(&combo->argv);
    if (argv_of(args, &combo->argv) < 0 || moe_candidate_set(&combo->id, digest) < 0 ||
        moe_candidate_set(&combo->variable, "combination") < 0 ||
        moe_candidate_set(&combo->note, "the recorded winners together, measured as one run") < 0)
        return -1;
    return 0;
}

/* Claims one variable's change by who (entry NULL: dropped; name_of: the
 * entry naming it) and applies it to env. */
static int env_change(struct moe_strv *env, const char *name_of, const char *entry,
                      struct claims *claims, const char *who, struct moe_error *err)
{
    struct moe_strv words = { 0 };
    /* whole: a cut key would make two long names one claim */
    char *key = moe_strdup_printf("environment variable %.*s", (int)strcspn(name_of, "="),
                                  name_of);
    long i;
    int rc;

    if (entry)
        moe_strv_push(&words, entry);
    if (!key || words.oom) {
        moe_error_set(err, "out of memory");
        rc = -1;
    } else
        rc = claim(claims, key, entry ? &words : NULL, who, err);
    moe_strv_free(&words);
    free(key);
    if (rc < 0)
        return -1;
    if (entry)
        return moe_strv_env_set(env, entry);
    if ((i = moe_strv_env_find(env, name_of)) >= 0)
        moe_strv_remove(env, (size_t)i);
    return 0;
}

/* One winner's changes of the baseline's environment (a variable set,
 * changed or dropped) into the combination's: it runs as each winner did
 * (ep_overlap's CUDA_DEVICE_MAX_CONNECTIONS, CUDA graphs'
 * NCCL_GRAPH_REGISTER=0); two winners changing one variable differently
 * cannot be combined. */
static int merge_env(struct moe_strv *combo, const struct moe_strv *base,
                     const struct moe_strv *winner, struct claims *claims, const char *who,
                     struct moe_error *err)
{
    for (size_t i = 0; i < winner->n; i++) {
        long b = moe_strv_env_find(base, winner->v[i]);

        if ((b < 0 || strcmp(base->v[b], winner->v[i]) != 0) &&
            env_change(combo, winner->v[i], winner->v[i], claims, who, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < base->n; i++)
        if (moe_strv_env_find(winner, base->v[i]) < 0 &&
            env_change(combo, base->v[i], NULL, claims, who, err) < 0)
            return -1;
    return 0;
}

/* The winners together as one run: each one's changes to the baseline's
 * options, environment and contract, refused where two disagree. */
static int combination(const struct moe_candidate *baseline, const struct moe_stage_plan *alone,
                       const struct moe_strv *names, json_t *digests,
                       struct moe_candidate *combo, struct moe_error *err)
{
    struct opts bopts = { 0 }, copts = { 0 };
    struct claims args = { 0 };
    json_t *contract = json_deep_copy(baseline->contract), *cch = json_object();
    char digest[MOE_SHA256_HEX_LEN + 1];
    int rc = moe_candidate_copy(combo, baseline) | opts_of(&baseline->argv, &bopts) |
             opts_of(&baseline->argv, &copts);

    for (size_t i = 0; i < alone->n && rc == 0; i++) {
        struct opts wopts;
        const struct moe_candidate *w = &alone->cands[i];

        if ((rc = opts_of(&w->argv, &wopts)) == 0)
            rc = merge_args(&copts, &bopts, &wopts, &args, names->v[i], err);
        if (rc == 0)
            rc = merge_env(&combo->env, &baseline->env, &w->env, &args, names->v[i], err);
        if (rc == 0)
            rc = merge_contract(contract, baseline->contract, w->contract, cch, names->v[i], err);
        opts_free(&wopts);
    }
    if (rc == 0) {
        struct moe_jb b;
        json_t *v = json_object();

        moe_jb_init(&b, err);
        moe_jb_copy(&b, v, MOE_CONTRACT_COMBINATION, digests);
        moe_jb_set(&b, contract, MOE_CONTRACT_VALIDATION, moe_jb_done(&b, v));
        rc = b.failed ? -1 : 0;
    }
    if (rc == 0)
        rc = moe_contract_digest(contract, digest, err);
    if (rc == 0)
        rc = name_combination(combo, &copts, contract, names, digest, err);
    opts_free(&bopts);
    opts_free(&copts);
    claims_free(&args);
    json_decref(contract);
    json_decref(cch);
    return rc;
}

int moe_validate_from_winners(const char *study_dir, const struct moe_candidate *baseline,
                              struct moe_stage_plan *out, struct moe_error *err)
{
    struct moe_stage_plan alone = { .stage = MOE_STAGE_VALIDATE };
    struct moe_strv names = { 0 };
    json_t *digests = json_array();
    struct moe_candidate combo;
    int rc = collect_winners(study_dir, baseline, &alone, digests, &names, err);

    moe_candidate_init(&combo);
    if (rc == 0)
        rc = moe_stage_plan_add(out, baseline);
    for (size_t i = 0; i < alone.n && rc == 0; i++)
        rc = moe_stage_plan_add(out, &alone.cands[i]);
    if (rc == 0 && alone.n > 1 && (rc = combination(baseline, &alone, &names, digests, &combo,
                                                    err)) == 0)
        rc = moe_stage_plan_add(out, &combo);
    moe_candidate_free(&combo);
    moe_stage_plan_free(&alone);
    moe_strv_free(&names);
    json_decref(digests);
    return rc;
}

int moe_validate_candidates(const struct moe_study *study, const char *study_dir,
                            struct moe_stage_plan *out, struct moe_error *err)
{
    struct moe_stage_plan base;
    int rc;

    memset(out, 0, sizeof(*out));
    out->stage = MOE_STAGE_VALIDATE;
    if (moe_candidates_build(study, MOE_STAGE_VALIDATE, &base, err) < 0)
        return -1;
    rc = moe_candidates_render(study, &base, err);
    /* a refused baseline leaves nothing to validate: gen's check of the
     * study says why */
    if (rc == 0 && base.n)
        rc = moe_validate_from_winners(study_dir, &base.cands[0], out, err);
    if (rc == 0 && base.n)
        rc = moe_validate_add_twins(study, out, err);
    moe_stage_plan_free(&base);
    if (rc < 0)
        moe_stage_plan_free(out);
    return rc;
}
