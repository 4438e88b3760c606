/* Candidates and their Megatron arguments: every flag and choice exists in
 * the dialect's real argparse dump (tests/data/megatron), ids are the
 * SHA-256 of the canonical JSON, each retune candidate changes exactly its
 * one variable, and the environment follows Megatron's rules. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json_canon.h"
#include "study/candidates.h"
#include "study/candidates_internal.h"
#include "study/megatron_args.h"
#include "study/megatron_args_internal.h"
#include "study/study.h"
#include "study/study_internal.h"
#include "study/study_contract.h"
#include "study/study_contract_internal.h"
#include "study/validate_checkpoint.h"
#include "study/validate_checkpoint_internal.h"
#include "unit.h"

static char srcdir[4096];

static const char *const examples[] = {
    "qwen3-30b-a3b-16xh100.yaml", "qwen3-235b-a22b-256xh100.yaml",
    "deepseek-v3-1024xh100.yaml", "mixtral-8x7b-16xh100.yaml", "tiny-moe-2gpu.yaml", NULL,
};

static void load(const char *name, struct moe_study *s)
{
    char path[4200], buf[1024];
    struct moe_error e;

    snprintf(path, sizeof(path), "%s/etc/studies/%s", srcdir, name);
    if (moe_study_load(s, path, &e) < 0)
        fail_msg("%s", moe_error_format(&e, buf, sizeof(buf)));
}

/* ---- a reader for the argparse dumps: option -> nargs, choices, type ---- */

struct flagspec {
    char opt[96];
    char nargs[16];
    char choices[1024];   /* "|a|b|" or "" for none */
    char type[64];
};

struct dump {
    struct flagspec *f;
    int n;
};

static void field(const char *line, const char *key, const char *next, char *out, size_t len)
{
    const char *a = strstr(line, key), *b;

    out[0] = '\0';
    if (!a || !(b = strstr(a, next)))
        return;
    a += strlen(key);
    snprintf(out, len, "%.*s", (int)(b - a), a);
}

static void load_dump(const char *file, struct dump *d)
{
    char path[4200], line[8192];
    FILE *f;

    snprintf(path, sizeof(path), "%s/tests/data/megatron/%s", srcdir, file);
    assert_non_null(f = fopen(path, "r"));
    d->f = NULL;
    d->n = 0;
    while (fgets(line, sizeof(line), f)) {
        char opts[1024], choices[2048], nargs[16], type[64], *save = NULL;

        if (line[0] != '[')
            continue;
        snprintf(opts, sizeof(opts), "%.*s", (int)(strchr(line, ']') - line - 1), line + 1);
        field(line, " choices= ", " nargs= ", choices, sizeof(choices));
        field(line, " nargs= ", " type= ", nargs, sizeof(nargs));
        field(line, " type= ", " action= ", type, sizeof(type));
        for (char *o = strtok_r(opts, ", ", &save); o; o = strtok_r(NULL, ", ", &save)) {
            struct flagspec *fs;
            d->f = realloc(d->f, (size_t)(d->n + 1) * sizeof(*d->f));
            fs = &d->f[d->n++];
            snprintf(fs->opt, sizeof(fs->opt), "%.*s", (int)strlen(o) - 2, o + 1);
            snprintf(fs->nargs, sizeof(fs->nargs), "%s", nargs);
            snprintf(fs->type, sizeof(fs->type), "%s", type);
            fs->choices[0] = '\0';
            if (strcmp(choices, "None") != 0) {
                /* ['a', 'b'] -> |a|b| */
                size_t k = 0;
                fs->choices[k++] = '|';
                for (const char *c = choices; *c && k + 2 < sizeof(fs->choices); c++) {
                    if (*c == '[' || *c == ']' || *c == '\'' || *c == ' ')
                        continue;
                    fs->choices[k++] = *c == ',' ? '|' : *c;
                }
                fs->choices[k++] = '|';
                fs->choices[k] = '\0';
            }
        }
    }
    fclose(f);
    assert_true(d->n > 500);
}

static const struct flagspec *find(const struct dump *d, const char *opt)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->f[i].opt, opt) == 0)
            return &d->f[i];
    return NULL;
}

static const char *dump_file(enum moe_dialect dl)
{
    return dl == MOE_DIALECT_CORE_0_16   ? "argparse-core_v0.16.0.txt"
           : dl == MOE_DIALECT_CORE_0_19 ? "argparse-core_v0.19.0.txt"
                                         : "argparse-bridge-pin-2a75ac12.txt";
}

/* Parses argv as argparse would; fails the test with the first problem. */
static void check_argv(const struct dump *d, const struct moe_strv *argv, const char *where)
{
    size_t n = argv->n, i = 0;

    while (i < n) {
        const char *opt = argv->v[i++];
        const struct flagspec *fs = find(d, opt);
        int values = 0;

        if (!fs)
            fail_msg("%s: %s is not in the dump", where, opt);
        while (i < n && strncmp(argv->v[i], "--", 2) != 0) {
            const char *v = argv->v[i++];
            char needle[256];
            snprintf(needle, sizeof(needle), "|%s|", v);
            if (fs->choices[0] && !strstr(fs->choices, needle))
                fail_msg("%s: %s %s: not one of %s", where, opt, v, fs->choices);
            if (strcmp(fs->type, "int") == 0 && strspn(v, "-0123456789") != strlen(v))
                fail_msg("%s: %s %s: not an int", where, opt, v);
            values++;
        }
        if ((strcmp(fs->nargs, "0") == 0 && values != 0) ||
            (strcmp(fs->nargs, "None") == 0 && values != 1) ||
            (strcmp(fs->nargs, "+") == 0 && values < 1))
            fail_msg("%s: %s takes nargs=%s, got %d values", where, opt, fs->nargs, values);
    }
}

