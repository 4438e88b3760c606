/* Issue 40: the study reader reports every independent error in one pass,
 * in the order of the file, bounded; a check whose inputs are already in
 * error is skipped rather than piled on; software.transformer_engine is
 * stated, "none" reading exactly as the empty string did. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "study/study.h"
#include "study/study_internal.h"
#include "unit.h"

/* A valid study; each test appends or swaps lines. */
#define MODEL "name: t\nmodel:\n  preset: qwen3-30b-a3b\n"
#define CLUSTER "cluster:\n  nodes: 2\n"
#define WORKLOAD "workload:\n  gbs: 512\n"
#define SOFTWARE "software:\n  megatron: core-0.16\n  transformer_engine: none\n"

static int load(const char *text, struct moe_error *e)
{
    struct moe_study s;
    int rc;

    moe_error_clear(e);
    rc = moe_study_load_string(&s, "s.yaml", text, e);
    moe_study_free(&s);
    return rc;
}

static void has(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("missing \"%s\" in:\n%s", part, text);
}

static void lacks(const char *text, const char *part)
{
    if (strstr(text, part))
        fail_msg("unexpected \"%s\" in:\n%s", part, text);
}

/* Five independent errors, each of a different kind, all reported, in the
 * order of the file, each as one error would be. */
static void every_error_in_one_pass(void **state)
{
    struct moe_error e;
    char buf[sizeof(e.text) + 512];

    (void)state;
    assert_int_equal(load("name: t\nmodel:\n  preset: qwen3-30b-a3b\n  nmu_layers: 4\n"
                          "cluster:\n  nodes: two\n  gpu: h1000\n"
                          "workload:\n  precision: fp9\n"
                          "software:\n  megatron: core-0.16\n"
                          "measure:\n  screen_steps: 40\n", &e), -1);
    assert_int_equal(e.count, 7);
    moe_error_format(&e, buf, sizeof(buf));
    assert_string_equal(
        buf, "7 errors in s.yaml:\n"
             "  s.yaml:4:3: model.nmu_layers: unknown key (did you mean 'num_layers'?)\n"
             "  s.yaml:6:10: cluster.nodes: expected an integer, not 'two'\n"
             "  s.yaml:7:8: cluster.gpu: 'h1000' is not valid (did you mean 'h100'?); choose "
             "h100|h200|b200|gb200|gb300|a100\n"
             "  s.yaml:9:3: workload.gbs: is required\n"
             "  s.yaml:9:14: workload.precision: 'fp9' is not valid; choose bf16|fp8-tensorwise|"
             "fp8-delayed|fp8-blockwise|mxfp8|nvfp4\n"
             "  s.yaml:11:3: software.transformer_engine: is required: say \"none\" (Megatron's "
             "local implementation, --transformer-impl local: BF16 only, no TE CUDA graphs, no "
             "MLA, CP or MoE TP, no delayed wgrad or TP comm overlap, no layernorm or moe_act "
             "recompute) or the container's Transformer Engine version, e.g. \"2.9\" "
             "(--transformer-impl transformer_engine)\n"
             "  s.yaml:13:17: measure.screen_steps: 40: screen with 6 to 12 post-warm-up steps");
    /* the first error's place, for a caller that points at one */
    assert_int_equal(e.line, 4);
    assert_int_equal(e.column, 3);
}

/* One error reads exactly as it did before the reader went on. */
static void one_error_as_before(void **state)
{
    struct moe_error e;
    char buf[1024];

    (void)state;
    assert_int_equal(load(MODEL CLUSTER WORKLOAD SOFTWARE "baseline:\n  tp_comm_overlap: true\n",
                          &e), -1);
    assert_int_equal(e.count, 0);
    assert_string_equal(moe_error_format(&e, buf, sizeof(buf)),
                        "s.yaml:12:20: baseline.tp_comm_overlap: needs tp > 1");
}

/* A check whose input was refused does not run on the default standing in
 * for it: a bad routing is not followed by "capacity_factor applies only
 * to drop-and-pad", nor a refused ep_overlap by its dispatcher rule, nor a
 * misspelt required key by "is required". */
