/* Stage names, job option validation, plugstack argument parsing, errors. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "contract/jobopts.h"
#include "core/plugin_config.h"
#include "core/stage.h"
#include "unit.h"

/* Every stage name round-trips; near misses are not accepted. */
static void stage_names_round_trip(void **state)
{
    (void)state;
    for (int s = 0; s < MOE_STAGE_COUNT; s++)
        assert_int_equal(moe_stage_parse(moe_stage_name((enum moe_stage)s)), s);
    assert_int_equal(moe_stage_parse("Retune"), MOE_STAGE_NONE);
    assert_int_equal(moe_stage_parse("retune "), MOE_STAGE_NONE);
    assert_int_equal(moe_stage_parse(""), MOE_STAGE_NONE);
    assert_int_equal(moe_stage_parse(NULL), MOE_STAGE_NONE);
    assert_null(moe_stage_name(MOE_STAGE_COUNT));
}

/* A bad stage names the value and lists every valid stage. */
static void bad_stage_message_lists_choices(void **state)
{
    struct moe_jobopts o;
    struct moe_error e;

    (void)state;
    moe_jobopts_init(&o);
    moe_error_clear(&e);
    assert_int_equal(moe_jobopts_set_stage(&o, "tune", &e), -1);
    assert_int_equal(o.stage, MOE_STAGE_NONE);
    assert_non_null(strstr(e.text, "'tune'"));
    assert_non_null(strstr(e.text, "contract|fit|scale|profile|retune|validate"));
    assert_int_equal(moe_jobopts_set_stage(&o, "validate", &e), 0);
    assert_int_equal(o.stage, MOE_STAGE_VALIDATE);
}

/* Whether --moe-candidate takes id (its check is private to lib/contract). */
static bool candidate_ok(const char *id)
{
    struct moe_jobopts o;
    struct moe_error e;

    moe_jobopts_init(&o);
    moe_error_clear(&e);
    if (moe_jobopts_set_candidate(&o, id, &e) != 0) {
        assert_non_null(strstr(e.text, "invalid --moe-candidate"));
        return false;
    }
    assert_string_equal(o.candidate, id);
    return true;
}

/* Candidate ids: safe in file names, bounded, no leading punctuation. */
static void candidate_ids(void **state)
{
    char longest[MOE_CANDIDATE_ID_MAX + 2];

    (void)state;
    assert_true(candidate_ok("c03"));
    assert_true(candidate_ok("ep8-tp2.hybridep_v2"));
    assert_false(candidate_ok(""));
    assert_false(candidate_ok("."));
    assert_false(candidate_ok(".."));
    assert_false(candidate_ok("-c1"));
    assert_false(candidate_ok("c/1"));
    assert_false(candidate_ok("c 1"));
    assert_false(candidate_ok(NULL));
    memset(longest, 'a', sizeof(longest));
    longest[MOE_CANDIDATE_ID_MAX] = '\0';
    assert_true(candidate_ok(longest));
    longest[MOE_CANDIDATE_ID_MAX] = 'a';
    longest[MOE_CANDIDATE_ID_MAX + 1] = '\0';
    assert_false(candidate_ok(longest));
}

/* The study must exist; a missing one names the path and the OS reason. */
static void study_path_check(void **state)
{
    struct moe_error e;

    (void)state;
    moe_error_clear(&e);
    assert_int_equal(moe_study_path_check("/", &e), 0);
    assert_int_equal(moe_study_path_check("/nonexistent/study.yaml", &e), -1);
    assert_non_null(strstr(e.text, "/nonexistent/study.yaml"));
    assert_non_null(strstr(e.text, "No such file"));
    assert_int_equal(moe_study_path_check("/dev/null", &e), -1);
}

/* No arguments: documented defaults. */
static void plugstack_defaults(void **state)
{
    struct moe_plugin_config c;
    struct moe_error e;

    (void)state;
    assert_int_equal(moe_plugin_config_parse(&c, 0, NULL, &e), 0);
    assert_int_equal(c.affinity, MOE_AFFINITY_EXCLUSIVE);
    assert_true(c.affinity_user_override);
    assert_string_equal(c.hwloc_xml, "");
    assert_string_equal(c.cache_dir, "");
    assert_int_equal(c.enforce, MOE_ENFORCE_STRICT);
    assert_false(c.enforce_user_override);
    assert_false(c.auto_freeze);
}

/* Every known key is applied. */
static void plugstack_all_keys(void **state)
{
    char *argv[] = { "affinity=closest", "affinity_override=deny", "hwloc_xml=/etc/node.xml",
                     "topology=/etc/slurm/topology.conf", "enforce=warn", "enforce_override=allow",
                     "auto_freeze=allow", "cache_dir=/var/cache/moeflow" };
    struct moe_plugin_config c;
    struct moe_error e;

    (void)state;
    assert_int_equal(moe_plugin_config_parse(&c, 8, argv, &e), 0);
    assert_int_equal(c.enforce, MOE_ENFORCE_WARN);
    assert_true(c.enforce_user_override);
    assert_true(c.auto_freeze);
    assert_int_equal(c.affinity, MOE_AFFINITY_CLOSEST);
    assert_false(c.affinity_user_override);
    assert_string_equal(c.hwloc_xml, "/etc/node.xml");
    assert_string_equal(c.topology, "/etc/slurm/topology.conf");
    assert_string_equal(c.cache_dir, "/var/cache/moeflow");
}

