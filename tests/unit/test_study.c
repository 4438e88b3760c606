/* The study reader: example studies resolve to the published numbers, every
 * bad study in tests/data/study/bad fails with its expected message, and the
 * canonical JSON does not depend on how the file is written. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json_canon.h"
#include "study/study.h"
#include "study/study_fit.h"
#include "study/study_pipeline.h"
#include "study/study_schema.h"
#include "unit.h"

static char srcdir[4096];

static void load_example(const char *name, struct moe_study *s)
{
    char path[4200], buf[1024];
    struct moe_error e;

    snprintf(path, sizeof(path), "%s/etc/studies/%s", srcdir, name);
    moe_error_clear(&e);
    if (moe_study_load(s, path, &e) < 0)
        fail_msg("%s", moe_error_format(&e, buf, sizeof(buf)));
}

/* Qwen3-30B-A3B study: preset numbers from the table, EP16 on 16 GPUs. */
static void qwen3_30b_resolves(void **state)
{
    struct moe_study s;

    (void)state;
    load_example("qwen3-30b-a3b-16xh100.yaml", &s);
    assert_int_equal(s.model.num_layers, 48);
    assert_int_equal(s.model.hidden, 2048);
    assert_int_equal(s.model.moe_ffn_hidden, 768);
    assert_int_equal(s.model.num_experts, 128);
    assert_int_equal(s.model.topk, 8);
    assert_int_equal(s.model.num_heads, 32);
    assert_int_equal(s.model.num_query_groups, 4);
    assert_int_equal(s.model.head_dim, 128);
    assert_true(s.model.qk_layernorm);
    assert_int_equal(s.model.vocab, 151936);
    assert_int_equal(moe_study_world_size(&s), 16);
    assert_int_equal(s.baseline.layout.ep, 16);
    assert_int_equal(s.baseline.layout.dp, 16);   /* 16 / (TP1 CP1 PP1) */
    assert_int_equal(s.baseline.layout.edp, 1);   /* 16 / (EP16 ETP1 PP1) */
    assert_int_equal(s.baseline.dispatcher, MOE_DISPATCH_FLEX_HYBRIDEP);
    assert_int_equal(s.baseline.cuda_graph_modules.n, 2);
    assert_string_equal(s.baseline.cuda_graph_modules.v[0], "moe_router");
    assert_string_equal(s.baseline.cuda_graph_modules.v[1], "moe_preprocess");
    assert_int_equal(s.software.dialect, MOE_DIALECT_CORE_0_16);
    moe_study_free(&s);
}

/* DeepSeek-V3 study: MLA, 3 dense layers with FFN 18432, one MTP layer,
 * TP2 PP8 VPP4 EP64 on 1024 GPUs gives DP 64 and expert DP 2. */
static void deepseek_v3_resolves(void **state)
{
    struct moe_study s;

    (void)state;
    load_example("deepseek-v3-1024xh100.yaml", &s);
    assert_int_equal(s.model.num_layers, 61);
    assert_int_equal(s.model.hidden, 7168);
    assert_int_equal(s.model.first_dense_layers, 3);
    assert_int_equal(s.model.ffn_hidden, 18432);
    assert_int_equal(s.model.moe_ffn_hidden, 2048);
    assert_int_equal(s.model.num_experts, 256);
    assert_int_equal(s.model.shared_expert_ffn, 2048);
    assert_int_equal(s.model.router_score, MOE_ROUTER_SIGMOID);
    assert_int_equal(s.model.router_groups, 8);
    assert_int_equal(s.model.router_group_topk, 4);
    assert_int_equal(s.model.attention, MOE_ATTN_MLA);
    assert_int_equal(s.model.q_lora_rank, 1536);
    assert_int_equal(s.model.kv_lora_rank, 512);
    assert_int_equal(s.model.vocab, 129280);
    assert_int_equal(s.model.mtp_layers, 1);
    assert_string_equal(s.model.name, "custom");  /* a preset field was overridden */
    assert_int_equal(moe_study_world_size(&s), 1024);
    assert_int_equal(s.baseline.layout.dp, 64);   /* 1024 / (2 x 8) */
    assert_int_equal(s.baseline.layout.edp, 2);   /* 1024 / (64 x 8) */
    assert_int_equal(s.baseline.recompute, MOE_RECOMPUTE_SELECTIVE);
    assert_string_equal(s.baseline.recompute_modules.v[0], "mla_up_proj");
    assert_string_equal(s.baseline.recompute_modules.v[1], "mlp");
    moe_study_free(&s);
}

