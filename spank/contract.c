/* The measurement contract in the plugin: checked against the frozen
 * baseline at submission (sbatch/srun, as the user, declared values only)
 * and at task start (task_init, as the user, with this node's facts). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "contract/contract_check.h"
#include "contract/contract_store.h"
#include "core/contract_keys.h"
#include "core/json_build.h"
#include "core/number.h"
#include "core/strbuf.h"
#include "core/study_dir.h"
#include "core/model.h"
#include "contract/node_facts.h"
#include "topology/nodetopo.h"
#include "topology/nvml.h"
#include "plugin.h"

/* Generated scripts name the study relative to where they are submitted
 * from; slurmstepd runs elsewhere, so resolve against SLURM_SUBMIT_DIR.
 * A path too long for the buffer is an error, never cut: a cut path names
 * another folder. */
static int resolve_study(spank_t sp, char *buf, size_t len)
{
    const char *study = moe_plugin.opts.study;
    char submit_dir[PATH_MAX];
    struct moe_error err;
    spank_err_t rc = ESPANK_ENV_NOEXIST;

    moe_error_clear(&err);
    if (study[0] && study[0] != '/' && sp)
        rc = spank_getenv(sp, "SLURM_SUBMIT_DIR", submit_dir, sizeof(submit_dir));
    if (rc == ESPANK_NOSPACE)
        moe_error_set(&err, "SLURM_SUBMIT_DIR: too long (at most %zu bytes)",
                      sizeof(submit_dir) - 1);
    else if (moe_fmt_fixed(buf, len, &err, "%s%s%s", rc == ESPANK_SUCCESS ? submit_dir : "",
                           rc == ESPANK_SUCCESS ? "/" : "", study) == 0)
        return 0;
    moe_report(MOE_REPORT_ERROR, "the study directory", study, &err);
    return -1;
}

/* Contracts live in study directories; a bare study file has none. */
static bool contract_applies(const char *study)
{
    return moe_plugin.opts.stage != MOE_STAGE_NONE && study[0] &&
           moe_study_dir(study) != MOE_STUDY_NOT_DIR;
}

/* Rule 5: a --moe-study that names nothing at job start (moved or renamed
 * after submission, or a relative path against a SLURM_SUBMIT_DIR the
 * job's environment changed) is a check that cannot be made, never "no
 * contract applies".  0 when the study is there (a directory, or a study
 * file, which has no contract); -1 with err otherwise. */
static int study_present(spank_t sp, const char *study, struct moe_error *err)
{
    char submit_dir[PATH_MAX] = "";
    struct stat st;
    int e;

    if (moe_plugin.opts.stage == MOE_STAGE_NONE || !study[0] || stat(study, &st) == 0)
        return 0;
    e = errno;
    if (moe_plugin.opts.study[0] != '/' && sp &&
        spank_getenv(sp, "SLURM_SUBMIT_DIR", submit_dir, sizeof(submit_dir)) != ESPANK_SUCCESS)
        submit_dir[0] = '\0';
    moe_error_set(err, "study not found at job start: %s (--moe-study=%s%s%s): it was moved, "
                  "renamed or removed after submission, or the job's SLURM_SUBMIT_DIR is not the "
                  "submission's; no contract can be checked or recorded", strerror(e),
                  moe_plugin.opts.study,
                  submit_dir[0] ? ", resolved against SLURM_SUBMIT_DIR=" : "", submit_dir);
    return -1;
}

static bool may_freeze(void)
{
    return moe_plugin.opts.stage == MOE_STAGE_CONTRACT || moe_plugin.config.auto_freeze;
}

/* The mode in force, or -1 (with a message) when the user asks for a
 * downgrade the admin does not allow. */
static int enforce_mode(enum moe_enforce_mode *mode)
{
    *mode = moe_plugin.config.enforce;
    if (moe_plugin.opts.enforce < 0 || moe_plugin.opts.enforce == (int)*mode)
        return 0;
    if (moe_plugin.opts.enforce == MOE_ENFORCE_WARN && !moe_plugin.config.enforce_user_override) {
        slurm_error(MOE_LOG_PREFIX "--moe-enforce=warn is not allowed on this cluster "
                    "(plugstack.conf: enforce_override=deny)");
        return -1;
    }
    *mode = (enum moe_enforce_mode)moe_plugin.opts.enforce;
    return 0;
}

