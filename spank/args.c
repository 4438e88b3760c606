/* The user options, in one table: what sbatch, srun and slurmstepd register
 * and the setter that stores each value.  One callback and one recovery
 * path (the value, else the variable under which Slurm forwards it to the
 * job's steps) serve every row. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "enforce.h"
#include "core/strbuf.h"
#include "core/text.h"
#include "plugin.h"

struct moe_enforce_opts moe_enforce;

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
        char why[MOE_ERROR_TEXT_MAX], shown[256];
        const char *visible = moe_text_visible(v, shown, sizeof(shown));

        /* the value shown, its first 64 bytes: the reason must fit */
        snprintf(why, sizeof(why), "%s", err->text);
        moe_error_at(err, "", 0, 0, "--moe-layout=%.64s%s: column %d: %s", visible,
                     strlen(visible) > 64 ? "..." : "", err->column, why);
        return -1;
    }
    /* a cut layout would place ranks by another one */
    return moe_fmt_fixed(moe_enforce.layout, sizeof(moe_enforce.layout), err, "%s", v);
}

/* Each row's setter, into the job's options (moe_plugin.opts) or the
 * enforcement options (moe_enforce); its message names the option. */
static int set(int opt, const char *v, struct moe_error *err)
{
    struct moe_jobopts *jo = &moe_plugin.opts;

    switch ((enum moe_opt)opt) {
    case MOE_OPT_STAGE: return moe_jobopts_set_stage(jo, v, err);
    case MOE_OPT_STUDY: return moe_jobopts_set_study(jo, v, err);
    case MOE_OPT_CANDIDATE: return moe_jobopts_set_candidate(jo, v, err);
    case MOE_OPT_ENFORCE: return moe_jobopts_set_enforce(jo, v, err);
    case MOE_OPT_AFFINITY: return set_affinity(v, err);
    case MOE_OPT_LAYOUT: return set_layout(v, err);
    case MOE_OPT_PLACEMENT: return moe_placement_mode_parse(v, &moe_enforce.placement, err);
    case MOE_OPT_COUNT: break;
    }
    moe_error_set(err, "internal error: unknown option %d", opt);
    return -1;
}

static int apply(int val, const char *optarg, int remote);

/* The options as sbatch, srun and slurmstepd see them: each row's val is
 * its enum moe_opt, its callback apply(). */
static struct spank_option options[MOE_OPT_COUNT] = {
    [MOE_OPT_STAGE] = { "moe-stage", "STAGE",
        "moeflow workflow stage: contract|fit|scale|profile|retune|validate", 1, MOE_OPT_STAGE,
        apply },
    [MOE_OPT_STUDY] = { "moe-study", "PATH",
        "moeflow study file or study directory", 1, MOE_OPT_STUDY, apply },
    [MOE_OPT_CANDIDATE] = { "moe-candidate", "ID",
        "moeflow candidate id: column id of the study's candidates.tsv", 1, MOE_OPT_CANDIDATE,
        apply },
    [MOE_OPT_ENFORCE] = { "moe-enforce", "MODE",
        "moeflow contract checks: strict|warn (warn only where the admin allows it)", 1,
        MOE_OPT_ENFORCE, apply },
    [MOE_OPT_AFFINITY] = { "moe-affinity", "MODE[,verbose][,membind]",
        "CPU binding next to each task's GPU: exclusive|closest|none", 1, MOE_OPT_AFFINITY,
        apply },
    [MOE_OPT_LAYOUT] = { "moe-layout", "tpN.cpN.ppN.vppN.epN.etpN",
        "parallel layout for NVLink-aware rank placement", 1, MOE_OPT_LAYOUT, apply },
    [MOE_OPT_PLACEMENT] = { "moe-placement", "MODE",
        "rank placement: nvlink|nvlink-strict|none", 1, MOE_OPT_PLACEMENT, apply },
};

/* Stores one value; source: the variable it came from, where that was not
 * Slurm's option parsing.  In slurmstepd (remote) a failure could hit the
 * batch step: it is deferred to task_init. */
static int store(int val, const char *value, int remote, const char *source)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (set(val, value, &err) == 0) {
        moe_plugin.given |= 1u << val;
        return 0;
    }
    moe_report(remote ? MOE_REPORT_DEFER : MOE_REPORT_ERROR, NULL, source, &err);
    return remote ? 0 : -1;
}

/* The option callback of every row.  Runs in sbatch/salloc/srun, and
 * (twice) in slurmstepd: idempotent. */
static int apply(int val, const char *optarg, int remote)
{
    return store(val, optarg, remote, NULL);
}

/* In every context (sbatch and salloc ignore a spank_options table). */
int moe_args_register(spank_t sp)
{
    for (int i = 0; i < MOE_OPT_COUNT; i++) {
        spank_err_t rc = spank_option_register(sp, &options[i]);
        if (rc != ESPANK_SUCCESS)
            return moe_report_spank(MOE_REPORT_ERROR, options[i].name, "cannot register",
                                    rc);
    }
    return 0;
}

/* How Slurm forwards an sbatch option to the job's steps:
 * SLURM_SPANK__SLURM_SPANK_OPTION_<plugin>_<option, '-' as '_'>; with
 * --export=NONE the only copy that reaches slurmstepd. */
static void forwarded_name(const char *opt, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "SLURM_SPANK__SLURM_SPANK_OPTION_moeflow_");

    for (; *opt && off + 1 < len; opt++)
        buf[off++] = *opt == '-' ? '_' : *opt;
    buf[off] = '\0';
}

/* A forwarded option's value: longer than any option holds (the study's
 * PATH_MAX is the longest), so a value that does not fit is refused, not
 * cut. */
#define FORWARDED_VALUE_MAX (PATH_MAX + 1)

/* slurmstepd does not always run the option callbacks (batch steps, steps
 * of jobs submitted with --export=NONE): fetch the values ourselves. */
int moe_args_recover(spank_t sp)
{
    for (int i = 0; i < MOE_OPT_COUNT; i++) {
        char *optarg = NULL, name[64], value[FORWARDED_VALUE_MAX];
        struct moe_error err;
        spank_err_t rc;

        if (moe_option_given(i))
            continue;
        forwarded_name(options[i].name, name, sizeof(name));
        if (spank_option_getopt(sp, &options[i], &optarg) == ESPANK_SUCCESS && optarg) {
            store(i, optarg, 1, NULL);
        } else if ((rc = spank_getenv(sp, name, value, sizeof(value))) == ESPANK_SUCCESS) {
            store(i, value, 1, name);
        } else if (rc == ESPANK_NOSPACE) {
            /* not dropped as if never given: the job asked for something */
            moe_error_set(&err, "too long (at most %zu bytes)", sizeof(value) - 1);
            moe_report(MOE_REPORT_DEFER, NULL, name, &err);
        }
    }
    return 0;
}