/* The other three examples load; the tiny one is explicit, not a preset. */
static void other_examples_resolve(void **state)
{
    struct moe_study s;

    (void)state;
    load_example("qwen3-235b-a22b-256xh100.yaml", &s);
    assert_int_equal(s.model.num_layers, 94);
    assert_int_equal(s.model.moe_ffn_hidden, 1536);
    assert_int_equal(s.model.num_heads, 64);
    assert_int_equal(s.baseline.layout.dp, 16);   /* 256 / (2 x 8) */
    assert_int_equal(s.baseline.layout.edp, 1);   /* 256 / (32 x 8) */
    assert_true(s.baseline.ep_overlap);
    moe_study_free(&s);
    load_example("mixtral-8x7b-16xh100.yaml", &s);
    assert_int_equal(s.model.num_experts, 8);
    assert_int_equal(s.model.topk, 2);
    assert_int_equal(s.model.moe_ffn_hidden, 14336);
    assert_int_equal(s.model.num_query_groups, 8);
    assert_int_equal(s.model.vocab, 32000);
    moe_study_free(&s);
    load_example("tiny-moe-2gpu.yaml", &s);
    assert_string_equal(s.model.name, "custom");
    assert_int_equal(s.model.num_layers, 4);
    assert_int_equal(s.model.hidden, 512);
    assert_int_equal(s.model.head_dim, 64);       /* 512 / 8 heads, by default */
    assert_int_equal(moe_study_world_size(&s), 2);
    moe_study_free(&s);
}

/* A GPU type without rates is an error, not H100's rates in disguise: a
 * study whose cluster.gpu is outside the table (a corrupted or hand-built
 * struct; the schema takes only the table's names) has no fit inputs. */
static void unknown_gpu_is_an_error(void **state)
{
    struct moe_study s;
    struct moe_train t;
    struct moe_machine m;
    struct moe_error e;

    (void)state;
    load_example("qwen3-30b-a3b-16xh100.yaml", &s);
    moe_error_clear(&e);
    assert_int_equal(moe_study_fit_inputs(&s, &t, &m, &e), 0);
    s.cluster.gpu = (enum moe_gpu)MOE_GPU_COUNT;
    assert_int_equal(moe_study_fit_inputs(&s, &t, &m, &e), -1);
    assert_non_null(strstr(e.text, "cluster.gpu"));
    moe_study_free(&s);
}

/* Every GPU type is one row of fit/gpu.h's table, and a study takes its
 * memory, GPUs per node, NVLink domain and rates from that row. */
static void gpu_types_from_one_table(void **state)
{
    static const char *const fmt =
        "name: t\nmodel: {preset: qwen3-30b-a3b}\ncluster: {gpu: %s, nodes: 4}\n"
        "workload: {gbs: 512}\nsoftware: {megatron: core-0.19}\nbaseline: {ep: 8}\n";

    (void)state;
    for (int g = 0; g < MOE_GPU_COUNT; g++) {
        const struct moe_gpu_type *type = moe_gpu_type((enum moe_gpu)g);
        struct moe_perf p;
        struct moe_study s;
        struct moe_train t;
        struct moe_machine m;
        struct moe_error e;
        char text[512];

        assert_non_null(type);
        assert_string_equal(type->name, moe_gpu_name((enum moe_gpu)g));
        assert_int_equal(moe_enum_parse(moe_gpu_names, type->name), g);
        assert_int_equal(moe_perf_defaults((enum moe_gpu)g, MOE_IMPL_TE, &p), 0);
        snprintf(text, sizeof(text), fmt, type->name);
        if (moe_study_load_string(&s, "gpu.yaml", text, &e) != 0)
            fail_msg("%s: %s", type->name, e.text);
        assert_int_equal(s.cluster.gpu, g);
        assert_int_equal(s.cluster.gpu_memory_gib, type->memory_gib);
        assert_int_equal(s.cluster.gpus_per_node, type->gpus_per_node);
        assert_int_equal(s.cluster.nvlink_domain, type->nvlink_domain);
        assert_int_equal(moe_study_fit_inputs(&s, &t, &m, &e), 0);
        assert_true(m.perf.tflops_bf16 == p.tflops_bf16 && m.perf.nvlink_gbps == p.nvlink_gbps);
        assert_true(moe_gpu_is_hopper((enum moe_gpu)g) == (type->arch == MOE_ARCH_HOPPER));
        moe_study_free(&s);
    }
    assert_null(moe_gpu_type((enum moe_gpu)MOE_GPU_COUNT));
    assert_string_equal(moe_gpu_name((enum moe_gpu)MOE_GPU_COUNT), MOE_ENUM_UNKNOWN);
    /* the two kinds of node the defaults know */
    assert_int_equal(moe_gpu_type(MOE_GPU_GB200)->nvlink_domain, 72);
    assert_int_equal(moe_gpu_type(MOE_GPU_H200)->memory_gib, 141);
}

