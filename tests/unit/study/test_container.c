/* The container options of the scripts' srun steps (study/container.h):
 * which mounts show the study directory at its own path, and the options
 * with the study's mount added only when none does. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "study/container.h"
#include "study/container_internal.h"
#include "unit.h"

static void mounts_that_show_the_study_at_its_path(void **state)
{
    (void)state;
    assert_true(moe_container_mounts_cover("/lustre:/lustre", "/lustre/u/study"));
    assert_true(moe_container_mounts_cover("/lustre", "/lustre/u/study"));
    assert_true(moe_container_mounts_cover("/scratch:/scratch,/lustre/u:/lustre/u:ro",
                                           "/lustre/u/study"));
    assert_true(moe_container_mounts_cover("/:/", "/lustre/u/study"));
    assert_true(moe_container_mounts_cover("/lustre/u/study/", "/lustre/u/study"));
    /* elsewhere in the container, a sibling name, or nothing */
    assert_false(moe_container_mounts_cover("/lustre:/data", "/lustre/u/study"));
    assert_false(moe_container_mounts_cover("/lustre/u/stu:/lustre/u/stu", "/lustre/u/study"));
    assert_false(moe_container_mounts_cover("", "/lustre/u/study"));
    assert_false(moe_container_mounts_cover(NULL, "/lustre/u/study"));
}

static void options_name_the_folder_and_add_the_mount(void **state)
{
    struct moe_study s;
    struct moe_error err;
    char *o;

    (void)state;
    memset(&s, 0, sizeof(s));
    moe_error_clear(&err);
    assert_non_null(o = moe_container_srun_options(&s, "/st dy", &err));
    assert_string_equal(o, "");
    free(o);
    s.cluster.container_image = "nvcr.io#nvidia/nemo:25.09";
    s.cluster.container_mounts = "/lustre:/lustre";
    assert_non_null(o = moe_container_srun_options(&s, "/st dy", &err));
    assert_string_equal(o, " --container-image='nvcr.io#nvidia/nemo:25.09' "
                           "--container-mounts='/lustre:/lustre,/st dy:/st dy' "
                           "--container-workdir='/st dy'");
    free(o);
    s.cluster.container_workdir = "/workspace";
    assert_non_null(o = moe_container_srun_options(&s, "/lustre/study", &err));
    assert_string_equal(o, " --container-image='nvcr.io#nvidia/nemo:25.09' "
                           "--container-mounts=/lustre:/lustre --container-workdir=/workspace");
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mounts_that_show_the_study_at_its_path),
        cmocka_unit_test(options_name_the_folder_and_add_the_mount),
    };

    return MOE_RUN_TESTS(tests);
}
