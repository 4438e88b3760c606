#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/validate_checkpoint.h"
#include "study/validate_checkpoint_internal.h"
#include "study/candidates_internal.h"
#include "study/megatron_rules_internal.h"
#include "study/study_internal.h"
#include "core/strbuf.h"

#define TRAINING "megatron/training/training.py:"
#define CHECKPOINTING "megatron/training/checkpointing.py:"
#define ARGS "megatron/training/arguments.py:"
#define DETERMINISM "megatron/training/determinism.py:"
#define DISTRIB_OPTIMIZER "megatron/core/optimizer/distrib_optimizer.py:"

/* Lines read in the three trees of ../shared/megatron (core_v0.16.0,
 * core_v0.19.0, 2a75ac12), in enum moe_dialect's order. */
static const struct moe_megatron_rule citations[] = {
    { "checkpoint_final_save",
      "pretrain saves once more when training ends off the save interval, so the "
      "checkpoint's tracker names the last step, not N",
      { TRAINING "1047", TRAINING "1441", TRAINING "1518" }, NULL },
    { "checkpoint_ckpt_step",
      "--ckpt-step picks the iteration loaded, whatever the tracker names",
      { CHECKPOINTING "1188", CHECKPOINTING "1664", CHECKPOINTING "1823" }, NULL },
    /* Found on the GPU lane (2026-12-01, 1x H200, no TE; tests/gpu/autopilot/
     * README.md): the distributed optimizer on torch's Adam saves but cannot
     * resume.  torch_dist: sharded_state_dict (line 1532 in core 0.19 and
     * 2a75ac12, 1246 in 0.16) calls state_dict() before Adam has any state,
     * and it asserts one 'step'.  torch: load_state_dict gives each
     * parameter a 'step', which the saved parameter state lacks. */
    { "checkpoint_torch_adam_torch_dist",
      "the distributed optimizer on torch's Adam cannot load a torch_dist checkpoint: "
      "state_dict() asserts one Adam step before the optimizer has any",
      { DISTRIB_OPTIMIZER "642", DISTRIB_OPTIMIZER "839", DISTRIB_OPTIMIZER "839" }, NULL },
    { "checkpoint_torch_adam_torch_format",
      "the distributed optimizer on torch's Adam cannot load a torch-format checkpoint: "
      "its parameter state has no 'step' (KeyError)",
      { DISTRIB_OPTIMIZER "940", DISTRIB_OPTIMIZER "1223", DISTRIB_OPTIMIZER "1223" }, NULL },
    { "deterministic_no_ce_fusion",
      "--deterministic-mode refuses --cross-entropy-loss-fusion",
      { ARGS "1075", NULL, NULL }, NULL },
    { "deterministic_needs_nccl_algo",
      "--deterministic-mode needs NCCL_ALGO set (Ring among the choices)",
      { ARGS "1078", NULL, NULL }, NULL },
    { "deterministic_required_args",
      "--deterministic-mode requires cross_entropy_loss_fusion and tp_comm_overlap off",
      { NULL, DETERMINISM "24", DETERMINISM "24" }, NULL },
    { "deterministic_env_defaults",
      "--deterministic-mode's environment: NCCL_ALGO=Ring, NVTE_ALLOW_NONDETERMINISTIC_ALGO=0, "
      "CUBLAS_WORKSPACE_CONFIG=:4096:8",
      { NULL, DETERMINISM "28", DETERMINISM "28" }, NULL },
};

const struct moe_megatron_rule *moe_checkpoint_citations(size_t *n)
{
    *n = sizeof(citations) / sizeof(citations[0]);
    return citations;
}

static const struct moe_megatron_rule *citation(const char *id)
{
    for (size_t i = 0; i < sizeof(citations) / sizeof(citations[0]); i++)
        if (strcmp(citations[i].id, id) == 0)
            return &citations[i];
    return NULL;
}

/* The values core 0.19 sets by default under --deterministic-mode
 * (deterministic_env_defaults); core 0.16 sets none and asserts NCCL_ALGO. */