/* Each bad study fails with exactly the message in its .err file. */
static void bad_studies_explained(void **state)
{
    char dir[4200], cwd[4096];
    DIR *d;
    struct dirent *ent;
    int cases = 0;

    (void)state;
    snprintf(dir, sizeof(dir), "%s/tests/data/study/bad", srcdir);
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(dir), 0);   /* messages name the file as given */
    assert_non_null(d = opendir("."));
    while ((ent = readdir(d))) {
        char want[1024] = "", got[1024], errname[300];
        size_t len = strlen(ent->d_name);
        struct moe_study s;
        struct moe_error e;
        FILE *f;

        if (len < 6 || strcmp(ent->d_name + len - 5, ".yaml"))
            continue;
        snprintf(errname, sizeof(errname), "%.*s.err", (int)(len - 5), ent->d_name);
        assert_non_null(f = fopen(errname, "r"));
        assert_non_null(fgets(want, sizeof(want), f));
        fclose(f);
        want[strcspn(want, "\n")] = '\0';
        moe_error_clear(&e);
        assert_int_equal(moe_study_load(&s, ent->d_name, &e), -1);
        moe_error_format(&e, got, sizeof(got));
        if (strcmp(got, want))
            fail_msg("%s:\n  want: %s\n  got:  %s", ent->d_name, want, got);
        cases++;
    }
    closedir(d);
    assert_int_equal(chdir(cwd), 0);
    assert_true(cases >= 15);
}

static const char *const ordered =
    "name: t\nmodel:\n  preset: qwen3-30b-a3b\ncluster:\n  nodes: 2\nworkload:\n  gbs: 512\n"
    "software:\n  megatron: core-0.16\nbaseline:\n  ep: 16\n";
static const char *const reordered =
    "# same study, other order, explicit defaults\nbaseline: {ep: 16, tp: 1}\n"
    "software: {megatron: core-0.16}\nworkload: {mbs: 1, gbs: 512}\n"
    "cluster: {gpu: h100, nodes: 2}\nmodel: {preset: qwen3-30b-a3b}\nname: t\n";

/* Key order, flow style and spelled-out defaults do not change the hash. */
static void canonical_hash_is_stable(void **state)
{
    struct moe_study a, b;
    struct moe_error e;
    char ha[65], hb[65];

    (void)state;
    assert_int_equal(moe_study_load_string(&a, "a.yaml", ordered, &e), 0);
    assert_int_equal(moe_study_load_string(&b, "b.yaml", reordered, &e), 0);
    assert_int_equal(moe_json_sha256(a.json, ha), 0);
    assert_int_equal(moe_json_sha256(b.json, hb), 0);
    assert_string_equal(ha, hb);
    assert_int_equal((int)strlen(ha), 64);
    moe_study_free(&a);
    moe_study_free(&b);
}

/* The canonical form sorts keys, is compact, and prints 0.1 as 0.1. */
static void canonical_form(void **state)
{
    json_t *j = json_pack("{s:f, s:i, s:[s]}", "b", 0.1, "a", 2, "c", "x");
    char *t = moe_json_canonical(j);
    char h[65];

    (void)state;
    assert_string_equal(t, "{\"a\":2,\"b\":0.1,\"c\":[\"x\"]}");
    /* sha256 of that exact string, from `printf %s ... | sha256sum` */
    assert_int_equal(moe_json_sha256(j, h), 0);
    assert_string_equal(h, "5394e25c3992f18855afa7d6eb1b45fd8bcc908a2126ca851d551f6313cc8976");
    free(t);
    json_decref(j);
}

static void assert_canonical(json_t *j, const char *want)
{
    char *t = moe_json_canonical(j);
    json_t *again = json_loads(t, JSON_DECODE_ANY, NULL);
    char *t2 = moe_json_canonical(again);

    assert_string_equal(t, want);
    /* re-reading the canonical text and canonicalising it changes nothing */
    assert_string_equal(t2, want);
    free(t);
    free(t2);
    json_decref(again);
    json_decref(j);
}

/* One number rule for ids and contract digests alike: integral reals are
 * integers (so 1 and 1.0 hash alike), others keep 15 significant digits,
 * and scalars canonicalise too. */
