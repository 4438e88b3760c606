/* Layout rules, the published recipe layouts, ranking and rank groups. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit/layouts.h"
#include "study/presets.h"
#include "fit/rankgroups.h"
#include "study/study.h"
#include "study/study_fit.h"
#include "unit.h"

static enum moe_rule check(const char *preset, struct moe_layout l, struct moe_workload w,
                           const struct moe_train *t, int world)
{
    char why[256];
    enum moe_rule r = moe_layout_check(moe_preset_find(preset), &l, &w, t, world, why,
                                       sizeof(why));
    if (r != MOE_RULE_OK)
        printf("# %s: %s\n", moe_rule_id(r), why);
    return r;
}

static struct moe_layout L(int tp, int cp, int pp, int vpp, int ep, int etp)
{
    return (struct moe_layout){ .tp = tp, .cp = cp, .pp = pp, .vpp = vpp, .ep = ep, .etp = etp };
}

/* Fits on an 80 GB GPU with 10% headroom, recompute allowed. */
static bool fits_80gb(const char *preset, struct moe_layout l, struct moe_workload w,
                      const struct moe_train *t, int world)
{
    struct moe_machine c;
    struct moe_fit f;
    char buf[200];

    moe_machine_defaults(&c);
    c.gpus = world;
    assert_int_equal(moe_layout_check(moe_preset_find(preset), &l, &w, t, world, NULL, 0),
                     MOE_RULE_OK);
    assert_int_equal(moe_fit_layout(moe_preset_find(preset), &l, &w, t, &c, &f, NULL), 0);
    printf("# %s on %d: %s\n", preset, world, moe_fit_describe(&f, &c, buf, sizeof(buf)));
    return f.fits;
}

/* The published recipes are valid and fit: Qwen3-30B-A3B EP16 on 16,
 * Qwen3-235B-A22B TP2 PP8 VPP4 EP32 on 256 and DeepSeek-V3 TP2 PP8 VPP4
 * EP64 on 1024 (both with an explicit uneven pipeline layout: 94 and 61
 * layers do not split into 32 chunks evenly). */
static void published_recipes_fit(void **state)
{
    struct moe_train t;
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 512 };

    (void)state;
    moe_train_defaults(&t);
    assert_true(fits_80gb("qwen3-30b-a3b", L(1, 1, 1, 1, 16, 1), w, &t, 16));
    t.uneven_pp = true;
    w.gbs = 2048;
    assert_true(fits_80gb("qwen3-235b-a22b", L(2, 1, 8, 4, 32, 1), w, &t, 256));
    w.gbs = 8192;
    assert_true(fits_80gb("deepseek-v3", L(2, 1, 8, 4, 64, 1), w, &t, 1024));
}

