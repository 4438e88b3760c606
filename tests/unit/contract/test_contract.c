/* Contract canonical form, digest, diff and every stage rule. */
#include "config.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "contract/contract.h"
#include "contract/contract_internal.h"
#include "contract/contract_diff.h"
#include "contract/contract_rules.h"
#include "contract/contract_rules_internal.h"
#include "contract/contract_store.h"
#include "core/json_canon.h"
#include "unit.h"

static const char *baseline_text =
    "{\"environment\":{\"megatron\":\"core_v0.16.0\",\"nccl\":\"2.28.9\"},"
    " \"hardware\":{\"gpu_model\":\"NVIDIA H200\",\"gpus\":16,\"gpus_per_node\":8},"
    " \"workload\":{\"model\":\"qwen3-30b-a3b\",\"seq_len\":4096,\"mbs\":1,\"gbs\":512},"
    " \"semantics\":{\"routing\":\"dropless\",\"class\":\"training-equivalent\"},"
    " \"parallel\":{\"tp\":1,\"pp\":1,\"ep\":16,\"etp\":1,\"cp\":1,\"vpp\":1,\"dp\":16,\"edp\":1},"
    " \"tuning\":{\"dispatcher\":\"alltoall\",\"dispatcher_backend\":\"none\","
    "   \"ep_overlap\":false,\"recompute_modules\":[],\"manual_gc\":false},"
    " \"timing\":{\"warmup\":10,\"window\":[41,50]},"
    " \"sources\":{\"hardware.gpu_model\":\"nvml\"}}";

static json_t *baseline(void)
{
    json_t *doc = json_loads(baseline_text, 0, NULL);
    assert_non_null(doc);
    return doc;
}

/* Sets SECTION.KEY to a JSON value given as text. */
static void put(json_t *doc, const char *section, const char *key, const char *value)
{
    json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);
    assert_non_null(v);
    json_object_set_new(json_object_get(doc, section), key, v);
}

/* Key order and number spelling do not change the canonical text or digest. */
static void canonical_is_stable(void **state)
{
    json_t *a = json_loads("{\"b\":1.0,\"a\":[1e0,0.1,-0.0,2.5e-1]}", 0, NULL);
    json_t *b = json_loads("{\"a\":[1,1e-1,0,0.25],\"b\":1}", 0, NULL);
    char *ta = moe_json_canonical(a), *tb = moe_json_canonical(b);
    char da[65], db[65];

    (void)state;
    assert_string_equal(ta, "{\"a\":[1,0.1,0,0.25],\"b\":1}");
    assert_string_equal(ta, tb);
    assert_int_equal(moe_contract_digest(a, da, NULL), 0);
    assert_int_equal(moe_contract_digest(b, db, NULL), 0);
    assert_string_equal(da, db);
    free(ta);
    free(tb);
    json_decref(a);
    json_decref(b);
}

