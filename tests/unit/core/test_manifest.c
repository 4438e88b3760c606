/* manifest.json's numbers and keys (core/manifest.h): every number that
 * reaches the file either follows json_build.h's non-finite rule or cannot
 * be non-finite because its reader refuses it, and a value that cannot be
 * made fails the whole document instead of leaving its key out. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "core/json_build.h"
#include "core/manifest.h"
#include "core/strbuf.h"
#include "study/study.h"
#include "unit.h"

/* A fit candidate as the generator makes one: every field set. */
static void fit_candidate(struct moe_candidate *c, double predicted_mib)
{
    moe_candidate_init(c);
    c->stage = MOE_STAGE_FIT;
    assert_int_equal(moe_candidate_set(&c->variable, "layout"), 0);
    assert_int_equal(moe_candidate_set(&c->label, "training-equivalent"), 0);
    assert_int_equal(moe_candidate_set(&c->bottleneck, "memory"), 0);
    assert_int_equal(moe_candidate_set(&c->note, "rank 0"), 0);
    assert_int_equal(moe_candidate_set(&c->id, "ab12"), 0);
    assert_int_equal(moe_strv_push(&c->argv, "--tensor-model-parallel-size"), 0);
    assert_int_equal(moe_strv_push(&c->argv, "2"), 0);
    assert_int_equal(moe_strv_push(&c->env, "NCCL_DEBUG=WARN"), 0);
    c->value = json_string("tp=2");
    c->contract = json_pack("{s:{s:f}}", "workload", "capacity_factor", 1.25);
    c->nodes = 1, c->tasks_per_node = 2, c->world_size = 2, c->rank = 0;
    c->predicted_mib = predicted_mib;
}

/* predicted_mib, the one real number the writer makes: finite as it is,
 * NaN ("no model") left out as it always was, an infinity null and named
 * under the candidate's "non_finite", never a candidate without the key. */
static void predicted_mib_by_the_rule(void **state)
{
    static const struct {
        double v;
        const char *name; /* NULL: finite or none */
    } cases[] = { { 8843.7, NULL }, { NAN, NULL }, { INFINITY, "inf" }, { -INFINITY, "-inf" } };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct moe_candidate c;
        json_t *o, *mib, *nf;

        fit_candidate(&c, cases[i].v);
        o = moe_candidate_json(&c, false, NULL);
        assert_non_null(o);
        mib = json_object_get(o, "predicted_mib");
        nf = json_object_get(o, MOE_JSON_NON_FINITE);
        if (isnan(cases[i].v)) {
            assert_null(mib);
            assert_null(nf);
        } else if (!cases[i].name) {
            assert_true(json_real_value(mib) == cases[i].v);
            assert_null(nf);
        } else {
            assert_true(json_is_null(mib));
            assert_string_equal(json_string_value(json_object_get(nf, "predicted_mib")),
                                cases[i].name);
        }
        /* every other key is there whatever predicted_mib is */
        assert_string_equal(json_string_value(json_object_get(o, "id")), "ab12");
        assert_int_equal(json_array_size(json_object_get(o, "argv")), 2);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(o, "env"), "NCCL_DEBUG")), "WARN");
        json_decref(o);
        moe_candidate_free(&c);
    }
}

/* The id hashes no model: an infinite prediction leaves it as a finite
 * one has it. */
static void id_ignores_the_model(void **state)
{
    struct moe_candidate a, b;

    (void)state;
    fit_candidate(&a, 1024.0);
    fit_candidate(&b, INFINITY);
    assert_int_equal(moe_candidate_hash(&a), 0);
    assert_int_equal(moe_candidate_hash(&b), 0);
    assert_string_equal(a.id, b.id);
    moe_candidate_free(&a);
    moe_candidate_free(&b);
}

/* The whole file: an infinite predicted_mib is written as null with its
 * name, and reads back as "no model" (NaN), not as a number. */
static void through_the_file(void **state)
{
    struct moe_candidate c, back;
    struct moe_chunk ch = { .offset = 0, .count = 1, .array = "0", .args = "", .sbatch = "sbatch" };
    struct moe_manifest_stage st = { .stage = MOE_STAGE_FIT, .script = "fit.sbatch",
                                     .chunks = &ch, .n_chunks = 1, .n = 1 };
    json_t *stages, *doc, *read, *cand;
    char *text;

    (void)state;
    fit_candidate(&c, INFINITY);
    st.cands = &c;
    stages = json_array();
    assert_int_equal(json_array_append_new(stages, moe_manifest_stage_json(&st, NULL)), 0);
    doc = moe_manifest_json("t", "s.yaml", "h", 1, stages, NULL);
    assert_non_null(doc);
    text = moe_manifest_text(doc);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"predicted_mib\": null"));
    assert_non_null(strstr(text, "\"predicted_mib\": \"inf\""));
    read = json_loads(text, 0, NULL);
    assert_non_null(read);
    cand = json_array_get(json_object_get(moe_manifest_entry(read, MOE_STAGE_FIT), "candidates"),
                          0);
    assert_int_equal(moe_candidate_from_json(cand, &back), 0);
    assert_true(isnan(back.predicted_mib));
    assert_string_equal(back.id, "ab12");
    moe_candidate_free(&back);
    json_decref(read);
    free(text);
    json_decref(doc);
    json_decref(stages);
    moe_candidate_free(&c);
}

