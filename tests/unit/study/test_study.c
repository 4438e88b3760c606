/* The study reader: example studies resolve to the published numbers, every
 * bad study in tests/data/study/bad fails with its expected message, and the
 * canonical JSON does not depend on how the file is written. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/contract_keys.h"
#include "core/json_canon.h"
#include "core/retune.h"
#include "study/study.h"
#include "study/study_internal.h"
#include "study/study_contract.h"
#include "study/study_contract_internal.h"
#include "study/study_fit.h"
#include "study/study_pipeline.h"
#include "study/study_pipeline_internal.h"
#include "study/study_schema.h"
#include "study/study_schema_internal.h"
#include "unit.h"
#include "study/megatron_args_internal.h"

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
        "workload: {gbs: 512}\nsoftware: {megatron: core-0.19, transformer_engine: none}\nbaseline: {ep: 8}\n";

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
        moe_study_free(&s);
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
    "software:\n  megatron: core-0.16\n  transformer_engine: none\nbaseline:\n  ep: 16\n";
static const char *const reordered =
    "# same study, other order, explicit defaults\nbaseline: {ep: 16, tp: 1}\n"
    "software: {megatron: core-0.16, transformer_engine: none}\nworkload: {mbs: 1, gbs: 512}\n"
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

/* A workload switch written only when it leaves its default: spelled out
 * at the default it hashes as a study without it (the hash of every study
 * from before the key); changed, it is written and hashes apart.  Loads
 * both into spelled and changed for the caller's own checks. */
static void written_only_off_default(const char *key, bool dflt, struct moe_study *spelled,
                                     struct moe_study *changed)
{
    static const char *const fmt =
        "name: t\nmodel:\n  preset: qwen3-30b-a3b\ncluster:\n  nodes: 2\nworkload:\n"
        "  gbs: 512\n  %s: %s\nsoftware:\n  megatron: core-0.16\n  transformer_engine: none\nbaseline:\n  ep: 16\n";
    char at_default[512], other[512], ha[65], hs[65], hc[65];
    struct moe_study a;
    struct moe_error e;

    snprintf(at_default, sizeof(at_default), fmt, key, dflt ? "true" : "false");
    snprintf(other, sizeof(other), fmt, key, dflt ? "false" : "true");
    assert_int_equal(moe_study_load_string(&a, "a.yaml", ordered, &e), 0);
    assert_int_equal(moe_study_load_string(spelled, "spelled.yaml", at_default, &e), 0);
    assert_int_equal(moe_study_load_string(changed, "changed.yaml", other, &e), 0);
    assert_int_equal(moe_json_sha256(a.json, ha), 0);
    assert_int_equal(moe_json_sha256(spelled->json, hs), 0);
    assert_int_equal(moe_json_sha256(changed->json, hc), 0);
    assert_string_equal(ha, hs);
    assert_string_not_equal(ha, hc);
    assert_null(json_object_get(json_object_get(a.json, "workload"), key));
    assert_true(json_equal(json_object_get(json_object_get(changed->json, "workload"), key),
                           dflt ? json_false() : json_true()));
    moe_study_free(&a);
}

/* workload.distributed_optimizer (default true): false drops
 * --use-distributed-optimizer from the jobs. */
static void distributed_optimizer_off_only_is_written(void **state)
{
    struct moe_study on, off;

    (void)state;
    written_only_off_default("distributed_optimizer", true, &on, &off);
    assert_true(on.distributed_optimizer && !off.distributed_optimizer);
    moe_study_free(&on);
    moe_study_free(&off);
}

/* workload.grad_reduce_in_bf16 (default false): true adds
 * --grad-reduce-in-bf16 to the jobs and halves the memory model's main
 * grads. */
static void grad_reduce_in_bf16_on_only_is_written(void **state)
{
    struct moe_study off, on;
    struct moe_error e;
    struct moe_train t;
    struct moe_machine c;

    (void)state;
    written_only_off_default("grad_reduce_in_bf16", false, &off, &on);
    assert_true(!off.grad_reduce_in_bf16 && on.grad_reduce_in_bf16);
    assert_int_equal(moe_study_fit_inputs(&off, &t, &c, &e), 0);
    assert_true(t.grads_fp32);
    assert_int_equal(moe_study_fit_inputs(&on, &t, &c, &e), 0);
    assert_false(t.grads_fp32);
    moe_study_free(&off);
    moe_study_free(&on);
}