/* SHA-256 comes from libcrypto: the FIPS 180-2 test vector for "abc". */
static void sha256_known_vector(void **state)
{
    char hex[65];

    (void)state;
    assert_int_equal(moe_sha256_hex("abc", 3, hex, NULL), 0);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

/* A missing or unknown section is named. */
static void shape_errors_name_the_section(void **state)
{
    json_t *doc = baseline();
    struct moe_error e;

    (void)state;
    assert_int_equal(moe_contract_check_shape(doc, &e), 0);
    json_object_set_new(doc, "tunning", json_object());
    assert_int_equal(moe_contract_check_shape(doc, &e), -1);
    assert_non_null(strstr(e.text, "'tunning'"));
    json_object_del(doc, "tunning");
    json_object_del(doc, "timing");
    assert_int_equal(moe_contract_check_shape(doc, &e), -1);
    assert_non_null(strstr(e.text, "'timing'"));
    json_decref(doc);
}

/* The diff lists changed leaves in path order, shows absent ones, skips sources. */
static void diff_lists_changed_leaves(void **state)
{
    json_t *a = baseline(), *b = baseline();
    struct moe_contract_diff d;
    char *text;

    (void)state;
    put(b, "tuning", "dispatcher", "\"flex\"");
    put(b, "parallel", "tp", "2.0");
    put(b, "parallel", "ep", "16.0"); /* same number, other spelling: no change */
    put(b, "tuning", "cuda_graph_scope", "[\"moe_router\"]");
    put(b, "sources", "hardware.gpu_model", "\"hwloc\"");
    assert_int_equal(moe_contract_diff(a, b, &d, NULL), 0);
    assert_int_equal(d.count, 3);
    assert_string_equal(d.items[0].path, "parallel.tp");
    assert_string_equal(d.items[1].path, "tuning.cuda_graph_scope");
    assert_null(d.items[1].frozen);
    assert_string_equal(d.items[2].path, "tuning.dispatcher");
    text = moe_contract_diff_text(&d);
    assert_string_equal(text, "parallel.tp: 1 \u2192 2\n"
                              "tuning.cuda_graph_scope: (absent) \u2192 [\"moe_router\"]\n"
                              "tuning.dispatcher: \"alltoall\" \u2192 \"flex\"\n");
    free(text);
    moe_contract_diff_free(&d);
    json_decref(a);
    json_decref(b);
}

/* Two documents whose digests differ never diff as equal, and equal ones
 * always do (issue 21: {"seq_len.x":5} and {"seq_len":{"x":5}} were "no
 * differences").  Pairs that only an ambiguous flattening confuses. */
static void diff_is_empty_exactly_when_digests_are_equal(void **state)
{
    static const char *const pairs[][2] = {
        { "{\"w\":{\"seq_len.x\":5}}", "{\"w\":{\"seq_len\":{\"x\":5}}}" },
        { "{\"w\":{\"a\\\\.b\":1}}", "{\"w\":{\"a\\\\\":{\"b\":1}}}" },
        { "{\"w\":{\"\":1}}", "{\"w\":1}" },
        { "1", "{\"\":1}" },
        { "{\"w\":{}}", "{\"w\":{\"\":{}}}" },
        { "{\"w\":{\"a\":1.0}}", "{\"w\":{\"a\":1}}" },
        { "{\"w\":{\"x.y\":{\"z\":1}}}", "{\"w\":{\"x.y\":{\"z\":1}}}" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        json_t *a = json_loads(pairs[i][0], JSON_DECODE_ANY, NULL);
        json_t *b = json_loads(pairs[i][1], JSON_DECODE_ANY, NULL);
        char da[65], db[65];
        struct moe_contract_diff d;

        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(moe_contract_digest(a, da, NULL), 0);
        assert_int_equal(moe_contract_digest(b, db, NULL), 0);
        assert_int_equal(moe_contract_diff(a, b, &d, NULL), 0);
        if ((d.count == 0) != (strcmp(da, db) == 0))
            fail_msg("%s against %s: %zu changes, digests %s", pairs[i][0], pairs[i][1],
                     d.count, strcmp(da, db) ? "differ" : "equal");
        moe_contract_diff_free(&d);
        json_decref(a);
        json_decref(b);
    }
}

/* The reproducer's two contracts: both leaves are shown, the dot inside
 * the key escaped, so the two paths read differently. */
static void diff_escapes_dots_in_keys(void **state)
{
    char pa[4096], pb[4096], *text;
    const char *src = getenv("MOEFLOW_SRCDIR");
    json_t *a, *b;
    struct moe_contract_diff d;

    (void)state;
    snprintf(pa, sizeof(pa), "%s/tests/data/hardening/contract-a.json", src ? src : "..");
    snprintf(pb, sizeof(pb), "%s/tests/data/hardening/contract-b.json", src ? src : "..");
    assert_non_null(a = moe_contract_load_plain(pa, NULL));
    assert_non_null(b = moe_contract_load_plain(pb, NULL));
    assert_int_equal(moe_contract_diff(a, b, &d, NULL), 0);
    text = moe_contract_diff_text(&d);
    assert_string_equal(text, "workload.seq_len.x: (absent) \u2192 5\n"
                              "workload.seq_len\\.x: 5 \u2192 (absent)\n");
    free(text);
    moe_contract_diff_free(&d);
    json_decref(a);
    json_decref(b);
}

/* What the diff skips (sources, run) has its own diff, for a caller that
 * must say why two digests differ. */
static void annotations_have_their_own_diff(void **state)
{
    json_t *a = baseline(), *b = baseline();
    struct moe_contract_diff d;

    (void)state;
    put(b, "sources", "hardware.gpu_model", "\"hwloc\"");
    json_object_set_new(b, "run", json_pack("{s:s}", "stage", "contract"));
    assert_int_equal(moe_contract_diff(a, b, &d, NULL), 0);
    assert_int_equal(d.count, 0);
    moe_contract_diff_free(&d);
    assert_int_equal(moe_contract_diff_annotations(a, b, &d, NULL), 0);
    assert_int_equal(d.count, 2);
    assert_string_equal(d.items[0].path, "run.stage");
    assert_string_equal(d.items[1].path, "sources.hardware\\.gpu_model");
    moe_contract_diff_free(&d);
    json_decref(a);
    json_decref(b);
}

/* An optional section must be an object as well: "profiling": 5 would be
 * one opaque leaf to the rules. */
static void optional_sections_are_objects(void **state)
{
    json_t *doc = baseline();
    struct moe_error e;

    (void)state;
    json_object_set_new(doc, "profiling", json_integer(5));
    assert_int_equal(moe_contract_check_shape(doc, &e), -1);
    assert_string_equal(e.text, "contract section 'profiling' is not an object");
    json_object_set_new(doc, "profiling", json_object());
    assert_int_equal(moe_contract_check_shape(doc, &e), 0);
    json_decref(doc);
}

static struct moe_verdict verdict_for(enum moe_stage stage, json_t *frozen, json_t *requested,
                                      json_t *winners)
{
    struct moe_contract_diff d;
    struct moe_verdict v;
    struct moe_error e;

    moe_error_clear(&e);
    assert_int_equal(moe_contract_check_stage(stage, frozen, requested, winners, &d, &v, &e), 0);
    moe_contract_diff_free(&d);
    return v;
}

#define EXPECT(stage, frozen, req, winners, ok, rule_name)                     \
    do {                                                                       \
        struct moe_verdict v_ = verdict_for(stage, frozen, req, winners);      \
        if (v_.allowed != (ok) || strcmp(v_.rule, rule_name) != 0)             \
            fail_msg("%s: allowed=%d rule=%s (%s)", #stage, v_.allowed,        \
                     v_.rule, v_.reason);                                      \
    } while (0)

/* An invariant change is refused at every stage, by the invariant rule. */
static void invariants_never_change(void **state)
{
    json_t *f = baseline(), *r = baseline();

    (void)state;
    put(r, "hardware", "gpu_model", "\"NVIDIA H100 80GB HBM3\"");
    for (int s = 0; s < MOE_STAGE_COUNT; s++)
        EXPECT((enum moe_stage)s, f, r, NULL, false, "invariant");
    json_decref(r);
    r = baseline();
    put(r, "timing", "window", "[31,40]");
    EXPECT(MOE_STAGE_RETUNE, f, r, NULL, false, "invariant");
    json_decref(f);
    json_decref(r);
}

/* contract: an unchanged re-run passes, any change fails. */
static void contract_stage(void **state)
{
    json_t *f = baseline(), *r = baseline();

    (void)state;
    EXPECT(MOE_STAGE_CONTRACT, f, r, NULL, true, "stage-scope");
    put(r, "tuning", "manual_gc", "true");
    EXPECT(MOE_STAGE_CONTRACT, f, r, NULL, false, "contract-equal");
    json_decref(f);
    json_decref(r);
}

/* A value outside the stage enum is refused with an error, not judged by
 * the contract stage's rule (the old default). */
static void unknown_stage_refused(void **state)
{
    json_t *f = baseline(), *r = baseline();
    struct moe_contract_diff d;
    struct moe_verdict v;
    struct moe_error e;

    (void)state;
    moe_error_clear(&e);
    assert_int_equal(moe_contract_check_stage(MOE_STAGE_COUNT, f, r, NULL, &d, &v, &e), -1);
    assert_non_null(strstr(e.text, "no contract scope rule"));
    moe_contract_diff_free(&d);
    json_decref(f);
    json_decref(r);
}

/* fit: layout and recompute may change; the dispatcher may not, nor an
 * offload, which no stage emits. */
static void fit_stage(void **state)
{
    json_t *f = baseline(), *r = baseline();

    (void)state;
    put(r, "parallel", "pp", "2");
    put(r, "tuning", "recompute_modules", "[\"moe_act\"]");
    EXPECT(MOE_STAGE_FIT, f, r, NULL, true, "stage-scope");
    put(r, "tuning", "dispatcher", "\"flex\"");
    EXPECT(MOE_STAGE_FIT, f, r, NULL, false, "fit-scope");
    json_decref(r);
    r = baseline();
    put(r, "tuning", "offload", "\"optimizer\"");
    EXPECT(MOE_STAGE_FIT, f, r, NULL, false, "fit-scope");
    json_decref(f);
    json_decref(r);
}

/* scale: only the parallel layout may change. */
static void scale_stage(void **state)
{
    json_t *f = baseline(), *r = baseline();

    (void)state;
    put(r, "parallel", "ep", "8");
    put(r, "parallel", "dp", "2");
    EXPECT(MOE_STAGE_SCALE, f, r, NULL, true, "stage-scope");
    put(r, "tuning", "recompute_modules", "[\"mlp\"]");
    EXPECT(MOE_STAGE_SCALE, f, r, NULL, false, "scale-scope");
    json_decref(f);
    json_decref(r);
}

/* profile: profiling switches only. */
static void profile_stage(void **state)
{
    json_t *f = baseline(), *r = baseline();

    (void)state;
    json_object_set_new(r, "profiling", json_pack("{s:s, s:[i,i]}", "tool", "nsys", "steps", 12, 14));
    EXPECT(MOE_STAGE_PROFILE, f, r, NULL, true, "stage-scope");
    put(r, "parallel", "tp", "2");
    EXPECT(MOE_STAGE_PROFILE, f, r, NULL, false, "profile-equal");
    json_decref(f);
    json_decref(r);
}

/* retune: exactly one variable; dispatcher type + backend count as one; MBS is one. */
static void retune_stage(void **state)
{
    json_t *f = baseline(), *r = baseline();

    (void)state;
    EXPECT(MOE_STAGE_RETUNE, f, r, NULL, false, "retune-one-variable"); /* none */
    put(r, "tuning", "dispatcher", "\"flex\"");
    put(r, "tuning", "dispatcher_backend", "\"hybridep\"");
    EXPECT(MOE_STAGE_RETUNE, f, r, NULL, true, "retune-one-variable");
    put(r, "tuning", "ep_overlap", "true");
    EXPECT(MOE_STAGE_RETUNE, f, r, NULL, false, "retune-one-variable");
    json_decref(r);
    r = baseline();
    put(r, "workload", "mbs", "2");
    EXPECT(MOE_STAGE_RETUNE, f, r, NULL, true, "retune-one-variable");
    json_decref(r);
    r = baseline();
    put(r, "parallel", "ep", "8");
    EXPECT(MOE_STAGE_RETUNE, f, r, NULL, false, "retune-scope");
    json_decref(f);
    json_decref(r);
}

/* validate: the baseline, a recorded winner, or a declared combination of winners. */
static void validate_stage(void **state)
{
    json_t *f = baseline(), *r = baseline(), *w1 = baseline(), *w2 = baseline();
    json_t *winners = json_array();
    char d1[65], d2[65];

    (void)state;
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, true, "validate-equal");
    put(w1, "tuning", "ep_overlap", "true");
    put(w2, "tuning", "manual_gc", "true");
    json_array_append(winners, w1);
    json_array_append(winners, w2);
    put(r, "tuning", "ep_overlap", "true");
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, true, "validate-winner");
    EXPECT(MOE_STAGE_VALIDATE, f, r, NULL, false, "validate-equal");
    put(r, "tuning", "manual_gc", "true");
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, false, "validate-equal"); /* undeclared combination */
    assert_int_equal(moe_contract_digest(w1, d1, NULL), 0);
    assert_int_equal(moe_contract_digest(w2, d2, NULL), 0);
    json_object_set_new(r, "validation", json_pack("{s:[s,s]}", "combination", d1, d2));
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, true, "validate-combination");
    put(r, "tuning", "dispatcher", "\"flex\""); /* more than the winners changed */
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, false, "validate-combination");
    json_decref(f);
    json_decref(r);
    json_decref(w1);
    json_decref(w2);
    json_decref(winners);
}

