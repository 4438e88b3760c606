/* --moe-affinity, --moe-layout, --moe-placement. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "enforce.h"
#include "plugin.h"
#include "core/text.h"

enum { OPT_AFFINITY = 101, OPT_LAYOUT, OPT_PLACEMENT };

struct moe_enforce_opts moe_enforce;

/* The admin may pin the mode (affinity_override=deny): refuse at submission. */
static int check_override(const struct moe_affinity_opts *o, struct moe_error *err)
{
    const struct moe_plugin_config *cfg = &moe_plugin.config;

    if (!o->mode_set || cfg->affinity_user_override || o->mode == cfg->affinity)
        return 0;
    moe_error_set(err, "--moe-affinity=%s: the administrator fixed the mode to %s "
                  "(affinity_override=deny); ,verbose and ,membind are still allowed",
                  moe_affinity_mode_name(o->mode), moe_affinity_mode_name(cfg->affinity));
    return -1;
}

static int set_option(int val, const char *optarg, struct moe_error *err)
{
    struct moe_affinity_opts aff;
    struct moe_layout l;

    switch (val) {
    case OPT_AFFINITY:
        if (moe_affinity_opts_parse(optarg, &aff, err) != 0 || check_override(&aff, err) != 0)
            return -1;
        moe_enforce.affinity = aff;
        moe_enforce.affinity_given = true;
        return 0;
    case OPT_LAYOUT:
        if (moe_layout_parse(optarg, &l, err) != 0) {
            char why[MOE_ERROR_TEXT_MAX], shown[256];
            const char *v = moe_text_visible(optarg, shown, sizeof(shown));

            /* the value shown, its first 64 bytes: the reason must fit */
            snprintf(why, sizeof(why), "%s", err->text);
            moe_error_at(err, "", 0, 0, "--moe-layout=%.64s%s: column %d: %s", v,
                         strlen(v) > 64 ? "..." : "", err->column, why);
            return -1;
        }
        snprintf(moe_enforce.layout, sizeof(moe_enforce.layout), "%s", optarg);
        return 0;
    case OPT_PLACEMENT:
        if (moe_placement_mode_parse(optarg, &moe_enforce.placement, err) != 0)
            return -1;
        moe_enforce.placement_given = true;
        return 0;
    default:
        moe_error_set(err, "internal error: unknown option %d", val);
        return -1;
    }
}

/* Runs in sbatch/salloc/srun, and (twice) in slurmstepd: idempotent. */
static int option_cb(int val, const char *optarg, int remote)
{
    struct moe_error err;
    char buf[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 8];

    moe_error_clear(&err);
    if (set_option(val, optarg, &err) == 0)
        return 0;
    moe_error_format(&err, buf, sizeof(buf));
    if (remote) {
        moe_plugin_defer_error("%s", buf);
        return 0;
    }
    slurm_error(MOE_LOG_PREFIX "%s", buf);
    return -1;
}

static struct spank_option enforce_options[] = {
    { "moe-affinity", "MODE[,verbose][,membind]",
      "CPU binding next to each task's GPU: exclusive|closest|none", 1, OPT_AFFINITY, option_cb },
    { "moe-layout", "tp=N,cp=N,ep=N,etp=N,pp=N",
      "parallel layout for NVLink-aware rank placement", 1, OPT_LAYOUT, option_cb },
    { "moe-placement", "MODE", "rank placement: nvlink|nvlink-strict|none", 1, OPT_PLACEMENT,
      option_cb },
    SPANK_OPTIONS_TABLE_END
};

int moe_enforce_args_register(spank_t sp)
{
    return moe_options_register(sp, enforce_options);
}

static bool is_set(int val)
{
    switch (val) {
    case OPT_AFFINITY: return moe_enforce.affinity_given;
    case OPT_LAYOUT: return moe_enforce.layout[0] != '\0';
    default: return moe_enforce.placement_given;
    }
}

/* Batch steps and --export=NONE jobs may skip the option callbacks: read
 * the values, or the SLURM_SPANK__ copy that Slurm forwards. */
int moe_enforce_args_recover(spank_t sp)
{
    for (struct spank_option *opt = enforce_options; opt->name; opt++) {
        char *optarg = NULL, name[128], value[4096];
        size_t off;

        if (is_set(opt->val))
            continue;
        if (spank_option_getopt(sp, opt, &optarg) == ESPANK_SUCCESS && optarg) {
            option_cb(opt->val, optarg, 1);
            continue;
        }
        off = (size_t)snprintf(name, sizeof(name), "SLURM_SPANK__SLURM_SPANK_OPTION_moeflow_");
        for (const char *c = opt->name; *c && off + 1 < sizeof(name); c++)
            name[off++] = (*c == '-') ? '_' : *c;
        name[off] = '\0';
        if (spank_getenv(sp, name, value, sizeof(value)) == ESPANK_SUCCESS)
            option_cb(opt->val, value, 1);
    }
    return 0;
}

int moe_enforce_setenv(spank_t sp, const char *name, const char *fmt, ...)
{
    char value[4096];
    va_list ap;
    spank_err_t rc;

    va_start(ap, fmt);
    vsnprintf(value, sizeof(value), fmt, ap);
    va_end(ap);
    rc = spank_setenv(sp, name, value, 1);
    if (rc != ESPANK_SUCCESS) {
        slurm_error(MOE_LOG_PREFIX "cannot set %s: %s", name, spank_strerror(rc));
        return -1;
    }
    return 0;
}