/* cluster.plugin and cluster.container.workdir (issue 40): read, and
 * written to the canonical study only when set, so that a study without
 * them keeps its hash. */
static void plugin_and_workdir(void **state)
{
    static const char *const text =
        "name: t\nmodel:\n  preset: qwen3-30b-a3b\ncluster:\n  nodes: 2\n  plugin: none\n"
        "  container:\n    image: img\n    workdir: /work space/s\nworkload:\n  gbs: 512\n"
        "software:\n  megatron: core-0.16\n  transformer_engine: none\nbaseline:\n  ep: 16\n";
    struct moe_study a, b;
    struct moe_error e;

    (void)state;
    assert_int_equal(moe_study_load_string(&a, "a.yaml", ordered, &e), 0);
    assert_int_equal(moe_study_load_string(&b, "b.yaml", text, &e), 0);
    assert_int_equal(a.cluster.plugin, MOE_PLUGIN_AUTO);
    assert_string_equal(a.cluster.container_workdir, "");
    assert_null(json_object_get(json_object_get(a.json, "cluster"), "plugin"));
    assert_int_equal(b.cluster.plugin, MOE_PLUGIN_NONE);
    assert_string_equal(b.cluster.container_workdir, "/work space/s");
    assert_string_equal(json_string_value(json_object_get(json_object_get(b.json, "cluster"),
                                                          "plugin")), "none");
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
                            b.json, "cluster"), "container"), "workdir")), "/work space/s");
    moe_study_free(&a);
    moe_study_free(&b);
}

/* Issue 40's pass-through keys: each stage's time limit (its own, else
 * cluster.time_limit), cluster.env sorted by name into NAME=value entries
 * and the canonical study, extra_args in order; none of them is written
 * when unset (plugin_and_workdir's reason). */
static void pass_through_keys(void **state)
{
    static const char *const text =
        "name: t\nmodel:\n  preset: qwen3-30b-a3b\ncluster:\n  nodes: 2\n"
        "  time_limit: \"30\"\n  stage_time_limit: {fit: \"00:20:00\"}\n  qos: high\n"
        "  env: {WANDB_MODE: offline, HF_HUB_OFFLINE: \"1\"}\n"
        "  launcher: {extra_args: [--seed, \"1\", --log-timers-to-tensorboard]}\n"
        "workload:\n  gbs: 512\nsoftware:\n  megatron: core-0.16\n  transformer_engine: \"2.9\"\n"
        "baseline:\n  ep: 16\n";
    struct moe_study a, b;
    struct moe_error e;
    json_t *k;

    (void)state;
    assert_int_equal(moe_study_load_string(&a, "a.yaml", ordered, &e), 0);
    assert_int_equal(moe_study_load_string(&b, "b.yaml", text, &e), 0);
    assert_string_equal(moe_study_time_limit(&a, MOE_STAGE_FIT), "01:00:00");
    assert_string_equal(moe_study_time_limit(&b, MOE_STAGE_FIT), "00:20:00");
    assert_string_equal(moe_study_time_limit(&b, MOE_STAGE_SCALE), "30");
    assert_int_equal((int)b.cluster.env.n, 2);
    assert_string_equal(b.cluster.env.v[0], "HF_HUB_OFFLINE=1");
    assert_string_equal(b.cluster.env.v[1], "WANDB_MODE=offline");
    assert_int_equal((int)b.cluster.extra_args.n, 3);
    assert_string_equal(b.cluster.extra_args.v[2], "--log-timers-to-tensorboard");
    k = json_object_get(a.json, "cluster");
    assert_null(json_object_get(k, "qos"));
    assert_null(json_object_get(k, "env"));
    assert_null(json_object_get(k, "stage_time_limit"));
    assert_null(json_object_get(json_object_get(k, "launcher"), "extra_args"));
    k = json_object_get(b.json, "cluster");
    assert_string_equal(json_string_value(json_object_get(k, "qos")), "high");
    assert_string_equal(json_string_value(json_object_get(json_object_get(k, "env"),
                                                          "WANDB_MODE")), "offline");
    assert_string_equal(json_string_value(json_object_get(json_object_get(k, "stage_time_limit"),
                                                          "fit")), "00:20:00");
    assert_int_equal((int)json_array_size(json_object_get(json_object_get(k, "launcher"),
                                                          "extra_args")), 3);
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
                       "cluster: {nodes: 2}\nworkload: {gbs: 256}\nsoftware: {megatron: core-0.19, transformer_engine: none}\n";

    (void)state;
    assert_int_equal(moe_study_load_string(&s, "o.yaml", text, &e), 0);
    assert_int_equal(s.model.num_layers, 16);
    assert_int_equal(s.model.hidden, 4096);   /* untouched preset value */
    assert_string_equal(s.model.name, "custom");
    moe_study_free(&s);
}