/* Two winners that set the same variable to different values cannot be
 * combined: whichever is listed last must not simply win. */
static void validate_disagreeing_winners(void **state)
{
    json_t *f = baseline(), *r = baseline(), *w1 = baseline(), *w2 = baseline();
    json_t *winners = json_array();
    struct moe_verdict v;
    char d1[65], d2[65];

    (void)state;
    put(w1, "tuning", "dispatcher", "\"flex\"");
    put(w2, "tuning", "dispatcher", "\"allgather\"");
    json_array_append(winners, w1);
    json_array_append(winners, w2);
    assert_int_equal(moe_contract_digest(w1, d1, NULL), 0);
    assert_int_equal(moe_contract_digest(w2, d2, NULL), 0);
    put(r, "tuning", "dispatcher", "\"allgather\"");
    json_object_set_new(r, "validation", json_pack("{s:[s,s]}", "combination", d1, d2));
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, false, "validate-combination");
    v = verdict_for(MOE_STAGE_VALIDATE, f, r, winners);
    assert_non_null(strstr(v.reason, "disagree on tuning.dispatcher"));
    /* in the other order too */
    put(r, "tuning", "dispatcher", "\"flex\"");
    json_object_set_new(r, "validation", json_pack("{s:[s,s]}", "combination", d2, d1));
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, false, "validate-combination");
    json_decref(f);
    json_decref(r);
    json_decref(w1);
    json_decref(w2);
    json_decref(winners);
}