/* Every flag and choice of every candidate of every example study exists in
 * the argparse dump of the study's Megatron dialect. */
static void flags_exist_in_dialect(void **state)
{
    (void)state;
    for (int k = 0; examples[k]; k++) {
        struct moe_study s;
        struct dump d;
        struct moe_error e;

        load(examples[k], &s);
        load_dump(dump_file(s.software.dialect), &d);
        for (int st = 0; st < MOE_STAGE_COUNT; st++) {
            struct moe_stage_plan p;
            char where[256];

            assert_int_equal(moe_candidates_build(&s, (enum moe_stage)st, &p, &e), 0);
            assert_int_equal(moe_candidates_render(&s, &p, &e), 0);
            for (size_t i = 0; i < p.n; i++) {
                snprintf(where, sizeof(where), "%s %s #%zu", examples[k],
                         moe_stage_name((enum moe_stage)st), i);
                check_argv(&d, &p.cands[i].argv, where);
            }
            moe_stage_plan_free(&p);
        }
        free(d.f);
        moe_study_free(&s);
    }
}

/* validation.checkpoint's candidate of stage plan p (rendered): its own
 * and its resumed run's arguments parse in the dialect's dump. */
static const struct moe_candidate *checkpoint_of(const struct moe_study *s,
                                                 struct moe_stage_plan *p, const struct dump *d,
                                                 const char *where)
{
    const struct moe_candidate *c;
    struct moe_strv resume;
    struct moe_error e;

    assert_int_equal(moe_validate_add_checkpoint(s, p, &e), 0);
    assert_non_null(c = moe_checkpoint_candidate(p->cands, p->n));
    check_argv(d, &c->argv, where);
    assert_int_equal(moe_checkpoint_resume_argv(c, &resume), 0);
    check_argv(d, &resume, where);
    assert_true(moe_strv_find(&resume, "--load") >= 0 && moe_strv_find(&resume, "--ckpt-step") >= 0);
    assert_true(moe_strv_find(&resume, "--save") < 0 && moe_strv_find(&resume, "--save-interval") < 0);
    moe_strv_free(&resume);
    return c;
}

static bool has_word(const struct moe_strv *l, const char *w)
{
    return moe_strv_find(l, w) >= 0;
}

/* In every example study (all three dialects among them): the checkpoint
 * candidate of the baseline saves at the step before the report window
 * under deterministic mode; of a combination when there is one; without
 * deterministic mode (which Megatron refuses there) under TP communication
 * overlap, and never with the cross-entropy fusion deterministic mode
 * refuses. */
static void checkpoint_candidates(void **state)
{
    (void)state;
    for (int k = 0; examples[k]; k++) {
        struct moe_study s;
        struct moe_stage_plan p;
        struct moe_candidate combo;
        const struct moe_candidate *c;
        struct dump d;
        struct moe_error e;
        long at;

        load(examples[k], &s);
        load_dump(dump_file(s.software.dialect), &d);
        assert_int_equal(moe_candidates_build(&s, MOE_STAGE_VALIDATE, &p, &e), 0);
        assert_int_equal(moe_candidates_render(&s, &p, &e), 0);
        c = checkpoint_of(&s, &p, &d, examples[k]);
        assert_string_equal(json_string_value(c->value), p.cands[0].id);
        at = moe_strv_find(&c->argv, "--save-interval");
        assert_true(at > 0);
        assert_int_equal(atoi(c->argv.v[at + 1]), s.measure.window_first - 1);
        assert_true(has_word(&c->argv, "--deterministic-mode"));
        assert_true(has_word(&c->env, "NCCL_ALGO=Ring"));
        assert_false(has_word(&c->argv, "--cross-entropy-loss-fusion"));
        {
            char *mine = moe_json_canonical(c->contract);
            char *base = moe_json_canonical(p.cands[0].contract);

            /* the same declared configuration: validate's rule accepts it */
            assert_string_equal(mine, base);
            free(mine);
            free(base);
        }
        moe_stage_plan_free(&p);

        /* a combination, with TP communication overlap and the fusion */
        assert_int_equal(moe_candidates_build(&s, MOE_STAGE_VALIDATE, &p, &e), 0);
        assert_int_equal(moe_candidates_render(&s, &p, &e), 0);
        moe_candidate_init(&combo);
        assert_int_equal(moe_candidate_copy(&combo, &p.cands[0]), 0);
        assert_int_equal(moe_candidate_set(&combo.variable, "combination"), 0);
        assert_int_equal(moe_candidate_set(&combo.id, "c0mb0"), 0);
        moe_strv_push(&combo.argv, "--tp-comm-overlap");
        moe_strv_push(&combo.argv, "--cross-entropy-loss-fusion");
        assert_int_equal(moe_stage_plan_add(&p, &combo), 0);
        moe_candidate_free(&combo);
        c = checkpoint_of(&s, &p, &d, examples[k]);
        assert_string_equal(json_string_value(c->value), "c0mb0");
        assert_false(has_word(&c->argv, "--deterministic-mode"));
        assert_false(has_word(&c->env, "NCCL_ALGO=Ring"));
        assert_true(has_word(&c->argv, "--tp-comm-overlap"));
        moe_stage_plan_free(&p);
        free(d.f);
        moe_study_free(&s);
    }
}

