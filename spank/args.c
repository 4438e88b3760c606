/* The user options: --moe-stage, --moe-study, --moe-candidate. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "enforce.h"
#include "plugin.h"

enum { OPT_STAGE = 1, OPT_STUDY, OPT_CANDIDATE, OPT_ENFORCE };

static int set_option(int val, const char *optarg, struct moe_error *err)
{
    switch (val) {
    case OPT_STAGE:
        return moe_jobopts_set_stage(&moe_plugin.opts, optarg, err);
    case OPT_STUDY:
        return moe_jobopts_set_study(&moe_plugin.opts, optarg, err);
    case OPT_CANDIDATE:
        return moe_jobopts_set_candidate(&moe_plugin.opts, optarg, err);
    case OPT_ENFORCE:
        return moe_jobopts_set_enforce(&moe_plugin.opts, optarg, err);
    default:
        moe_error_set(err, "internal error: unknown option %d", val);
        return -1;
    }
}

/* Runs in sbatch/salloc/srun, and (twice) in slurmstepd: idempotent. */
static int option_cb(int val, const char *optarg, int remote)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (set_option(val, optarg, &err) == 0)
        return 0;
    if (remote) {
        /* In slurmstepd a failure here could hit the batch step: defer it. */
        moe_plugin_defer_error("%s", err.text);
        return 0;
    }
    slurm_error(MOE_LOG_PREFIX "%s", err.text);
    return -1;
}

static struct spank_option moe_options[] = {
    { "moe-stage", "STAGE",
      "moeflow workflow stage: contract|fit|scale|profile|retune|validate", 1, OPT_STAGE,
      option_cb },
    { "moe-study", "PATH", "moeflow study file or study directory", 1, OPT_STUDY, option_cb },
    { "moe-candidate", "ID", "moeflow candidate id: column id of the study's candidates.tsv", 1,
      OPT_CANDIDATE, option_cb },
    { "moe-enforce", "MODE",
      "moeflow contract checks: strict|warn (warn only where the admin allows it)", 1, OPT_ENFORCE,
      option_cb },
    SPANK_OPTIONS_TABLE_END
};

int moe_options_register(spank_t sp, struct spank_option *table)
{
    for (struct spank_option *opt = table; opt->name; opt++) {
        spank_err_t rc = spank_option_register(sp, opt);
        if (rc != ESPANK_SUCCESS) {
            slurm_error(MOE_LOG_PREFIX "cannot register --%s: %s", opt->name, spank_strerror(rc));
            return -1;
        }
    }
    return 0;
}

int moe_args_register(spank_t sp)
{
    if (moe_options_register(sp, moe_options) != 0)
        return -1;
    return moe_enforce_args_register(sp);
}

/* Name under which Slurm forwards a job's SPANK options in the step's
 * environment; with --export=NONE this copy is the only one that survives. */
static void forwarded_env_name(const struct spank_option *opt, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "SLURM_SPANK__SLURM_SPANK_OPTION_moeflow_");

    for (const char *c = opt->name; *c && off + 1 < len; c++)
        buf[off++] = (*c == '-') ? '_' : *c;
    buf[off] = '\0';
}

static bool option_is_set(int val)
{
    switch (val) {
    case OPT_STAGE:
        return moe_plugin.opts.stage != MOE_STAGE_NONE;
    case OPT_STUDY:
        return moe_plugin.opts.study[0] != '\0';
    case OPT_ENFORCE:
        return moe_plugin.opts.enforce >= 0;
    default:
        return moe_plugin.opts.candidate[0] != '\0';
    }
}

/* slurmstepd does not always run the option callbacks (batch steps, steps
 * of jobs submitted with --export=NONE): fetch the values ourselves. */
int moe_args_recover(spank_t sp)
{
    for (struct spank_option *opt = moe_options; opt->name; opt++) {
        char *optarg = NULL;
        char name[128], value[4096];

        if (option_is_set(opt->val))
            continue;
        if (spank_option_getopt(sp, opt, &optarg) == ESPANK_SUCCESS && optarg) {
            option_cb(opt->val, optarg, 1);
            continue;
        }
        forwarded_env_name(opt, name, sizeof(name));
        if (spank_getenv(sp, name, value, sizeof(value)) == ESPANK_SUCCESS)
            option_cb(opt->val, value, 1);
    }
    return moe_enforce_args_recover(sp);
}