static void report_refusal(const struct moe_contract_outcome *out, const char *when)
{
    const char *line = out->diff_text;

    slurm_error(MOE_LOG_PREFIX "contract %s: refused by rule %s: %s", when, out->rule, out->reason);
    while (line && *line) {
        const char *end = strchr(line, '\n');
        int len = end ? (int)(end - line) : (int)strlen(line);
        slurm_error(MOE_LOG_PREFIX "  %.*s", len, line);
        line = end ? end + 1 : line + len;
    }
}

/* -1 to refuse; a violation in warn mode is reported and let through. */
static int conclude(const char *study, const struct moe_contract_outcome *out, int rc,
                    const struct moe_error *err, enum moe_enforce_mode mode, const char *when)
{
    if (rc != 0) {
        char what[200];
        /* a message: what the report says failed */
        snprintf(what, sizeof(what), "contract %s", when);
        moe_report(MOE_REPORT_ERROR, what, study, err);
        return mode == MOE_ENFORCE_STRICT ? -1 : 0;
    }
    if (out->allowed)
        return 0;
    report_refusal(out, when);
    return mode == MOE_ENFORCE_STRICT ? -1 : 0;
}

static int submit_check_one(const char *study, const char *candidate, enum moe_enforce_mode mode)
{
    struct moe_contract_outcome out = { 0 };
    struct moe_error err;
    json_t *requested;
    char when[160];
    int rc;

    moe_error_clear(&err);
    /* fits: 36 bytes and an id cut to 12 on purpose (a message) */
    snprintf(when, sizeof(when), "check at submission%s%.12s", candidate[0] ? " of candidate " : "",
             candidate);
    requested = moe_contract_declared(study, candidate, &err);
    rc = requested ? moe_contract_enforce(study, moe_plugin.opts.stage, requested, false,
                                          may_freeze(), &out, &err)
                   : -1;
    rc = conclude(study, &out, rc, &err, mode, when);
    moe_contract_outcome_free(&out);
    json_decref(requested);
    return rc;
}

/* What the submission itself shows to be wrong, before any contract is
 * read: a stage after the contract without --moe-study has nothing to be
 * checked against; a stage of several candidates outside an array, without
 * --moe-candidate, cannot tell its step which candidate it runs.  array:
 * the submission asks for a job array.  Strict mode refuses, warn mode
 * reports and lets it through. */
int moe_submission_rules(bool array)
{
    const char *study = moe_plugin.opts.study;
    enum moe_enforce_mode mode;
    struct moe_error err;
    struct moe_strv ids;
    size_t n;

    if (moe_plugin.opts.stage == MOE_STAGE_NONE || moe_plugin.opts.stage == MOE_STAGE_CONTRACT)
        return 0;
    if (enforce_mode(&mode) != 0)
        return -1;
    if (!study[0]) {
        slurm_error(MOE_LOG_PREFIX "--moe-stage=%s needs --moe-study=DIR (the study directory "
                    "moeflow gen wrote): without it no contract check can run%s",
                    moe_stage_name(moe_plugin.opts.stage),
                    mode == MOE_ENFORCE_STRICT ? "" : " (enforce=warn: let through)");
        return mode == MOE_ENFORCE_STRICT ? -1 : 0;
    }
    if (moe_plugin.opts.candidate[0] || array || !contract_applies(study))
        return 0;
    moe_error_clear(&err);
    if (moe_manifest_stage_ids(study, moe_plugin.opts.stage, &ids, &err) < 0)
        return 0; /* the contract check reports an unreadable manifest */
    n = ids.n;
    moe_strv_free(&ids);
    if (n <= 1)
        return 0;
    slurm_error(MOE_LOG_PREFIX "--moe-stage=%s of %s has %zu candidates: submit the stage's job "
                "array (sbatch %s.sbatch) or name one with --moe-candidate=ID (ids in "
                "candidates.tsv)%s",
                moe_stage_name(moe_plugin.opts.stage), study, n,
                moe_stage_name(moe_plugin.opts.stage),
                mode == MOE_ENFORCE_STRICT ? "" : " (enforce=warn: let through)");
    return mode == MOE_ENFORCE_STRICT ? -1 : 0;
}

/* Without --moe-candidate a job (array) may run any candidate of its stage:
 * every one of them must pass. */
