/* The validate stage's part of the evidence pack: each run of the stage
 * (the baseline, each winner alone, the combination) with its command, its
 * config diff against the baseline, the proof of what ran and what its log
 * measured, read as `moeflow report` reads the stage.  Each run is set
 * against the baseline alone: the combination's gain is its own
 * measurement, never the sum of the winners' separate gains. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/evidence_pack.h"
#include "analysis/evidence_pack_internal.h"
#include "analysis/report_internal.h"
#include "analysis/report_runs.h"
#include "analysis/study_report.h"
#include "core/contract_keys.h"
#include "core/json_build.h"
#include "core/shquote.h"
#include "core/strbuf.h"

/* The stage's runs as read from their logs; runs[0] is the baseline. */
struct stage_runs {
    struct moe_study_view view;
    struct moe_report_run *runs;
    size_t n;
    json_t *skipped;   /* {candidate, id, reason} of each run without a usable log */
};

static json_t *not_run(const char *why, struct moe_error *err)
{
    struct moe_jb b;
    json_t *j = json_object();

    moe_jb_init(&b, err);
    moe_jb_str(&b, j, "status", "not run");
    moe_jb_set(&b, j, "why", moe_report_text_json(why));
    return moe_jb_done(&b, j);
}

static json_t *strv_json(struct moe_jb *b, const struct moe_strv *l)
{
    json_t *a = json_array();

    for (size_t i = 0; i < l->n; i++)
        moe_jb_append(b, a, json_string(l->v[i]));
    return moe_jb_done(b, a);
}

/* The trainer's command line as the stage script runs it on each rank:
 * its environment, the study's launcher command, its arguments, each word
 * shell-quoted.  NULL when out of memory. */
static char *shell_line(const struct moe_candidate *c, const json_t *study_json)
{
    const json_t *launcher = json_object_get(json_object_get(study_json, "cluster"), "launcher");
    const char *command = json_string_value(json_object_get(launcher, "command"));
    struct moe_error e;
    json_t *words = command ? moe_shsplit(command, &e) : NULL;
    char *env = moe_shquote_env(&c->env);
    char *prog = words ? moe_shquote_argv(words) : strdup("TRAINER");
    char *args = moe_shquote_words((const char *const *)c->argv.v, c->argv.n);
    char *line = env && prog && args
                     ? moe_strdup_printf("%s%s%s %s", env, env[0] ? " " : "", prog, args)
                     : NULL;

    json_decref(words);
    free(env);
    free(prog);
    free(args);
    return line;
}

static json_t *command_json(struct moe_jb *b, const struct moe_candidate *c,
                            const json_t *study_json)
{
    char *line = shell_line(c, study_json);
    json_t *out = json_object();

    /* NULL only when out of memory: a failure, not a null shell line */
    moe_jb_str(b, out, "shell", line);
    moe_jb_set(b, out, "argv", strv_json(b, &c->argv));
    moe_jb_set(b, out, "env", strv_json(b, &c->env));
    moe_jb_str(b, out, "where", "the validate stage's script runs it on each rank, inside its "
               "launcher (validate.sbatch)");
    free(line);
    return moe_jb_done(b, out);
}

/* One contract section's keys where c and the baseline differ. */
/* {key: "section.key", baseline, candidate}; a NULL side is null. */
static json_t *diff_entry(struct moe_jb *b, const char *section, const char *key,
                          const json_t *old, const json_t *now)
{
    json_t *e = json_object();
    char *name = moe_strdup_printf("%s.%s", section, key);

    moe_jb_str(b, e, "key", name);
    moe_jb_set(b, e, "baseline", old ? json_deep_copy(old) : json_null());
    moe_jb_set(b, e, "candidate", now ? json_deep_copy(now) : json_null());
    free(name);
    return moe_jb_done(b, e);
}

static void diff_section(struct moe_jb *b, const char *section, const json_t *base,
                         const json_t *cand, json_t *out)
{
    const json_t *was = json_object_get(base, section), *is = json_object_get(cand, section);
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)is, key, v) {
        const json_t *old = json_object_get(was, key);

        if (!old || !json_equal(old, v))
            moe_jb_append(b, out, diff_entry(b, section, key, old, v));
    }
    json_object_foreach((json_t *)was, key, v)
        if (!json_object_get(is, key))
            moe_jb_append(b, out, diff_entry(b, section, key, v, NULL));
}

/* What the candidate changes against the baseline: the keys of the
 * contract's sections that a winner may change. */
static json_t *config_diff(struct moe_jb *b, const struct moe_candidate *c,
                           const struct moe_candidate *base)
{
    static const char *const sections[] = { MOE_CONTRACT_PARALLEL, MOE_CONTRACT_TUNING,
                                            MOE_CONTRACT_WORKLOAD, NULL };
    json_t *out = json_array();

    for (const char *const *s = sections; *s; s++)
        diff_section(b, *s, base->contract, c->contract, out);
    return moe_jb_done(b, out);
}

