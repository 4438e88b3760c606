/* slurmstepd (remote context): runs as root with euid = the job user in
 * user_init, and as the user in task_init, right before exec. */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "enforce.h"
#include "plugin.h"

static bool is_batch_step(spank_t sp)
{
    uint32_t stepid = 0;

    if (spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS)
        return false;
    return stepid == SLURM_BATCH_SCRIPT;
}

int moe_stepd_post_opt(spank_t sp)
{
    int rc = moe_args_recover(sp);

    /* still root here: the one place that may refresh the topology cache;
     * a step that binds nothing leaves it be (a contract loads it later) */
    if (moe_affinity_wanted())
        moe_topology_prepare(sp, is_batch_step(sp));
    return rc;
}

int moe_stepd_user_init(spank_t sp)
{
    moe_contract_user_init(sp); /* the batch step checks its contract too */
    if (is_batch_step(sp))
        return 0; /* binding or renumbering the batch shell helps nobody */
    /* Both never fail here: they defer their errors to task_init. */
    moe_affinity_user_init(sp);
    moe_placement_user_init(sp);
    return 0;
}

int moe_enforce_setenv(spank_t sp, const char *name, const char *fmt, ...)
{
    char *value = NULL;
    va_list ap;
    spank_err_t rc;
    int n;

    /* built whole: a cut value (a CPU list, a path) would bind or name
     * something else */
    va_start(ap, fmt);
    n = vasprintf(&value, fmt, ap);
    va_end(ap);
    if (n < 0) {
        struct moe_error err;

        moe_error_set(&err, "out of memory");
        return moe_report(MOE_REPORT_ERROR, "cannot set", name, &err);
    }
    rc = spank_setenv(sp, name, value, 1);
    free(value);
    return rc == ESPANK_SUCCESS ? 0 : moe_report_spank(MOE_REPORT_ERROR, name, "cannot set", rc);
}

/* Sets name to value, or unsets it for an empty value. */
static int export_var(spank_t sp, const char *name, const char *value)
{
    spank_err_t rc;

    if (value && value[0])
        return moe_enforce_setenv(sp, name, "%s", value);
    rc = spank_unsetenv(sp, name);
    if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_NOEXIST)
        return moe_report_spank(MOE_REPORT_ERROR, name, "cannot unset", rc);
    return 0;
}

/* What the plugin itself saw, so jobs and tests need not trust inherited env. */
static int export_options(spank_t sp)
{
    const char *stage = moe_stage_name(moe_plugin.opts.stage);

    if (export_var(sp, "MOEFLOW_STAGE", stage) != 0 ||
        export_var(sp, "MOEFLOW_STUDY", moe_plugin.opts.study) != 0 ||
        export_var(sp, "MOEFLOW_CANDIDATE", moe_plugin.opts.candidate) != 0)
        return -1;
    return 0;
}

int moe_stepd_task_init(spank_t sp)
{
    bool batch = is_batch_step(sp);

    /* A batch step failure drains the node: report, never fail there. */
    if (moe_report_deferred() != 0 && !batch)
        return -1;
    if (export_options(sp) != 0 && !batch)
        return -1;
    if (!batch && (moe_affinity_task_init(sp) != 0 || moe_placement_task_init(sp) != 0))
        return -1;
    return moe_contract_at_task(sp, batch);
}
