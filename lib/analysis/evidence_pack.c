/* pack.json: the study's label, its environment as declared and as the
 * contract stage measured it, the validate stage's runs
 * (evidence_pack_runs.c), and the verdicts the validate report carries. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/evidence_pack.h"
#include "core/contract_keys.h"
#include "core/readfile.h"
#include "core/study_dir.h"

#define VALIDATE_REPORT MOE_STUDY_VALIDATE_REPORT

/* study/rel as JSON; *out NULL and 0 when nothing is there (its stage did
 * not run), -1 with err naming the file when it is there but unreadable. */
static int optional_json(const char *study, const char *rel, const char *what, json_t **out,
                         struct moe_error *err)
{
    char path[4400];
    struct stat st;

    *out = NULL;
    snprintf(path, sizeof(path), "%s/%s", study, rel);
    if (lstat(path, &st) != 0 && errno == ENOENT)
        return 0;
    *out = moe_read_json(path, what, err);
    return *out ? 0 : -1;
}

static const json_t *get(const json_t *o, const char *key)
{
    return json_object_get(o, key);
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

static json_t *semantics_json(const struct moe_manifest *m)
{
    const struct moe_candidate *c = labelled(m);
    const char *reasons[MOE_LABEL_REASONS_MAX], *label;
    const json_t *sem, *work;
    json_t *list = json_array();
    char text[512];
    size_t n;

    if (!c) {
        json_decref(list);
        return json_pack("{s:s, s:s}", "label", "unlabelled", "text",
                         "unlabelled: " MOE_STUDY_MANIFEST " lists no candidate");
    }
    label = moe_candidate_semantics(c, reasons, &n);
    for (size_t i = 0; list && i < n; i++)
        json_array_append_new(list, json_string(reasons[i]));
    moe_candidate_label_text(c, text, sizeof(text));
    sem = get(c->contract, MOE_CONTRACT_SEMANTICS);
    work = get(c->contract, MOE_CONTRACT_WORKLOAD);
    return json_pack("{s:s, s:s, s:o, s:O?, s:O?, s:s?, s:O?, s:s}", "label", label, "text", text,
                     "reasons", list, "routing", get(sem, "routing"), "data", get(work, "data"),
                     "manifest_label", c->label, "contract_class", get(sem, "class"),
                     "contract_class_note",
                     "the label follows the contract's data and routing; the contract's "
                     "semantics.class records the routing class alone (it is hashed into every "
                     "candidate's id)");
}

static json_t *declared_json(const json_t *baseline)
{
    const json_t *env = get(baseline, MOE_CONTRACT_ENVIRONMENT);

    if (!baseline)
        return json_pack("{s:s, s:s}", "status", "not run",
                         "why", "no " MOE_STUDY_BASELINE " (moeflow gen writes it)");
    return json_pack("{s:s, s:s, s:O?, s:O?, s:O?, s:O?, s:O?}", "status", "declared", "source",
                     MOE_STUDY_BASELINE, "container_image", get(env, "container_image"),
                     "megatron", get(env, "megatron"), "transformer_engine",
                     get(env, "transformer_engine"), "hardware",
                     get(baseline, MOE_CONTRACT_HARDWARE), "parallel",
                     get(baseline, MOE_CONTRACT_PARALLEL));
}

static json_t *measured_json(const json_t *m)
{
    const json_t *meg = get(m, "megatron"), *gpus = get(m, "gpus");

    if (!m)
        return json_pack("{s:s, s:s}", "status", "not run", "why",
                         "no " MOE_STUDY_MEASURED " (the contract stage's capture writes it)");
    return json_pack("{s:s, s:s, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, "
                     "s:O?}", "status", "measured", "source", MOE_STUDY_MEASURED, "host",
                     get(m, "host"), "captured_at", get(m, "captured_at"), "megatron_version",
                     get(meg, "version"), "megatron_commit", get(meg, "commit"),
                     "megatron_commit_reason", get(meg, "commit_reason"), "gpu_model",
                     get(gpus, "model"), "gpu_count", get(gpus, "count"), "gpu_memory_mib",
                     get(gpus, "memory_mib"), "driver", get(gpus, "driver"), "topology",
                     get(gpus, "topology"), "checks", get(m, "checks"));
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
static json_t *finding(const json_t *report, const char *key, const char *not_requested)
{
    const json_t *v = get(report, key);
    char why[256];

    if (v)
        return json_pack("{s:s, s:s, s:O}", "status", "reported", "source", VALIDATE_REPORT,
                         "value", v);
    if (not_requested)
        return json_pack("{s:s, s:s}", "status", "not requested", "why", not_requested);
    if (report)
        snprintf(why, sizeof(why), "%s has no \"%s\"", VALIDATE_REPORT, key);
    else
        snprintf(why, sizeof(why), "no %s yet (moeflow run writes it after the validate stage)",
                 VALIDATE_REPORT);
    return json_pack("{s:s, s:s}", "status", "no evidence", "why", why);
}

static json_t *assemble(const struct moe_manifest *m, const json_t *study_json,
                        const json_t *baseline, const json_t *measured, const json_t *report,
                        json_t *runs, json_t *plots)
{
    return json_pack("{s:i, s:s?, s:s?, s:s, s:o, s:{s:o, s:o}, s:o, s:o, s:o, s:s, s:o*}",
                     "format", 1,
                     "study", m->study, "study_hash", m->study_hash, "moeflow_version",
                     PACKAGE_VERSION, "semantics", semantics_json(m), "environment",
                     "declared", declared_json(baseline), "measured", measured_json(measured),
                     "validate", runs, "checkpoint",
                     finding(report, "checkpoint",
                             json_is_true(get(get(study_json, "validation"), "checkpoint"))
                                 ? NULL
                                 : "the study does not set validation.checkpoint: true"),
                     "profile_pairs",
                     finding(report, "profile_pairs",
                             has_twins(m) ? NULL
                                          : "validate was not rebuilt from recorded winners "
                                            "(moeflow gen --winners adds the profiling twins)"),
                     "gains",
                     "each gain is one run measured against the baseline over the same window; "
                     "gains of separate A/Bs are never added up: the combination's gain is the "
                     "combination's own measurement", "plots", plots);
}

json_t *moe_evidence_pack(const char *study, const struct moe_report_opts *opts,
                          const struct moe_pack_trail *trail, struct moe_error *err)
{
    json_t *study_json = NULL, *baseline = NULL, *measured = NULL, *report = NULL;
    json_t *runs = NULL, *pack = NULL;
    struct moe_manifest m;

    if (moe_manifest_load(study, &m, err) < 0)
        return NULL;
    if (optional_json(study, "study.json", "study", &study_json, err) == 0 &&
        optional_json(study, MOE_STUDY_BASELINE, "contract", &baseline, err) == 0 &&
        optional_json(study, MOE_STUDY_MEASURED, MOE_STUDY_MEASURED_NAME, &measured, err) == 0 &&
        optional_json(study, VALIDATE_REPORT, "validate report", &report, err) == 0 &&
        (runs = moe_evidence_pack_runs(study, &m, study_json, opts, err)) &&
        !(pack = assemble(&m, study_json, baseline, measured, report, runs,
                          moe_evidence_pack_plots(study, &m, runs, trail))))
        moe_error_set(err, "out of memory");
    json_decref(study_json);
    json_decref(baseline);
    json_decref(measured);
    json_decref(report);
    moe_manifest_free(&m);
    return pack;
}
