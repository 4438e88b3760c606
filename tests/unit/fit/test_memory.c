/* The memory model against measured peaks, and Megatron's own formula
 * against the numbers Megatron printed for the same runs. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit/megatron_memory.h"
#include "fit/memory_internal.h"
#include "study/presets.h"
#include "unit.h"

struct row {
    char id[8];
    struct moe_model m;
    struct moe_layout l;
    struct moe_workload w;
    struct moe_train t;
    double measured, theo;
};

static char *data_path(const char *rel, char *buf, size_t len)
{
    const char *src = getenv("MOEFLOW_SRCDIR");

    snprintf(buf, len, "%s/%s", src ? src : "..", rel);
    return buf;
}

/* One TSV line of data/memory into a model, a layout and a workload. */
static int parse_row(char *line, struct row *r)
{
    int layers, hidden, heads, ffn, experts, topk, moe_ffn, shared, seq, mbs, gbs, vocab, ep;
    char rc[64];

    if (sscanf(line, "%7s %d %d %d %d %d %d %d %d %d %d %d %d %d %63s %lf %lf", r->id,
               &layers, &hidden, &heads, &ffn, &experts, &topk, &moe_ffn, &shared, &seq, &mbs,
               &gbs, &vocab, &ep, rc, &r->measured, &r->theo) != 17)
        return -1;
    memset(&r->m, 0, sizeof(r->m));
    snprintf(r->m.name, sizeof(r->m.name), "row-%s", r->id);
    r->m.num_layers = layers, r->m.hidden = hidden, r->m.num_heads = heads;
    r->m.num_query_groups = heads, r->m.head_dim = hidden / heads; /* MHA, kv_channels h/a */
    r->m.ffn_hidden = ffn, r->m.num_experts = experts, r->m.topk = topk;
    r->m.moe_ffn_hidden = moe_ffn, r->m.shared_expert_ffn = shared, r->m.vocab = vocab;
    r->m.swiglu = true; /* tied embeddings: the runs did not untie them */
    r->l = (struct moe_layout){ .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = ep, .etp = 1,
                                .dp = 2, .edp = 2 / ep };
    r->w = (struct moe_workload){ .seq_len = seq, .mbs = mbs, .gbs = gbs };
    moe_train_local_defaults(&r->t);
    if (strcmp(rc, "full-uniform-1") == 0) {
        r->t.recompute.granularity = MOE_RC_FULL;
        r->t.recompute.method = MOE_RC_UNIFORM;
        r->t.recompute.num_layers = 1;
    } else if (strcmp(rc, "none") != 0) {
        return -1;
    }
    return 0;
}

static int load_rows(struct row *rows, int max)
{
    char path[1024], line[1024];
    int n = 0;
    FILE *f = fopen(data_path("tests/data/memory/h200x2-measured.tsv", path, sizeof(path)), "r");

    assert_non_null(f);
    while (fgets(line, sizeof(line), f) && n < max) {
        if (line[0] == '#' || strncmp(line, "id\t", 3) == 0)
            continue;
        assert_int_equal(parse_row(line, &rows[n]), 0);
        n++;
    }
    fclose(f);
    return n;
}

/* Every measured row is predicted within +-10% of its max allocated. */
static void measured_rows_within_ten_percent(void **state)
{
    struct row rows[32];
    int n = load_rows(rows, 32);

    (void)state;
    assert_true(n >= 3);
    for (int i = 0; i < n; i++) {
        struct moe_memory mm;
        struct moe_megatron_memory mg;
        assert_int_equal(moe_memory_estimate(&rows[i].m, &rows[i].l, &rows[i].w, &rows[i].t,
                                             &mm, NULL), 0);
        moe_megatron_memory(&rows[i].m, &rows[i].l, &rows[i].w, &rows[i].t, &mg);
        double ours = mm.total / MOE_MIB, err = (ours - rows[i].measured) / rows[i].measured;
        double merr = (mg.total - rows[i].measured) / rows[i].measured;
        printf("# row %s: measured %.2f MiB, ours %.2f (%+.1f%%), Megatron %.2f (%+.1f%%)\n",
               rows[i].id, rows[i].measured, ours, 100 * err, mg.total, 100 * merr);
        assert_true(fabs(err) <= 0.10);
    }
}

/* Megatron's formula reproduces its own printed total for every row. */
static void megatron_formula_matches_tsv(void **state)
{
    struct row rows[32];
    int n = load_rows(rows, 32);

    (void)state;
    for (int i = 0; i < n; i++) {
        struct moe_megatron_memory mg;
        moe_megatron_memory(&rows[i].m, &rows[i].l, &rows[i].w, &rows[i].t, &mg);
        assert_true(fabs(mg.total - rows[i].theo) < 0.01);
    }
}