static json_t *measured_json(struct moe_jb *b, const struct moe_report_run *r,
                             const struct moe_candidate *c)
{
    json_t *j = json_object();

    moe_jb_str(b, j, "status", "measured");
    moe_jb_str(b, j, "source", "the run's log over the study's report window; steps: every "
               "logged iteration, warm-up included");
    moe_jb_bool(b, j, "profiled", json_object_get(c->contract, MOE_CONTRACT_PROFILING) != NULL);
    moe_jb_set(b, j, "window",
               moe_jb_pack(b, "[I,I]", (json_int_t)r->first, (json_int_t)r->last));
    moe_jb_int(b, j, "window_iterations", (json_int_t)r->n);
    moe_jb_num_opt(b, j, "step_ms_median", r->step_median);
    moe_jb_num_opt(b, j, "tflops_per_gpu_median", r->tflops_median);
    moe_jb_bool(b, j, "loss_finite", r->loss_finite);
    moe_jb_int(b, j, "skipped_iterations", (json_int_t)r->skipped);
    moe_jb_int(b, j, "nan_iterations", (json_int_t)r->nan_iters);
    moe_jb_num_opt(b, j, "peak_max_allocated_mib", r->peak_bytes / 1048576.0);
    /* every logged iteration's step time, warm-up included, as [iteration,
     * ms] (ms null where the log gave none): what the step-time plot
     * draws, kept in pack.json so the plot can be checked against it */
    moe_report_series_json(b, j, "steps", r);
    return moe_jb_done(b, j);
}

/* This run against the baseline's, measured over the same window. */
static json_t *versus_json(struct moe_jb *b, const struct moe_report_run *base,
                           const struct moe_report_run *r, const struct moe_report_opts *o)
{
    struct moe_report_ab ab;
    double tflops = base->tflops_median > 0 ? 100.0 * (r->tflops_median / base->tflops_median - 1)
                                            : NAN;
    json_t *j = json_object(), *ci = json_array();

    moe_report_compare(base, r, o, &ab);
    moe_jb_str(b, j, "source", "measured: this run against the baseline's run");
    moe_jb_num_opt(b, j, "step_ms_delta_pct", ab.delta_pct);
    moe_jb_append_num_opt(b, j, "step_ms_delta_interval_95_pct", ci, ab.ci_lo_pct);
    moe_jb_append_num_opt(b, j, "step_ms_delta_interval_95_pct", ci, ab.ci_hi_pct);
    moe_jb_set(b, j, "step_ms_delta_interval_95_pct", ci);
    moe_jb_num_opt(b, j, "p_value", ab.p_value);
    moe_jb_num_opt(b, j, "tflops_delta_pct", tflops);
    moe_jb_str(b, j, "verdict", moe_verdict_name(ab.verdict));
    moe_jb_str(b, j, "why", ab.why);
    return moe_jb_done(b, j);
}

static json_t *proof_json(struct moe_jb *b, const struct moe_report_run *r)
{
    json_t *j = json_object();

    moe_jb_str(b, j, "verdict", json_array_size(r->mismatches)
                                    ? "MISMATCH: what ran is not what it asked for"
                                    : "ran as requested");
    moe_jb_copy(b, j, "in_effect", r->in_effect);
    moe_jb_copy(b, j, "mismatches", r->mismatches);
    moe_jb_set(b, j, "profile", r->profile ? json_incref(r->profile) : json_null());
    return moe_jb_done(b, j);
}

static const char *role_of(const struct moe_candidate *c)
{
    if (!c->variable || strcmp(c->variable, "baseline") == 0)
        return "baseline";
    return strcmp(c->variable, "combination") == 0 ? "combination" : "winner";
}

/* The study view's name of candidate id ("baseline", "variable=value"). */
static const char *name_of(const struct moe_study_view *v, const char *id)
{
    if (strcmp(v->ref.id, id) == 0)
        return v->ref.label;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->cands[i].id, id) == 0)
            return v->cands[i].label;
    return NULL;
}

static const struct moe_report_run *run_named(const struct stage_runs *s, const char *name)
{
    for (size_t i = 0; name && i < s->n; i++)
        if (strcmp(s->runs[i].name, name) == 0)
            return &s->runs[i];
    return NULL;
}

static const char *skip_reason(const struct stage_runs *s, const char *id)
{
    for (size_t i = 0; i < json_array_size(s->skipped); i++) {
        const json_t *k = json_array_get(s->skipped, i);

        if (strcmp(json_string_value(json_object_get(k, "id")), id) == 0)
            return json_string_value(json_object_get(k, "reason"));
    }
    return "no log";
}

