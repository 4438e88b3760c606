/* The one way the plugin reports a problem:
 *
 *     moeflow: [WHAT: ]SOURCE[:LINE[:COLUMN]]: TEXT
 *
 * SOURCE is where the problem lies: the error's own, set by lib/ (a file
 * and position), else the one the caller names (the study directory, the
 * NVLink-domain map, the topology, the variable a value came from).  It is
 * left out only where TEXT already names it. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "plugin.h"

int moe_report(enum moe_report_to to, const char *what, const char *source,
               const struct moe_error *err)
{
    struct moe_error e = *err;
    char msg[MOE_REPORT_MAX];
    size_t off = 0;

    if (!e.source[0] && source && source[0] && !strstr(e.text, source))
        moe_error_locate(&e, source, 0, 0);
    if (what)
        off = (size_t)snprintf(msg, sizeof(msg), "%.200s: ", what);
    moe_error_format(&e, msg + off, sizeof(msg) - off);
    switch (to) {
    case MOE_REPORT_ERROR:
        slurm_error(MOE_LOG_PREFIX "%s", msg);
        break;
    case MOE_REPORT_INFO:
        slurm_info(MOE_LOG_PREFIX "%s", msg);
        break;
    case MOE_REPORT_TASK:
        fprintf(stderr, MOE_LOG_PREFIX "%s\n", msg);
        break;
    case MOE_REPORT_DEFER:
        if (!moe_plugin.deferred_rc) { /* the first problem is the one to report */
            memcpy(moe_plugin.deferred_msg, msg, sizeof(msg));
            moe_plugin.deferred_rc = -1;
        }
        break;
    }
    return -1;
}

int moe_report_spank(enum moe_report_to to, const char *source, const char *doing,
                     spank_err_t rc)
{
    struct moe_error e;

    moe_error_clear(&e);
    moe_error_set(&e, "%s: %s", doing, spank_strerror(rc));
    return moe_report(to, NULL, source, &e);
}

int moe_report_deferred(void)
{
    if (moe_plugin.deferred_rc)
        slurm_error(MOE_LOG_PREFIX "%s", moe_plugin.deferred_msg);
    return moe_plugin.deferred_rc;
}
