/* sbatch/salloc and srun: the place to refuse a bad submission, because the
 * command prints our message and creates no job. */
#include "config.h"

#include <stdlib.h>

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
    if (validate_submission() != 0)
        return -1;
    return moe_contract_at_submit();
}

/* srun outside an allocation submits a job; inside one it starts a step of
 * a job checked at submission, and task_init checks the step again. */
int moe_srun_post_opt(spank_t sp)
{
    (void)sp;
    if (validate_submission() != 0)
        return -1;
    return getenv("SLURM_JOB_ID") ? 0 : moe_contract_at_submit();
}
