/* The step from retune to validate, kept apart from the stage driver: it
 * rebuilds validate under moeflow run's feet (a new manifest), so it must
 * happen once, be marked in run-state.json, and never under validate's
 * jobs once a later run has submitted them. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "run_ctx.h"
#include "run_exec.h"
#include "run_winners.h"
#include "contract/contract_store.h"
#include "core/manifest.h"
#include "core/stage.h"
#include "core/study_dir.h"

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

int run_winners(struct run_ctx *c)
{
    char yaml[4300];
    char outdir[4300];
    char *rec[] = { NULL, "report", c->dir, "--stage", "retune", "-o", outdir,
                    "--record-winners", NULL };
    char *gen[] = { NULL, "gen", yaml, "--stage", "validate", "--winners", c->dir, NULL };
    struct moe_error err;
    int rc;

    if (run_winners_settled(c->state))
        return MOE_EXIT_OK;
    snprintf(yaml, sizeof(yaml), "%s/study.yaml", c->dir);
    snprintf(outdir, sizeof(outdir), "%s/" MOE_STUDY_RESULTS "/retune/" MOE_STUDY_REPORT_DIR,
             c->dir);
    if ((rc = run_self("report", rec)) == 0) {
        int n;

        moe_error_clear(&err);
        if ((n = recorded_winners(c->dir, &err)) < 0)
            return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
        if (n == 0) {
            /* nothing beat the baseline: validating it is still the answer */
            printf("retune: no winner; validate runs the baseline %s\n",
                   written_beside(&c->m) ? "the decisions adopted, beside the study's written one"
                                         : "as moeflow gen wrote it");
            json_object_set_new(c->state, "winners", json_string("none"));
            return run_save(c);
        }
    }
    if (rc != 0 || (rc = run_self("gen", gen)) != 0)
        return moe_cli_error(MOE_EXIT_STAGE_FAILED, "moeflow run: retune: the winners were not "
                             "recorded or validate not rebuilt from them (exit %d); validate "
                             "was not submitted\n", rc);
    json_object_set_new(c->state, "winners", json_string("generated"));
    if ((rc = run_save(c)) != MOE_EXIT_OK)
        return rc;
    moe_manifest_free(&c->m);
    moe_error_clear(&err);
    if (moe_manifest_load(c->dir, &c->m, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    return MOE_EXIT_OK;
}
