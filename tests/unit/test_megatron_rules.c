/* Megatron's prerequisite rules (lib/study/megatron_rules.c): each rule refuses
 * a run built to break it and lets through the nearest run that does not;
 * every citation, of these rules and of the layout enumerator's
 * (fit/layouts.c), names a file and line that exist, and, where the three
 * Megatron trees are at hand (MOEFLOW_MEGATRON_TREES, set by
 * tests/cli/gpu-lane.sh when ../shared/megatron is there), that line
 * enforces something.  The generator skips candidates that break a rule,
 * with the rule named, and refuses a study whose baseline breaks one. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/candidates.h"
#include "study/megatron_args.h"
#include "study/megatron_rules.h"
#include "core/readfile.h"
#include "study/study.h"
#include "unit.h"

static char srcdir[4096];

/* text with the value after "key: " on its line replaced; frees text. */
static char *set_value(char *text, const char *key, const char *value)
{
    char *p = strstr(text, key), *eol, *out;

    assert_non_null(p);
    p += strlen(key);
    eol = strchr(p, '\n');
    assert_non_null(out = malloc(strlen(text) + strlen(value) + 1));
    sprintf(out, "%.*s%s%s", (int)(p - text), text, value, eol ? eol : "");
    free(text);
    return out;
}

/* An example study with its software section rewritten; "FILE tp=N" also
 * sets the baseline's TP. */
static void load(const char *file, const char *dialect, const char *te, struct moe_study *s)
{
    char path[4200], buf[1024], *text;
    const char *tp = strstr(file, " tp=");
    struct moe_error e;
    size_t n;

    snprintf(path, sizeof(path), "%s/etc/studies/%.*s", srcdir,
             tp ? (int)(tp - file) : (int)strlen(file), file);
    assert_non_null(text = moe_read_file(path, "study", &n, &e));
    if (dialect)
        text = set_value(text, "megatron: ", dialect);
    if (te)
        text = set_value(text, "transformer_engine: ", te);
    if (tp)
        text = set_value(text, "\n  tp: ", tp + 4);
    if (moe_study_load_string(s, path, text, &e) < 0)
        fail_msg("%s", moe_error_format(&e, buf, sizeof(buf)));
    free(text);
}

struct rule_case {
    const char *rule;      /* the rule the run breaks; NULL: none */
    const char *file;
    const char *dialect;   /* NULL: the study's own */
    const char *te;        /* the YAML value, NOTE for none; NULL: the study's */
    void (*tweak)(struct moe_run *);
};

static void none(struct moe_run *r) { (void)r; }
static void tp2(struct moe_run *r) { r->cfg.layout.tp = 2; }
static void cp2(struct moe_run *r) { r->cfg.layout.cp = 2; }
static void ep1(struct moe_run *r) { r->cfg.layout.ep = 1; }
static void modules(struct moe_run *r, const char *m)
{
    r->cfg.recompute = MOE_RECOMPUTE_SELECTIVE;
    r->cfg.recompute_modules.n = 1;
    snprintf(r->cfg.recompute_modules.v[0], MOE_NAME_MAX, "%s", m);
}
static void moe_act(struct moe_run *r) { modules(r, "moe_act"); }
static void layernorm(struct moe_run *r) { modules(r, "layernorm"); }
static void ep_overlap(struct moe_run *r) { r->cfg.ep_overlap = true; }
static void ep_overlap_ep1(struct moe_run *r) { ep_overlap(r), ep1(r); }
static void ep_overlap_allgather(struct moe_run *r)
{
    ep_overlap(r);
    r->cfg.dispatcher = MOE_DISPATCH_ALLGATHER;
}
static void ep_overlap_pp2(struct moe_run *r) { ep_overlap(r), r->cfg.layout.pp = 2; }
static void ep_overlap_pp2_vpp2(struct moe_run *r) { ep_overlap_pp2(r), r->cfg.layout.vpp = 2; }
static void ep_overlap_full(struct moe_run *r)
{
    ep_overlap(r);
    r->cfg.recompute = MOE_RECOMPUTE_FULL;
}
static void ep_and_shared_overlap(struct moe_run *r)
{
    ep_overlap(r);
    r->cfg.shared_expert_overlap = true;
}
static void shared_overlap_allgather(struct moe_run *r)
{
    r->cfg.shared_expert_overlap = true;
    r->cfg.dispatcher = MOE_DISPATCH_ALLGATHER;
}
static void shared_overlap_flex(struct moe_run *r)
{
    r->cfg.shared_expert_overlap = true;
    r->cfg.dispatcher = MOE_DISPATCH_FLEX_DEEPEP;
}
static void delay_wgrad(struct moe_run *r) { r->cfg.delay_wgrad = true; }
static void delay_wgrad_ep(struct moe_run *r) { delay_wgrad(r), ep_overlap(r); }
static void delay_wgrad_ep_ogr(struct moe_run *r)
{
    delay_wgrad_ep(r);
    r->cfg.overlap_grad_reduce = true;
}
static void tp_comm(struct moe_run *r) { r->cfg.tp_comm_overlap = true; }
static void tp_comm_tp2(struct moe_run *r) { tp_comm(r), tp2(r); }
static void graph(struct moe_run *r, const char *m)
{
    snprintf(r->cfg.cuda_graph_modules.v[r->cfg.cuda_graph_modules.n++], MOE_NAME_MAX, "%s", m);
}
static void graph_router(struct moe_run *r) { graph(r, "moe_router"); }
static void graph_router_full(struct moe_run *r)
{
    graph_router(r);
    r->cfg.recompute = MOE_RECOMPUTE_FULL;
}
static void graph_attn_core_attn(struct moe_run *r) { graph(r, "attn"), modules(r, "core_attn"); }
static void graph_attn_moe_act(struct moe_run *r) { graph(r, "attn"), modules(r, "moe_act"); }
static void fp8(struct moe_run *r) { r->cfg.precision = MOE_PREC_FP8_TENSORWISE; }
static void nvfp4(struct moe_run *r) { r->cfg.precision = MOE_PREC_NVFP4; }
static void fp8_delayed_moe_act(struct moe_run *r)
{
    r->cfg.precision = MOE_PREC_FP8_DELAYED;
    moe_act(r);
}
static void fp8_moe_act(struct moe_run *r) { fp8(r), moe_act(r); }
static void fake_flex(struct moe_run *r)
{
    r->fake_process_group = true;
    r->cfg.dispatcher = MOE_DISPATCH_FLEX_HYBRIDEP;
}
static void fake_alltoall(struct moe_run *r) { r->fake_process_group = true; }
static void profile_short(struct moe_run *r)
{
    r->profile = true;
    r->train_iters = 2;
}
static void profile_long(struct moe_run *r)
{
    r->profile = true;
    r->train_iters = 100;
}

