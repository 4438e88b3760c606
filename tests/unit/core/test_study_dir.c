/* The study folder's layout (core/study_dir.h): a result's path is built
 * in one place and comes out whole or not at all, and the names the job
 * script templates render are the ones the C side reads. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/study_dir.h"
#include "unit.h"

/* STUDY/results/STAGE/IDSUFFIX, relative without a study, the stage's
 * folder without an id. */
static void result_paths(void **state)
{
    char *p;

    (void)state;
    assert_string_equal(p = moe_study_result("/s", "fit", "abc", MOE_RESULT_RC),
                        "/s/results/fit/abc.rc");
    free(p);
    assert_string_equal(p = moe_study_result(NULL, "validate", "abc", MOE_RESULT_RESUMED_LOG),
                        "results/validate/abc.resumed.log");
    free(p);
    assert_string_equal(p = moe_study_result(NULL, "scale", NULL, MOE_RESULT_LOG),
                        "results/scale");
    free(p);
}

/* What the templates render is what the C side reads: the stage's
 * results folder as moe_study_result names it, and the offset variable's
 * shell expansion with 0 for unset. */
static void template_names_match(void **state)
{
    json_t *t = moe_study_dir_template("fit"), *top = moe_study_dir_template(NULL);
    char *fit = moe_study_result(NULL, "fit", NULL, NULL);

    (void)state;
    assert_non_null(t);
    assert_non_null(top);
    assert_string_equal(json_string_value(json_object_get(t, "results")), fit);
    assert_string_equal(json_string_value(json_object_get(top, "results")), MOE_STUDY_RESULTS);
    assert_string_equal(json_string_value(json_object_get(t, "index_offset")),
                        "${" MOE_ENV_INDEX_OFFSET ":-0}");
    assert_string_equal(json_string_value(json_object_get(t, "rc")), MOE_RESULT_RC);
    assert_string_equal(json_string_value(json_object_get(t, "measured")), MOE_STUDY_MEASURED);
    free(fit);
    json_decref(t);
    json_decref(top);
}

static void touch_at(const char *path, time_t when)
{
    struct timespec ts[2] = { { .tv_sec = when }, { .tv_sec = when } };
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fclose(f);
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* An .rc older than its log by more than the slack is an earlier
 * attempt's; within it (a copy's moments), or missing either file, not. */
static void stale_rc(void **state)
{
    char dir[] = "/tmp/moeflow-stale-XXXXXX", path[128];
    time_t now = time(NULL);

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/results", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/results/fit", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_false(moe_study_result_rc_stale(dir, "fit", "a")); /* neither */
    snprintf(path, sizeof(path), "%s/results/fit/a.log", dir);
    touch_at(path, now);
    assert_false(moe_study_result_rc_stale(dir, "fit", "a")); /* no .rc */
    snprintf(path, sizeof(path), "%s/results/fit/a.rc", dir);
    touch_at(path, now - MOE_RESULT_STALE_RC_SLACK_S);
    assert_false(moe_study_result_rc_stale(dir, "fit", "a")); /* within the slack */
    touch_at(path, now - MOE_RESULT_STALE_RC_SLACK_S - 1);
    assert_true(moe_study_result_rc_stale(dir, "fit", "a"));
    touch_at(path, now + 60); /* written after the log: this attempt's */
    assert_false(moe_study_result_rc_stale(dir, "fit", "a"));
    unlink(path);
    snprintf(path, sizeof(path), "%s/results/fit/a.log", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/results/fit", dir);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/results", dir);
    rmdir(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(result_paths),
        cmocka_unit_test(template_names_match),
        cmocka_unit_test(stale_rc),
    };
    return MOE_RUN_TESTS(tests);
}