/* A value that cannot be made (a string that is not UTF-8, an environment
 * entry that is not NAME=value, no stages) fails the candidate, its stage
 * and the index: NULL, never a document without the key. */
static void a_failure_is_no_missing_key(void **state)
{
    struct moe_candidate c;
    struct moe_skip skip = { .variable = "mbs", .reason = "refused \xff" };
    struct moe_manifest_stage st = { .stage = MOE_STAGE_FIT, .script = "fit.sbatch", .n = 1 };
    json_t *stages = json_array();
    struct moe_error e = { 0 };

    (void)state;
    fit_candidate(&c, 1.0);
    assert_int_equal(moe_candidate_set(&c.note, "cut \xff here"), 0);
    assert_null(moe_candidate_json(&c, false, &e));
    assert_non_null(strstr(e.text, "note"));
    assert_int_equal(moe_candidate_hash(&c), -1);
    st.cands = &c;
    assert_null(moe_manifest_stage_json(&st, &e));
    assert_non_null(strstr(e.text, "candidates[0].note"));
    moe_candidate_free(&c);

    fit_candidate(&c, 1.0);
    assert_int_equal(moe_strv_push(&c.env, "NO_VALUE"), 0); /* not NAME=value */
    assert_null(moe_candidate_json(&c, false, &e));
    assert_non_null(strstr(e.text, "env"));
    moe_candidate_free(&c);

    fit_candidate(&c, 1.0);
    st.cands = &c;
    st.skipped = &skip;
    st.n_skipped = 1; /* a skip whose reason is not UTF-8 */
    assert_null(moe_manifest_stage_json(&st, &e));
    assert_non_null(strstr(e.text, "skipped[0].reason"));
    assert_null(moe_manifest_json("t", "s.yaml", "h", 1, NULL, &e));
    assert_non_null(strstr(e.text, "stages"));
    assert_null(moe_manifest_json("t", NULL, "h", 1, stages, &e));
    assert_non_null(strstr(e.text, "study"));
    assert_int_equal(moe_manifest_put_stage(stages, NULL), -1);
    json_decref(stages);
    moe_candidate_free(&c);
}

/* The other numbers of the file are integers (nodes, ranks, chunk
 * offsets) or JSON the study gave (a candidate's value and contract), and
 * Jansson holds no non-finite real; the study's numbers are refused at its
 * reader, by file, line and key, so none reaches a contract.  Fed through
 * the reader the generator uses (moe_study_load_text). */
static const char study_head[] = "name: tiny\n"
                                 "model: {num_layers: 4, hidden: 512, ffn_hidden: 2048,"
                                 " num_heads: 8, num_query_groups: 4, vocab: 32000,"
                                 " num_experts: 8, moe_ffn_hidden: 1024, topk: 2}\n"
                                 "software: {megatron: core-0.19, transformer_engine: '2.9'}\n"
                                 "cluster:\n"
                                 "  gpu: h100\n"
                                 "  gpus_per_node: 2\n"
                                 "  nodes: 1\n"
                                 "  time_limit: 00:10:00\n"
                                 "  launcher: {command: python pretrain_gpt.py}\n";

static void study_numbers_refused_at_the_reader(void **state)
{
    static const char *const spellings[] = { ".inf", "-.inf", ".nan", "inf", "nan", "1e999" };
    static const struct {
        const char *section, *key, *path;
    } fields[] = {
        { "cluster", "achievable_tflops_bf16", "cluster.achievable_tflops_bf16" },
        { "workload", "capacity_factor", "workload.capacity_factor" },
    };

    (void)state;
    for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
        for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
            struct moe_study s;
            struct moe_error err;
            char *text;
            int rc;

            if (strcmp(fields[f].section, "cluster") == 0)
                text = moe_strdup_printf("%s  %s: %s\nworkload: {seq_len: 1024, mbs: 1, gbs: 8}\n",
                                       study_head, fields[f].key, spellings[i]);
            else
                text = moe_strdup_printf("%sworkload: {seq_len: 1024, mbs: 1, gbs: 8, %s: %s}\n",
                                       study_head, fields[f].key, spellings[i]);
            moe_error_clear(&err);
            rc = moe_study_load_text(&s, "inf.yaml", text, strlen(text), &err);
            if (rc == 0)
                fail_msg("%s: %s accepted", fields[f].path, spellings[i]);
            moe_study_free(&s);
            assert_string_equal(err.source, "inf.yaml");
            assert_true(err.line > 0);
            /* the number check's own refusal ("expected a number", "not a
             * finite number"), not a later rule's about the study */
            if (!strstr(err.text, fields[f].path) || !strstr(err.text, "number"))
                fail_msg("%s = %s: the refusal does not name the field and the number: %s",
                         fields[f].path, spellings[i], err.text);
            free(text);
        }
    }
}

