/* The evidence pack from the command line: the library writes it whole
 * or not at all; this says where it went, or why there is none.  An input
 * that cannot be read is invalid input (2); a pack that cannot be written
 * is a system error (4), as moeflow(1) lists them. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "report_pack.h"
#include "analysis/evidence_pack.h"
#include "core/strbuf.h"
#include "core/text.h"

int moe_report_pack(const char *study, const char *dir, const struct moe_report_opts *opts)
{
    struct moe_error err;
    char *where = dir ? NULL : moe_path_join(study, MOE_PACK_DIR);
    char shown[4400];
    json_t *pack;
    int rc;

    moe_error_clear(&err);
    if (!dir && !where)
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow report: out of memory\n");
    if (!(pack = moe_evidence_pack(study, opts, &err))) {
        free(where);
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    }
    rc = moe_evidence_pack_put(pack, dir ? dir : where, &err);
    json_decref(pack);
    if (rc == 0)
        printf("evidence pack: %s (README.md, pack.json)\n",
               moe_text_visible(dir ? dir : where, shown, sizeof(shown)));
    free(where);
    return rc == 0 ? MOE_EXIT_OK : moe_cli_fail(&err, MOE_EXIT_SYSTEM);
}