/* twin: r as validate's profiling twin of itself (study/validate_profile.h):
 * the profiling block and the declaration, beside any combination. */
static void make_twin(json_t *r)
{
    json_t *validation = json_object_get(r, "validation");

    json_object_set_new(r, "profiling", json_pack("{s:s, s:[i,i]}", "profiler", "pytorch",
                                                  "steps", 12, 14));
    if (!validation)
        json_object_set_new(r, "validation", validation = json_object());
    json_object_set_new(validation, "profiling_twin", json_true());
}

/* validate: a declared profiling twin of the baseline, of a recorded winner
 * and of a declared combination passes; profiling undeclared does not; nor
 * a twin whose rest validate would refuse, nor a declaration without a
 * profiling block. */
static void validate_profiling_twins(void **state)
{
    json_t *f = baseline(), *r = baseline(), *w1 = baseline(), *w2 = baseline();
    json_t *winners = json_array();
    struct moe_verdict v;
    char d1[65], d2[65];

    (void)state;
    put(w1, "tuning", "ep_overlap", "true");
    put(w2, "tuning", "manual_gc", "true");
    json_array_append(winners, w1);
    json_array_append(winners, w2);
    make_twin(r);
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, true, "validate-profiling-twin");
    v = verdict_for(MOE_STAGE_VALIDATE, f, r, winners);
    assert_non_null(strstr(v.reason, "equals the frozen baseline"));
    json_object_del(r, "validation"); /* profiled, undeclared */
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, false, "validate-equal");
    v = verdict_for(MOE_STAGE_VALIDATE, f, r, winners);
    assert_non_null(strstr(v.reason, "profiling."));
    json_decref(r);
    r = baseline();
    json_object_set_new(r, "validation", json_pack("{s:b}", "profiling_twin", 1));
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, false, "validate-profiling-twin"); /* no block */
    json_decref(r);
    r = baseline();
    put(r, "tuning", "ep_overlap", "true");
    make_twin(r);
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, true, "validate-profiling-twin");
    EXPECT(MOE_STAGE_VALIDATE, f, r, NULL, false, "validate-profiling-twin"); /* not a winner */
    put(r, "parallel", "tp", "2"); /* the twin changes more than profiling */
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, false, "validate-profiling-twin");
    json_decref(r);
    r = baseline();
    put(r, "tuning", "ep_overlap", "true");
    put(r, "tuning", "manual_gc", "true");
    assert_int_equal(moe_contract_digest(w1, d1, NULL), 0);
    assert_int_equal(moe_contract_digest(w2, d2, NULL), 0);
    json_object_set_new(r, "validation", json_pack("{s:[s,s]}", "combination", d1, d2));
    make_twin(r);
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, true, "validate-profiling-twin");
    v = verdict_for(MOE_STAGE_VALIDATE, f, r, winners);
    assert_non_null(strstr(v.reason, "combination of 2 recorded winners"));
    json_object_del(json_object_get(r, "validation"), "profiling_twin");
    EXPECT(MOE_STAGE_VALIDATE, f, r, winners, false, "validate-combination");
    json_decref(f);
    json_decref(r);
    json_decref(w1);
    json_decref(w2);
    json_decref(winners);
}

