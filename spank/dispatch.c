/* The only file that defines slurm_spank_* entry points: each one hands off
 * to the file for the context it runs in (alloc.c: sbatch, salloc and srun;
 * slurmstepd.c: the job's nodes). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include <slurm/spank.h>

#include "plugin.h"

SPANK_PLUGIN(moeflow, 1);

struct moe_plugin moe_plugin;

void moe_plugin_defer_error(const char *fmt, ...)
{
    va_list ap;

    if (moe_plugin.deferred_rc)
        return; /* the first problem is the one to report */
    va_start(ap, fmt);
    vsnprintf(moe_plugin.deferred_msg, sizeof(moe_plugin.deferred_msg), fmt, ap);
    va_end(ap);
    moe_plugin.deferred_rc = -1;
}

static int load_config(int ac, char **av)
{
    struct moe_error err;
    char buf[sizeof(moe_plugin.deferred_msg)];

    moe_error_clear(&err);
    if (moe_plugin_config_parse(&moe_plugin.config, ac, av, &err) == 0)
        return 0;
    moe_error_format(&err, buf, sizeof(buf));
    switch (spank_context()) {
    case S_CTX_ALLOCATOR:
    case S_CTX_LOCAL:
        slurm_error(MOE_LOG_PREFIX "plugstack.conf: %s", buf);
        return -1;
    case S_CTX_REMOTE:
        moe_plugin_defer_error("plugstack.conf: %s", buf);
        return 0;
    default:
        /* slurmd and prolog/epilog: an error here would take the node down. */
        slurm_error(MOE_LOG_PREFIX "plugstack.conf: %s (ignored in this context)", buf);
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
