/* The step from retune to validate, kept apart from the stage driver: it
 * rebuilds validate under moeflow run's feet (a new manifest), so it must
 * happen once, be marked in run-state.json, and never under validate's
 * jobs once a later run has submitted them. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "run_ctx.h"
#include "run_exec.h"
#include "run_winners.h"
#include "contract/contract_store.h"
#include "core/json_build.h"
#include "core/manifest.h"
#include "core/stage.h"
#include "core/strbuf.h"
#include "core/study_dir.h"
#include "run_state.h"

bool run_winners_settled(const json_t *state)
{
    const char *w = json_string_value(json_object_get(state, "winners"));

    return w && (strcmp(w, "generated") == 0 || strcmp(w, "none") == 0);
}

/* How many winners the study has recorded; -1 with err when they do not load. */
static int recorded_winners(const char *dir, struct moe_error *err)
{
    json_t *w = moe_contract_load_winners(dir, err);
    int n = w ? (int)json_array_size(w) : -1;

    json_decref(w);
    return n;
}

/* Whether validate runs the study's written baseline beside the one the
 * decisions adopted (study/stagegen.h). */
static bool written_beside(const struct moe_manifest *m)
{
    const struct moe_manifest_stage *v = moe_manifest_find(m, MOE_STAGE_VALIDATE);

    for (size_t i = 0; v && i < v->n; i++)
        if (v->cands[i].variable && strcmp(v->cands[i].variable, "written_baseline") == 0)
            return true;
    return false;
}

/* The state's "winners" = what, saved; MOE_EXIT_OK or the exit code, said. */
static int settle(struct run_ctx *c, const char *what)
{
    struct moe_error err;
    struct moe_jb b;

    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    if (moe_jb_str(&b, c->state, "winners", what) < 0) {
        moe_jb_within(&b, RUN_STATE_FILE);
        return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    }
    return run_save(c);
}

/* moeflow report --record-winners of retune, then, when it recorded any,
 * moeflow gen --winners; 0 when none was recorded (*none set), else the
 * exit status of the one that failed, or -1 with err. */
static int record_and_rebuild(struct run_ctx *c, bool *none, struct moe_error *err)
{
    char *yaml = moe_path_join(c->dir, "study.yaml");
    char *outdir = moe_study_result(c->dir, "retune", MOE_STUDY_REPORT_DIR, "");
    char *rec[] = { NULL, "report", c->dir, "--stage", "retune", "-o", outdir,
                    "--record-winners", NULL };
    char *gen[] = { NULL, "gen", yaml, "--stage", "validate", "--winners", c->dir, NULL };
    int rc = -1, n;

    *none = false;
    if (!yaml || !outdir) {
        moe_error_set(err, "out of memory");
    } else if ((rc = run_self("report", rec)) == 0) {
        n = recorded_winners(c->dir, err);
        /* none beat the baseline: validating it is still the answer */
        *none = n == 0;
        rc = n < 0 ? -1 : n == 0 ? 0 : run_self("gen", gen);
    }
    free(yaml);
    free(outdir);
    return rc;
}

int run_winners(struct run_ctx *c)
{
    struct moe_error err;
    bool none;
    int rc;

    if (run_winners_settled(c->state))
        return MOE_EXIT_OK;
    moe_error_clear(&err);
    if ((rc = record_and_rebuild(c, &none, &err)) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    if (none) {
        printf("retune: no winner; validate runs the baseline %s\n",
               written_beside(&c->m) ? "the decisions adopted, beside the study's written one"
                                     : "as moeflow gen wrote it");
        return settle(c, "none");
    }
    if (rc != 0)
        return moe_cli_error(MOE_EXIT_STAGE_FAILED, "moeflow run: retune: the winners were not "
                             "recorded or validate not rebuilt from them (exit %d); validate "
                             "was not submitted\n", rc);
    if ((rc = settle(c, "generated")) != MOE_EXIT_OK)
        return rc;
    moe_manifest_free(&c->m);
    moe_error_clear(&err);
    if (moe_manifest_load(c->dir, &c->m, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    return MOE_EXIT_OK;
}