int moe_contract_at_submit(void)
{
    const char *study = moe_plugin.opts.study;
    enum moe_enforce_mode mode;
    struct moe_error err;
    struct moe_strv ids;
    int rc = 0;

    if (!contract_applies(study))
        return 0;
    if (enforce_mode(&mode) != 0)
        return -1;
    if (moe_plugin.opts.candidate[0])
        return submit_check_one(study, moe_plugin.opts.candidate, mode);
    moe_error_clear(&err);
    if (moe_manifest_stage_ids(study, moe_plugin.opts.stage, &ids, &err) < 0) {
        moe_report(MOE_REPORT_ERROR, "contract check at submission", study, &err);
        return mode == MOE_ENFORCE_STRICT ? -1 : 0;
    }
    if (ids.n == 0)
        rc = submit_check_one(study, "", mode);
    for (size_t i = 0; i < ids.n; i++) {
        if ((rc = submit_check_one(study, ids.v[i], mode)) != 0)
            break;
    }
    moe_strv_free(&ids);
    return rc;
}

static int spank_env(void *ctx, const char *name, char *buf, size_t len)
{
    return spank_getenv((spank_t)ctx, name, buf, (int)len) == ESPANK_SUCCESS ? 0 : -1;
}

/* The largest chunk offset: well above any stage's candidate count, and
 * with a task id below NO_VAL the index stays inside a long. */
#define MOE_INDEX_OFFSET_MAX 1000000000

/* True for a task of a job array.  Slurm reports the job's own id and
 * NO_VAL as the "array" of an ordinary job's srun steps. */
static bool array_task(spank_t sp, uint32_t *array, uint32_t *task)
{
    return spank_get_item(sp, S_JOB_ARRAY_ID, array) == ESPANK_SUCCESS && *array != 0 &&
           spank_get_item(sp, S_JOB_ARRAY_TASK_ID, task) == ESPANK_SUCCESS && *task < NO_VAL;
}

/* "<jobid>" or "<array job id>_<array task id>"; len holds 22 bytes (two
 * 10-digit uint32_t, '_' and the end), as every caller's buffer does. */
static void run_id(spank_t sp, char *buf, size_t len)
{
    uint32_t job = 0, array = 0, task = 0;

    spank_get_item(sp, S_JOB_ID, &job);
    if (array_task(sp, &array, &task))
        snprintf(buf, len, "%u_%u", array, task); /* fits: at most 21 characters (above) */
    else
        snprintf(buf, len, "%u", job); /* fits: at most 10 digits */
}

/* MOEFLOW_INDEX_OFFSET, which `moeflow run` and the generated submit.sh set
 * for a stage split into chunked arrays (the job script adds it to the
 * array task id in bash arithmetic): a whole decimal number in range, or
 * the step would check and record another candidate than the script runs.
 * Unset or empty is 0. */
static int index_offset(spank_t sp, uint32_t task, long *offset, struct moe_error *err)
{
    char text[64];
    struct moe_error why;
    spank_err_t rc = spank_getenv(sp, MOE_ENV_INDEX_OFFSET, text, sizeof(text));

    *offset = 0;
    if (rc == ESPANK_ENV_NOEXIST || (rc == ESPANK_SUCCESS && !text[0]))
        return 0;
    moe_error_clear(&why);
    if (rc == ESPANK_NOSPACE)
        moe_error_set(&why, "longer than %zu bytes", sizeof(text) - 1);
    else if (rc == ESPANK_SUCCESS &&
             moe_number_parse_long(text, 0, MOE_INDEX_OFFSET_MAX, offset, &why) == 0)
        return 0;
    else if (rc != ESPANK_SUCCESS)
        moe_error_set(&why, "%s", spank_strerror(rc));
    moe_error_set(err, MOE_ENV_INDEX_OFFSET " (array task %u): %s; it is the index of a chunk's "
                  "first candidate, which the stage's chunked submission sets (moeflow run, "
                  "submit.sh)", task, why.text);
    return -1;
}

/* --moe-candidate, else this array task's entry in the manifest (chunked
 * arrays add MOEFLOW_INDEX_OFFSET), else the stage's only candidate, else
 * the baseline of a study without a manifest. */
static int task_candidate(spank_t sp, const char *study, char *id, size_t len,
                          struct moe_error *err)
{
    uint32_t array = 0, task = 0;
    long index = -1;
    struct moe_strv ids;
    bool none;

    if (moe_plugin.opts.candidate[0])
        return moe_fmt_fixed(id, len, err, "%s", moe_plugin.opts.candidate);
    if (moe_manifest_stage_ids(study, moe_plugin.opts.stage, &ids, err) < 0)
        return -1;
    none = ids.n == 0;
    moe_strv_free(&ids);
    if (none) {
        id[0] = '\0';
        return 0;
    }
    if (array_task(sp, &array, &task)) {
        if (index_offset(sp, task, &index, err) != 0)
            return -1;
        index += (long)task;
    }
    return moe_manifest_candidate(study, moe_plugin.opts.stage, index, id, len, err);
}

