/* sbatch/salloc and srun: the place to refuse a bad submission, because the
 * command prints our message and creates no job. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "plugin.h"
#include "core/readfile.h"

/* Checks that need all options, or the submitter's file system. */
static int validate_submission(void)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (moe_plugin.opts.study[0] && moe_study_path_check(moe_plugin.opts.study, &err) != 0)
        return moe_report(MOE_REPORT_ERROR, NULL, moe_plugin.opts.study, &err);
    return 0;
}

/* sbatch's own command line (the plugin runs inside sbatch here): does it
 * ask for a job array?  SBATCH_ARRAY_INX is the environment's way. */
static bool submits_array(void)
{
    char *buf, *argv[512];
    int argc = 0;
    size_t len;
    bool array;

    if (getenv("SBATCH_ARRAY_INX"))
        return true;
    if (!(buf = moe_read_file("/proc/self/cmdline", "command line", &len, NULL)))
        return false;
    for (size_t i = 0; i < len && argc < 511; i += strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    argv[argc] = NULL;
    array = moe_sbatch_args_request_array(argc, argv);
    free(buf);
    return array;
}

int moe_alloc_post_opt(spank_t sp)
{
    (void)sp;
    if (validate_submission() != 0 || moe_submission_rules(submits_array()) != 0)
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
    if (getenv("SLURM_JOB_ID"))
        return 0;
    return moe_submission_rules(false) != 0 ? -1 : moe_contract_at_submit();
}