#define TINY "tiny-moe-2gpu.yaml"
#define DSV3 "deepseek-v3-1024xh100.yaml"
#define Q30 "qwen3-30b-a3b-16xh100.yaml" /* no shared expert */
#define MIXTRAL "mixtral-8x7b-16xh100.yaml" /* TP 2, EP 8 on 16 GPUs */
#define NOTE "\"\""

static const struct rule_case cases[] = {
    { "moe_router_needs_te", TINY, "core-0.16", NOTE, none },
    { NULL, TINY, "core-0.19", NOTE, none },
    { NULL, TINY, "core-0.16", "\"2.9\"", none },
    /* at TP 1: without TE the study's TP 2 breaks moe-tp-needs-sp, which
     * the study reader refuses */
    { "mla_needs_te", DSV3 " tp=1", NULL, NOTE, none },
    { NULL, DSV3, NULL, NULL, none },
    { "cp-needs-te", TINY, NULL, NOTE, cp2 },
    { NULL, TINY, NULL, NULL, cp2 },
    { "moe-tp-needs-sp", TINY, "bridge-pin", NOTE, tp2 },
    { NULL, TINY, "bridge-pin", NULL, tp2 },
    { "recompute_moe_act_needs_grouped_gemm", TINY, NULL, NOTE, moe_act },
    { NULL, TINY, NULL, NULL, moe_act },
    { "recompute_layernorm_needs_te", TINY, NULL, NOTE, layernorm },
    { NULL, TINY, NULL, NULL, layernorm },
    { "permute_fusion_needs_te_2_1", TINY, NULL, "\"2.0\"", none },
    { "ep_overlap_needs_ep", TINY, NULL, NULL, ep_overlap_ep1 },
    { NULL, TINY, NULL, NULL, ep_overlap },
    { "ep_overlap_needs_alltoall_or_flex", TINY, NULL, NULL, ep_overlap_allgather },
    /* the tiny study's 2 GPUs hold no EP 2 x PP 2: a layout rule, checked first */
    { "world=etp*ep*edp*pp", TINY, NULL, NULL, ep_overlap_pp2 },
    { "ep_overlap_pp_needs_vpp", MIXTRAL, NULL, NULL, ep_overlap_pp2 },
    { NULL, MIXTRAL, NULL, NULL, ep_overlap_pp2_vpp2 },
    { "ep_overlap_no_full_recompute", TINY, NULL, NULL, ep_overlap_full },
    { "ep_overlap_no_shared_expert_overlap", DSV3, NULL, NULL, ep_and_shared_overlap },
    { "shared_expert_overlap_dispatcher", DSV3, "core-0.19", NULL, shared_overlap_allgather },
    { "shared_expert_overlap_dispatcher", DSV3, "core-0.16", NULL, shared_overlap_flex },
    { NULL, DSV3, "core-0.19", NULL, shared_overlap_flex },
    { NULL, Q30, "core-0.19", NULL, shared_overlap_allgather },
    { "delay_wgrad_needs_te", TINY, NULL, NOTE, delay_wgrad_ep },
    { "delay_wgrad_needs_ep_overlap", TINY, NULL, NULL, delay_wgrad },
    { NULL, TINY, NULL, NULL, delay_wgrad_ep },
    { "delay_wgrad_grad_reduce_needs_te_2_8", TINY, NULL, "\"2.7\"", delay_wgrad_ep_ogr },
    { NULL, TINY, NULL, "\"2.8\"", delay_wgrad_ep_ogr },
    { "tp_comm_overlap_needs_sequence_parallel", TINY, NULL, NULL, tp_comm },
    { NULL, TINY, NULL, NULL, tp_comm_tp2 },
    { "moe-tp-needs-sp", TINY, NULL, NOTE, tp_comm_tp2 },
    { "cuda_graphs_need_te", TINY, NULL, NOTE, graph_router },
    { NULL, TINY, NULL, NULL, graph_router },
    { "cuda_graphs_no_full_recompute", TINY, NULL, NULL, graph_router_full },
    { "cuda_graphs_attention_dropout_recompute", TINY, NULL, NULL, graph_attn_core_attn },
    { NULL, TINY, NULL, NULL, graph_attn_moe_act },
    { "low_precision_needs_te", TINY, NULL, NOTE, fp8 },
    { NULL, TINY, NULL, NULL, fp8 },
    { "fp4_needs_te_2_7", TINY, NULL, "\"2.6\"", nvfp4 },
    { NULL, TINY, NULL, "\"2.7\"", nvfp4 },
    { "fp8_delayed_no_moe_act_layernorm_recompute", TINY, NULL, NULL, fp8_delayed_moe_act },
    { "fp8_recompute_needs_te_2_6", TINY, NULL, "\"2.5\"", fp8_moe_act },
    { NULL, TINY, NULL, "\"2.6\"", fp8_moe_act },
    { "fake_process_group_no_flex", TINY, NULL, NULL, fake_flex },
    { NULL, TINY, NULL, NULL, fake_alltoall },
    { "profile_needs_train_iters", TINY, NULL, NULL, profile_short },
    { NULL, TINY, NULL, NULL, profile_long },
};