static const char *const deterministic_env[] = {
    "CUBLAS_WORKSPACE_CONFIG=:4096:8", "NCCL_ALGO=Ring", "NVTE_ALLOW_NONDETERMINISTIC_ALGO=0",
};

int moe_checkpoint_step(const struct moe_study *s)
{
    const struct moe_measure *m = &s->measure;

    return m->window_first > 1 ? m->window_first - 1 : m->validate_steps / 2;
}

/* Sets flag's one value (appends both when absent); -1 when out of memory. */
static int set_value(struct moe_strv *argv, const char *flag, const char *value)
{
    long i = moe_strv_find(argv, flag);

    if (i >= 0 && moe_strv_flag_values(argv, (size_t)i) > 0)
        return moe_strv_set(argv, (size_t)i + 1, value);
    if (i >= 0)
        return moe_strv_insert(argv, (size_t)i + 1, value);
    return moe_strv_push(argv, flag) < 0 ? -1 : moe_strv_push(argv, value);
}

/* Removes a switch (a flag with no value). */
static void drop_switch(struct moe_strv *argv, const char *flag)
{
    long i = moe_strv_find(argv, flag);

    if (i >= 0)
        moe_strv_remove(argv, (size_t)i);
}

/* Deterministic mode where the configuration allows it: not with TP
 * communication overlap (deterministic_required_args); the cross-entropy
 * fusion, which every dialect refuses there, is dropped.  Returns whether
 * it is on. */
static int make_deterministic(struct moe_candidate *c)
{
    if (moe_strv_find(&c->argv, "--tp-comm-overlap") >= 0)
        return 0;
    drop_switch(&c->argv, "--cross-entropy-loss-fusion");
    if (moe_strv_push(&c->argv, "--deterministic-mode") < 0)
        return -1;
    for (size_t i = 0; i < sizeof(deterministic_env) / sizeof(deterministic_env[0]); i++)
        if (moe_strv_env_set(&c->env, deterministic_env[i]) < 0)
            return -1;
    return 1;
}

/* The uninterrupted run: every step logged, a save at step n into dir in
 * the distributed format. */
static int uninterrupted(struct moe_candidate *c, const char *dir, int n)
{
    char step[16];

    /* fits: an int */
    snprintf(step, sizeof(step), "%d", n);
    if (set_value(&c->argv, "--log-interval", "1") < 0 || set_value(&c->argv, "--save", dir) < 0 ||
        set_value(&c->argv, "--save-interval", step) < 0 ||
        set_value(&c->argv, "--ckpt-format", "torch_dist") < 0)
        return -1;
    return 0;
}

/* What the candidate checkpoints, the configuration that would train: the
 * winners' combination, else the one recorded winner, else the plan's first
 * candidate (the baseline). */
static const struct moe_candidate *validated(const struct moe_stage_plan *plan)
{
    const struct moe_candidate *winner = NULL;
    size_t winners = 0;

    for (size_t i = 0; i < plan->n; i++) {
        const struct moe_candidate *c = &plan->cands[i];

        if (c->variable && strcmp(c->variable, "combination") == 0)
            return c;
        if (i > 0 && moe_candidate_is_timed(c)) {
            winner = c;
            winners++;
        }
    }
    return winners == 1 ? winner : plan->n ? &plan->cands[0] : NULL;
}

static int build(const struct moe_study *s, const struct moe_candidate *from,
                 struct moe_candidate *c)
{
    char *dir, note[384], label[128] = "the baseline", *winner;
    int n = moe_checkpoint_step(s), det, rc;