/* profile may not change a tuning variable either */
static void profile_keeps_tuning(void **state)
{
    json_t *f = baseline(), *r = baseline();

    (void)state;
    put(r, "tuning", "manual_gc", "true");
    EXPECT(MOE_STAGE_PROFILE, f, r, NULL, false, "profile-equal");
    json_decref(f);
    json_decref(r);
}

/* The variable a path belongs to. */
static void variable_names(void **state)
{
    char buf[64];

    (void)state;
    assert_string_equal(moe_contract_variable("tuning.dispatcher_backend", buf, sizeof(buf)), "dispatcher");
    assert_string_equal(moe_contract_variable("tuning.cuda_graph.scope", buf, sizeof(buf)), "cuda_graph");
    assert_string_equal(moe_contract_variable("workload.mbs", buf, sizeof(buf)), "mbs");
    assert_null(moe_contract_variable("workload.gbs", buf, sizeof(buf)));
    assert_null(moe_contract_variable("parallel.tp", buf, sizeof(buf)));
    /* an escaped dot is part of the name */
    assert_string_equal(moe_contract_variable("tuning.a\\.b.c", buf, sizeof(buf)), "a\\.b");
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A run record is sealed like the frozen baseline: an edit that keeps the
 * canonical form (true for false) and a missing seal are both caught. */
static void run_record_seal(void **state)
{
    char dir[] = "/tmp/moe-run-seal.XXXXXX", digest[65], got[65], line[160];
    json_t *doc = baseline(), *back;
    struct moe_error err;
    char *canon, *edited, *p;

    (void)state;
    assert_non_null(mkdtemp(dir));
    canon = moe_json_canonical(doc);
    assert_int_equal(moe_sha256_hex(canon, strlen(canon), digest, NULL), 0);
    write_text(dir, "contract.json", canon);
    snprintf(line, sizeof(line), "%s  contract.json\n", digest);
    write_text(dir, "contract.json.sha256", line);
    moe_error_clear(&err);
    back = moe_contract_load_run(dir, got, &err);
    assert_non_null(back);
    assert_string_equal(got, digest);
    json_decref(back);

    edited = strdup(canon);
    p = strstr(edited, "false");
    assert_non_null(p);
    memcpy(p, "true ", 5); /* then drop the space: still canonical JSON */
    memmove(p + 4, p + 5, strlen(p + 5) + 1);
    write_text(dir, "contract.json", edited);
    back = moe_contract_load_run(dir, got, &err);
    assert_null(back);
    assert_non_null(strstr(err.text, "was edited after the run"));

    snprintf(line, sizeof(line), "%s/contract.json.sha256", dir);
    unlink(line);
    write_text(dir, "contract.json", canon);
    back = moe_contract_load_run(dir, got, &err);
    assert_null(back);
    assert_non_null(strstr(err.text, "contract.json.sha256 is missing"));
    snprintf(line, sizeof(line), "%s/contract.json", dir);
    unlink(line);
    rmdir(dir);
    free(edited);
    free(canon);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(canonical_is_stable),
        cmocka_unit_test(sha256_known_vector),
        cmocka_unit_test(shape_errors_name_the_section),
        cmocka_unit_test(diff_lists_changed_leaves),
        cmocka_unit_test(diff_is_empty_exactly_when_digests_are_equal),
        cmocka_unit_test(diff_escapes_dots_in_keys),
        cmocka_unit_test(annotations_have_their_own_diff),
        cmocka_unit_test(optional_sections_are_objects),
        cmocka_unit_test(invariants_never_change),
        cmocka_unit_test(contract_stage),
        cmocka_unit_test(unknown_stage_refused),
        cmocka_unit_test(fit_stage),
        cmocka_unit_test(scale_stage),
        cmocka_unit_test(profile_stage),
        cmocka_unit_test(retune_stage),
        cmocka_unit_test(validate_stage),
        cmocka_unit_test(validate_disagreeing_winners),
        cmocka_unit_test(validate_profiling_twins),
        cmocka_unit_test(profile_keeps_tuning),
        cmocka_unit_test(variable_names),
        cmocka_unit_test(run_record_seal),
    };
    return MOE_RUN_TESTS(tests);
}