/* The breakdown matches the log line of row A: 504.24 + 325.53 = 829.77 MB,
 * 68.0 MB per layer without SP, 0.0315 billion parameters on the shard. */
static void megatron_formula_matches_log(void **state)
{
    struct row rows[32];
    struct moe_megatron_memory mg;
    char path[1024], line[512];
    double wo = 0, act = 0, tot = 0;
    FILE *f;

    (void)state;
    load_rows(rows, 32);
    f = fopen(data_path("tests/data/memory/h200x2-ep2-theoretical.log", path, sizeof(path)), "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "Theoretical memory footprints: weight and optimizer=%lf MB, "
                         "activation=%lf MB, total=%lf MB", &wo, &act, &tot) == 3)
            break;
    fclose(f);
    assert_true(tot > 0);
    moe_megatron_memory(&rows[0].m, &rows[0].l, &rows[0].w, &rows[0].t, &mg);
    assert_true(fabs(mg.weight_and_optimizer - wo) < 0.005);
    assert_true(fabs(mg.activation - act) < 0.005);
    assert_true(fabs(mg.total - tot) < 0.005);
    assert_true(fabs(mg.per_layer_activation - 68.0) < 0.05);
    assert_true(fabs(mg.params_most_loaded / 1e9 - 0.0315) < 0.00005);
    assert_false(mg.with_sp);
}

/* Row A's rank holds 31,478,272 parameters, the count Megatron logged:
 * 4 x (QKV 786,432 + proj 262,144 + norms 1,024 + router 4,096 + 4 local
 * experts x 1,572,864) + embedding 2,097,152 + final norm 512. */
static void parameter_count_matches_megatron(void **state)
{
    struct row rows[32];
    struct moe_memory mm;

    (void)state;
    load_rows(rows, 32);
    assert_int_equal(moe_memory_estimate(&rows[0].m, &rows[0].l, &rows[0].w, &rows[0].t, &mm,
                                         NULL), 0);
    assert_true(fabs(mm.params_dense - 6312448.0) < 0.5);     /* the dense grad bucket */
    assert_true(fabs(mm.params_expert - 25165824.0) < 0.5);
    /* bf16 params 2 + fp32 grads 4 + optimizer 12/DP dense, 12/EDP experts */
    double want = 6312448.0 * (6 + 6) + 25165824.0 * 18;
    assert_true(fabs(mm.weights + mm.grads + mm.optimizer - want) < 1);
}

/* Each selective module saves memory, full recompute saves more, and the
 * distributed optimizer shards over DP: all on Qwen3-30B-A3B EP16. */
static void recompute_and_sharding_order(void **state)
{
    const struct moe_model *m = moe_preset_find("qwen3-30b-a3b");
    struct moe_layout l = { .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 16, .etp = 1,
                            .dp = 16, .edp = 1 };
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 256 };
    struct moe_train t;
    struct moe_memory none, sel, full, nodist;

    (void)state;
    moe_train_defaults(&t);
    assert_int_equal(moe_memory_estimate(m, &l, &w, &t, &none, NULL), 0);
    t.recompute.granularity = MOE_RC_SELECTIVE;
    for (int b = 0; b < MOE_RC_MODULE_COUNT; b++) {
        struct moe_memory one;
        t.recompute.modules = 1u << b;
        assert_int_equal(moe_memory_estimate(m, &l, &w, &t, &one, NULL), 0);
        assert_true(one.total <= none.total);
    }
    t.recompute.modules = MOE_RC_MOE_ACT | MOE_RC_LAYERNORM;
    assert_int_equal(moe_memory_estimate(m, &l, &w, &t, &sel, NULL), 0);
    assert_true(sel.total < none.total);
    t.recompute.granularity = MOE_RC_FULL;
    assert_int_equal(moe_memory_estimate(m, &l, &w, &t, &full, NULL), 0);
    assert_true(full.total < sel.total);
    t.recompute.granularity = MOE_RC_NONE;
    t.distributed_optimizer = false;
    assert_int_equal(moe_memory_estimate(m, &l, &w, &t, &nodist, NULL), 0);
    /* 12 bytes per dense parameter are no longer divided by DP = 16 */
    assert_true(fabs(nodist.optimizer - none.optimizer -
                     12 * none.params_dense * (1 - 1.0 / 16)) < 1);
}

/* The model state, term by term, against its formula: bf16 weights, fp32
 * (or bf16) gradients, and the distributed optimizer's 12 bytes per
 * parameter over DP x CP for dense and over EDP for expert parameters;
 * expert parameters split over EP x ETP; two cuBLAS workspaces. */
