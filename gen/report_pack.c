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
#include "contract/contract_store.h"
#include "core/strbuf.h"
#include "core/text.h"

int moe_report_pack(const char *study, const char *dir, const struct moe_report_opts *opts)
{
    struct moe_error err, trail_err;
    struct moe_pack_trail trail;
    json_t *decisions;
    char *where = dir ? NULL : moe_path_join(study, MOE_PACK_DIR);
    char shown[4400];
    json_t *pack;
    int rc;

    moe_error_clear(&err);
    moe_error_clear(&trail_err);
    /* The trail through the store's acceptance (owner, mode, seal, shape),
     * as report and the plugin read it; a refused one is listed, not fatal. */
    decisions = moe_contract_load_trail(study, &trail_err);
    trail.decisions = decisions;
    trail.error = decisions ? NULL : trail_err.text;
    if (!dir && !where) {
        json_decref(decisions);
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow report: out of memory\n");
    }
    pack = moe_evidence_pack(study, opts, &trail, &err);
    json_decref(decisions);
    if (!pack) {
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