static void canonical_numbers(void **state)
{
    char h1[65], h2[65];
    json_t *a = json_pack("{s:f, s:f}", "x", 1.0, "y", -0.0);
    json_t *b = json_pack("{s:i, s:i}", "y", 0, "x", 1);

    (void)state;
    assert_int_equal(moe_json_sha256(a, h1), 0);
    assert_int_equal(moe_json_sha256(b, h2), 0);
    assert_string_equal(h1, h2);
    json_decref(a);
    json_decref(b);
    assert_canonical(json_pack("{s:f}", "cf", 0.0), "{\"cf\":0}");
    assert_canonical(json_pack("[f, f]", 0.1 + 0.2, 1.5), "[0.3,1.5]");
    /* 2^53 is still exact; 2^60 is not an integer a double can vouch for */
    assert_canonical(json_real(9007199254740992.0), "9007199254740992");
    assert_canonical(json_real(1152921504606846976.0), "1.15292150460685e18");
    assert_canonical(json_string("a\"b"), "\"a\\\"b\"");
}

/* A preset field can be overridden; the model is then no longer the preset. */
static void preset_override(void **state)
{
    struct moe_study s;
    struct moe_error e;
    const char *text = "name: t\nmodel:\n  preset: mixtral-8x7b\n  num_layers: 16\n"
                       "cluster: {nodes: 2}\nworkload: {gbs: 256}\nsoftware: {megatron: core-0.19}\n";

    (void)state;
    assert_int_equal(moe_study_load_string(&s, "o.yaml", text, &e), 0);
    assert_int_equal(s.model.num_layers, 16);
    assert_int_equal(s.model.hidden, 4096);   /* untouched preset value */
    assert_string_equal(s.model.name, "custom");
    moe_study_free(&s);
}

static void keys_documented(const struct moe_field *keys, const char *man)
{
    for (const struct moe_field *k = keys; k->key; k++) {
        char needle[128];
        snprintf(needle, sizeof(needle), "\n.B %s\n", k->key);
        if (!strstr(man, needle))
            fail_msg("doc/moeflow-study.5 does not document '%s' (no \".B %s\" line)", k->key,
                     k->key);
        if (k->type == MOE_F_MAP)
            keys_documented(k->sub, man);
    }
}

/* Every key of the schema has its entry in the man page. */
static void schema_is_documented(void **state)
{
    char path[4200], *man;
    FILE *f;
    long len;

    (void)state;
    snprintf(path, sizeof(path), "%s/doc/moeflow-study.5", srcdir);
    assert_non_null(f = fopen(path, "r"));
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    man = calloc(1, (size_t)len + 1);
    assert_int_equal(fread(man, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    keys_documented(moe_study_schema, man);
    free(man);
}

/* Pipeline layouts: repeats expand, and stages, decoder layers and MTP
 * layers are counted (DeepSeek-V3: 1 + 30 x 2 = 61 layers over 32 stages). */
static void pipeline_layouts(void **state)
{
    struct moe_error e;

    (void)state;
    moe_error_clear(&e);
    assert_int_equal(moe_pipeline_layout_check("Et|(tt|)*30mL", 32, 61, 1, &e), 0);
    assert_int_equal(moe_pipeline_layout_check("Ett|(ttt|)*30ttL", 32, 94, 0, &e), 0);
    assert_int_equal(moe_pipeline_layout_check("Et*3|t*3|t*2L", 3, 8, 0, &e), 0);
    assert_int_equal(moe_pipeline_layout_check("Et|(tt|)*30mL", 32, 61, 0, &e), -1);
    assert_string_equal(e.text, "'Et|(tt|)*30mL' places 1 MTP layers, the model has 0");
    assert_int_equal(moe_pipeline_layout_check("Et|(tt|*30mL", 32, 61, 1, &e), -1);
    assert_string_equal(e.text, "unbalanced '('");
    assert_int_equal(moe_pipeline_layout_check("Et|tx|L", 3, 1, 0, &e), -1);
    assert_string_equal(e.text, "unexpected 'x' (use E, t, m, L, |, ( ) and *N)");
    assert_int_equal(moe_pipeline_layout_check("t|tL", 2, 2, 0, &e), -1);
    assert_string_equal(e.text, "'t|tL' must start with E (embedding) and end with L (loss)");
}

int main(void)
{
    const char *src = getenv("MOEFLOW_SRCDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(qwen3_30b_resolves),
        cmocka_unit_test(deepseek_v3_resolves),
        cmocka_unit_test(other_examples_resolve),
        cmocka_unit_test(unknown_gpu_is_an_error),
        cmocka_unit_test(gpu_types_from_one_table),
        cmocka_unit_test(bad_studies_explained),
        cmocka_unit_test(canonical_hash_is_stable),
        cmocka_unit_test(canonical_form),
        cmocka_unit_test(canonical_numbers),
        cmocka_unit_test(preset_override),
        cmocka_unit_test(schema_is_documented),
        cmocka_unit_test(pipeline_layouts),
    };

    snprintf(srcdir, sizeof(srcdir), "%s", src ? src : "..");
    return MOE_RUN_TESTS(tests);
}