/* Each case: the rule it names is the first one broken, or none is. */
static void each_rule_refuses_its_case(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct rule_case *c = &cases[i];
        const char *got;
        char why[768];
        struct moe_study s;
        struct moe_run r;

        load(c->file, c->dialect, c->te, &s);
        moe_run_from_baseline(&r, &s, 8);
        c->tweak(&r);
        got = moe_megatron_refusal(&s, &r, why, sizeof(why));
        if (!c->rule != !got || (got && strcmp(got, c->rule) != 0))
            fail_msg("case %zu (%s, %s): expected %s, got %s", i, c->file,
                     c->dialect ? c->dialect : "own dialect", c->rule ? c->rule : "none",
                     got ? got : "none");
        moe_study_free(&s);
    }
}

/* Every rule has a case that breaks it. */
static void every_rule_is_tested(void **state)
{
    size_t n;
    const struct moe_megatron_rule *rules = moe_megatron_rules(&n);

    (void)state;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;

        for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++)
            seen |= cases[j].rule && strcmp(cases[j].rule, rules[i].id) == 0;
        if (!seen)
            fail_msg("rule %s has no test case", rules[i].id);
    }
}

static const char *const trees[MOE_DIALECT_COUNT] = {
    "megatron-lm-core_v0.16.0", "megatron-lm-core_v0.19.0", "megatron-lm-2a75ac12",
};

/* A citation is "path:line"; where the trees are unpacked (root), that
 * line of that file enforces something (a raise, an assert or its
 * condition). */
static void check_citation(const char *root, const char *id, int d, const char *w)
{
    const char *colon;
    char path[4600], line[1024] = "";
    long want;
    FILE *f;

    assert_non_null(colon = strrchr(w, ':'));
    want = strtol(colon + 1, NULL, 10);
    if (want <= 0)
        fail_msg("rule %s: %s is not path:line", id, w);
    if (!root)
        return;
    snprintf(path, sizeof(path), "%s/%s/%.*s", root, trees[d], (int)(colon - w), w);
    if (!(f = fopen(path, "r")))
        fail_msg("rule %s: no %s", id, path);
    for (long k = 1; k <= want && fgets(line, sizeof(line), f); k++)
        ;
    fclose(f);
    if (!strstr(line, "raise") && !strstr(line, "assert") && !strstr(line, "if ") &&
        !strstr(line, "FP8GlobalStateManager") && !strstr(line, "profile_step_end"))
        fail_msg("rule %s: %s:%ld is not a check: %s", id, path, want, line);
}