/* Each impossible layout is rejected by the rule that breaks it. */
static void impossible_layouts_name_their_rule(void **state)
{
    struct moe_train t, local, nosp, even;
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 256 };

    (void)state;
    moe_train_defaults(&t);
    moe_train_local_defaults(&local);
    nosp = t, nosp.sequence_parallel = false;
    even = t;
    assert_int_equal(check("qwen3-30b-a3b", L(1, 1, 1, 1, 3, 1),
                           (struct moe_workload){ .seq_len = 4096, .mbs = 1, .gbs = 96 },
                           &t, 48),
                     MOE_RULE_EXPERTS_EP);          /* 128 experts, EP 3 */
    assert_int_equal(check("qwen3-30b-a3b", L(3, 1, 1, 1, 1, 1), w, &t, 48),
                     MOE_RULE_HEADS_TP);            /* 32 heads, TP 3 */
    /* Megatron replicates KV heads when TP is a multiple of the groups
     * (4 groups, TP 8); it refuses TP neither a divisor nor a multiple */
    assert_int_equal(check("qwen3-30b-a3b", L(8, 1, 1, 1, 1, 1), w, &t, 16), MOE_RULE_OK);
    {
        struct moe_model twelve = *moe_preset_find("qwen3-30b-a3b");
        struct moe_layout l = L(8, 1, 1, 1, 1, 1);

        twelve.num_heads = 48, twelve.num_query_groups = 12;
        assert_int_equal(moe_layout_check(&twelve, &l, &w, &t, 16, NULL, 0),
                         MOE_RULE_GROUPS_TP); /* 12 query groups, TP 8 */
    }
    assert_int_equal(check("qwen3-30b-a3b", L(1, 1, 1, 2, 8, 1), w, &t, 16),
                     MOE_RULE_VPP_PP);              /* VPP without PP */
    assert_int_equal(check("qwen3-30b-a3b", L(1, 1, 4, 5, 4, 1), w, &t, 16),
                     MOE_RULE_VPP_LAYERS);          /* 48 layers, 20 chunks */
    assert_int_equal(check("qwen3-30b-a3b", L(1, 3, 1, 1, 1, 1), w, &t, 48),
                     MOE_RULE_SEQ_CP);              /* 4096 % 6 */
    assert_int_equal(check("qwen3-30b-a3b", L(1, 2, 1, 1, 2, 1), w, &local, 16),
                     MOE_RULE_CP_IMPL);             /* local attention has no CP */
    assert_int_equal(check("qwen3-30b-a3b", L(1, 1, 1, 1, 16, 1),
                           (struct moe_workload){ .seq_len = 4096, .mbs = 1, .gbs = 100 },
                           &t, 16),
                     MOE_RULE_GBS);                 /* 100 % 16 */
    assert_int_equal(check("qwen3-30b-a3b", L(2, 1, 1, 1, 2, 1), w, &nosp, 16),
                     MOE_RULE_SP);                  /* TP2 + EP2 without SP */
    assert_int_equal(check("qwen3-30b-a3b", L(1, 1, 5, 1, 1, 1), w, &even, 40),
                     MOE_RULE_LAYERS_PP);           /* 48 % 5 */
    assert_int_equal(check("qwen3-30b-a3b", L(4, 2, 4, 1, 1, 1), w, &t, 16),
                     MOE_RULE_WORLD_DENSE);         /* 32 > 16 */
    assert_int_equal(check("qwen3-30b-a3b", L(1, 1, 2, 1, 16, 1), w, &t, 16),
                     MOE_RULE_WORLD_EXPERT);        /* EP16 x PP2 > 16 */
    assert_int_equal(check("mixtral-8x7b", L(1, 1, 1, 1, 1, 3),
                           (struct moe_workload){ .seq_len = 4096, .mbs = 1, .gbs = 96 },
                           &t, 48),
                     MOE_RULE_FFN_ETP);             /* 14336 % 3 != 0 */
    assert_int_equal(check("qwen3-30b-a3b", L(4, 1, 1, 1, 1, 1),
                           (struct moe_workload){ .seq_len = 4098, .mbs = 1, .gbs = 256 },
                           &t, 16),
                     MOE_RULE_SEQ_TP);              /* 4098 tokens over SP 4 */
    {
        struct moe_model odd = *moe_preset_find("qwen3-30b-a3b");
        struct moe_layout l = L(2, 1, 1, 1, 1, 1);
        odd.ffn_hidden = 6145;                      /* no even TP split */
        assert_int_equal(moe_layout_check(&odd, &l, &w, &t, 16, NULL, 0), MOE_RULE_FFN_TP);
    }
    assert_int_equal(check("deepseek-v3", L(2, 1, 8, 4, 64, 1),
                           (struct moe_workload){ .seq_len = 4096, .mbs = 1, .gbs = 8192 },
                           &even, 1024),
                     MOE_RULE_LAYERS_PP);           /* 61 layers need a layout string */
}

