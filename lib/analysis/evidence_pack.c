/* pack.json: the study's label, its environment as declared and as the
 * contract stage measured it, the validate stage's runs
 * (evidence_pack_runs.c), and the verdicts the validate report carries. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/evidence_pack.h"
#include "analysis/evidence_pack_internal.h"
#include "analysis/report_internal.h"
#include "core/json_build.h"
#include "core/contract_keys.h"
#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

#define VALIDATE_REPORT MOE_STUDY_VALIDATE_REPORT

/* study/rel as JSON; *out NULL and 0 when nothing is there (its stage did
 * not run), -1 with err naming the file when it is there but unreadable. */
static int optional_json(const char *study, const char *rel, const char *what, json_t **out,
                         struct moe_error *err)
{
    char *path = moe_path_join(study, rel);
    struct stat st;

    *out = NULL;
    if (!path) {
        moe_error_at(err, study, 0, 0, "out of memory");
        return -1;
    }
    if (lstat(path, &st) != 0 && errno == ENOENT) {
        free(path);
        return 0;
    }
    *out = moe_read_json(path, what, err);
    free(path);
    return *out ? 0 : -1;
}

static const json_t *get(const json_t *o, const char *key)
{
    return json_object_get(o, key);
}

/* obj[key] = a copy of o[key] when there is one: what "s:O?" gave, null
 * for an absent value. */
static void copy_opt(struct moe_jb *b, json_t *obj, const char *key, const json_t *v)
{
    moe_jb_set(b, obj, key, v ? json_incref((json_t *)v) : json_null());
}

/* {"status": status, "why": why} */
static json_t *status_why(struct moe_jb *b, const char *status, const char *why)
{
    json_t *j = json_object();

    moe_jb_str(b, j, "status", status);
    moe_jb_str(b, j, "why", why);
    return moe_jb_done(b, j);
}

/* The candidate whose label the study's results carry: validate's
 * baseline, else the first candidate of any stage. */
static const struct moe_candidate *labelled(const struct moe_manifest *m)
{
    const struct moe_manifest_stage *v = moe_manifest_find(m, MOE_STAGE_VALIDATE);

    if (v && v->n)
        return &v->cands[0];
    for (size_t i = 0; i < m->n_stages; i++)
        if (m->stages[i].n)
            return &m->stages[i].cands[0];
    return NULL;
}

static json_t *semantics_json(struct moe_jb *b, const struct moe_manifest *m)
{
    const struct moe_candidate *c = labelled(m);
    const char *reasons[MOE_LABEL_REASONS_MAX];
    const json_t *sem, *work;
    json_t *j = json_object(), *list;
    char text[512];
    size_t n;

    if (!c) {
        moe_jb_str(b, j, "label", "unlabelled");
        moe_jb_str(b, j, "text", "unlabelled: " MOE_STUDY_MANIFEST " lists no candidate");
        return moe_jb_done(b, j);
    }
    moe_jb_str(b, j, "label", moe_candidate_semantics(c, reasons, &n));
    /* a label's text is a few words and its reasons, far below 512 bytes;
     * one cut short would still be the label */
    moe_candidate_label_text(c, text, sizeof(text));
    moe_jb_set(b, j, "text", moe_report_text_json(text));
    list = json_array();
    for (size_t i = 0; i < n; i++)
        moe_jb_append(b, list, json_string(reasons[i]));
    moe_jb_set(b, j, "reasons", list);
    sem = get(c->contract, MOE_CONTRACT_SEMANTICS);
    work = get(c->contract, MOE_CONTRACT_WORKLOAD);
    copy_opt(b, j, "routing", get(sem, "routing"));
    copy_opt(b, j, "data", get(work, "data"));
    moe_jb_str_opt(b, j, "manifest_label", c->label);
    copy_opt(b, j, "contract_class", get(sem, "class"));
    moe_jb_str(b, j, "contract_class_note", "the label follows the contract's data and routing; "
               "the contract's semantics.class records the routing class alone (it is hashed "
               "into every candidate's id)");
    return moe_jb_done(b, j);
}

static json_t *declared_json(struct moe_jb *b, const json_t *baseline)
{
    const json_t *env = get(baseline, MOE_CONTRACT_ENVIRONMENT);
    json_t *j;

    if (!baseline)
        return status_why(b, "not run", "no " MOE_STUDY_BASELINE " (moeflow gen writes it)");
    j = json_object();
    moe_jb_str(b, j, "status", "declared");
    moe_jb_str(b, j, "source", MOE_STUDY_BASELINE);
    copy_opt(b, j, "container_image", get(env, "container_image"));
    copy_opt(b, j, "megatron", get(env, "megatron"));
    copy_opt(b, j, "transformer_engine", get(env, "transformer_engine"));
    copy_opt(b, j, "hardware", get(baseline, MOE_CONTRACT_HARDWARE));
    copy_opt(b, j, "parallel", get(baseline, MOE_CONTRACT_PARALLEL));
    return moe_jb_done(b, j);
}