    /* "mbs=4" for one winner; "baseline" and "combination" by name */
    if (from->variable && (strcmp(from->variable, "baseline") == 0 ||
                           strcmp(from->variable, "combination") == 0))
        snprintf(label, sizeof(label), "%s", from->variable); /* a message: the note's */
    else if (from->variable) {
        if (!(winner = moe_candidate_label(from)))
            return -1;
        snprintf(label, sizeof(label), "%s", winner); /* a message: the note's */
        free(winner);
    }
    if (!(dir = moe_strdup_printf(MOE_CHECKPOINT_DIR "/%s", from->id)))
        return -1;
    rc = moe_candidate_copy(c, from) < 0 || uninterrupted(c, dir, n) < 0 ||
         (det = make_deterministic(c)) < 0 ? -1 : 0;
    free(dir);
    if (rc < 0)
        return -1;
    /* a message: people read it, and a cut one still reads */
    snprintf(note, sizeof(note), "checkpoint/resume of %s: saves at step %d, a second srun "
             "resumes it to step %d; %s", label, n, s->measure.validate_steps,
             det ? "deterministic, losses must match exactly"
                 : "not deterministic (TP communication overlap), losses within 1e-3");
    json_decref(c->value);
    c->value = json_string(from->id);
    c->stage = MOE_STAGE_VALIDATE;
    if (!c->value || moe_candidate_set(&c->variable, MOE_CHECKPOINT_VARIABLE) < 0 ||
        moe_candidate_set(&c->note, note) < 0)
        return -1;
    free(c->id);
    c->id = NULL;
    return moe_candidate_hash(c);
}

/* Why Megatron could not resume the study's optimizer, into buf; NULL
 * when it can.  Without Transformer Engine or Apex the distributed
 * optimizer is torch's Adam (megatron/core/optimizer/__init__.py), which
 * resumes in neither format. */
static const char *unresumable(const struct moe_study *s, char *buf, size_t size)
{
    char dist[384], torch[384];

    if (!s->distributed_optimizer || moe_software_has_te(&s->software) || s->software.apex)
        return NULL;
    moe_megatron_rule_describe(citation("checkpoint_torch_adam_torch_dist"), s->software.dialect,
                               dist, sizeof(dist));
    moe_megatron_rule_describe(citation("checkpoint_torch_adam_torch_format"),
                               s->software.dialect, torch, sizeof(torch));
    /* a message: people read it, and a cut one still reads */
    snprintf(buf, size, "no checkpoint/resume run: without Transformer Engine or Apex, %s; %s. "
             "Set workload.distributed_optimizer: false, or declare software.transformer_engine",
             dist, torch);
    return buf;
}

int moe_validate_add_checkpoint(const struct moe_study *s, struct moe_stage_plan *plan,
                                struct moe_error *err)
{
    const struct moe_candidate *from = validated(plan);
    struct moe_candidate c;
    char why[1024];
    int rc;

    if (!from)
        return 0; /* a refused baseline: gen's check of the study says why */
    if (unresumable(s, why, sizeof(why))) {
        if (moe_stage_plan_skip(plan, MOE_CHECKPOINT_VARIABLE, json_null(), why) == 0)
            return 0;
        moe_error_set(err, "validation.checkpoint: out of memory");
        return -1;
    }
    if (moe_checkpoint_step(s) < 1) {
        moe_error_set(err, "validation.checkpoint: no step to save at (validate_steps %d)",
                      s->measure.validate_steps);
        return -1;
    }
    moe_candidate_init(&c);
    rc = build(s, from, &c) < 0 || moe_stage_plan_add(plan, &c) < 0 ? -1 : 0;
    if (rc < 0)
        moe_error_set(err, "validation.checkpoint: out of memory");
    moe_candidate_free(&c);
    return rc;
}

const struct moe_candidate *moe_checkpoint_candidate(const struct moe_candidate *cands, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cands[i].variable && strcmp(cands[i].variable, MOE_CHECKPOINT_VARIABLE) == 0)
            return &cands[i];
    return NULL;
}

int moe_checkpoint_resume_argv(const struct moe_candidate *c, struct moe_strv *out)
{
    long save, every;

    *out = (struct moe_strv){ 0 };
    if (!c->variable || strcmp(c->variable, MOE_CHECKPOINT_VARIABLE) != 0 ||
        moe_strv_copy(out, &c->argv) < 0)
        return -1;
    save = moe_strv_find(out, "--save");
    every = moe_strv_find(out, "--save-interval");
    if (save < 0 || every < 0 || (size_t)save + 1 >= out->n || (size_t)every + 1 >= out->n ||
        moe_strv_set(out, (size_t)save, "--load") < 0 ||
        moe_strv_set(out, (size_t)every, "--ckpt-step") < 0) {
        moe_strv_free(out);
        return -1;
    }
    return 0;
}
