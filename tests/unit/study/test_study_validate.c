/* The validate stage from recorded winners (lib/study/study_validate.c), on a
 * study directory built here: winners traced to their retune candidates
 * through sealed run records; each alone over the validate steps; their
 * combination applies every winner's argument and contract changes and
 * names the winners; two winners that set the same argument differently are
 * refused, and so is a study with no winner. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "contract/contract.h"
#include "core/json_canon.h"
#include "study/study_validate.h"
#include "study/study_validate_internal.h"
#include "unit.h"

static char study[64];

static const char *base_contract =
    "{\"environment\":{\"megatron\":\"core_v0.19.0\"},\"hardware\":{\"gpus\":2},"
    "\"workload\":{\"mbs\":1},\"semantics\":{\"routing\":\"dropless\"},\"parallel\":{\"ep\":2},"
    "\"tuning\":{\"ep_overlap\":false,\"precision\":\"bf16\"},\"timing\":{\"window\":[41,50]}}";

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A retune candidate as manifest.json holds it: the baseline with one
 * tuning field, its flags and one variable of its own environment. */
static json_t *candidate(const char *id, const char *var, const char *val, const char *field,
                         json_t *fval, const char *const *flags)
{
    json_t *c = json_loads(base_contract, 0, NULL), *argv, *env = json_pack("{s:s}", "A", "1");

    json_object_set_new(json_object_get(c, "tuning"), field, fval);
    argv = json_pack("[s,s,s,s]", "--num-layers", "4", "--train-iters", "8");
    for (const char *const *f = flags; f && *f; f++)
        json_array_append_new(argv, json_string(*f));
    if (strcmp(var, "ep_overlap") == 0)
        json_object_set_new(env, "CUDA_DEVICE_MAX_CONNECTIONS", json_string("32"));
    else
        json_object_set_new(env, "B", json_string("2"));
    return json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:o}", "id", id, "stage", "retune", "variable", var,
                     "value", val, "argv", argv, "env", env, "contract", c);
}

/* The validate baseline: --train-iters 50, A=1, the base contract. */
static void baseline(struct moe_candidate *b)
{
    static const char *const argv[] = { "--num-layers", "4", "--train-iters", "50" };

    moe_candidate_init(b);
    b->stage = MOE_STAGE_VALIDATE;
    moe_candidate_set(&b->id, "base");
    moe_candidate_set(&b->variable, "baseline");
    b->value = json_string("baseline");
    for (size_t i = 0; i < 4; i++)
        moe_strv_push(&b->argv, argv[i]);
    moe_strv_push(&b->env, "A=1");
    b->contract = json_loads(base_contract, 0, NULL);
}

/* The winners of study dir for base, into a fresh plan; its return code. */
static int winners(const struct moe_candidate *base, struct moe_stage_plan *out,
                   struct moe_error *e)
{
    memset(out, 0, sizeof(*out));
    out->stage = MOE_STAGE_VALIDATE;
    moe_error_clear(e);
    return moe_validate_from_winners(study, base, out, e);
}

/* argv (or env) as one compact JSON list, for comparing with a literal. */
static char *words(const struct moe_strv *l)
{
    json_t *a = json_array();
    char *text;

    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(a, json_string(l->v[i]));
    text = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return text;
}

/* dir/name holding doc's canonical text, and dir/name.sha256 its seal. */
static void write_sealed(const char *dir, const char *name, const json_t *doc)
{
    char path[512], digest[65], seal[256], *canon = moe_json_canonical(doc);

    assert_int_equal(moe_contract_digest(doc, digest, NULL), 0);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    write_text(path, canon);
    snprintf(seal, sizeof(seal), "%s  %s\n", digest, name);
    snprintf(path, sizeof(path), "%s/%s.sha256", dir, name);
    write_text(path, seal);
    free(canon);
}

/* runs/<run>/contract.json, sealed, of a run of stage for candidate c. */
static void run_record(const char *run, const char *stage, const json_t *c)
{
    json_t *doc = json_deep_copy(json_object_get(c, "contract"));
    char path[256];

    json_object_set_new(doc, "run", json_pack("{s:s,s:s,s:s}", "stage", stage, "candidate",
                                              json_string_value(json_object_get(c, "id")), "id",
                                              run));
    snprintf(path, sizeof(path), "%s/runs/%s", study, run);
    mkdir(path, 0755);
    write_sealed(path, "contract.json", doc);
    json_decref(doc);
    /* what contract verify judges a record by (lib/contract, rule 3): the
     * candidate's declared contract and the frozen baseline */
    snprintf(path, sizeof(path), "%s/contracts", study);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/contracts/%s.json", study,
             json_string_value(json_object_get(c, "id")));
    assert_int_equal(json_dump_file(json_object_get(c, "contract"), path, 0), 0);
    snprintf(path, sizeof(path), "%s/contract", study);
    if (mkdir(path, 0755) == 0) {
        doc = json_loads(base_contract, 0, NULL);
        write_sealed(path, "frozen.json", doc);
        json_decref(doc);
    }
}

