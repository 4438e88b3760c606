/* Validate's profiling twins (lib/study/validate_profile.c) on the example
 * tiny study, under both profilers: each twin runs its sibling's arguments
 * plus exactly the profile stage's switches, in its sibling's environment;
 * its contract is its sibling's plus the profiling block and the
 * declaration; it names its sibling (twin_of), which the id does not hash;
 * the timed runs keep their indices; a second call adds nothing. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/contract_keys.h"
#include "study/candidates.h"
#include "study/candidates_internal.h"
#include "study/validate_profile.h"
#include "study/validate_profile_internal.h"
#include "unit.h"

static void load(struct moe_study *s, enum moe_profiler profiler)
{
    char path[4096];
    const char *dir = getenv("MOEFLOW_SRCDIR");
    struct moe_error e;

    snprintf(path, sizeof(path), "%s/etc/studies/tiny-moe-2gpu.yaml", dir ? dir : ".");
    moe_error_clear(&e);
    if (moe_study_load(s, path, &e) < 0)
        fail_msg("%s", e.text);
    s->measure.profiler = profiler;
}

/* The validate baseline, rendered, then its twins. */
static void plan_with_twins(const struct moe_study *s, struct moe_stage_plan *p)
{
    struct moe_error e;

    moe_error_clear(&e);
    assert_int_equal(moe_candidates_build(s, MOE_STAGE_VALIDATE, p, &e), 0);
    assert_int_equal(moe_candidates_render(s, p, &e), 0);
    assert_int_equal(p->n, 1);
    assert_int_equal(moe_validate_add_twins(s, p, &e), 0);
}

/* twin's argv: sibling's, then the switches in want. */
static void argv_is_sibling_plus(const struct moe_candidate *twin,
                                 const struct moe_candidate *sib, const char *const *want)
{
    size_t n = 0;

    while (want[n])
        n++;
    assert_int_equal(twin->argv.n, sib->argv.n + n);
    for (size_t i = 0; i < sib->argv.n; i++)
        assert_string_equal(twin->argv.v[i], sib->argv.v[i]);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(twin->argv.v[sib->argv.n + i], want[i]);
}

static void common_checks(const struct moe_stage_plan *p, const char *profiler)
{
    const struct moe_candidate *b = &p->cands[0], *t = &p->cands[1];
    struct moe_candidate rehash;
    json_t *bare;

    assert_int_equal(p->n, 2);
    assert_null(b->twin_of);
    assert_string_equal(t->twin_of, b->id);
    assert_string_not_equal(t->id, b->id);
    assert_true(moe_strv_equal(&t->env, &b->env));
    assert_string_equal(t->variable, b->variable);
    assert_int_equal(t->tasks_per_node, b->tasks_per_node);
    /* the contract: the sibling's, plus what it profiles and the declaration */
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(t->contract, MOE_CONTRACT_PROFILING), "profiler")),
                        profiler);
    assert_true(json_is_true(json_object_get(json_object_get(t->contract,
                                                             MOE_CONTRACT_VALIDATION),
                                             MOE_CONTRACT_PROFILING_TWIN)));
    bare = json_deep_copy(t->contract);
    json_object_del(bare, MOE_CONTRACT_PROFILING);
    json_object_del(bare, MOE_CONTRACT_VALIDATION);
    assert_true(json_equal(bare, b->contract));
    json_decref(bare);
    /* twin_of is not part of the id: the same run without it hashes the same */
    assert_int_equal(moe_candidate_copy(&rehash, t), 0);
    moe_candidate_set(&rehash.twin_of, NULL);
    assert_int_equal(moe_candidate_hash(&rehash), 0);
    assert_string_equal(rehash.id, t->id);
    moe_candidate_free(&rehash);
}

static void pytorch_twin(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    char dir[256];
    const char *want[] = { "--profile", "--profile-step-start", "4", "--profile-step-end", "6",
                           "--use-pytorch-profiler", "--tensorboard-dir", dir, NULL };
    struct moe_error e;

    (void)state;
    load(&s, MOE_PROFILER_PYTORCH);
    plan_with_twins(&s, &p);
    snprintf(dir, sizeof(dir), "results/validate/profile-%s/tensorboard", p.cands[0].id);
    common_checks(&p, "pytorch");
    argv_is_sibling_plus(&p.cands[1], &p.cands[0], want);
    moe_error_clear(&e);
    assert_int_equal(moe_validate_add_twins(&s, &p, &e), 0);
    assert_int_equal(p.n, 2); /* no twin of a twin, no second twin */
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

/* Nsight Systems wraps the launch (validate.sbatch): the arguments carry
 * only --profile and its steps. */
static void nsys_twin(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;
    const char *want[] = { "--profile", "--profile-step-start", "4", "--profile-step-end", "6",
                           NULL };

    (void)state;
    load(&s, MOE_PROFILER_NSYS);
    plan_with_twins(&s, &p);
    common_checks(&p, "nsys");
    argv_is_sibling_plus(&p.cands[1], &p.cands[0], want);
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

/* Megatron stops profiling at --profile-step-end, which a validate run
 * that ends earlier never reaches: no twin then, and the stage says why. */
static void no_twin_past_train_iters(void **state)
{
    struct moe_study s;
    struct moe_stage_plan p;

    (void)state;
    load(&s, MOE_PROFILER_PYTORCH);
    s.measure.validate_steps = 5; /* the profile window is 4..5: --profile-step-end 6 */
    plan_with_twins(&s, &p);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.n_skipped, 1);
    assert_string_equal(p.skipped[0].variable, "profiling_twin");
    assert_non_null(strstr(p.skipped[0].reason, "profile_needs_train_iters"));
    moe_stage_plan_free(&p);
    moe_study_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pytorch_twin),
        cmocka_unit_test(nsys_twin),
        cmocka_unit_test(no_twin_past_train_iters),
    };

    return MOE_RUN_TESTS(tests);
}