/* moeflow run's chunks come from the reader, which names the key of the
 * first chunk it cannot take: missing, of the wrong type, out of range or
 * too long for struct moe_chunk. */
static const char *chunks_error(const char *chunk, struct moe_error *err)
{
    char dir[] = "/tmp/test_manifest.XXXXXX", *path, *text;
    struct moe_manifest m;
    struct moe_chunk *ch = NULL;
    size_t n = 99;
    FILE *f;
    int rc;

    assert_non_null(mkdtemp(dir));
    path = moe_path_join(dir, "manifest.json");
    text = moe_strdup_printf(
        "{\"stages\": [{\"stage\": \"contract\", \"script\": \"c.sbatch\", \"candidates\": []},"
        " {\"stage\": \"fit\", \"script\": \"fit.sbatch\", \"candidates\": [{}, {}],"
        " \"chunks\": [{\"offset\": 0, \"count\": 1, \"array\": \"0\", \"args\": \"--array=0\","
        " \"sbatch\": \"sbatch --array=0 fit.sbatch\"}, %s]}]}", chunk);
    assert_non_null(path);
    assert_non_null(text);
    assert_non_null(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
    assert_int_equal(moe_manifest_load(dir, &m, err), 0);
    rc = moe_manifest_stage_chunks(&m, MOE_STAGE_FIT, &ch, &n, err);
    if (rc == 0) {
        assert_int_equal(n, 2);
        assert_int_equal(ch[1].offset, 1);
        assert_int_equal(ch[1].count, 1);
        assert_string_equal(ch[1].array, "0");
        assert_string_equal(ch[0].sbatch, "sbatch --array=0 fit.sbatch");
    } else {
        assert_null(ch);
        assert_int_equal(n, 0);
        assert_non_null(strstr(err->source, "manifest.json"));
    }
    free(ch);
    moe_manifest_free(&m);
    unlink(path);
    rmdir(dir);
    free(path);
    free(text);
    return rc == 0 ? NULL : err->text;
}

static void stage_chunks_name_the_key(void **state)
{
    static const struct {
        const char *chunk, *error; /* NULL: read */
    } cases[] = {
        { "{\"offset\": 1, \"count\": 1, \"array\": \"0\", \"args\": \"\", \"sbatch\": \"s\"}",
          NULL },
        { "{\"count\": 1, \"array\": \"0\", \"args\": \"\", \"sbatch\": \"s\"}",
          "stages[1].chunks[1].offset: missing" },
        { "{\"offset\": 1, \"count\": \"1\", \"array\": \"0\", \"args\": \"\", \"sbatch\": \"s\"}",
          "stages[1].chunks[1].count: not an integer" },
        { "{\"offset\": 1, \"count\": 1.5, \"array\": \"0\", \"args\": \"\", \"sbatch\": \"s\"}",
          "stages[1].chunks[1].count: not an integer" },
        { "{\"offset\": 4294967297, \"count\": 1, \"array\": \"0\", \"args\": \"\", "
          "\"sbatch\": \"s\"}",
          "stages[1].chunks[1].offset: 4294967297 is out of range" },
        { "{\"offset\": 1, \"count\": 1, \"array\": 0, \"args\": \"\", \"sbatch\": \"s\"}",
          "stages[1].chunks[1].array: not a string" },
        { "{\"offset\": 1, \"count\": 1, \"array\": \"0\", \"sbatch\": \"s\"}",
          "stages[1].chunks[1].args: missing" },
        { "{\"offset\": 1, \"count\": 1, \"array\": \"0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,0-0,"
          "0-0,0-0,0-0,0-0\", \"args\": \"\", \"sbatch\": \"s\"}",
          "stages[1].chunks[1].array: longer than the 47 bytes" },
        { "7", "stages[1].chunks[1]: not an object" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct moe_error err = { 0 };
        const char *got = chunks_error(cases[i].chunk, &err);

        if (!cases[i].error ? got != NULL : !got || !strstr(got, cases[i].error))
            fail_msg("%s: expected %s, got %s", cases[i].chunk,
                     cases[i].error ? cases[i].error : "it read", got ? got : "it read");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(predicted_mib_by_the_rule),
        cmocka_unit_test(id_ignores_the_model),
        cmocka_unit_test(through_the_file),
        cmocka_unit_test(a_failure_is_no_missing_key),
        cmocka_unit_test(stage_chunks_name_the_key),
        cmocka_unit_test(study_numbers_refused_at_the_reader),
    };
    return MOE_RUN_TESTS(tests);
}