static void no_piling_on(void **state)
{
    struct moe_error e;

    (void)state;
    assert_int_equal(load(MODEL CLUSTER "workload:\n  gbs: 512\n  routing: drop-pad\n"
                          "  capacity_factor: 1.5\n" SOFTWARE, &e), -1);
    assert_int_equal(e.count, 0);
    has(e.text, "workload.routing: 'drop-pad' is not valid");
    assert_int_equal(load(MODEL CLUSTER WORKLOAD SOFTWARE
                          "baseline:\n  ep_overlap: yes\n  dispatcher: allgather\n", &e), -1);
    assert_int_equal(e.count, 0);
    has(e.text, "expected true or false, not 'yes'");
    assert_int_equal(load(MODEL CLUSTER "workload:\n  gsb: 512\n" SOFTWARE, &e), -1);
    assert_int_equal(e.count, 0);
    has(e.text, "workload.gsb: unknown key (did you mean 'gbs'?)");
    /* a key that cannot be read could be any: nothing is then "required" */
    assert_int_equal(load("name: t\n\x1b: 1\n", &e), -1);
    assert_int_equal(e.count, 0);
    lacks(e.text, "is required");
    /* a preset refused for its bytes named the model: no size is "required" */
    assert_int_equal(load("name: t\nmodel:\n  preset: \"a\\tb\"\n" CLUSTER WORKLOAD SOFTWARE,
                          &e), -1);
    assert_int_equal(e.count, 0);
    has(e.text, "model.preset: holds a tab");
    lacks(e.text, "is required");
    /* the layout rules read the model: an unknown preset skips them */
    assert_int_equal(load("name: t\nmodel:\n  preset: nope\n" CLUSTER WORKLOAD SOFTWARE
                          "baseline:\n  tp: 3\n", &e), -1);
    assert_int_equal(e.count, 0);
    has(e.text, "unknown preset 'nope'");
    /* ... while independent rules of one section each speak */
    assert_int_equal(load(MODEL CLUSTER WORKLOAD SOFTWARE
                          "baseline:\n  tp_comm_overlap: true\n  delay_wgrad: true\n", &e), -1);
    assert_int_equal(e.count, 2);
    has(e.text, "baseline.tp_comm_overlap: needs tp > 1");
    has(e.text, "baseline.delay_wgrad: delayed wgrad needs ep_overlap: true");
}

/* A hostile file's errors are bounded: the first MOE_ERROR_LIST_MAX, then
 * "... N more", and the text fits its buffer. */
static void errors_are_capped(void **state)
{
    size_t len = 64 * 1024, off;
    char *text = malloc(len);
    struct moe_error e;

    (void)state;
    assert_non_null(text);
    off = (size_t)snprintf(text, len, "%s", MODEL CLUSTER WORKLOAD SOFTWARE "measure:\n");
    for (int i = 0; i < 200; i++)
        off += (size_t)snprintf(text + off, len - off, "  zz%03d: 1\n", i);
    assert_int_equal(load(text, &e), -1);
    free(text);
    assert_int_equal(e.count, 200);
    has(e.text, "200 errors in s.yaml:\n  s.yaml:12:3: measure.zz000: unknown key\n");
    has(e.text, "more");
    assert_true(strlen(e.text) < sizeof(e.text));
    /* at most MOE_ERROR_LIST_MAX lines name an error */
    {
        int lines = 0;

        for (const char *p = e.text; (p = strstr(p, "unknown key")); p++)
            lines++;
        assert_true(lines > 10 && lines <= MOE_ERROR_LIST_MAX);
    }
}

/* The list alone: one error is itself; several are sorted by place, those
 * without a line last, the first's place kept. */
static void error_list(void **state)
{
    struct moe_error_list *l = calloc(1, sizeof(*l));
    struct moe_error e, out;

    (void)state;
    assert_non_null(l);
    moe_error_clear(&out);
    assert_int_equal(moe_error_list_take(l, &out), 0);
    moe_error_at(&e, "f", 0, 0, "b: missing");
    moe_error_list_add(l, &e);
    assert_int_equal(moe_error_list_take(l, &out), 1);
    assert_int_equal(out.count, 0);
    assert_string_equal(out.text, "b: missing");
    moe_error_at(&e, "f", 3, 2, "c: late");
    moe_error_list_add(l, &e);
    moe_error_at(&e, "f", 1, 9, "a: early");
    moe_error_list_add(l, &e);
    assert_int_equal(moe_error_list_take(l, &out), 3);
    assert_string_equal(out.text, "3 errors in f:\n  f:1:9: a: early\n  f:3:2: c: late\n"
                                  "  f: b: missing");
    assert_int_equal(out.line, 1);
    free(l);
}

/* "none" is the empty string of before: no TE, the canonical JSON's "",
 * so that the hash of a study that left it empty does not move. */
static void te_none_is_the_old_empty(void **state)
{
    struct moe_study s;
    struct moe_error e;

    (void)state;
    moe_error_clear(&e);
    assert_int_equal(moe_study_load_string(&s, "s.yaml", MODEL CLUSTER WORKLOAD SOFTWARE, &e), 0);
    assert_string_equal(s.software.transformer_engine, "");
    assert_false(moe_software_has_te(&s.software));
    assert_false(s.software.apex);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(s.json, "software"),
                                          "transformer_engine")), "");
    moe_study_free(&s);
    assert_int_equal(moe_study_load_string(&s, "s.yaml", MODEL CLUSTER WORKLOAD
                                           "software:\n  megatron: core-0.16\n"
                                           "  transformer_engine: \"2.9\"\n", &e), 0);
    assert_true(moe_software_has_te(&s.software));
    moe_study_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_error_in_one_pass), cmocka_unit_test(one_error_as_before),
        cmocka_unit_test(no_piling_on),            cmocka_unit_test(errors_are_capped),
        cmocka_unit_test(error_list),              cmocka_unit_test(te_none_is_the_old_empty),
    };

    return MOE_RUN_TESTS(tests);
}
