/* moeflow contract check: the plugin's contract checks, run by a job
 * script itself on a cluster without the moeflow SPANK plugin
 * (cluster.plugin: none).  Without --run it is the submission's check
 * (the declared contract against the frozen baseline), run in the batch
 * step before anything else; with --run it is the task start's check (the
 * declared contract with this node's facts; the contract stage freezes;
 * an allowed run is sealed under runs/ID), run once per node by an srun
 * step just before the training step.  Both are the same library calls
 * the plugin makes (contract/contract_check.h); what a script cannot do is
 * stop a user who edits it, which moeflow-study(5) says. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "contract_job.h"
#include "contract/contract_check.h"
#include "contract/contract_store.h"
#include "contract/node_facts.h"
#include "core/study_dir.h"
#include "topology/nvml.h"
#include "topology/topo_cache.h"

static int env_lookup(void *ctx, const char *name, char *buf, size_t len)
{
    const char *v = getenv(name);

    (void)ctx;
    if (!v || strlen(v) >= len)
        return -1;
    memcpy(buf, v, strlen(v) + 1);
    return 0;
}

/* This node's facts, as the plugin gathers them for a job user: the
 * topology from the per-boot cache, or discovered live (only root writes
 * the cache).  NULL when out of memory (said). */
static json_t *this_node(void)
{
    struct moe_nvml_report nvml;
    struct moe_topo_cache cache;
    struct moe_nodetopo nt;
    enum moe_topo_cache_outcome how;
    struct moe_error err, ignored;
    char note[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 64];
    bool have_nvml, have_topo;
    json_t *facts;

    moe_error_clear(&err);
    have_nvml = moe_nvml_query(&nvml, &ignored) == 0; /* no NVML: no GPU facts to compare */
    moe_topo_cache_defaults(&cache, NULL);
    have_topo = moe_topo_cache_load(&cache, false, &nt, &how, note, sizeof(note), &err) == 0;
    if (!have_topo) {
        fprintf(stderr, "moeflow contract check: warning: this node's topology: ");
        moe_cli_report(&err);
        moe_error_clear(&err);
    }
    facts = moe_node_facts_gather(have_topo ? nt.topo : NULL, have_nvml ? &nvml : NULL,
                                  env_lookup, NULL, NULL, &err);
    if (have_topo)
        moe_nodetopo_free(&nt);
    if (!facts || err.text[0])
        moe_cli_report(&err);
    return facts;
}

static int refused(const struct moe_contract_outcome *out, const char *when)
{
    fprintf(stderr, "moeflow contract check: %s: refused by rule %s: %s\n", when, out->rule,
            out->reason);
    if (out->diff_text)
        for (const char *line = out->diff_text; *line;) {
            size_t len = strcspn(line, "\n");

            fprintf(stderr, "  %.*s\n", (int)len, line);
            line += len + (line[len] == '\n');
        }
    return MOE_EXIT_INFEASIBLE;
}

/* The contract stage may freeze; every other stage needs it frozen. */
static int enforce(const char *study, enum moe_stage stage, json_t *doc, bool runtime,
                   struct moe_contract_outcome *out, struct moe_error *err)
{
    return moe_contract_enforce(study, stage, doc, runtime, stage == MOE_STAGE_CONTRACT, out,
                                err);
}

int contract_check_job(const char *study, const char *stage_name, const char *candidate,
                       const char *run)
{
    struct moe_contract_outcome out = { 0 };
    enum moe_stage stage = stage_name ? moe_stage_parse(stage_name) : MOE_STAGE_NONE;
    const char *when = run ? "check at job start" : "check before the job's steps";
    struct moe_error err;
    json_t *facts = NULL, *doc;
    int rc;

    if (stage == MOE_STAGE_NONE)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow contract check: --stage '%s': not a stage "
                             "(one of %s)\n", stage_name ? stage_name : "", moe_stage_choices());
    if (!moe_study_is_dir(study))
        return moe_cli_error(MOE_EXIT_INVALID_INPUT, "moeflow contract check: '%s': not a study "
                             "directory written by moeflow gen (no " MOE_STUDY_MANIFEST ")\n",
                             study);
    moe_error_clear(&err);
    if (run && !(facts = this_node()))
        return MOE_EXIT_SYSTEM;
    doc = run ? moe_contract_runtime(study, stage, candidate, run, facts, &err)
              : moe_contract_declared(study, candidate, &err);
    rc = doc ? enforce(study, stage, doc, run != NULL, &out, &err) : -1;
    if (rc == 0 && out.allowed && run && moe_contract_record_run(study, run, doc, &err) < 0)
        rc = -1;
    json_decref(facts);
    json_decref(doc);
    if (rc != 0) {
        fprintf(stderr, "moeflow contract check: %s: ", when);
        moe_cli_report(&err);
        rc = MOE_EXIT_INVALID_INPUT;
    } else if (!out.allowed) {
        rc = refused(&out, when);
    } else {
        printf("moeflow contract check: %s %s%s%s: allowed by rule %s%s%s\n", stage_name,
               candidate && candidate[0] ? "candidate " : "the baseline", candidate ? candidate : "",
               out.froze ? " (froze the baseline)" : "", out.rule,
               run ? "; sealed " MOE_STUDY_RUNS "/" : "", run ? run : "");
        rc = MOE_EXIT_OK;
    }
    moe_contract_outcome_free(&out);
    return rc;
}