static json_t *run_entry(struct moe_jb *b, const struct stage_runs *s,
                         const struct moe_candidate *c,
                         const struct moe_candidate *base, const json_t *study_json,
                         const struct moe_report_opts *o)
{
    const char *name = name_of(&s->view, c->id ? c->id : "");
    const struct moe_report_run *r = run_named(s, name);
    json_t *e;

    /* no label of its own: data and routing are invariants of the
     * contract, so every run carries the pack's one label */
    e = json_object();
    moe_jb_str(b, e, "role", role_of(c));
    moe_jb_str_opt(b, e, "name", name);
    moe_jb_str_opt(b, e, "id", c->id);
    moe_jb_set(b, e, "command", command_json(b, c, study_json));
    moe_jb_set(b, e, "config_diff", config_diff(b, c, base));
    if (!r) {
        moe_jb_set(b, e, "measured",
                   moe_jb_pack(b, "{s:s, s:s}", "status", "no evidence", "why",
                               skip_reason(s, c->id ? c->id : "")));
        return moe_jb_done(b, e);
    }
    moe_jb_set(b, e, "measured", measured_json(b, r, c));
    moe_jb_set(b, e, "proof", proof_json(b, r));
    if (r != &s->runs[0])
        moe_jb_set(b, e, "versus_baseline", versus_json(b, &s->runs[0], r, o));
    return moe_jb_done(b, e);
}

static void stage_runs_free(struct stage_runs *s)
{
    for (size_t i = 0; i < s->n; i++)
        moe_report_run_free(&s->runs[i]);
    free(s->runs);
    json_decref(s->skipped);
    moe_study_view_free(&s->view);
}

/* The stage's logs; 1 read, 0 not run (*why says so: free it), -1 with err. */
static int read_stage(const char *study, struct stage_runs *s, char **why,
                      struct moe_error *err)
{
    struct moe_report_reader rd = { 0 };
    struct stat st;

    memset(s, 0, sizeof(*s));
    if (moe_study_view_load(study, "validate", &s->view, err) < 0)
        return -1;
    if (stat(s->view.ref.log, &st) != 0) {
        *why = moe_strdup_printf("no log of the validate baseline yet (%s)", s->view.ref.log);
        if (!*why) {
            moe_error_set(err, "out of memory");
            return -1;
        }
        return 0;
    }
    rd.first = s->view.first;
    rd.last = s->view.last;
    s->runs = calloc(s->view.n + 1, sizeof(*s->runs));
    s->skipped = json_array();
    if (!s->runs || !s->skipped) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    if (moe_report_load_study_run(&s->view, &s->view.ref, "baseline", &rd, &s->runs[0], err) < 0)
        return -1;
    s->n = 1 + moe_report_load_candidates(&s->view, &rd, s->runs + 1, s->skipped);
    return 1;
}

static const struct moe_candidate *baseline_of(const struct moe_manifest_stage *st)
{
    for (size_t i = 0; i < st->n; i++)
        if (moe_candidate_is_timed(&st->cands[i]) &&
            strcmp(role_of(&st->cands[i]), "baseline") == 0)
            return &st->cands[i];
    return NULL;
}

json_t *moe_evidence_pack_runs(const char *study, const struct moe_manifest *m,
                               const json_t *study_json, const struct moe_report_opts *opts,
                               struct moe_error *err)
{
    const struct moe_manifest_stage *st = moe_manifest_find(m, MOE_STAGE_VALIDATE);
    const struct moe_candidate *base = st ? baseline_of(st) : NULL;
    struct stage_runs s;
    struct moe_jb b;
    char *why = NULL;
    json_t *out, *runs;
    int rc;

    if (!base)
        return not_run("the study has no validate stage with a baseline (generated with "
                       "--stage?)", err);
    if ((rc = read_stage(study, &s, &why, err)) <= 0) {
        stage_runs_free(&s);
        out = rc < 0 ? NULL : not_run(why, err);
        free(why);
        return out;
    }
    moe_jb_init(&b, err);
    runs = json_array();
    for (size_t i = 0; i < st->n; i++)
        if (moe_candidate_is_timed(&st->cands[i]))
            moe_jb_append(&b, runs, run_entry(&b, &s, &st->cands[i], base, study_json, opts));
    out = json_object();
    moe_jb_str(&b, out, "status", "ran");
    moe_jb_set(&b, out, "window",
               moe_jb_pack(&b, "[I,I]", (json_int_t)s.view.first, (json_int_t)s.view.last));
    moe_jb_str(&b, out, "window_source", s.view.window_note);
    moe_jb_set(&b, out, "runs", runs);
    stage_runs_free(&s);
    if (!(out = moe_jb_done(&b, out)))
        moe_jb_within(&b, "runs");
    return out;
}
