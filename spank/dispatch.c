/* The only file that defines slurm_spank_* entry points: each one hands off
 * to the file for the context it runs in (alloc.c: sbatch, salloc and srun;
 * slurmstepd.c: the job's nodes). */
#include "config.h"

#include <slurm/spank.h>

#include "plugin.h"

SPANK_PLUGIN(moeflow, 1);

struct moe_plugin moe_plugin;

static int load_config(int ac, char **av)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (moe_plugin_config_parse(&moe_plugin.config, ac, av, &err) == 0)
        return 0;
    switch (spank_context()) {
    case S_CTX_ALLOCATOR:
    case S_CTX_LOCAL:
        return moe_report(MOE_REPORT_ERROR, "plugstack.conf", NULL, &err);
    case S_CTX_REMOTE:
        moe_report(MOE_REPORT_DEFER, "plugstack.conf", NULL, &err);
        return 0;
    default:
        /* slurmd and prolog/epilog: an error here would take the node down. */
        moe_report(MOE_REPORT_ERROR, "plugstack.conf (ignored in this context)", NULL, &err);
        return 0;
    }
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    moe_jobopts_init(&moe_plugin.opts);
    moe_plugin.given = 0;
    moe_plugin.deferred_rc = 0;
    moe_plugin.deferred_msg[0] = '\0';
    if (load_config(ac, av) != 0)
        return -1;
    switch (spank_context()) {
    case S_CTX_ALLOCATOR:
    case S_CTX_LOCAL:
    case S_CTX_REMOTE:
        return moe_args_register(sp);
    default:
        return 0;
    }
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    switch (spank_context()) {
    case S_CTX_ALLOCATOR:
        return moe_alloc_post_opt(sp);
    case S_CTX_LOCAL:
        return moe_srun_post_opt(sp);
    case S_CTX_REMOTE:
        return moe_stepd_post_opt(sp);
    default:
        return 0;
    }
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_context() != S_CTX_REMOTE)
        return 0;
    return moe_stepd_user_init(sp);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_context() != S_CTX_REMOTE)
        return 0;
    return moe_stepd_task_init(sp);
}