/* Every rule at its boundary: the smallest layout that breaks it names
 * it (and no other), and the nearest one that does not passes.  Built so
 * that the rule's weakened form (seq % CP for seq % 2CP, seq % TP for
 * seq/CP % TP, a remainder of 1 accepted, the shared expert left out, ...)
 * lets the bad layout through or names another rule. */
struct boundary {
    const char *what;
    int layers, ffn, shared, heads, groups, experts, moe_ffn; /* 0: the preset's */
    int seq, mbs, gbs, world;
    bool local, nosp, uneven;
    struct moe_layout l;
    enum moe_rule want;
};

static const struct boundary boundaries[] = {
    { "PP one more than the layers", 4, 0, 0, 0, 0, 0, 0, 4096, 1, 5, 5, false, false, true,
      { .tp = 1, .cp = 1, .pp = 5, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_LAYERS_PP },
    { "PP as many as the layers", 4, 0, 0, 0, 0, 0, 0, 4096, 1, 4, 4, false, false, true,
      { .tp = 1, .cp = 1, .pp = 4, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_OK },
    { "5 layers over PP 2 (remainder 1)", 5, 0, 0, 0, 0, 0, 0, 4096, 1, 8, 2, false, false, false,
      { .tp = 1, .cp = 1, .pp = 2, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_LAYERS_PP },
    { "6 layers over PP 2", 6, 0, 0, 0, 0, 0, 0, 4096, 1, 8, 2, false, false, false,
      { .tp = 1, .cp = 1, .pp = 2, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_OK },
    { "a dense FFN that TP 2 does not split", 0, 6145, 0, 0, 0, 0, 0, 4096, 1, 256, 16, false,
      false, false, { .tp = 2, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_FFN_TP },
    { "a shared expert that TP 2 does not split", 0, 0, 1025, 0, 0, 0, 0, 4096, 1, 256, 16,
      false, false, false, { .tp = 2, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 },
      MOE_RULE_FFN_TP },
    { "a shared expert that TP 2 splits", 0, 0, 1024, 0, 0, 0, 0, 4096, 1, 256, 16, false,
      false, false, { .tp = 2, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_OK },
    { "CP 2 with sequence 4098 (not a multiple of 2*CP)", 0, 0, 0, 0, 0, 0, 0, 4098, 1, 256, 16,
      false, false, false, { .tp = 1, .cp = 2, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 },
      MOE_RULE_SEQ_CP },
    { "CP 2 with sequence 4100", 0, 0, 0, 0, 0, 0, 0, 4100, 1, 256, 16, false, false, false,
      { .tp = 1, .cp = 2, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_OK },
    { "TP 4 x CP 2 with sequence 4100 (a shard of 2050)", 0, 0, 0, 0, 0, 0, 0, 4100, 1, 256, 16,
      false, false, false, { .tp = 4, .cp = 2, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 },
      MOE_RULE_SEQ_TP },
    { "TP 4 x CP 2 with sequence 4104 (a shard of 2052)", 0, 0, 0, 0, 0, 0, 0, 4104, 1, 256, 16,
      false, false, false, { .tp = 4, .cp = 2, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 },
      MOE_RULE_OK },
    { "TP 2 without SP, an odd sequence: MoE needs SP first", 0, 0, 0, 0, 0, 0, 0, 4097, 1, 256,
      16, false, true, false, { .tp = 2, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 },
      MOE_RULE_SP },
    { "CP 2 without TE", 0, 0, 0, 0, 0, 0, 0, 4096, 1, 256, 16, true, false, false,
      { .tp = 1, .cp = 2, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_CP_IMPL },
    { "GBS 16 at MBS 2 x DP 16", 0, 0, 0, 0, 0, 0, 0, 4096, 2, 16, 16, false, false, false,
      { .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_GBS },
    { "GBS 32 at MBS 2 x DP 16", 0, 0, 0, 0, 0, 0, 0, 4096, 2, 32, 16, false, false, false,
      { .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_OK },
    { "TP 3 on 16 GPUs", 0, 0, 0, 0, 0, 0, 0, 4096, 1, 256, 16, false, false, false,
      { .tp = 3, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_WORLD_DENSE },
    { "TP 3 over 32 heads on 48 GPUs", 0, 0, 0, 0, 0, 0, 0, 4096, 1, 96, 48, false, false, false,
      { .tp = 3, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_HEADS_TP },
    { "EP 3 on 16 GPUs", 0, 0, 0, 0, 0, 0, 0, 4096, 1, 256, 16, false, false, false,
      { .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 3, .etp = 1 }, MOE_RULE_WORLD_EXPERT },
    { "EP 3 on 48 GPUs, 128 experts", 0, 0, 0, 0, 0, 0, 0, 4096, 1, 96, 48, false, false, false,
      { .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 3, .etp = 1 }, MOE_RULE_EXPERTS_EP },
    { "ETP 3, expert FFN 769", 0, 0, 0, 0, 0, 0, 769, 4096, 1, 96, 48, false, false, false,
      { .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 3 }, MOE_RULE_FFN_ETP },
    { "ETP 3, expert FFN 768", 0, 0, 0, 0, 0, 0, 768, 4096, 1, 96, 48, false, false, false,
      { .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 3 }, MOE_RULE_OK },
    { "VPP 2 at PP 1", 0, 0, 0, 0, 0, 0, 0, 4096, 1, 256, 16, false, false, false,
      { .tp = 1, .cp = 1, .pp = 1, .vpp = 2, .ep = 1, .etp = 1 }, MOE_RULE_VPP_PP },
    { "PP 2 x VPP 3 over 4 layers, uneven allowed", 4, 0, 0, 0, 0, 0, 0, 4096, 1, 8, 2, false,
      false, true, { .tp = 1, .cp = 1, .pp = 2, .vpp = 3, .ep = 1, .etp = 1 },
      MOE_RULE_VPP_LAYERS },
    { "PP 2 x VPP 2 over 4 layers", 4, 0, 0, 0, 0, 0, 0, 4096, 1, 8, 2, false, false, false,
      { .tp = 1, .cp = 1, .pp = 2, .vpp = 2, .ep = 1, .etp = 1 }, MOE_RULE_OK },
    { "PP 2 x VPP 3 over 8 layers, even", 8, 0, 0, 0, 0, 0, 0, 4096, 1, 8, 2, false, false, false,
      { .tp = 1, .cp = 1, .pp = 2, .vpp = 3, .ep = 1, .etp = 1 }, MOE_RULE_VPP_LAYERS },
    { "TP 8 over 4 query groups (a multiple)", 0, 0, 0, 0, 0, 0, 0, 4096, 1, 256, 16, false,
      false, false, { .tp = 8, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_OK },
    { "TP 2 over 12 query groups of 48 heads (a divisor)", 0, 0, 0, 48, 12, 0, 0, 4096, 1, 256,
      16, false, false, false, { .tp = 2, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 },
      MOE_RULE_OK },
    { "TP 8 over 12 query groups (neither)", 0, 0, 0, 48, 12, 0, 0, 4096, 1, 256, 16, false,
      false, false, { .tp = 8, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 },
      MOE_RULE_GROUPS_TP },
    { "TP 16 over 12 query groups (neither, more ranks than groups)", 0, 0, 0, 48, 12, 0, 0,
      4096, 1, 256, 16, false, false, false,
      { .tp = 16, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 }, MOE_RULE_GROUPS_TP },
};

static void each_rule_at_its_boundary(void **state)
{
    bool named[MOE_RULE_COUNT] = { false };

    (void)state;
    for (size_t i = 0; i < sizeof(boundaries) / sizeof(boundaries[0]); i++) {
        const struct boundary *b = &boundaries[i];
        struct moe_model m = *moe_preset_find("qwen3-30b-a3b");
        struct moe_workload w = { .seq_len = b->seq, .mbs = b->mbs, .gbs = b->gbs };
        struct moe_layout l = b->l;
        struct moe_train t;
        char why[256];
        enum moe_rule got;

        if (b->local)
            moe_train_local_defaults(&t);
        else
            moe_train_defaults(&t);
        t.sequence_parallel = !b->nosp && !b->local;
        t.uneven_pp = b->uneven;
        m.num_layers = b->layers ? b->layers : m.num_layers;
        m.ffn_hidden = b->ffn ? b->ffn : m.ffn_hidden;
        m.shared_expert_ffn = b->shared;
        m.num_heads = b->heads ? b->heads : m.num_heads;
        m.num_query_groups = b->groups ? b->groups : m.num_query_groups;
        m.num_experts = b->experts ? b->experts : m.num_experts;
        m.moe_ffn_hidden = b->moe_ffn ? b->moe_ffn : m.moe_ffn_hidden;
        got = moe_layout_check(&m, &l, &w, &t, b->world, why, sizeof(why));
        if (got != b->want)
            fail_msg("%s: %s, expected %s (%s)", b->what, moe_rule_id(got), moe_rule_id(b->want),
                     why);
        named[got] = true;
    }
    for (int r = 0; r < MOE_RULE_COUNT; r++)
        if (!named[r])
            fail_msg("no boundary case names %s", moe_rule_id((enum moe_rule)r));
}

/* Megatron's process groups for world 16, TP2 PP2 EP4 ETP1, line for line. */
static void rank_groups_match_megatron(void **state)
{
    struct moe_layout l = { .tp = 2, .cp = 1, .pp = 2, .dp = 4, .ep = 4, .etp = 1, .edp = 2 };
    char want[4096], got[4096], path[1024];
    const char *src = getenv("MOEFLOW_SRCDIR");
    FILE *f;
    size_t n;

    (void)state;
    snprintf(path, sizeof(path), "%s/tests/data/megatron/rank-groups-w16-tp2-pp2-ep4-etp1.txt",
             src ? src : "..");
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(want, 1, sizeof(want) - 1, f);
    fclose(f);
    want[n] = '\0';
    assert_true(moe_rank_groups_format(&l, 16, got, sizeof(got)) > 0);
    assert_string_equal(got, want);
}

/* Every combination is counted once, whether or not rejects are kept, and
 * the enumerator contains the published EP16 layout. */
static void enumeration_counts_add_up(void **state)
{
    const struct moe_model *m = moe_preset_find("qwen3-30b-a3b");
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 256 };
    struct moe_train t;
    struct moe_machine c;
    struct moe_layout_set a, b;
    size_t rej = 0;
    bool ep16 = false;

    (void)state;
    moe_train_defaults(&t);
    moe_machine_defaults(&c);
    c.gpus = 16;
    assert_int_equal(moe_layouts_enumerate(m, &w, &t, &c, 0, false, &a, NULL), 0);
    assert_int_equal(moe_layouts_enumerate(m, &w, &t, &c, 0, true, &b, NULL), 0);
    for (int r = 0; r < MOE_RULE_COUNT; r++) {
        rej += a.rejected_by[r];
        assert_int_equal(a.rejected_by[r], b.rejected_by[r]);
    }
    assert_int_equal(a.considered, a.n_valid + rej);
    assert_int_equal(b.n_rejected, rej);
    assert_int_equal(a.n_valid, b.n_valid);
    for (size_t i = 0; i < a.n_ranked; i++) {
        const struct moe_layout *l = &a.valid[i].layout;
        if (l->tp == 1 && l->cp == 1 && l->pp == 1 && l->ep == 16 && l->etp == 1) {
            ep16 = true;
            assert_true(a.valid[i].fits);
        }
        /* fitting layouts come first */
        if (i > 0)
            assert_true(a.valid[i - 1].fits || !a.valid[i].fits);
    }
    assert_true(ep16);
    /* 6 divisors of 16 for each of TP, CP, EP, ETP, 5 of PP, VPP per PP */
    assert_true(a.considered > 6 * 6 * 6 * 6 * 5);
    moe_layout_set_free(&a);
    moe_layout_set_free(&b);
}

/* The ranking is by predicted step time, fitting layouts first, with the
 * rule that decided each place; the seed's rules only break near-ties. */
static void ranking_names_the_deciding_rule(void **state)
{
    const struct moe_model *m = moe_preset_find("qwen3-30b-a3b");
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 256 };
    struct moe_train t;
    struct moe_machine c;
    struct moe_layout_set s;

    (void)state;
    moe_train_defaults(&t);
    moe_machine_defaults(&c);
    c.gpus = 16;
    assert_int_equal(moe_layouts_enumerate(m, &w, &t, &c, 0, false, &s, NULL), 0);
    assert_true(s.n_fitting > 0);
    const struct moe_layout_entry *top = &s.valid[0];
    assert_true(top->fits);
    assert_int_equal(top->layout.etp, 1); /* EP before ETP */
    assert_true(top->decided_by != MOE_SCALE_NONE);
    assert_true(top->time.step_ms > 0 && top->time.tflops_per_gpu > 0);
    /* down the fitting part, no layout is more than a near-tie faster
     * than one ranked above it, and each rule named holds */
    for (size_t i = 1; i < s.n_ranked && s.valid[i].fits; i++) {
        const struct moe_layout_entry *a = &s.valid[i - 1], *b = &s.valid[i];
        assert_true(b->time.step_ms * (1 + MOE_NEAR_TIE) >= a->time.step_ms * (1 - 1e-9) ||
                    a->decided_by == MOE_SCALE_FITS);
        if (a->decided_by == MOE_SCALE_DP)
            assert_true(a->layout.dp > b->layout.dp);
        if (a->decided_by == MOE_SCALE_STEP_TIME)
            assert_true(a->time.step_ms < b->time.step_ms);
    }
    moe_layout_set_free(&s);
}

/* On a GPU type no published or measured step time calibrates (A100),
 * the seed's rules rank first: the most DP among layouts that fit alike,
 * the predicted step only breaking ties; on H100 the model may put a
 * smaller DP first (Mixtral on 16 GPUs: CP2 x DP4).  --top K stays the
 * head of the full ranking. */
static void uncalibrated_gpu_ranks_by_the_rules(void **state)
{
    const struct moe_model *m = moe_preset_find("mixtral-8x7b");
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 256 };
    struct moe_train t;
    struct moe_machine c;
    struct moe_layout_set s, head, h100;

    (void)state;
    moe_train_defaults(&t);
    moe_machine_defaults(&c);
    c.gpus = 16;
    assert_int_equal(moe_layouts_enumerate(m, &w, &t, &c, 0, false, &h100, NULL), 0);
    assert_false(h100.rules_first);
    assert_true(h100.valid[0].layout.dp < 16);
    assert_int_equal(moe_perf_defaults(MOE_GPU_A100, MOE_IMPL_TE, &c.perf), 0);
    assert_int_equal(moe_layouts_enumerate(m, &w, &t, &c, 0, false, &s, NULL), 0);
    assert_true(s.rules_first);
    assert_int_equal(s.valid[0].layout.dp, 16);
    for (size_t i = 1; i < s.n_ranked && s.valid[i].fits; i++) {
        const struct moe_layout_entry *a = &s.valid[i - 1], *b = &s.valid[i];

        assert_int_not_equal(a->decided_by, MOE_SCALE_STEP_TIME);
        if (a->step == b->step)
            assert_true(a->layout.dp >= b->layout.dp);
    }
    assert_int_equal(moe_layouts_enumerate(m, &w, &t, &c, 3, false, &head, NULL), 0);
    for (size_t i = 0; i < 3; i++)
        assert_memory_equal(&head.valid[i].layout, &s.valid[i].layout, sizeof(struct moe_layout));
    moe_layout_set_free(&head);
    moe_layout_set_free(&s);
    moe_layout_set_free(&h100);
}

/* One entry per grid (TP, CP, PP, EP, ETP): the best VPP stands for it
 * and the others are listed under it, fastest first. */
static void one_entry_per_grid(void **state)
{
    const struct moe_model *m = moe_preset_find("qwen3-235b-a22b");
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 2048 };
    struct moe_train t;
    struct moe_machine c;
    struct moe_layout_set s;
    size_t with_alts = 0;

    (void)state;
    moe_train_defaults(&t);
    moe_machine_defaults(&c);
    c.gpus = 256;
    t.uneven_pp = true;
    assert_int_equal(moe_layouts_enumerate(m, &w, &t, &c, 0, false, &s, NULL), 0);
    assert_int_equal(s.n_ranked, s.n_grids);
    assert_true(s.n_grids < s.n_valid);
    for (size_t i = 0; i < s.n_ranked; i++) {
        const struct moe_layout_entry *e = &s.valid[i];
        for (size_t j = i + 1; j < s.n_ranked && j < i + 50; j++) {
            const struct moe_layout *x = &e->layout, *y = &s.valid[j].layout;
            assert_false(x->tp == y->tp && x->cp == y->cp && x->pp == y->pp &&
                         x->ep == y->ep && x->etp == y->etp);
        }
        int shown = e->n_vpp - 1 < MOE_VPP_ALT_MAX ? e->n_vpp - 1 : MOE_VPP_ALT_MAX;
        with_alts += shown > 0;
        for (int k = 0; k < shown; k++) {
            assert_int_not_equal(e->alt[k].vpp, e->layout.vpp);
            if (k > 0)
                assert_true(e->alt[k - 1].step_ms <= e->alt[k].step_ms);
        }
    }
    assert_true(with_alts > 0);
    moe_layout_set_free(&s);
}

static char srcdir[4096];

/* --top K is exactly the first K of the full ranking (the bounded heap and
 * the sort use one comparator), for every example study at its own GPU
 * count and at half and twice of it; DeepSeek-V3 on 1024 GPUs is the case
 * where a 19-bit packed footprint used to wrap (TP64 x CP8 x ETP1024). */
static void top_k_is_the_head_of_the_full_ranking(void **state)
{
    static const char *const studies[] = { "qwen3-30b-a3b-16xh100.yaml",
                                           "qwen3-235b-a22b-256xh100.yaml",
                                           "deepseek-v3-1024xh100.yaml",
                                           "mixtral-8x7b-16xh100.yaml", "tiny-moe-2gpu.yaml" };
    static const int scale[] = { 1, 2, 4 }; /* x/2, x, 2x */
    static const size_t tops[] = { 1, 3, 10 };

    (void)state;
    for (size_t i = 0; i < sizeof(studies) / sizeof(studies[0]); i++) {
        char path[4300], buf[1024];
        struct moe_study st;
        struct moe_train t;
        struct moe_machine c;
        struct moe_error e;
        moe_error_clear(&e);
        snprintf(path, sizeof(path), "%s/etc/studies/%s", srcdir, studies[i]);
        if (moe_study_load(&st, path, &e) < 0 || moe_study_fit_inputs(&st, &t, &c, &e) < 0)
            fail_msg("%s", moe_error_format(&e, buf, sizeof(buf)));
        int world = c.gpus;
        for (size_t g = 0; g < 3; g++) {
            struct moe_layout_set all;
            c.gpus = world * scale[g] / 2 > 0 ? world * scale[g] / 2 : 1;
            assert_int_equal(moe_layouts_enumerate(&st.model, &st.workload, &t, &c, 0, false,
                                                   &all, NULL), 0);
            for (size_t k = 0; k < 3; k++) {
                struct moe_layout_set head;
                assert_int_equal(moe_layouts_enumerate(&st.model, &st.workload, &t, &c, tops[k],
                                                       false, &head, NULL), 0);
                size_t n = tops[k] < all.n_ranked ? tops[k] : all.n_ranked;
                printf("# %s on %d GPUs, --top %zu: %zu of %zu grids\n", studies[i], c.gpus,
                       tops[k], head.n_ranked, all.n_ranked);
                assert_int_equal(head.n_ranked, n);
                assert_int_equal(head.n_grids, all.n_grids);
                for (size_t r = 0; r < n; r++) {
                    assert_memory_equal(&head.valid[r].layout, &all.valid[r].layout,
                                        sizeof(struct moe_layout));
                    assert_int_equal(head.valid[r].decided_by, all.valid[r].decided_by);
                }
                moe_layout_set_free(&head);
            }
            moe_layout_set_free(&all);
        }
        moe_study_free(&st);
    }
}

/* A world no layout can use names the rule; a model too big for any
 * layout gets a nearest miss with the gap and the knob. */
static void nothing_fits_explains(void **state)
{
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 256 };
    struct moe_train t;
    struct moe_machine c;
    struct moe_layout_set s;
    char advice[256];

    (void)state;
    moe_train_defaults(&t);
    moe_machine_defaults(&c);
    c.gpus = 7; /* 7 divides neither heads, experts, layers nor GBS */
    assert_int_equal(moe_layouts_enumerate(moe_preset_find("qwen3-30b-a3b"), &w, &t, &c, 0,
                                           false, &s, NULL), 0);
    assert_int_equal(s.n_valid, 0);
    assert_null(moe_layouts_nearest_miss(&s, &c, advice, sizeof(advice)));
    assert_non_null(strstr(advice, "no valid layout"));
    moe_layout_set_free(&s);

    c.gpus = 8;
    t.uneven_pp = true;
    assert_int_equal(moe_layouts_enumerate(moe_preset_find("deepseek-v3"), &w, &t, &c, 0,
                                           false, &s, NULL), 0);
    assert_true(s.n_valid > 0);
    assert_int_equal(s.n_fitting, 0);
    const struct moe_layout_entry *e = moe_layouts_nearest_miss(&s, &c, advice, sizeof(advice));
    assert_non_null(e);
    printf("# deepseek-v3 on 8: %s\n", advice);
    assert_non_null(strstr(advice, "GiB over"));
    assert_non_null(strstr(advice, "model state"));
    moe_layout_set_free(&s);
}

/* The two grids print in the design's notation. */
static void grid_notation(void **state)
{
    struct moe_layout l = { .tp = 2, .cp = 1, .pp = 8, .dp = 16, .ep = 32, .etp = 1, .edp = 1 };
    char a[64], b[64];

    (void)state;
    assert_string_equal(moe_layout_format_attention(&l, a, sizeof(a)),
                        "Attention: TP2×CP1×DP16×PP8");
    assert_string_equal(moe_layout_format_moe(&l, b, sizeof(b)), "MoE: ETP1×EP32×EDP1×PP8");
}

int main(void)
{
    const char *src = getenv("MOEFLOW_SRCDIR");

    snprintf(srcdir, sizeof(srcdir), "%s", src ? src : "..");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(published_recipes_fit),
        cmocka_unit_test(impossible_layouts_name_their_rule),
        cmocka_unit_test(each_rule_at_its_boundary),
        cmocka_unit_test(rank_groups_match_megatron),
        cmocka_unit_test(enumeration_counts_add_up),
        cmocka_unit_test(ranking_names_the_deciding_rule),
        cmocka_unit_test(one_entry_per_grid),
        cmocka_unit_test(uncalibrated_gpu_ranks_by_the_rules),
        cmocka_unit_test(top_k_is_the_head_of_the_full_ranking),
        cmocka_unit_test(nothing_fits_explains),
        cmocka_unit_test(grid_notation),
    };
    return MOE_RUN_TESTS(tests);
}