static void model_state_terms(void **state)
{
    const struct moe_model *m = moe_preset_find("qwen3-30b-a3b");
    struct moe_layout l = { .tp = 1, .cp = 2, .pp = 1, .vpp = 1, .ep = 4, .etp = 1,
                            .dp = 8, .edp = 4 };
    struct moe_layout l2 = l;
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 256 };
    struct moe_train t;
    struct moe_memory a, b, c;
    double pd, pe;

    (void)state;
    moe_train_defaults(&t);
    assert_int_equal(moe_memory_estimate(m, &l, &w, &t, &a, NULL), 0);
    pd = a.params_dense, pe = a.params_expert;
    assert_true(pd > 0 && pe > 0);
    assert_true(fabs(a.weights - 2 * (pd + pe)) < 1);
    assert_true(fabs(a.grads - 4 * (pd + pe)) < 1);             /* fp32 main grads */
    assert_true(fabs(a.optimizer - 12 * (pd / (8.0 * 2) + pe / 4.0)) < 1);
    /* TE: no score buffer; the persistent part is the two workspaces */
    assert_true(fabs(a.persistent - 2 * 32.0 * MOE_MIB) < 1);
    t.grads_fp32 = false;
    assert_int_equal(moe_memory_estimate(m, &l, &w, &t, &b, NULL), 0);
    assert_true(fabs(b.grads - 2 * (pd + pe)) < 1);
    /* ETP 2 at the same EP halves the expert parameters on a rank */
    l2.etp = 2, l2.edp = 2;
    t.grads_fp32 = true;
    assert_int_equal(moe_memory_estimate(m, &l2, &w, &t, &c, NULL), 0);
    assert_true(fabs(c.params_expert - pe / 2) < 1);
    assert_true(fabs(c.params_dense - pd) < 1);
}

/* The MoE activations hold top-k copies of every token: top-8 saves more
 * than top-4 by the experts' share, and a shared expert adds its own. */
static void moe_activations_grow_with_topk_and_shared_expert(void **state)
{
    struct moe_model m = *moe_preset_find("qwen3-30b-a3b");
    struct moe_layout l = { .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 8, .etp = 1,
                            .dp = 8, .edp = 1 };
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 64 };
    struct moe_train t;
    struct moe_layer_acts k8, k4, shared;
    double tok = 4096, h = m.hidden, f = m.moe_ffn_hidden;

    (void)state;
    moe_train_defaults(&t);
    moe_memory_layer_acts(&m, &l, &w, &t, &k8);
    m.topk = 4;
    moe_memory_layer_acts(&m, &l, &w, &t, &k4);
    /* per token copy: dispatched input, fc1 (swiglu: 2f), activation, combine */
    assert_true(fabs((k8.moe.ffn - k4.moe.ffn) - 4 * tok * (2 * h + 2 * 2 * f + 2 * f + 2 * h)) < 1);
    m.topk = 8;
    m.shared_expert_ffn = 1024;
    moe_memory_layer_acts(&m, &l, &w, &t, &shared);
    assert_true(shared.moe.ffn > k8.moe.ffn);
}

/* Under an FP8 recipe TE saves the GEMMs' inputs in one byte: per routed
 * token copy the experts' FC1 input (h) and FC2 input (f) halve, while the
 * FC1 output (SwiGLU's input) and the combine buffer stay BF16; the
 * router's input stays BF16 too.  The local implementation has no FP8. */
static void fp8_saves_gemm_inputs_in_one_byte(void **state)
{
    const struct moe_model *m = moe_preset_find("qwen3-30b-a3b");
    struct moe_layout l = { .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 8, .etp = 1,
                            .dp = 8, .edp = 1 };
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 64 };
    struct moe_train t;
    struct moe_layer_acts bf16, fp8, local_bf16, local_fp8;
    double tok = 4096, h = m->hidden, f = m->moe_ffn_hidden, copies = tok * m->topk;

    (void)state;
    moe_train_defaults(&t);
    moe_memory_layer_acts(m, &l, &w, &t, &bf16);
    t.fp8_inputs = true;
    moe_memory_layer_acts(m, &l, &w, &t, &fp8);
    assert_true(fabs((bf16.moe.ffn - fp8.moe.ffn) - copies * (h + f)) < 1);
    /* attention: the QKV GEMM's input (the norm's output) and the
     * projection's input (the context) */
    double ctx = (double)m->num_heads * m->head_dim;
    assert_true(fabs((bf16.moe.attn - fp8.moe.attn) - tok * (h + ctx)) < 1);
    moe_train_local_defaults(&t);
    moe_memory_layer_acts(m, &l, &w, &t, &local_bf16);
    t.fp8_inputs = true;
    moe_memory_layer_acts(m, &l, &w, &t, &local_fp8);
    assert_true(local_fp8.moe.ffn == local_bf16.moe.ffn);
}