/* Both tables: the prerequisite rules and the layout enumerator's rules. */
static void citations_point_at_checks(void **state)
{
    const char *root = getenv("MOEFLOW_MEGATRON_TREES");
    const struct moe_megatron_rule *rules;
    size_t n;

    (void)state;
    rules = moe_megatron_rules(&n);
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < MOE_DIALECT_COUNT; d++)
            if (rules[i].where[d])
                check_citation(root, rules[i].id, d, rules[i].where[d]);
    for (int r = MOE_RULE_OK + 1; r < MOE_RULE_COUNT; r++)
        for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
            bool cited;
            const char *src = moe_layout_rule_source((enum moe_rule)r, (enum moe_dialect)d, &cited);

            if (src && cited)
                check_citation(root, moe_rule_id((enum moe_rule)r), d, src);
        }
}

/* The generator lists a rule-breaking candidate as skipped, naming the
 * rule and its source, and refuses a study whose baseline breaks one. */
static void generator_names_rules(void **state)
{
    struct moe_study s;
    struct moe_stage_plan plan;
    struct moe_error e;
    char *text;
    bool named = false;
    json_t *cands = json_array();

    (void)state;
    load(TINY, NULL, NOTE, &s);
    assert_int_equal(moe_candidates_build(&s, MOE_STAGE_RETUNE, &plan, &e), 0);
    assert_int_equal(moe_candidates_render(&s, &plan, &e), 0);
    for (size_t i = 0; i < plan.n_skipped; i++) {
        const char *why = plan.skipped[i].reason;
        named |= strstr(why, "recompute_layernorm_needs_te") &&
                 strstr(why, "megatron/core/tensor_parallel/random.py:693 in core-0.19");
    }
    assert_true(named);
    /* the candidates as manifest.json holds them */
    for (size_t i = 0; i < plan.n; i++)
        json_array_append_new(cands, moe_candidate_json(&plan.cands[i], false));
    text = json_dumps(cands, 0);
    json_decref(cands);
    assert_null(strstr(text, "\"layernorm\""));
    assert_non_null(strstr(text, "\"local\""));
    assert_null(strstr(text, "--moe-grouped-gemm"));
    free(text);
    moe_stage_plan_free(&plan);
    assert_int_equal(moe_megatron_study_check(&s, &e), 0);
    moe_study_free(&s);

    load(TINY, "core-0.16", NOTE, &s);
    assert_int_equal(moe_megatron_study_check(&s, &e), -1);
    assert_non_null(strstr(e.text, "moe_router_needs_te"));
    moe_study_free(&s);
}

static void versions_compare_numerically(void **state)
{
    (void)state;
    assert_true(moe_version_cmp("2.10", "2.9") > 0);
    assert_true(moe_version_cmp("2.8", "2.8.0") == 0);
    assert_true(moe_version_cmp("2.7.1", "2.8") < 0);
    assert_true(moe_version_cmp("", "1.0") < 0);
}

/* Every layout rule has, in every dialect, a citation or a reason: a
 * rule added to enum moe_rule without a table entry fails here. */
static void every_layout_rule_has_a_source(void **state)
{
    bool cited;

    (void)state;
    for (int r = MOE_RULE_OK + 1; r < MOE_RULE_COUNT; r++)
        for (int d = 0; d < MOE_DIALECT_COUNT; d++) {
            const char *src = moe_layout_rule_source((enum moe_rule)r, (enum moe_dialect)d, &cited);

            if (!src || !*src)
                fail_msg("layout rule %s has no Megatron source in %s",
                         moe_rule_id((enum moe_rule)r), moe_dialect_name((enum moe_dialect)d));
        }
    assert_null(moe_layout_rule_source(MOE_RULE_OK, MOE_DIALECT_CORE_0_19, &cited));
    assert_null(moe_layout_rule_source(MOE_RULE_COUNT, MOE_DIALECT_CORE_0_19, &cited));
    assert_string_equal(moe_layout_rule_source(MOE_RULE_SP, MOE_DIALECT_CORE_0_19, &cited),
                        "megatron/core/transformer/moe/moe_layer.py:630");
    assert_true(cited);
}

int main(void)
{
    const char *src = getenv("MOEFLOW_SRCDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_rule_refuses_its_case),
        cmocka_unit_test(every_rule_is_tested),
        cmocka_unit_test(citations_point_at_checks),
        cmocka_unit_test(generator_names_rules),
        cmocka_unit_test(versions_compare_numerically),
        cmocka_unit_test(every_layout_rule_has_a_source),
    };

    snprintf(srcdir, sizeof(srcdir), "%s", src ? src : "..");
    return MOE_RUN_TESTS(tests);
}