/* winners/<digest>.json, sealed, as moeflow contract winner writes it. */
static void winner_file(const json_t *c)
{
    const json_t *doc = json_object_get(c, "contract");
    char dir[256], name[80], digest[65];

    assert_int_equal(moe_contract_digest(doc, digest, NULL), 0);
    snprintf(dir, sizeof(dir), "%.64s/winners", study);
    snprintf(name, sizeof(name), "%s.json", digest);
    write_sealed(dir, name, doc);
}

/* The sealed retune run of candidate c, recorded as a winner. */
static void record(const char *run, const json_t *c)
{
    run_record(run, "retune", c);
    winner_file(c);
}

static void winners_alone_and_combined(void **state)
{
    static const char *const ovl[] = { "--overlap-moe-expert-parallel-comm", NULL };
    static const char *const fp8[] = { "--fp8-format", "hybrid", NULL };
    static const char *const fp8b[] = { "--fp8-format", "e4m3", NULL };
    static const char *const gc[] = { "--manual-gc", NULL };
    json_t *a = candidate("aaaa", "ep_overlap", "true", "ep_overlap", json_true(), ovl);
    json_t *b = candidate("bbbb", "precision", "fp8-delayed", "precision", json_string("fp8"), fp8);
    json_t *d = candidate("dddd", "precision", "fp8-e4m3", "precision", json_string("e4m3"), fp8b);
    json_t *g = candidate("gggg", "manual_gc", "true", "manual_gc", json_true(), gc);
    json_t *manifest;
    struct moe_candidate base;
    struct moe_stage_plan out;
    const struct moe_candidate *combo;
    struct moe_error e;
    char path[256], *dump;

    (void)state;
    json_object_set_new(json_object_get(g, "env"), "B", json_string("3"));
    snprintf(study, sizeof(study), "/tmp/moe-validate.XXXXXX");
    assert_non_null(mkdtemp(study));
    snprintf(path, sizeof(path), "%s/runs", study);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/winners", study);
    mkdir(path, 0755);
    manifest = json_pack("{s:[{s:s,s:[O,O,O,O]}]}", "stages", "stage", "retune", "candidates", a,
                         b, d, g);
    snprintf(path, sizeof(path), "%s/manifest.json", study);
    assert_int_equal(json_dump_file(manifest, path, 0), 0);
    baseline(&base);

    assert_int_equal(winners(&base, &out, &e), -1);
    assert_non_null(strstr(e.text, "no winner recorded"));
    moe_stage_plan_free(&out);

    record("7_0", a);
    record("7_1", b);
    if (winners(&base, &out, &e) != 0)
        fail_msg("%s", e.text);
    assert_int_equal(out.n, 4);
    assert_string_equal(out.cands[0].id, "base");
    /* alone: the retune candidate's id and contract, over the validate steps */
    for (size_t i = 1; i <= 2; i++) {
        const struct moe_candidate *w = &out.cands[i];

        assert_true(strcmp(w->id, "aaaa") == 0 || strcmp(w->id, "bbbb") == 0);
        assert_int_equal(w->stage, MOE_STAGE_VALIDATE);
        dump = words(&w->argv);
        assert_non_null(strstr(dump, "\"--train-iters\",\"50\""));
        free(dump);
    }
    combo = &out.cands[3];
    assert_string_equal(combo->variable, "combination");
    dump = words(&combo->argv);
    print_message("# combination argv %s\n", dump);
    assert_string_equal(dump, "[\"--num-layers\",\"4\",\"--train-iters\",\"50\","
                              "\"--overlap-moe-expert-parallel-comm\",\"--fp8-format\","
                              "\"hybrid\"]");
    free(dump);
    /* the combination runs as each winner ran: the baseline's environment
     * with every winner's changes (ep_overlap's CUDA_DEVICE_MAX_CONNECTIONS,
     * the other's B) */
    dump = words(&combo->env);
    print_message("# combination env %s\n", dump);
    assert_non_null(strstr(dump, "\"A=1\""));
    assert_non_null(strstr(dump, "\"CUDA_DEVICE_MAX_CONNECTIONS=32\""));
    assert_non_null(strstr(dump, "\"B=2\""));
    assert_int_equal(combo->env.n, 3);
    free(dump);
    {
        const json_t *c = combo->contract;
        char digest[65];

        assert_true(json_is_true(json_object_get(json_object_get(c, "tuning"), "ep_overlap")));
        assert_string_equal(json_string_value(json_object_get(json_object_get(c, "tuning"),
                                                              "precision")), "fp8");
        assert_int_equal(json_array_size(json_object_get(json_object_get(c, "validation"),
                                                         "combination")), 2);
        assert_int_equal(moe_contract_digest(c, digest, NULL), 0);
        assert_string_equal(combo->id, digest);
    }
    moe_stage_plan_free(&out);

    /* a second precision winner: two winners set --fp8-format differently */
    record("7_2", d);
    assert_int_equal(winners(&base, &out, &e), -1);
    print_message("# %s\n", e.text);
    assert_non_null(strstr(e.text, "cannot be combined"));
    assert_non_null(strstr(e.text, "--fp8-format"));
    moe_stage_plan_free(&out);

    /* two winners that set one environment variable differently */
    snprintf(path, sizeof(path), "rm -rf %s/winners/* %s/runs/*", study, study);
    assert_int_equal(system(path), 0);
    record("7_0", b);
    record("7_3", g);
    assert_int_equal(winners(&base, &out, &e), -1);
    print_message("# %s\n", e.text);
    assert_non_null(strstr(e.text, "cannot be combined"));
    assert_non_null(strstr(e.text, "environment variable B"));
    moe_stage_plan_free(&out);

    /* a winner whose contract no sealed run record has: refused, by name */
    snprintf(path, sizeof(path), "rm -f %s/winners/*", study);
    assert_int_equal(system(path), 0);
    winner_file(a);
    snprintf(path, sizeof(path), "rm -rf %s/runs/7_0", study);
    assert_int_equal(system(path), 0);
    assert_int_equal(winners(&base, &out, &e), -1);
    print_message("# %s\n", e.text);
    assert_non_null(strstr(e.text, ".json: no sealed retune run record under runs/ that "
                                   "contract verify accepts has this contract"));
    moe_stage_plan_free(&out);

    snprintf(path, sizeof(path), "rm -rf '%s'", study);
    assert_int_equal(system(path), 0);
    json_decref(a);
    json_decref(b);
    json_decref(d);
    json_decref(g);
    moe_candidate_free(&base);
    json_decref(manifest);
}