static json_t *measured_json(struct moe_jb *b, const json_t *m)
{
    const json_t *meg = get(m, "megatron"), *gpus = get(m, "gpus");
    json_t *j;

    if (!m)
        return status_why(b, "not run",
                          "no " MOE_STUDY_MEASURED " (the contract stage's capture writes it)");
    j = json_object();
    moe_jb_str(b, j, "status", "measured");
    moe_jb_str(b, j, "source", MOE_STUDY_MEASURED);
    copy_opt(b, j, "host", get(m, "host"));
    copy_opt(b, j, "captured_at", get(m, "captured_at"));
    copy_opt(b, j, "megatron_version", get(meg, "version"));
    copy_opt(b, j, "megatron_commit", get(meg, "commit"));
    copy_opt(b, j, "megatron_commit_reason", get(meg, "commit_reason"));
    copy_opt(b, j, "gpu_model", get(gpus, "model"));
    copy_opt(b, j, "gpu_count", get(gpus, "count"));
    copy_opt(b, j, "gpu_memory_mib", get(gpus, "memory_mib"));
    copy_opt(b, j, "driver", get(gpus, "driver"));
    copy_opt(b, j, "topology", get(gpus, "topology"));
    copy_opt(b, j, "checks", get(m, "checks"));
    return moe_jb_done(b, j);
}

/* Whether validate holds profiling twins: gen --winners adds them (the
 * matched A/B profiles are asked for by rebuilding validate from winners,
 * not by a study key). */
static bool has_twins(const struct moe_manifest *m)
{
    const struct moe_manifest_stage *st = moe_manifest_find(m, MOE_STAGE_VALIDATE);

    for (size_t i = 0; st && i < st->n; i++)
        if (st->cands[i].twin_of)
            return true;
    return false;
}

/* The validate report's finding under key (another part of moeflow writes
 * it there), else why there is none: not_requested says why the study did
 * not ask for it (NULL: it did). */
static json_t *finding(struct moe_jb *b, const json_t *report, const char *key,
                       const char *not_requested)
{
    const json_t *v = get(report, key);
    json_t *j;

    if (v) {
        j = json_object();
        moe_jb_str(b, j, "status", "reported");
        moe_jb_str(b, j, "source", VALIDATE_REPORT);
        moe_jb_copy(b, j, "value", (json_t *)v);
        return moe_jb_done(b, j);
    }
    if (not_requested)
        return status_why(b, "not requested", not_requested);
    if (report) /* key is one of ours (checkpoint, profile_pairs) */
        return status_why(b, "no evidence", strcmp(key, "checkpoint") == 0
                                                ? VALIDATE_REPORT " has no \"checkpoint\""
                                                : VALIDATE_REPORT " has no \"profile_pairs\"");
    return status_why(b, "no evidence",
                      "no " VALIDATE_REPORT " yet (moeflow run writes it after the validate "
                      "stage)");
}

static json_t *assemble(struct moe_jb *b, const struct moe_manifest *m,
                        const json_t *study_json, const json_t *baseline, const json_t *measured,
                        const json_t *report, json_t *runs, json_t *plots)
{
    json_t *j = json_object(), *env = json_object();

    moe_jb_int(b, j, "format", 1);
    moe_jb_str_opt(b, j, "study", m->study);
    moe_jb_str_opt(b, j, "study_hash", m->study_hash);
    moe_jb_str(b, j, "moeflow_version", PACKAGE_VERSION);
    moe_jb_set(b, j, "semantics", semantics_json(b, m));
    moe_jb_set(b, env, "declared", declared_json(b, baseline));
    moe_jb_set(b, env, "measured", measured_json(b, measured));
    moe_jb_set(b, j, "environment", env);
    moe_jb_set(b, j, "validate", runs);
    moe_jb_set(b, j, "checkpoint",
               finding(b, report, "checkpoint",
                       json_is_true(get(get(study_json, "validation"), "checkpoint"))
                           ? NULL
                           : "the study does not set validation.checkpoint: true"));
    moe_jb_set(b, j, "profile_pairs",
               finding(b, report, "profile_pairs",
                       has_twins(m) ? NULL
                                    : "validate was not rebuilt from recorded winners "
                                      "(moeflow gen --winners adds the profiling twins)"));
    moe_jb_str(b, j, "gains", "each gain is one run measured against the baseline over the same "
               "window; gains of separate A/Bs are never added up: the combination's gain is "
               "the combination's own measurement");
    moe_jb_set(b, j, "plots", plots);
    return moe_jb_done(b, j);
}

json_t *moe_evidence_pack(const char *study, const struct moe_report_opts *opts,
                          const struct moe_pack_trail *trail, struct moe_error *err)
{
    json_t *study_json = NULL, *baseline = NULL, *measured = NULL, *report = NULL;
    json_t *runs = NULL, *pack = NULL;
    struct moe_manifest m;
    struct moe_jb b;

    if (moe_manifest_load(study, &m, err) < 0)
        return NULL;
    moe_jb_init(&b, err);
    if (optional_json(study, "study.json", "study", &study_json, err) == 0 &&
        optional_json(study, MOE_STUDY_BASELINE, "contract", &baseline, err) == 0 &&
        optional_json(study, MOE_STUDY_MEASURED, MOE_STUDY_MEASURED_NAME, &measured, err) == 0 &&
        optional_json(study, VALIDATE_REPORT, "validate report", &report, err) == 0 &&
        (runs = moe_evidence_pack_runs(study, &m, study_json, opts, err)))
        pack = assemble(&b, &m, study_json, baseline, measured, report, runs,
                        moe_evidence_pack_plots(&b, study, &m, runs, trail));
    json_decref(study_json);
    json_decref(baseline);
    json_decref(measured);
    json_decref(report);
    moe_manifest_free(&m);
    return pack;
}