/* The dumps really differ where the generator switches flags by dialect. */
static void dialect_switches(void **state)
{
    struct dump d16, d19;

    (void)state;
    load_dump("argparse-core_v0.16.0.txt", &d16);
    load_dump("argparse-core_v0.19.0.txt", &d19);
    assert_null(find(&d16, "--cuda-graph-modules"));
    assert_non_null(find(&d19, "--cuda-graph-modules"));
    assert_non_null(find(&d16, "--fake-process-group"));
    assert_null(find(&d16, "--fake-init-process-group"));
    assert_non_null(strstr(find(&d16, "--moe-flex-dispatcher-backend")->choices, "|hybridep|"));
    free(d16.f);
    free(d19.f);
}

/* A stage's candidates, planned and rendered. */
static struct moe_stage_plan stage(const struct moe_study *s, enum moe_stage st)
{
    struct moe_stage_plan p;
    struct moe_error e;

    assert_int_equal(moe_candidates_build(s, st, &p, &e), 0);
    assert_int_equal(moe_candidates_render(s, &p, &e), 0);
    return p;
}

/* A candidate's id is the SHA-256 of its canonical JSON (as manifest.json
 * holds it) without the id, the prediction and the label's reasons, with
 * the contract's routing class as its label, and ids are unique across the
 * whole study. */
static void ids_are_content_hashes(void **state)
{
    struct moe_study s;
    json_t *seen = json_object();

    (void)state;
    load("deepseek-v3-1024xh100.yaml", &s);
    for (int st = 0; st < MOE_STAGE_COUNT; st++) {
        struct moe_stage_plan p = stage(&s, (enum moe_stage)st);

        for (size_t i = 0; i < p.n; i++) {
            json_t *copy = moe_candidate_json(&p.cands[i], false, NULL);
            const char *id = p.cands[i].id;
            char h[65];

            assert_string_equal(json_string_value(json_object_get(copy, "id")), id);
            json_object_del(copy, "id");
            /* what moeflow expects of a fit run, not what runs */
            json_object_del(copy, "predicted_mib");
            /* the label users see is not what the id was named by: */
            assert_string_equal(json_string_value(json_object_get(copy, "label")),
                                "benchmark-only");
            assert_int_not_equal(moe_json_sha256(copy, h), -1);
            assert_string_not_equal(h, id);
            json_object_del(copy, "label_reasons");
            json_object_set_new(copy, "label", json_string("training-equivalent"));
            assert_int_equal(moe_json_sha256(copy, h), 0);
            assert_string_equal(h, id);
            assert_null(json_object_get(seen, id));
            json_object_set_new(seen, id, json_true());
            json_decref(copy);
        }
        moe_stage_plan_free(&p);
    }
    /* 1+12+14+1+17+1, counted in the manifest: retune's three graph
     * candidates are skipped, their capture in step 4 inside the first
     * timed step after measure.warmup 3 (cuda_graph_capture_in_window),
     * and full_iteration for dropless routing */
    assert_int_equal(json_object_size(seen), 46);
    json_decref(seen);
    moe_study_free(&s);
}

/* The label and its reasons on every candidate of study s, in every stage;
 * the contract's class stays the routing class (the id hashes it). */
static void expect_label(const struct moe_study *s, const char *label, const char *text,
                         const char *routing_class)
{
    for (int st = 0; st < MOE_STAGE_COUNT; st++) {
        struct moe_stage_plan p = stage(s, (enum moe_stage)st);

        for (size_t i = 0; i < p.n; i++) {
            const struct moe_candidate *c = &p.cands[i];
            json_t *sem = json_object_get(c->contract, "semantics");
            char shown[256];

            assert_string_equal(c->label, label);
            moe_candidate_label_text(c, shown, sizeof(shown));
            assert_string_equal(shown, text);
            assert_string_equal(json_string_value(json_object_get(sem, "class")),
                                routing_class);
        }
        moe_stage_plan_free(&p);
    }
}

/* The reasons a study that states no training settings gives besides
 * its data and routing (issue 41). */
#define UNSTATED                                                                               \
    MOE_REASON_NO_LR_SCHEDULE ", " MOE_REASON_NO_AUX_LOSS ", " MOE_REASON_NULL_TOKENIZER

/* benchmark-only for each reason the schema can express (mock data,
 * forced-balance routing, an LR schedule, aux-loss coefficient or
 * tokenizer left unstated), each named; training-equivalent only with a
 * data path, learned routing and the training settings stated. */
