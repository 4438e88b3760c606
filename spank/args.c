/* The user options, in one table: what sbatch, srun and slurmstepd register,
 * the setter that stores each value, and the variable under which Slurm
 * forwards it to the job's steps.  One callback and one recovery path serve
 * every row. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "enforce.h"
#include "plugin.h"

struct moe_enforce_opts moe_enforce;

static int set_stage(const char *v, struct moe_error *err)
{
    return moe_jobopts_set_stage(&moe_plugin.opts, v, err);
}

static int set_study(const char *v, struct moe_error *err)
{
    return moe_jobopts_set_study(&moe_plugin.opts, v, err);
}

static int set_candidate(const char *v, struct moe_error *err)
{
    return moe_jobopts_set_candidate(&moe_plugin.opts, v, err);
}

static int set_enforce(const char *v, struct moe_error *err)
{
    return moe_jobopts_set_enforce(&moe_plugin.opts, v, err);
}

/* The admin may pin the mode (affinity_override=deny): refused at submission. */
static int set_affinity(const char *v, struct moe_error *err)
{
    const struct moe_plugin_config *cfg = &moe_plugin.config;
    struct moe_affinity_opts o;

    if (moe_affinity_opts_parse(v, &o, err) != 0)
        return -1;
    if (o.mode_set && !cfg->affinity_user_override && o.mode != cfg->affinity) {
        moe_error_set(err, "--moe-affinity=%s: the administrator fixed the mode to %s "
                      "(affinity_override=deny); ,verbose and ,membind are still allowed",
                      moe_affinity_mode_name(o.mode), moe_affinity_mode_name(cfg->affinity));
        return -1;
    }
    moe_enforce.affinity = o;
    return 0;
}

static int set_layout(const char *v, struct moe_error *err)
{
    struct moe_layout l;

    if (moe_layout_parse(v, &l, err) != 0) {
        char why[MOE_ERROR_TEXT_MAX];
        snprintf(why, sizeof(why), "%s", err->text);
        moe_error_at(err, "", 0, 0, "--moe-layout=%s: column %d: %s", v, err->column, why);
        return -1;
    }
    snprintf(moe_enforce.layout, sizeof(moe_enforce.layout), "%s", v);
    return 0;
}

static int set_placement(const char *v, struct moe_error *err)
{
    return moe_placement_mode_parse(v, &moe_enforce.placement, err);
}

static int apply(int val, const char *value, int remote);

struct moe_option {
    struct spank_option spank;
    /* SLURM_SPANK__SLURM_SPANK_OPTION_<plugin>_<option, '-' as '_'>: how
     * Slurm forwards an sbatch option to the job's steps; with
     * --export=NONE the only copy that reaches slurmstepd. */
    const char *forwarded;
    int (*set)(const char *value, struct moe_error *err);
};

/* One row: --moe-WORD and its forwarded variable, both from WORD. */
#define OPTION(id, word, arg, help, setter)                                             \
    [id] = { { "moe-" #word, arg, help, 1, id, apply },                              \
             "SLURM_SPANK__SLURM_SPANK_OPTION_moeflow_moe_" #word, setter }

static struct moe_option options[MOE_OPT_COUNT] = {
    OPTION(MOE_OPT_STAGE, stage, "STAGE",
           "moeflow workflow stage: contract|fit|scale|profile|retune|validate", set_stage),
    OPTION(MOE_OPT_STUDY, study, "PATH", "moeflow study file or study directory", set_study),
    OPTION(MOE_OPT_CANDIDATE, candidate, "ID",
           "moeflow candidate id: column id of the study's candidates.tsv", set_candidate),
    OPTION(MOE_OPT_ENFORCE, enforce, "MODE",
           "moeflow contract checks: strict|warn (warn only where the admin allows it)",
           set_enforce),
    OPTION(MOE_OPT_AFFINITY, affinity, "MODE[,verbose][,membind]",
           "CPU binding next to each task's GPU: exclusive|closest|none", set_affinity),
    OPTION(MOE_OPT_LAYOUT, layout, "tp=N,cp=N,ep=N,etp=N,pp=N",
           "parallel layout for NVLink-aware rank placement", set_layout),
    OPTION(MOE_OPT_PLACEMENT, placement, "MODE", "rank placement: nvlink|nvlink-strict|none",
           set_placement),
};

/* The option callback of every row, and the recovery's setter.  Runs in
 * sbatch/salloc/srun, and (twice) in slurmstepd: idempotent. */
static int apply(int val, const char *value, int remote)
{
    struct moe_error err;
    char buf[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 8];

    if (val < 0 || val >= MOE_OPT_COUNT)
        return -1;
    moe_error_clear(&err);
    if (options[val].set(value, &err) == 0) {
        moe_plugin.given |= 1u << val;
        return 0;
    }
    moe_error_format(&err, buf, sizeof(buf));
    if (remote) {
        /* In slurmstepd a failure here could hit the batch step: defer it. */
        moe_plugin_defer_error("%s", buf);
        return 0;
    }
    slurm_error(MOE_LOG_PREFIX "%s", buf);
    return -1;
}

/* In every context (sbatch and salloc ignore a spank_options table). */
int moe_args_register(spank_t sp)
{
    for (int i = 0; i < MOE_OPT_COUNT; i++) {
        spank_err_t rc = spank_option_register(sp, &options[i].spank);
        if (rc != ESPANK_SUCCESS) {
            slurm_error(MOE_LOG_PREFIX "cannot register --%s: %s", options[i].spank.name,
                        spank_strerror(rc));
            return -1;
        }
    }
    return 0;
}

/* slurmstepd does not always run the option callbacks (batch steps, steps
 * of jobs submitted with --export=NONE): fetch the values ourselves. */
int moe_args_recover(spank_t sp)
{
    for (int i = 0; i < MOE_OPT_COUNT; i++) {
        char *optarg = NULL, value[4096];

        if (moe_option_given(i))
            continue;
        if (spank_option_getopt(sp, &options[i].spank, &optarg) == ESPANK_SUCCESS && optarg)
            apply(i, optarg, 1);
        else if (spank_getenv(sp, options[i].forwarded, value, sizeof(value)) == ESPANK_SUCCESS)
            apply(i, value, 1);
    }
    return 0;
}