/* Module lists round-trip; an unknown module is named in the error. */
static void recompute_module_names(void **state)
{
    unsigned bits;
    char buf[128];
    struct moe_error e;

    (void)state;
    assert_int_equal(moe_recompute_modules_parse("moe_act,layernorm", &bits, &e), 0);
    assert_int_equal(bits, MOE_RC_MOE_ACT | MOE_RC_LAYERNORM);
    assert_string_equal(moe_recompute_modules_format(bits, buf, sizeof(buf)),
                        "moe_act,layernorm");
    assert_int_equal(moe_recompute_modules_parse("moe_act,attn", &bits, &e), -1);
    assert_non_null(strstr(e.text, "'attn'"));
}

/* The tiny study's GPU lane runs (tests/gpu/results.tsv, core 0.19 and
 * bridge-pin alike, local impl, dropout 0.1, vocab 32000): peak "max
 * allocated" over the ranks Megatron printed, each within 10%. */
static void gpu_lane_rows_within_ten_percent(void **state)
{
    static const struct {
        int pp, vpp, ep, etp, mbs;
        enum moe_recompute_granularity g;
        unsigned mods;
        double measured;
    } runs[] = {
        { 1, 1, 2, 1, 1, MOE_RC_NONE, 0, 1375.4 },
        { 1, 1, 2, 1, 1, MOE_RC_SELECTIVE, MOE_RC_CORE_ATTN, 1219.1 },
        { 1, 1, 2, 1, 1, MOE_RC_FULL, 0, 1118.8 },
        { 1, 1, 1, 1, 1, MOE_RC_NONE, 0, 1513.2 },
        { 1, 1, 1, 2, 1, MOE_RC_NONE, 0, 1377.2 },
        { 2, 1, 1, 1, 1, MOE_RC_NONE, 0, 1140.5 },
        { 2, 2, 1, 1, 1, MOE_RC_NONE, 0, 1208.4 },
        { 1, 1, 2, 1, 2, MOE_RC_NONE, 0, 1838.6 },
    };
    struct moe_model m;

    (void)state;
    memset(&m, 0, sizeof(m));
    m.num_layers = 4, m.hidden = 512, m.ffn_hidden = 2048, m.moe_ffn_hidden = 1024;
    m.num_experts = 8, m.topk = 2, m.num_heads = 8, m.num_query_groups = 4;
    m.head_dim = 64, m.vocab = 32000, m.swiglu = true, m.untie_embeddings = true;
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        int dp = 2 / runs[i].pp, edp = dp / (runs[i].ep * runs[i].etp);
        struct moe_layout l = { .tp = 1, .cp = 1, .pp = runs[i].pp, .vpp = runs[i].vpp,
                                .ep = runs[i].ep, .etp = runs[i].etp, .dp = dp,
                                .edp = edp > 0 ? edp : 1 };
        struct moe_workload w = { .seq_len = 1024, .mbs = runs[i].mbs, .gbs = 8 };
        struct moe_train t;
        struct moe_memory mm;
        moe_train_local_defaults(&t);
        t.recompute.granularity = runs[i].g, t.recompute.modules = runs[i].mods;
        assert_int_equal(moe_memory_estimate(&m, &l, &w, &t, &mm, NULL), 0);
        double err = (mm.total / MOE_MIB - runs[i].measured) / runs[i].measured;
        printf("# gpu lane %zu: measured %.1f MiB, ours %.1f (%+.1f%%)\n", i,
               runs[i].measured, mm.total / MOE_MIB, 100 * err);
        assert_true(fabs(err) <= 0.10);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(measured_rows_within_ten_percent),
        cmocka_unit_test(megatron_formula_matches_tsv),
        cmocka_unit_test(megatron_formula_matches_log),
        cmocka_unit_test(parameter_count_matches_megatron),
        cmocka_unit_test(recompute_and_sharding_order),
        cmocka_unit_test(model_state_terms),
        cmocka_unit_test(moe_activations_grow_with_topk_and_shared_expert),
        cmocka_unit_test(fp8_saves_gemm_inputs_in_one_byte),
        cmocka_unit_test(recompute_module_names),
        cmocka_unit_test(gpu_lane_rows_within_ten_percent),
    };
    return MOE_RUN_TESTS(tests);
}
