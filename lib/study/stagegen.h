/* What `moeflow gen` writes, built in memory: per-stage sbatch scripts,
 * submit.sh, manifest.json, candidates.tsv and copies of the study.  The
 * caller decides where and how the files land on disk. */
#ifndef MOEFLOW_STAGEGEN_H
#define MOEFLOW_STAGEGEN_H

#include <stddef.h>

#include "core/stage.h"
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
};

struct moe_gen_opts {
    const char *templates_dir;
    int max_array_size;             /* 0: the study's, else 1001 */
    enum moe_stage only;            /* MOE_STAGE_NONE: every stage */
    const char *study_text;         /* the study file's bytes, copied as study.yaml */
    const char *version;            /* moeflow version for the headers */
    const char *study_dir;          /* absolute path the directory will have (--moe-study) */
    const char *retune_for;         /* NULL, or the bottleneck retune candidates must target */
    const json_t *validate;         /* NULL, or the validate candidates to use (winners) */
};

int moe_gen_build(const struct moe_study *study, const struct moe_gen_opts *opts,
                  struct moe_gen_output *out, struct moe_error *err);

void moe_gen_output_free(struct moe_gen_output *out);

#endif