static void expect_config_error(char *arg, const char *needle)
{
    char *argv[] = { "topology=/etc/slurm/topology.conf", arg, "affinity=none" };
    struct moe_plugin_config c;
    struct moe_error e;
    char buf[1024];

    moe_error_clear(&e);
    assert_int_equal(moe_plugin_config_parse(&c, 3, argv, &e), -1);
    moe_error_format(&e, buf, sizeof(buf));
    /* the message quotes the whole argument, then says what is wrong */
    assert_true(strncmp(buf, arg, strlen(arg)) == 0);
    if (!strstr(buf, needle))
        fail_msg("'%s' does not contain '%s'", buf, needle);
}

/* Unknown keys, bad values, repeats and non key=value words are errors. */
static void plugstack_strict(void **state)
{
    (void)state;
    expect_config_error("afinity=none", "unknown plugstack key 'afinity'");
    expect_config_error("afinity=none", "known keys: affinity, affinity_override, hwloc_xml, "
                                        "cache_dir, topology, enforce, enforce_override, auto_freeze");
    expect_config_error("enforce=lenient", "valid values are strict, warn");
    expect_config_error("affinity=fast", "valid values are exclusive, closest, none");
    expect_config_error("topology=/b", "given twice");
    expect_config_error("hwloc_xml=node.xml", "absolute path");
    expect_config_error("cache_dir=run/moeflow", "absolute path");
    expect_config_error("verbose", "not key=value");
    expect_config_error("=x", "not key=value");
}

/* Error values format as source:line:column: text, leaving out unset parts. */
static void error_format(void **state)
{
    struct moe_error e;
    char buf[256];

    (void)state;
    moe_error_clear(&e);
    moe_error_set(&e, "plain %d", 1);
    assert_string_equal(moe_error_format(&e, buf, sizeof(buf)), "plain 1");
    moe_error_at(&e, "study.yaml", 14, 7, "parallel.ep: %d does not divide %d", 12, 128);
    assert_string_equal(moe_error_format(&e, buf, sizeof(buf)),
                        "study.yaml:14:7: parallel.ep: 12 does not divide 128");
    moe_error_at(&e, "study.yaml", 3, 0, "x");
    assert_string_equal(moe_error_format(&e, buf, sizeof(buf)), "study.yaml:3: x");
    moe_error_at(&e, "arg", 0, 0, "y");
    assert_string_equal(moe_error_format(&e, buf, sizeof(buf)), "arg: y");
}

static void write_script(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* sbatch command lines that ask for an array, and ones that do not: the
 * option in any spelling, #SBATCH lines of the script up to its first
 * command, never the script's own arguments or its later lines. */
static void sbatch_array_detection(void **state)
{
    char arr[] = "/tmp/moe-arr.XXXXXX", plain[] = "/tmp/moe-plain.XXXXXX";
    int fa = mkstemp(arr), fp = mkstemp(plain);

    (void)state;
    assert_true(fa >= 0 && fp >= 0);
    close(fa);
    close(fp);
    write_script(arr, "#!/bin/bash\n# retune\n#SBATCH --gpus-per-node=2\n#SBATCH --array=0-12%1\n"
                      "srun true\n");
    write_script(plain, "#!/bin/bash\n#SBATCH -N 1\necho hi\n#SBATCH --array=0-3\n");
    {
        char *a1[] = { "sbatch", "--array=0-3", "job.sh", NULL };
        char *a2[] = { "sbatch", "--array", "0-3", "job.sh", NULL };
        char *a3[] = { "sbatch", "-a0-3", "job.sh", NULL };
        char *a4[] = { "sbatch", "-a", "1,2", "job.sh", NULL };
        char *a5[] = { "sbatch", "--moe-stage=retune", arr, NULL };
        char *n1[] = { "sbatch", "--moe-stage=retune", plain, NULL };
        char *n2[] = { "sbatch", "-N", "1", plain, "--array=0-3", NULL };
        char *n3[] = { "sbatch", "--account=x", "-A", "y", plain, NULL };
        char *n4[] = { "sbatch", "--wrap=true", NULL };

        assert_true(moe_sbatch_args_request_array(3, a1));
        assert_true(moe_sbatch_args_request_array(4, a2));
        assert_true(moe_sbatch_args_request_array(3, a3));
        assert_true(moe_sbatch_args_request_array(4, a4));
        assert_true(moe_sbatch_args_request_array(3, a5));   /* #SBATCH --array */
        assert_false(moe_sbatch_args_request_array(3, n1));  /* after the first command */
        assert_false(moe_sbatch_args_request_array(5, n2));  /* the script's argument */
        assert_false(moe_sbatch_args_request_array(5, n3));
        assert_false(moe_sbatch_args_request_array(2, n4));
    }
    unlink(arr);
    unlink(plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stage_names_round_trip),
        cmocka_unit_test(bad_stage_message_lists_choices),
        cmocka_unit_test(candidate_ids),
        cmocka_unit_test(study_path_check),
        cmocka_unit_test(sbatch_array_detection),
        cmocka_unit_test(plugstack_defaults),
        cmocka_unit_test(plugstack_all_keys),
        cmocka_unit_test(plugstack_strict),
        cmocka_unit_test(error_format),
    };
    return MOE_RUN_TESTS(tests);
}
