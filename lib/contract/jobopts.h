/* The user-facing job options the plugin accepts (--moe-stage, --moe-study,
 * --moe-candidate), validated the same way at submission and at job start. */
#ifndef MOEFLOW_JOBOPTS_H
#define MOEFLOW_JOBOPTS_H

#include <limits.h>
#include <stdbool.h>

#include "core/error.h"
#include "core/stage.h"

#define MOE_CANDIDATE_ID_MAX 64

struct moe_jobopts {
    enum moe_stage stage;                       /* MOE_STAGE_NONE when not given */
    char study[PATH_MAX];                       /* empty when not given */
    char candidate[MOE_CANDIDATE_ID_MAX + 1];   /* empty when not given */
    int enforce;                                /* enum moe_enforce_mode, -1 = admin default */
};

void moe_jobopts_init(struct moe_jobopts *opts);

/* Each setter validates its value; on error it fills err with a message that
 * names the option and the valid values, and leaves opts unchanged. */
int moe_jobopts_set_stage(struct moe_jobopts *opts, const char *value, struct moe_error *err);
int moe_jobopts_set_study(struct moe_jobopts *opts, const char *value, struct moe_error *err);
int moe_jobopts_set_candidate(struct moe_jobopts *opts, const char *value, struct moe_error *err);
int moe_jobopts_set_enforce(struct moe_jobopts *opts, const char *value, struct moe_error *err);

/* The study must exist at submission: a study YAML file or a study directory. */
int moe_study_path_check(const char *path, struct moe_error *err);

/* Whether an sbatch command line asks for a job array: --array or -a on the
 * command line, or "#SBATCH --array" / "#SBATCH -a" in the header of a batch
 * script it names (every argument that is a readable file is looked at: the
 * script is the first argument that is not an option or an option's
 * value, which only sbatch's own table could tell apart). */
bool moe_sbatch_args_request_array(int argc, char *const argv[]);

#endif