/* The schema's keys as "SECTION key" lines into set: a section's keys are
 * every name under it, nested maps' included (the man page lists
 * container, image and mounts in CLUSTER alike); top-level keys are
 * "TOP LEVEL". */
static void schema_names(const struct moe_field *keys, const char *section, json_t *set)
{
    for (const struct moe_field *k = keys; k->key; k++) {
        char up[64], line[160];
        size_t i;

        json_object_set_new(set, (snprintf(line, sizeof(line), "%s %s", section, k->key), line),
                            json_true());
        if (k->type != MOE_F_MAP)
            continue;
        for (i = 0; k->key[i] && i + 1 < sizeof(up); i++)
            up[i] = (char)(k->key[i] >= 'a' && k->key[i] <= 'z' ? k->key[i] - 32 : k->key[i]);
        up[i] = '\0';
        schema_names(k->sub, strcmp(section, "TOP LEVEL") == 0 ? up : section, set);
    }
}

static char *read_text(const char *rel)
{
    char path[4200], *text;
    FILE *f;
    long len;

    snprintf(path, sizeof(path), "%s/%s", srcdir, rel);
    assert_non_null(f = fopen(path, "r"));
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc(1, (size_t)len + 1);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return text;
}

/* The keys doc/moeflow-study.5 documents: a ".TP" followed by ".B key", as
 * "SECTION key" lines, from the sections that describe the file. */
static void man_names(char *man, json_t *set)
{
    static const char *const sections[] = { "TOP LEVEL", "MODEL", "CLUSTER", "WORKLOAD",
                                             "SOFTWARE", "BASELINE", "MEASURE", "SCALE",
                                             "RETUNE", "VALIDATION", NULL };
    const char *section = NULL;
    char *save = NULL, *prev = "", *line;

    for (line = strtok_r(man, "\n", &save); line; prev = line, line = strtok_r(NULL, "\n", &save)) {
        char key[160];

        if (strncmp(line, ".SH ", 4) == 0) {
            section = NULL;
            for (const char *const *s = sections; *s; s++)
                if (strcmp(line + 4, *s) == 0)
                    section = *s;
        } else if (section && strcmp(prev, ".TP") == 0 && strncmp(line, ".B ", 3) == 0 &&
                   !strchr(line + 3, ' ')) {
            snprintf(key, sizeof(key), "%s %s", section, line + 3);
            json_object_set_new(set, key, json_true());
        }
    }
}

/* Lines of a that b lacks, for a message. */
static void missing(const json_t *a, const json_t *b, char *out, size_t len)
{
    const char *k;
    json_t *v;
    size_t n = 0;

    out[0] = '\0';
    json_object_foreach((json_t *)a, k, v)
        if (!json_object_get(b, k) && n < len)
            n += (size_t)snprintf(out + n, len - n, " '%s'", k);
}

/* Every key of the schema has its entry in its section of the man page,
 * and every key the man page documents there is one of the schema's. */
