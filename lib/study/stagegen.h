/* What `moeflow gen` writes, in two steps: the plan (every stage's
 * candidates as structs, rendered into arguments, environment and
 * contract), then the files made from it in memory: per-stage sbatch
 * scripts, submit.sh, manifest.json, candidates.tsv, the declared
 * contracts and copies of the study.  gen_write.h puts them on disk. */
#ifndef MOEFLOW_STAGEGEN_H
#define MOEFLOW_STAGEGEN_H

#include <stddef.h>

#include "core/sha256.h"
#include "core/stage.h"
#include "study/candidates.h"
#include "study/study.h"

#define MOE_MAX_ARRAY_SIZE_DEFAULT 1001

/* The fit stage's Python folder, in the templates and in a study directory:
 * fit jobs put it first on PYTHONPATH (templates/fit-python/). */
#define MOE_FIT_PYTHON_DIR "fit-python"

struct moe_gen_file {
    char name[128];      /* relative to the output directory */
    char *data;
    size_t len;
    int mode;            /* 0755 for scripts, 0644 otherwise */
};

struct moe_gen_output {
    struct moe_gen_file *files;
    int n, cap;
    json_t *manifest;    /* what manifest.json holds */
};

struct moe_gen_opts {
    const char *templates_dir;
    int max_array_size;             /* 0: the study's, else 1001 */
    enum moe_stage only;            /* MOE_STAGE_NONE: every stage */
    const char *study_text;         /* the study file's bytes, copied as study.yaml */
    const char *version;            /* moeflow version for the headers */
    const char *study_dir;          /* absolute path the directory will have (--moe-study) */
    /* the cluster has no moeflow plugin (cluster.plugin: none, or auto and
     * sbatch did not list --moe-stage): the scripts carry no --moe-*
     * option and check the contract with moeflow_path's contract check */
    bool plugin_free;
    const char *moeflow_path;       /* absolute; only with plugin_free */
    const char *retune_for;         /* NULL, or the bottleneck retune candidates must target */
    /* NULL, or the validate stage to use (recorded winners: study_validate.h) */
    const struct moe_stage_plan *validate;
    bool onward;                    /* with only: that stage and every later one */
    /* NULL, or the study as moeflow run's decisions left it for that stage
     * (study_adopt.h): its baseline is the one adopted; validate then runs
     * the written baseline (the main study's) beside it */
    const struct moe_study *adopted[MOE_STAGE_COUNT];
    /* NULL, or the scale run retune is compared with: the one moeflow
     * run's last scale decision adopted (core/manifest.h reference) */
    const struct moe_candidate *retune_reference;
};

struct moe_gen_plan {
    char study_hash[MOE_SHA256_HEX_LEN + 1];
    int max_array_size;
    struct moe_stage_plan stages[MOE_STAGE_COUNT];
    int n;                          /* the stages planned, in workflow order */
};

/* Checks the study against Megatron's rules, then plans and renders the
 * candidates of every stage asked for.  0, or -1 with err. */
int moe_gen_plan(const struct moe_study *study, const struct moe_gen_opts *opts,
                 struct moe_gen_plan *plan, struct moe_error *err);

void moe_gen_plan_free(struct moe_gen_plan *plan);

/* Every file of the study directory, from the plan.  out->manifest is the
 * document manifest.json holds.  0, or -1 with err. */
int moe_gen_render(const struct moe_study *study, const struct moe_gen_opts *opts,
                   const struct moe_gen_plan *plan, struct moe_gen_output *out,
                   struct moe_error *err);

void moe_gen_output_free(struct moe_gen_output *out);

#endif