static void labels_tell_the_truth(void **state)
{
    struct moe_study s;

    (void)state;
    load("qwen3-30b-a3b-16xh100.yaml", &s);   /* data: mock, routing: dropless */
    expect_label(&s, "benchmark-only", "benchmark-only: mock data, " UNSTATED,
                 "training-equivalent");
    free(s.data_path);
    s.data_path = strdup("/data/qwen3/text_document");
    expect_label(&s, "benchmark-only", "benchmark-only: " UNSTATED, "training-equivalent");
    /* each stated setting takes its reason away, in the contract too */
    s.training.lr = 3e-4;
    s.training.lr_schedule = 2; /* cosine */
    s.training.lr_decay_iters = 100000;
    expect_label(&s, "benchmark-only", "benchmark-only: " MOE_REASON_NO_AUX_LOSS ", "
                 MOE_REASON_NULL_TOKENIZER, "training-equivalent");
    s.training.aux_loss_coeff = 0; /* stated: none */
    expect_label(&s, "benchmark-only", "benchmark-only: " MOE_REASON_NULL_TOKENIZER,
                 "training-equivalent");
    free(s.training.tokenizer);
    s.training.tokenizer = strdup("Qwen/Qwen3-30B-A3B");
    expect_label(&s, "training-equivalent", "training-equivalent", "training-equivalent");
    s.workload.routing = MOE_ROUTING_FORCE_BALANCE;
    expect_label(&s, "benchmark-only", "benchmark-only: forced-balance routing",
                 "benchmark-only");
    s.data_path[0] = '\0';   /* its own copy, emptied in place */
    expect_label(&s, "benchmark-only", "benchmark-only: forced-balance routing, mock data",
                 "benchmark-only");
    moe_study_free(&s);
}

