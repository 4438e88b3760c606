#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run_state.h"
#include "core/json_build.h"
#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

/* A fresh state: nothing done yet. */
static json_t *fresh_state(const char *study_hash, struct moe_error *err)
{
    struct moe_jb b;
    json_t *s = json_object();

    moe_jb_init(&b, err);
    moe_jb_int(&b, s, "version", 1);
    moe_jb_str(&b, s, "study_hash", study_hash ? study_hash : "");
    moe_jb_set(&b, s, "stages", json_object());
    moe_jb_within(&b, RUN_STATE_FILE);
    return moe_jb_done(&b, s);
}

json_t *run_state_load(const char *dir, const char *study_hash, struct moe_error *err)
{
    char *path = moe_path_join(dir, RUN_STATE_FILE);
    struct stat st;
    json_t *s = NULL;
    const char *h;

    if (!path) {
        moe_error_set(err, "out of memory");
        return NULL;
    }
    if (lstat(path, &st) < 0 && errno == ENOENT) {
        s = fresh_state(study_hash, err);
        goto out;
    }
    if (!(s = moe_read_json(path, "run state", err)))
        goto out;
    h = json_string_value(json_object_get(s, "study_hash"));
    if (!json_is_object(json_object_get(s, "stages")) || !h) {
        moe_error_at(err, path, 0, 0, "run state: not what moeflow run writes (no stages or "
                     "study_hash)");
        json_decref(s);
        s = NULL;
    } else if (study_hash && strcmp(h, study_hash) != 0) {
        moe_error_at(err, path, 0, 0, "run state: of study hash %.16s..., but "
                     MOE_STUDY_MANIFEST " is of %.16s...: the study was generated again; "
                     "remove %s to run it afresh", h, study_hash, RUN_STATE_FILE);
        json_decref(s);
        s = NULL;
    }
out:
    free(path);
    return s;
}

int run_state_save(const char *dir, const json_t *state, struct moe_error *err)
{
    char *path = moe_path_join(dir, RUN_STATE_FILE);
    char *text = json_dumps(state, JSON_INDENT(2) | JSON_SORT_KEYS);
    int rc = -1;

    if (!path || !text)
        moe_error_at(err, path ? path : RUN_STATE_FILE, 0, 0, "cannot write: out of memory");
    else
        rc = moe_replace_file(path, text, strlen(text), -1, err);
    free(path);
    free(text);
    return rc;
}

json_t *run_state_stage(json_t *state, const char *stage)
{
    json_t *stages = json_object_get(state, "stages"), *s = json_object_get(stages, stage);

    if (!json_is_object(s)) {
        s = json_object();
        /* checked: NULL tells the caller the stage could not be recorded */
        if (json_object_set_new(stages, stage, s) < 0)
            return NULL;
    }
    return s;
}

const char *run_state_of(const json_t *stage)
{
    const char *s = json_string_value(json_object_get(stage, "state"));

    return s ? s : "";
}

/* A whole number at *p, moving p past it; -1 when there is none. */
static long number(const char **p)
{
    char *end;
    long v;

    if (**p < '0' || **p > '9')
        return -1;
    errno = 0;
    v = strtol(*p, &end, 10);
    if (errno || v > INT_MAX)
        return -1;
    *p = end;
    return v;
}

int run_array_indices(const char *spec, int *idx, size_t max)
{
    const char *p = spec;
    size_t n = 0;

    for (;;) {
        long a = number(&p), b = a;

        if (a < 0)
            return -1;
        if (*p == '-') {
            p++;
            if ((b = number(&p)) < a)
                return -1;
        }
        if (b - a >= (long)(max - n))
            return -1;
        for (long i = a; i <= b; i++)
            idx[n++] = (int)i;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '%') { /* the throttle: how many at once, not which */
            p++;
            if (number(&p) < 1)
                return -1;
        }
        return *p ? -1 : (int)n;
    }
}
