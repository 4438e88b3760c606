/* sbatch/salloc: the place to refuse a bad submission, because sbatch prints
 * our message and creates no job. */
#include "config.h"

#include <slurm/spank.h>

#include "plugin.h"

/* Checks that need all options, or the submitter's file system. */
static int validate_submission(void)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (moe_plugin.opts.study[0] && moe_study_path_check(moe_plugin.opts.study, &err) != 0) {
        slurm_error(MOE_LOG_PREFIX "%s", err.text);
        return -1;
    }
    return 0;
}

int moe_alloc_post_opt(spank_t sp)
{
    (void)sp;
    return validate_submission();
}

/* srun outside an allocation submits too; inside one it starts a step, and
 * the same checks keep a bad value from reaching the tasks. */
int moe_srun_post_opt(spank_t sp)
{
    (void)sp;
    return validate_submission();
}
