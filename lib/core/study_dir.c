/* The study folder's layout (study_dir.h): path builders and the names the
 * job scripts' templates render. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "core/json_build.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

char *moe_study_result(const char *study, const char *stage, const char *id,
                       const char *suffix)
{
    return moe_strdup_printf("%s%s" MOE_STUDY_RESULTS "/%s%s%s%s", study ? study : "",
                             study ? "/" : "", stage, id ? "/" : "", id ? id : "",
                             id && suffix ? suffix : "");
}

bool moe_study_result_rc_stale(const char *study, const char *stage, const char *id)
{
    char *rc = moe_study_result(study, stage, id, MOE_RESULT_RC);
    char *log = moe_study_result(study, stage, id, MOE_RESULT_LOG);
    struct stat rc_st, log_st;
    bool stale = rc && log && stat(rc, &rc_st) == 0 && stat(log, &log_st) == 0 &&
                 rc_st.st_mtime + MOE_RESULT_STALE_RC_SLACK_S < log_st.st_mtime;

    free(rc);
    free(log);
    return stale;
}

json_t *moe_study_dir_template(const char *stage)
{
    char *results = stage ? moe_study_result(NULL, stage, NULL, NULL) : NULL;
    json_t *o = json_object();
    struct moe_jb b;

    moe_jb_init(&b, NULL);
    moe_jb_str(&b, o, "results", stage ? results : MOE_STUDY_RESULTS);
    moe_jb_str(&b, o, "runs", MOE_STUDY_RUNS);
    moe_jb_str(&b, o, "launch_log", MOE_STUDY_LAUNCH_LOG);
    moe_jb_str(&b, o, "contract", MOE_STUDY_CONTRACT_DIR);
    moe_jb_str(&b, o, "measured", MOE_STUDY_MEASURED);
    moe_jb_str(&b, o, "log", MOE_RESULT_LOG);
    moe_jb_str(&b, o, "rc", MOE_RESULT_RC);
    moe_jb_str(&b, o, "resumed_log", MOE_RESULT_RESUMED_LOG);
    moe_jb_str(&b, o, "checkpoint_bytes", MOE_RESULT_CHECKPOINT_BYTES);
    moe_jb_str(&b, o, "window", MOE_RESULT_WINDOW);
    moe_jb_str(&b, o, "index_offset", "${" MOE_ENV_INDEX_OFFSET ":-0}");
    free(results);
    return moe_jb_done(&b, o);
}