static void schema_is_documented(void **state)
{
    char *man = read_text("doc/moeflow-study.5"), only_schema[2048], only_man[2048];
    json_t *schema = json_object(), *doc = json_object();

    (void)state;
    schema_names(moe_study_schema, "TOP LEVEL", schema);
    man_names(man, doc);
    missing(schema, doc, only_schema, sizeof(only_schema));
    missing(doc, schema, only_man, sizeof(only_man));
    if (only_schema[0] || only_man[0])
        fail_msg("doc/moeflow-study.5 and lib/study/study_schema.c differ: not documented:%s; "
                 "documented, not in the schema:%s", only_schema, only_man);
    assert_true(json_object_size(schema) > 80);
    json_decref(schema);
    json_decref(doc);
    free(man);
}

/* The man page lists retune.axes' values as the catalogue has them
 * (core/retune.h), in its order: the words set in italics between ".B axes"
 * and "Default:". */
static void retune_axes_are_documented(void **state)
{
    char *man = read_text("doc/moeflow-study.5"), *p, *end, *save = NULL, *line;
    int i = 0;

    (void)state;
    assert_non_null(p = strstr(man, "\n.B axes\n"));
    assert_non_null(end = strstr(p, "Default: all."));
    *end = '\0';
    for (line = strtok_r(p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char word[64];

        if (sscanf(line, ".I %63[a-z_]", word) != 1 && sscanf(line, ".IR %63[a-z_]", word) != 1)
            continue;
        if (!moe_retune_axes[i] || strcmp(word, moe_retune_axes[i]) != 0)
            fail_msg("doc/moeflow-study.5, retune.axes: '%s' where the catalogue has '%s'",
                     word, moe_retune_axes[i] ? moe_retune_axes[i] : "(no more)");
        i++;
    }
    assert_int_equal(i, MOE_RETUNE_COUNT);
    free(man);
}

/* The canonical JSON's keys (study_json.c) as dotted paths into set:
 * objects are maps, anything else a value. */
static void json_paths(const json_t *j, const char *prefix, json_t *set)
{
    const char *k;
    json_t *v;

    json_object_foreach((json_t *)j, k, v) {
        char path[160];

        snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", k);
        if (json_is_object(v))
            json_paths(v, path, set);
        else
            json_object_set_new(set, path, json_true());
    }
}

static void schema_paths(const struct moe_field *keys, const char *prefix, json_t *set)
{
    for (const struct moe_field *k = keys; k->key; k++) {
        char path[160];

        snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", k->key);
        if (k->type == MOE_F_MAP)
            schema_paths(k->sub, path, set);
        else
            json_object_set_new(set, path, json_true());
    }
}

/* The canonical writer writes every key of the schema, and no other but
 * what it derives: the model's name for model.preset, and DP and EDP.
 * Known gap: it has never written the step-time settings (cluster.
 * achievable_tflops_bf16 ... route_ns), so two studies that differ only
 * there hash alike; writing them changes every study's hash and every
 * golden study.json, which is a change of its own. */
static void canonical_json_has_the_schema_keys(void **state)
{
    static const char *const rates[] = {
        "cluster.achievable_tflops_bf16", "cluster.achievable_tflops_fp8", "cluster.nvlink_gbps",
        "cluster.internode_gbps", "cluster.host_overhead_us", "cluster.host_expert_us",
        "cluster.host_etp_us", "cluster.route_ns", NULL };
    static const char *const examples[] = { "qwen3-30b-a3b-16xh100.yaml",
                                            "deepseek-v3-1024xh100.yaml",
                                            "tiny-moe-2gpu.yaml", NULL };

    (void)state;
    for (const char *const *e = examples; *e; e++) {
        json_t *schema = json_object(), *written = json_object();
        char only_schema[2048], only_json[2048];
        struct moe_study s;

        load_example(*e, &s);
        schema_paths(moe_study_schema, "", schema);
        json_object_del(schema, "model.preset");
        for (const char *const *k = rates; *k; k++)
            json_object_del(schema, *k);
        /* written only when false, so that a study leaving the default
         * keeps the hash it had before the key existed (study_json.c) */
        json_object_del(schema, "workload.distributed_optimizer");
        json_object_del(schema, "workload.grad_reduce_in_bf16"); /* only when true */
        /* issue 40's keys: written only when set, for the same reason */
        json_object_del(schema, "cluster.plugin");
        json_object_del(schema, "cluster.container.workdir");
        json_object_del(schema, "cluster.qos");
        json_object_del(schema, "cluster.reservation");
        json_object_del(schema, "cluster.constraint");
        json_object_del(schema, "cluster.env");
        json_object_del(schema, "cluster.launcher.extra_args");
        /* issue 41's keys: written only when set, for the same reason */
        for (const char *const *k = (const char *const[]){
                 "workload.lr", "workload.lr_schedule", "workload.lr_warmup_iters",
                 "workload.lr_decay_iters", "workload.min_lr", "workload.aux_loss_coeff",
                 "workload.tokenizer", "baseline.dispatcher_sms", "retune.dispatcher_sms", NULL };
             *k; k++)
            json_object_del(schema, *k);
        for (int st = 0; st < MOE_STAGE_COUNT; st++) {
            char p[64];

            snprintf(p, sizeof(p), "cluster.stage_time_limit.%s", moe_stage_name(st));
            json_object_del(schema, p);
        }
        json_paths(s.json, "", written);
        json_object_del(written, "model.name");
        json_object_del(written, "baseline.dp");
        json_object_del(written, "baseline.edp");
        missing(schema, written, only_schema, sizeof(only_schema));
        missing(written, schema, only_json, sizeof(only_json));
        if (only_schema[0] || only_json[0])
            fail_msg("%s: study_json.c and the schema differ: not written:%s; written, not in "
                     "the schema:%s", *e, only_schema, only_json);
        json_decref(schema);
        json_decref(written);
        moe_study_free(&s);
    }
}

/* Every schema key by its name alone (the contract and the catalogue name
 * a study key without its section). */
static void schema_leaves(const struct moe_field *keys, json_t *set)
{
    for (const struct moe_field *k = keys; k->key; k++) {
        if (k->type == MOE_F_MAP)
            schema_leaves(k->sub, set);
        else
            json_object_set_new(set, k->key, json_true());
    }
}

/* The contract's keys that are not study keys, written by hand: what the
 * contract derives (the GPU count, the routing
 * class, the resolved model), the dispatcher's backend (core/
 * contract_keys.h), and cuda_graph_scope, the name every
 * sealed contract holds for baseline.cuda_graph_modules (study_contract.c
 * says why it stays).  A study key the contract spells for itself instead
 * of taking it from study_schema.h shows up as a key in neither list once
 * the schema's is renamed (tests/mutation: study-key-rename). */
static const char *const contract_own[] = {
    "container_image", "gpu_model", "gpus", "model", "architecture", "class",
    "router_dtype", "steps", "dispatcher_backend", "cuda_graph_scope", NULL };

/* The contract's sections that describe the study hold study keys (by the
 * schema's names) and the contract's own, nothing else; parallel and
 * timing are core/contract_keys.h's vocabulary, tested with the contract.
 * Each of the contract's own keys is written, so the list holds no stale
 * name. */
static void contract_keys_are_the_studys(void **state)
{
    static const char *const sections[] = { MOE_CONTRACT_ENVIRONMENT, MOE_CONTRACT_HARDWARE,
                                             MOE_CONTRACT_WORKLOAD, MOE_CONTRACT_SEMANTICS,
                                             MOE_CONTRACT_TUNING, MOE_CONTRACT_PROFILING, NULL };
    static const char *const examples[] = { "qwen3-30b-a3b-16xh100.yaml",
                                            "deepseek-v3-1024xh100.yaml",
                                            "tiny-moe-2gpu.yaml", NULL };
    json_t *study_keys = json_object(), *own = json_object();
    const char *k;
    json_t *v;

    (void)state;
    schema_leaves(moe_study_schema, study_keys);
    for (const char *const *o = contract_own; *o; o++) {
        if (json_object_get(study_keys, *o))
            fail_msg("'%s' is a study key: the contract takes it from study_schema.h", *o);
        json_object_set_new(own, *o, json_false());
    }
    for (const char *const *e = examples; *e; e++) {
        struct moe_study s;
        struct moe_run run;
        json_t *doc;

        load_example(*e, &s);
        moe_run_from_baseline(&run, &s, s.measure.screen_steps);
        run.profile = true;
        assert_non_null(doc = moe_run_contract(&s, &run, moe_study_routing_class(&s), NULL));
        for (const char *const *sec = sections; *sec; sec++) {
            assert_non_null(json_object_get(doc, *sec));
            json_object_foreach(json_object_get(doc, *sec), k, v) {
                if (json_object_get(own, k))
                    json_object_set_new(own, k, json_true());
                else if (!json_object_get(study_keys, k))
                    fail_msg("%s: contract %s.%s is neither a study key nor one of the "
                             "contract's own", *e, *sec, k);
            }
        }
        json_decref(doc);
        moe_study_free(&s);
    }
    json_object_foreach(own, k, v)
        if (!json_is_true(v))
            fail_msg("the contract's own key '%s' is in no contract: a stale name", k);
    json_decref(study_keys);
    json_decref(own);
}

/* Each retune axis's variable (core/retune.h) is a key of the study's
 * baseline or workload, and the contract records it under that name, or
 * under the name the table below gives and why. */
static void retune_variables_are_study_and_contract_keys(void **state)
{
    static const struct { const char *variable, *contract_path; } renamed[] = {
        /* granularity and modules are one variable (core/contract_keys.h) */
        { "recompute_modules", MOE_CONTRACT_TUNING "." MOE_CONTRACT_RECOMPUTE },
        /* Megatron 0.16's name, frozen in every sealed contract */
        { "cuda_graph_modules", MOE_CONTRACT_TUNING ".cuda_graph_scope" },
        /* a retune axis inside an invariant section */
        { "mbs", MOE_CONTRACT_WORKLOAD "." MOE_CONTRACT_MBS },
    };
    struct moe_study s;
    struct moe_run run;
    json_t *doc;

    (void)state;
    load_example("qwen3-30b-a3b-16xh100.yaml", &s);
    moe_run_from_baseline(&run, &s, s.measure.screen_steps);
    /* written only when set (study_contract.c): this run sets one */
    run.cfg.dispatcher_sms = 24;
    assert_non_null(doc = moe_run_contract(&s, &run, moe_study_routing_class(&s), NULL));
    for (int a = 0; a < MOE_RETUNE_COUNT; a++) {
        const char *var = moe_retune_entry((enum moe_retune_axis)a)->variable;
        char path[128], sec[64];
        json_t *at;

        snprintf(path, sizeof(path), MOE_SK_BASELINE ".%s", var);
        if (!moe_study_field(path))
            snprintf(path, sizeof(path), MOE_SK_WORKLOAD ".%s", var);
        if (!moe_study_field(path))
            fail_msg("retune variable '%s' is no key of baseline or workload", var);
        snprintf(path, sizeof(path), MOE_CONTRACT_TUNING ".%s", var);
        for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
            if (strcmp(renamed[i].variable, var) == 0)
                snprintf(path, sizeof(path), "%s", renamed[i].contract_path);
        assert_int_equal(sscanf(path, "%63[^.]", sec), 1);
        at = json_object_get(json_object_get(doc, sec), path + strlen(sec) + 1);
        if (!at)
            fail_msg("retune variable '%s': the contract has no %s", var, path);
    }
    json_decref(doc);
    moe_study_free(&s);
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
        cmocka_unit_test(distributed_optimizer_off_only_is_written),
        cmocka_unit_test(grad_reduce_in_bf16_on_only_is_written),
        cmocka_unit_test(plugin_and_workdir),
        cmocka_unit_test(pass_through_keys),
        cmocka_unit_test(canonical_form),
        cmocka_unit_test(canonical_numbers),
        cmocka_unit_test(preset_override),
        cmocka_unit_test(schema_is_documented),
        cmocka_unit_test(retune_axes_are_documented),
        cmocka_unit_test(canonical_json_has_the_schema_keys),
        cmocka_unit_test(contract_keys_are_the_studys),
        cmocka_unit_test(retune_variables_are_study_and_contract_keys),
        cmocka_unit_test(pipeline_layouts),
    };

    snprintf(srcdir, sizeof(srcdir), "%s", src ? src : "..");
    return MOE_RUN_TESTS(tests);
}