/* What only this node knows, gathered once per node and step (user_init)
 * and shared by its tasks. */
static json_t *node_facts;

static json_t *gather_node_facts(spank_t sp)
{
    struct moe_nvml_report nvml;
    const struct moe_nodetopo *nt;
    struct moe_error err, ignored;
    bool have_nvml;
    json_t *facts;

    moe_error_clear(&err);
    have_nvml = moe_nvml_query(&nvml, &ignored) == 0; /* no NVML: no GPU facts to compare */
    nt = moe_topology_get(&err);
    if (!nt)
        moe_report(MOE_REPORT_ERROR, "node topology for the contract", moe_topology_source(), &err);
    moe_error_clear(&err);
    /* the domain map apart: its errors name the admin's file */
    facts = moe_node_facts_gather(nt ? nt->topo : NULL, have_nvml ? &nvml : NULL, spank_env, sp,
                                  NULL, &err);
    if (!facts || err.text[0])
        moe_report(MOE_REPORT_ERROR, "node facts for the contract", moe_topology_source(), &err);
    else if (moe_plugin.config.topology[0] &&
             moe_node_facts_domain_map(facts, moe_plugin.config.topology, &err) != 0)
        moe_report(MOE_REPORT_ERROR, "node facts for the contract", moe_plugin.config.topology,
                   &err);
    return facts;
}

void moe_contract_user_init(spank_t sp)
{
    char study[2 * PATH_MAX];

    if (resolve_study(sp, study, sizeof(study)) == 0 && contract_applies(study) && !node_facts)
        node_facts = gather_node_facts(sp);
}

static json_t *runtime_contract(spank_t sp, const char *study, const char *id,
                                struct moe_error *err)
{
    char candidate[MOE_CANDIDATE_ID_MAX + 1];

    if (task_candidate(sp, study, candidate, sizeof(candidate), err) != 0)
        return NULL;
    if (!node_facts && !(node_facts = gather_node_facts(sp))) {
        moe_error_set(err, "this node's facts could not be gathered (reported above)");
        return NULL;
    }
    return moe_contract_runtime(study, moe_plugin.opts.stage, candidate, id, node_facts, err);
}

bool moe_contract_candidate_layout(spank_t sp, struct moe_layout *l)
{
    char study[2 * PATH_MAX], candidate[MOE_CANDIDATE_ID_MAX + 1];
    struct moe_error err;
    json_t *doc;

    moe_error_clear(&err);
    if (resolve_study(sp, study, sizeof(study)) != 0 || !contract_applies(study) ||
        task_candidate(sp, study, candidate, sizeof(candidate), &err) != 0 ||
        !(doc = moe_contract_declared(study, candidate, &err)))
        return false;
    moe_contract_layout(doc, l);
    json_decref(doc);
    return true;
}

int moe_contract_at_task(spank_t sp, bool batch)
{
    struct moe_contract_outcome out = { 0 };
    enum moe_enforce_mode mode;
    struct moe_error err;
    char id[64], study[2 * PATH_MAX];
    bool missing, unrecorded;
    json_t *doc;
    int rc;

    if (resolve_study(sp, study, sizeof(study)) != 0)
        return batch ? 0 : -1;
    moe_error_clear(&err);
    missing = study_present(sp, study, &err) != 0;
    if (!missing && !contract_applies(study))
        return 0;
    if (enforce_mode(&mode) != 0)
        return batch ? 0 : -1;
    if (missing) {
        rc = conclude(study, &out, -1, &err, mode, "check at job start");
        return batch ? 0 : rc;
    }
    run_id(sp, id, sizeof(id));
    doc = runtime_contract(sp, study, id, &err);
    rc = doc ? moe_contract_enforce(study, moe_plugin.opts.stage, doc, true, may_freeze(), &out,
                                    &err)
             : -1;
    /* rule 5: a record that cannot be written is an error with its reason */
    unrecorded = rc == 0 && out.allowed && moe_contract_record_run(study, id, doc, &err) < 0;
    rc = conclude(study, &out, unrecorded ? -1 : rc, &err, mode,
                  unrecorded ? "record at job start" : "check at job start");
    moe_contract_outcome_free(&out);
    json_decref(doc);
    /* never fail the batch step: that would drain the node */
    return batch ? 0 : rc;
}