/* Issue 21: gen --winners accepted any file named after a digest.  A
 * winner must hold that digest's canonical contract, match its seal, and
 * be the contract of a sealed retune run; each foreign file is refused with
 * its own reason. */
static void foreign_files_are_not_winners(void **state)
{
    static const char *const ovl[] = { "--overlap-moe-expert-parallel-comm", NULL };
    json_t *a = candidate("aaaa", "ep_overlap", "true", "ep_overlap", json_true(), ovl);
    struct moe_candidate base;
    struct moe_stage_plan out;
    char path[1024], digest[65], name[1024];
    struct moe_error e;

    (void)state;
    baseline(&base);
    snprintf(study, sizeof(study), "/tmp/moe-validate.XXXXXX");
    assert_non_null(mkdtemp(study));
    snprintf(path, sizeof(path), "%s/runs", study);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/winners", study);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/manifest.json", study);
    write_text(path, "{\"stages\":[]}");
    assert_int_equal(moe_contract_digest(json_object_get(a, "contract"), digest, NULL), 0);
    snprintf(name, sizeof(name), "%s/winners/%s.json", study, digest);

    /* an empty file named after the digest of a sealed retune run */
    run_record("7_0", "retune", a);
    write_text(name, "");
    assert_int_equal(winners(&base, &out, &e), -1);
    moe_stage_plan_free(&out);
    assert_non_null(strstr(e.text, "not valid JSON"));

    /* the right contract without its seal */
    winner_file(a);
    snprintf(path, sizeof(path), "%.900s.sha256", name);
    unlink(path);
    assert_int_equal(winners(&base, &out, &e), -1);
    moe_stage_plan_free(&out);
    print_message("# %s\n", e.text);
    assert_non_null(strstr(e.text, ".sha256 is missing"));

    /* sealed, but only a contract-stage run has it */
    snprintf(path, sizeof(path), "rm -rf %s/runs/7_0", study);
    assert_int_equal(system(path), 0);
    run_record("7_0", "contract", a);
    winner_file(a);
    assert_int_equal(winners(&base, &out, &e), -1);
    moe_stage_plan_free(&out);
    assert_non_null(strstr(e.text, "no sealed retune run record"));

    /* a sealed contract under another digest's name */
    snprintf(path, sizeof(path), "%s/winners/%064d.json", study, 0);
    rename(name, path);
    snprintf(name, sizeof(name), "%.900s.sha256", path);
    snprintf(path, sizeof(path), "%s/winners/%s.json.sha256", study, digest);
    rename(path, name);
    assert_int_equal(winners(&base, &out, &e), -1);
    moe_stage_plan_free(&out);
    assert_non_null(strstr(e.text, "holds a contract of another digest"));

    /* a winners/ that anyone can write is not read at all */
    snprintf(path, sizeof(path), "%s/winners", study);
    chmod(path, 0777);
    assert_int_equal(winners(&base, &out, &e), -1);
    moe_stage_plan_free(&out);
    assert_non_null(strstr(e.text, "winners is writable by others (mode 0777)"));

    snprintf(path, sizeof(path), "rm -rf '%s'", study);
    assert_int_equal(system(path), 0);
    json_decref(a);
    moe_candidate_free(&base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(winners_alone_and_combined),
        cmocka_unit_test(foreign_files_are_not_winners),
    };

    return MOE_RUN_TESTS(tests);
}
