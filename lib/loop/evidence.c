#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/study_report.h"
#include "contract/contract_check.h"
#include "contract/contract_store.h"
#include "core/contract_keys.h"
#include "core/json_build.h"
#include "core/readfile.h"
#include "core/sha256.h"
#include "core/strbuf.h"
#include "core/study_dir.h"
#include "loop/evidence.h"
#include "loop/evidence_internal.h"

static json_t *file_digest(const char *path, struct moe_error *err)
{
    char hex[MOE_SHA256_HEX_LEN + 1], *text;
    size_t len;
    json_t *out = NULL;

    if (access(path, F_OK) != 0)
        return json_null();
    if ((text = moe_read_file(path, "log", &len, err)) &&
        moe_sha256_hex(text, len, hex, err) == 0)
        out = json_string(hex);
    free(text);
    return out;
}

json_t *moe_loop_evidence(const char *study, const char *stage, const char *id,
                          struct moe_error *err)
{
    char *run_dir = NULL, digest[MOE_SHA256_HEX_LEN + 1];
    char *rel = moe_study_result(NULL, stage, id, MOE_RESULT_LOG);
    char *log = rel ? moe_path_join(study, rel) : NULL;
    json_t *sum, *rec = NULL, *out = json_object();
    struct moe_error none;
    struct moe_jb b;

    if (!log || !out || !(sum = file_digest(log, err))) {
        if (!log || !out)
            moe_error_set(err, "%s: evidence of %s: out of memory", study, id);
        free(rel);
        free(log);
        json_decref(out);
        return NULL;
    }
    moe_error_clear(&none);
    if (moe_study_find_run(study, stage, id, &run_dir, &none) == 1)
        rec = moe_contract_load_run(run_dir, digest, &none);
    moe_jb_init(&b, err);
    moe_jb_str(&b, out, "candidate", id);
    moe_jb_str_opt(&b, out, "log", json_is_null(sum) ? NULL : rel);
    moe_jb_set(&b, out, "log_sha256", sum);
    moe_jb_set(&b, out, "run",
               rec ? json_sprintf(MOE_STUDY_RUNS "/%s", strrchr(run_dir, '/') + 1) : json_null());
    moe_jb_str_opt(&b, out, "record_sha256", rec ? digest : NULL);
    moe_jb_within(&b, id);
    json_decref(rec);
    free(run_dir);
    free(rel);
    free(log);
    return moe_jb_done(&b, out);
}

json_t *moe_loop_run_contract(const char *study, const char *stage, const char *id,
                              struct moe_error *err)
{
    char *run_dir = NULL;
    struct moe_run_check c;
    json_t *doc = NULL;
    int found = moe_study_find_run(study, stage, id, &run_dir, err);

    if (found == 0)
        moe_error_set(err, "%s: no run record of %s candidate %.12s under " MOE_STUDY_RUNS
                           "/ (the moeflow "
                      "plugin records one for every run it checks)", study, stage, id);
    if (found != 1)
        return NULL;
    if (moe_contract_check_run(run_dir, &c, err) == 0) {
        if (!c.verdict.allowed)
            moe_error_set(err, "%s: contract verify refuses it by rule %s (%s)", run_dir,
                          c.verdict.rule, c.verdict.reason);
        else if ((doc = json_deep_copy(c.record)))
            json_object_del(doc, MOE_CONTRACT_RUN);
    }
    moe_run_check_free(&c);
    free(run_dir);
    return doc;
}

json_t *moe_loop_in_force(const char *study, enum moe_stage stage, struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1];
    json_t *frozen = moe_contract_load_frozen(study, digest, err), *ref;

    if (!frozen)
        return NULL;
    ref = moe_contract_reference(study, stage, frozen, err);
    json_decref(frozen);
    return ref;
}
