/* The study folder's layout (core/study_dir.h): a result's path is built
 * in one place and comes out whole or not at all, and the names the job
 * script templates render are the ones the C side reads. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(result_paths),
        cmocka_unit_test(template_names_match),
    };
    return MOE_RUN_TESTS(tests);
}