/* The reasons survive manifest.json: written, read back, copied. */
static void label_reasons_round_trip(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    struct moe_candidate back, copy;
    json_t *doc;
    char shown[256];

    (void)state;
    load("tiny-moe-2gpu.yaml", &s);
    p = stage(&s, MOE_STAGE_VALIDATE);
    doc = moe_candidate_json(&p.cands[0], false, NULL);
    /* mock data and the three training settings tiny-moe-2gpu leaves unstated */
    assert_int_equal(json_array_size(json_object_get(doc, "label_reasons")), 4);
    {
        struct moe_manifest_stage st = { .stage = MOE_STAGE_VALIDATE, .script = "v",
                                         .cands = p.cands, .n = 1 };
        json_t *stages = json_pack("[o]", moe_manifest_stage_json(&st, NULL));
        json_t *m = moe_manifest_json("t", "s.yaml", "h", 1, stages, NULL);
        char dir[] = "/tmp/test_candidates.XXXXXX", path[64];
        char *text = moe_manifest_text(m);
        struct moe_manifest man;
        struct moe_error e;
        FILE *f;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/manifest.json", dir);
        assert_non_null(f = fopen(path, "w"));
        fputs(text, f);
        fclose(f);
        assert_int_equal(moe_manifest_load(dir, &man, &e), 0);
        back = man.stages[0].cands[0];
        assert_int_equal(moe_candidate_copy(&copy, &back), 0);
        moe_candidate_label_text(&copy, shown, sizeof(shown));
        assert_string_equal(shown, "benchmark-only: mock data, " UNSTATED);
        /* without its contract, the manifest's label and reasons speak */
        json_decref(copy.contract);
        copy.contract = NULL;
        moe_strv_free(&copy.label_reasons);
        moe_strv_push(&copy.label_reasons, "forced-balance routing");
        moe_candidate_label_text(&copy, shown, sizeof(shown));
        assert_string_equal(shown, "benchmark-only: forced-balance routing");
        moe_candidate_free(&copy);
        moe_manifest_free(&man);
        unlink(path);
        rmdir(dir);
        free(text);
        json_decref(m);
    }
    json_decref(doc);
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

/* flag -> its values joined, for comparing two argument lists. */
static json_t *argmap(const struct moe_strv *argv)
{
    json_t *m = json_object();
    const char *cur = NULL;

    for (size_t i = 0; i < argv->n; i++) {
        const char *t = argv->v[i];
        if (strncmp(t, "--", 2) == 0) {
            cur = t;
            json_object_set_new(m, cur, json_string(""));
        } else {
            json_object_set_new(m, cur, json_sprintf("%s %s",
                                                     json_string_value(json_object_get(m, cur)), t));
        }
    }
    return m;
}

/* The value of NAME in a candidate's environment, or NULL. */
static const char *env_of(const struct moe_candidate *c, const char *name)
{
    size_t n = strlen(name);

    for (size_t i = 0; i < c->env.n; i++)
        if (strncmp(c->env.v[i], name, n) == 0 && c->env.v[i][n] == '=')
            return c->env.v[i] + n + 1;
    return NULL;
}

static const char *allowed_for(const char *variable)
{
    static const struct { const char *var, *flags; } map[] = {
        { "dispatcher", "|--moe-token-dispatcher-type|--moe-flex-dispatcher-backend|" },
        { "ep_overlap", "|--overlap-moe-expert-parallel-comm|" },
        { "shared_expert_overlap", "|--moe-shared-expert-overlap|" },
        { "delay_wgrad", "|--delay-wgrad-compute|" },
        { "overlap_grad_reduce", "|--overlap-grad-reduce|" },
        { "tp_comm_overlap", "|--tp-comm-overlap|" },
        { "manual_gc", "|--manual-gc|--manual-gc-interval|" },
        { "recompute_modules", "|--recompute-granularity|--recompute-modules|" },
        { "precision", "|--fp8-format|--fp8-recipe|--fp4-format|--fp4-recipe|" },
        { "cuda_graph_modules",
          "|--cuda-graph-impl|--cuda-graph-scope|--cuda-graph-modules|--te-rng-tracker|" },
        { "mbs", "|--micro-batch-size|" },
        { "dispatcher_sms", "|--moe-deepep-num-sms|--moe-hybridep-num-sms|"
                            "--moe-flex-dispatcher-num-sms|" },
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(map[i].var, variable) == 0)
            return map[i].flags;
    return "";
}

/* Each retune candidate differs from the baseline (same step count) in the
 * flags of its own variable and in nothing else. */
static void retune_changes_one_variable(void **state)
{
    (void)state;
    for (int k = 0; examples[k]; k++) {
        struct moe_study s;
        struct moe_stage_plan base, cands;
        json_t *bm;

        load(examples[k], &s);
        base = stage(&s, MOE_STAGE_SCALE);   /* index 0: the baseline layout */
        bm = argmap(&base.cands[0].argv);
        cands = stage(&s, MOE_STAGE_RETUNE);
        for (size_t i = 0; i < cands.n; i++) {
            json_t *cm = argmap(&cands.cands[i].argv), *v;
            const char *flag, *var = cands.cands[i].variable;
            const char *allowed = allowed_for(var);
            int changed = 0;

            json_object_foreach(cm, flag, v) {
                json_t *b = json_object_get(bm, flag);
                char needle[128];
                if (b && json_equal(b, v))
                    continue;
                snprintf(needle, sizeof(needle), "|%s|", flag);
                if (!strstr(allowed, needle))
                    fail_msg("%s: retune %s also changes %s", examples[k], var, flag);
                changed++;
            }
            json_object_foreach(bm, flag, v) {
                char needle[128];
                snprintf(needle, sizeof(needle), "|%s|", flag);
                if (!json_object_get(cm, flag) && !strstr(allowed, needle))
                    fail_msg("%s: retune %s drops %s", examples[k], var, flag);
                changed += !json_object_get(cm, flag);
            }
            if (!changed)
                fail_msg("%s: retune %s changes nothing", examples[k], var);
            json_decref(cm);
        }
        json_decref(bm);
        moe_stage_plan_free(&base);
        moe_stage_plan_free(&cands);
        moe_study_free(&s);
    }
}

/* CUDA_DEVICE_MAX_CONNECTIONS: 1 before Blackwell with TP or CP > 1 unless
 * EP overlap is on; 32 for flex and Blackwell; 8 otherwise. */
static void max_connections_rules(void **state)
{
    struct moe_study s;
    struct moe_baseline b;

    (void)state;
    load("mixtral-8x7b-16xh100.yaml", &s);   /* H100, TP2, alltoall */
    b = s.baseline;
    assert_int_equal(moe_cuda_max_connections(&s, &b), 1);
    b.ep_overlap = true;
    assert_int_equal(moe_cuda_max_connections(&s, &b), 8);
    b = s.baseline;
    b.layout.tp = 1;
    assert_int_equal(moe_cuda_max_connections(&s, &b), 8);
    b.layout.cp = 2;
    assert_int_equal(moe_cuda_max_connections(&s, &b), 1);
    b.layout.cp = 1;
    b.dispatcher = MOE_DISPATCH_FLEX_DEEPEP;
    assert_int_equal(moe_cuda_max_connections(&s, &b), 32);
    b = s.baseline;
    s.cluster.gpu = MOE_GPU_B200;
    assert_int_equal(moe_cuda_max_connections(&s, &b), 32);   /* Blackwell, even with TP2 */
    moe_study_free(&s);
}

/* Qwen3-30B: HybridEP with EP16 in 8-GPU NVLink domains gets 8 ranks per
 * domain and no MNNVL; its TE graphs set NCCL_GRAPH_REGISTER=0. */
static void environment(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    const struct moe_candidate *c;

    (void)state;
    load("qwen3-30b-a3b-16xh100.yaml", &s);
    p = stage(&s, MOE_STAGE_VALIDATE);
    c = &p.cands[0];
    assert_string_equal(env_of(c, "CUDA_DEVICE_MAX_CONNECTIONS"), "32");
    assert_string_equal(env_of(c, "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN"), "8");
    assert_null(env_of(c, "USE_MNNVL"));
    assert_string_equal(env_of(c, "NCCL_GRAPH_REGISTER"), "0");
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

/* Fit: one GPU, fake process group, ranks 0 and the first of the last
 * pipeline stage (7 x 1024/8 = 896) for DeepSeek-V3, six rungs from no
 * recompute (its selective baseline, two more modules, full); a flex
 * baseline has no fit candidates (no fake-process-group run can stand in),
 * and says why. */
static void fit_candidates(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    const struct moe_candidate *c;
    json_t *m;

    (void)state;
    load("deepseek-v3-1024xh100.yaml", &s);
    p = stage(&s, MOE_STAGE_FIT);
    assert_int_equal(p.n, 12);
    assert_string_equal(json_string_value(p.cands[0].value), "none");
    assert_string_equal(json_string_value(p.cands[2].value), "selective");
    assert_string_equal(json_string_value(p.cands[11].value), "full");
    c = &p.cands[0];
    assert_int_equal(c->rank, 0);
    assert_int_equal(p.cands[1].rank, 896);
    assert_int_equal(c->nodes, 1);
    assert_int_equal(c->tasks_per_node, 1);
    assert_int_equal(c->world_size, 1024);
    assert_false(isnan(c->predicted_mib));
    m = argmap(&c->argv);
    assert_non_null(json_object_get(m, "--fake-process-group"));
    json_decref(m);
    moe_stage_plan_free(&p);
    moe_study_free(&s);

    load("qwen3-30b-a3b-16xh100.yaml", &s);
    p = stage(&s, MOE_STAGE_FIT);
    assert_int_equal(p.n, 0);
    assert_non_null(strstr(p.skipped[0].reason, "fake process group"));
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

/* Skipped catalogue entries carry their reason; nothing broken is emitted. */
static void skipped_with_reasons(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    int found = 0;

    (void)state;
    load("tiny-moe-2gpu.yaml", &s);
    p = stage(&s, MOE_STAGE_RETUNE);
    for (size_t i = 0; i < p.n_skipped; i++) {
        const char *var = p.skipped[i].variable, *why = p.skipped[i].reason;

        if (strcmp(var, "tp_comm_overlap") == 0)
            found += strcmp(why, "TP is 1") == 0;
        if (strcmp(var, "delay_wgrad") == 0)
            found += strstr(why, "ep_overlap") != NULL;
        if (strcmp(var, "precision") == 0 &&
            strcmp(json_string_value(p.skipped[i].value), "nvfp4") == 0)
            found += strstr(why, "Blackwell") != NULL;
    }
    assert_int_equal(found, 3);
    /* 13 before issue 41: the three graph candidates' capture (step 4)
     * falls after measure.warmup 2 */
    assert_int_equal(p.n, 10);
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

/* ---- the study's own limits, on studies the examples do not cover ---- */

/* The tiny study with overrides: the model as it is, the rest given. */
static void load_tiny(const char *cluster_and_baseline, struct moe_study *s)
{
    char text[2048], buf[1024];
    struct moe_error e;

    snprintf(text, sizeof(text),
             "name: tiny-variant\n"
             "model: {num_layers: 8, hidden: 512, ffn_hidden: 2048, moe_ffn_hidden: 1024,\n"
             "        num_experts: 8, topk: 2, num_heads: 8, num_query_groups: 4, vocab: 32000}\n"
             "workload: {seq_len: 1024, mbs: 1, gbs: 16, routing: dropless}\n"
             "measure: {warmup: 2, screen_steps: 6, validate_steps: 50,\n"
             "          report_window: [41, 50], profile_steps: [4, 5]}\n"
             "scale: {top_k: 64}\n"
             "%s", cluster_and_baseline);
    if (moe_study_load_string(s, "tiny-variant", text, &e) < 0)
        fail_msg("%s", moe_error_format(&e, buf, sizeof(buf)));
}

static const struct moe_skip *skip_of(const struct moe_stage_plan *p, const char *variable,
                                      const char *value)
{
    for (size_t i = 0; i < p->n_skipped; i++) {
        const json_t *v = p->skipped[i].value;

        if (strcmp(p->skipped[i].variable, variable) == 0 && json_is_string(v) &&
            strcmp(json_string_value(v), value) == 0)
            return &p->skipped[i];
    }
    return NULL;
}

static bool has_candidate(const struct moe_stage_plan *p, const char *variable, const char *prefix)
{
    for (size_t i = 0; i < p->n; i++) {
        const json_t *v = p->cands[i].value;

        if (strcmp(p->cands[i].variable, variable) == 0 && json_is_string(v) &&
            strncmp(json_string_value(v), prefix, strlen(prefix)) == 0)
            return true;
    }
    return false;
}

/* TP stays inside the NVLink domain: with 2-GPU domains on a 4-GPU node,
 * the TP 4 layouts Megatron accepts are listed as skipped, never run. */
static void scale_keeps_tp_in_nvlink_domain(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    int tp4_skipped = 0;

    (void)state;
    load_tiny("cluster: {gpu: h100, gpus_per_node: 4, nodes: 1, nvlink_domain: 2,\n"
              "          time_limit: \"00:10:00\", launcher: {command: python pretrain_gpt.py}}\n"
              "software: {megatron: core-0.19, transformer_engine: \"2.9\"}\n"
              "baseline: {ep: 2, dispatcher: alltoall}\n", &s);
    p = stage(&s, MOE_STAGE_SCALE);
    assert_false(has_candidate(&p, "layout", "tp4."));
    assert_true(has_candidate(&p, "layout", "tp2."));
    for (size_t i = 0; i < p.n_skipped; i++)
        tp4_skipped += strncmp(json_string_value(p.skipped[i].value), "tp4.", 4) == 0 &&
                       strcmp(p.skipped[i].reason, "TP would leave the NVLink domain") == 0;
    assert_true(tp4_skipped > 0);
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

/* An explicit pipeline layout is written for the baseline's PP and VPP:
 * every scale neighbour keeps both (moe_study_fit_inputs fixes them for the
 * ranking, and layout_problem refuses any other), so none runs with a
 * layout string of the wrong stage count. */
static void scale_keeps_pipeline_layout_to_its_vpp(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    size_t layouts = 0;

    (void)state;
    load_tiny("cluster: {gpu: h100, gpus_per_node: 4, nodes: 1,\n"
              "          time_limit: \"00:10:00\", launcher: {command: python pretrain_gpt.py}}\n"
              "software: {megatron: core-0.19, transformer_engine: \"2.9\"}\n"
              "baseline: {pp: 2, vpp: 1, ep: 2, dispatcher: alltoall,\n"
              "           pipeline_layout: \"Etttt|ttttL\"}\n", &s);
    p = stage(&s, MOE_STAGE_SCALE);
    for (size_t i = 0; i < p.n; i++) {
        const char *v = json_string_value(p.cands[i].value);

        if (strcmp(p.cands[i].variable, "layout") != 0)
            continue;
        layouts++;
        if (!strstr(v, ".pp2.vpp1."))
            fail_msg("%s runs with the baseline's pipeline layout", v);
    }
    assert_true(layouts >= 4);
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

/* Mixtral's text with a scale section appended (the file has none). */
static int load_mixtral_scale(const char *scale, struct moe_study *s, struct moe_error *e)
{
    char path[4200], text[32768];
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "%s/etc/studies/mixtral-8x7b-16xh100.yaml", srcdir);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(text, 1, sizeof(text) - 512, f);
    fclose(f);
    snprintf(text + n, sizeof(text) - n, "\n%s\n", scale);
    return moe_study_load_string(s, "mixtral-scale", text, e);
}

/* The predicted step and the fastest of its round, from a layout's note. */
static void band_of(const char *note, double *step_ms, double *fastest_ms)
{
    const char *p = strstr(note, "predicted "), *q = strstr(note, "of the fastest (");

    assert_non_null(p);
    *step_ms = strtod(p + strlen("predicted "), NULL);
    *fastest_ms = q ? strtod(q + strlen("of the fastest ("), NULL) : 0;
}

/* The first round runs the top_k ranked first and then every layout the
 * step model predicts within its stated error (25%) of the fastest: on
 * Mixtral's 16 H100 seven more than top_k 4, each saying why. */
static void scale_runs_the_model_error_band(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    struct moe_error e;
    int layouts = 0, banded = 0;

    (void)state;
    assert_int_equal(load_mixtral_scale("scale: {top_k: 4}", &s, &e), 0);
    p = stage(&s, MOE_STAGE_SCALE);
    for (size_t i = 0; i < p.n; i++) {
        const char *note = p.cands[i].note;
        double step, fastest;

        if (strcmp(p.cands[i].variable, "layout") != 0)
            continue;
        if (++layouts <= 4) {
            assert_non_null(strstr(note, "one of the 4 ranked first (scale.top_k)"));
            continue;
        }
        band_of(note, &step, &fastest);
        assert_true(fastest > 0);
        assert_true(step <= fastest * (1 + MOE_STEPTIME_BAND_PCT / 100) + 1);
        banded++;
    }
    assert_true(banded >= 3);
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

/* max_layouts cuts the round and says how many it left out; it cannot be
 * below top_k, which always runs. */
static void scale_max_layouts_caps_the_band(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    struct moe_error e;
    char buf[1024];
    int layouts = 0;
    bool said = false;

    (void)state;
    assert_int_equal(load_mixtral_scale("scale: {top_k: 2, max_layouts: 3}", &s, &e), 0);
    p = stage(&s, MOE_STAGE_SCALE);
    for (size_t i = 0; i < p.n; i++)
        layouts += strcmp(p.cands[i].variable, "layout") == 0;
    for (size_t i = 0; i < p.n_skipped; i++)
        said |= strstr(p.skipped[i].reason, "scale.max_layouts is 3") != NULL &&
                json_integer_value(p.skipped[i].value) > 0;
    assert_int_equal(layouts, 3);
    assert_true(said);
    moe_stage_plan_free(&p);
    moe_study_free(&s);
    assert_int_equal(load_mixtral_scale("scale: {top_k: 5, max_layouts: 3}", &s, &e), -1);
    moe_error_format(&e, buf, sizeof(buf));
    assert_non_null(strstr(buf, "scale.max_layouts: is 3, below scale.top_k (5)"));
    assert_non_null(strstr(buf, "mixtral-scale:"));
}

/* A later round runs exactly the layouts its decision named, and its
 * baseline, measured again, has an id of its own: round 1's log and .rc,
 * whose digests round 1's sealed decision holds, are never overwritten. */
static void scale_later_round_has_its_own_baseline(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p1, p2;
    struct moe_error e;
    int layouts = 0;

    (void)state;
    assert_int_equal(load_mixtral_scale("scale: {top_k: 4}", &s, &e), 0);
    p1 = stage(&s, MOE_STAGE_SCALE);
    assert_true(p1.n >= 3);
    s.scale_round[0] = (struct moe_layout){ .tp = 1, .cp = 2, .pp = 4, .vpp = 8, .ep = 4, .etp = 1 };
    s.scale_round_n = 1;
    p2 = stage(&s, MOE_STAGE_SCALE);
    assert_string_equal(p2.cands[0].variable, "baseline");
    assert_string_not_equal(p2.cands[0].id, p1.cands[0].id);
    for (size_t i = 0; i < p2.n; i++)
        if (strcmp(p2.cands[i].variable, "layout") == 0) {
            layouts++;
            assert_string_equal(json_string_value(p2.cands[i].value),
                                "tp1.cp2.pp4.vpp8.ep4.etp1");
        }
    assert_int_equal(layouts, 1);
    moe_stage_plan_free(&p1);
    moe_stage_plan_free(&p2);
    moe_study_free(&s);
}

/* At EP 1 no token crosses GPUs: neither another dispatcher nor EP
 * overlap is run, and each skip says why in moeflow's own words (not as
 * Megatron's refusal, which would hide that nothing could be measured). */
static void retune_at_ep1_skips_token_exchange(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    const struct moe_skip *k;

    (void)state;
    load_tiny("cluster: {gpu: h100, gpus_per_node: 2, nodes: 1,\n"
              "          time_limit: \"00:10:00\", launcher: {command: python pretrain_gpt.py}}\n"
              "software: {megatron: core-0.19, transformer_engine: \"2.9\", deepep: true}\n"
              "baseline: {ep: 1, dispatcher: alltoall}\n", &s);
    p = stage(&s, MOE_STAGE_RETUNE);
    assert_false(has_candidate(&p, "dispatcher", ""));
    assert_non_null(k = skip_of(&p, "dispatcher", "flex-deepep"));
    assert_string_equal(k->reason, "EP is 1: no token exchange to change");
    for (size_t i = 0; i < p.n; i++)
        assert_string_not_equal(p.cands[i].variable, "ep_overlap");
    for (size_t i = 0; i < p.n_skipped; i++)
        if (strcmp(p.skipped[i].variable, "ep_overlap") == 0)
            assert_string_equal(p.skipped[i].reason, "EP is 1");
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

/* Each candidate's declared contract differs from the baseline's only where
 * its stage may change it: fit in parallel/recompute, scale in parallel,
 * profile in profiling, retune in one tuning variable (or workload.mbs),
 * contract and validate nowhere. */
static void contracts_follow_stage_scope(void **state)
{
    static const char *const scope[] = {
        "", "|parallel|tuning.recompute|", "|parallel|", "|profiling|",
        "|tuning|workload.mbs|", "",
    };
    (void)state;
    for (int k = 0; examples[k]; k++) {
        struct moe_study s;
        struct moe_run run;
        json_t *base;

        load(examples[k], &s);
        moe_run_from_baseline(&run, &s, 0);
        base = moe_run_contract(&s, &run, "training-equivalent", NULL);
        for (int st = 0; st < MOE_STAGE_COUNT; st++) {
            struct moe_stage_plan cands = stage(&s, (enum moe_stage)st);

            for (size_t i = 0; i < cands.n; i++) {
                json_t *doc = cands.cands[i].contract, *sec;
                const char *name;
                int tuning_changes = 0;

                json_object_foreach(doc, name, sec) {
                    json_t *b = json_object_get(base, name), *v;
                    const char *key;
                    char needle[128];

                    if (b && json_equal(b, sec))
                        continue;
                    snprintf(needle, sizeof(needle), "|%s|", name);
                    if (strstr(scope[st], needle))
                        continue;
                    json_object_foreach(sec, key, v) {
                        if (b && json_equal(json_object_get(b, key), v))
                            continue;
                        snprintf(needle, sizeof(needle), "|%s.%s|", name, key);
                        if (!strstr(scope[st], needle))
                            fail_msg("%s %s #%zu changes %s.%s", examples[k],
                                     moe_stage_name((enum moe_stage)st), i, name, key);
                        tuning_changes++;
                    }
                }
                if (st == MOE_STAGE_RETUNE) {
                    json_t *t = json_object_get(doc, "tuning"), *bt = json_object_get(base, "tuning"), *v;
                    const char *key;
                    /* dispatcher and its backend are one variable */
                    json_object_foreach(t, key, v) {
                        if (!json_equal(json_object_get(bt, key), v) &&
                            strcmp(key, "dispatcher_backend") != 0)
                            tuning_changes++;
                    }
                    if (json_equal(json_object_get(t, "dispatcher"),
                                   json_object_get(bt, "dispatcher")) &&
                        !json_equal(json_object_get(t, "dispatcher_backend"),
                                    json_object_get(bt, "dispatcher_backend")))
                        tuning_changes++;
                    if (tuning_changes != 1)
                        fail_msg("%s retune #%zu changes %d variables", examples[k], i,
                                 tuning_changes);
                }
            }
            moe_stage_plan_free(&cands);
        }
        json_decref(base);
        moe_study_free(&s);
    }
}

int main(void)
{
    const char *src = getenv("MOEFLOW_SRCDIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flags_exist_in_dialect),
        cmocka_unit_test(dialect_switches),
        cmocka_unit_test(ids_are_content_hashes),
        cmocka_unit_test(labels_tell_the_truth),
        cmocka_unit_test(label_reasons_round_trip),
        cmocka_unit_test(retune_changes_one_variable),
        cmocka_unit_test(max_connections_rules),
        cmocka_unit_test(environment),
        cmocka_unit_test(fit_candidates),
        cmocka_unit_test(skipped_with_reasons),
        cmocka_unit_test(contracts_follow_stage_scope),
        cmocka_unit_test(scale_keeps_tp_in_nvlink_domain),
        cmocka_unit_test(scale_keeps_pipeline_layout_to_its_vpp),
        cmocka_unit_test(scale_runs_the_model_error_band),
        cmocka_unit_test(scale_max_layouts_caps_the_band),
        cmocka_unit_test(scale_later_round_has_its_own_baseline),
        cmocka_unit_test(retune_at_ep1_skips_token_exchange),
        cmocka_unit_test(checkpoint_candidates),
    };

    snprintf(srcdir, sizeof(srcdir), "%s", src ? src : "..");
    return MOE_RUN_TESTS(tests);
}
