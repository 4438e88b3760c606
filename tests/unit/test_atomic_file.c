/* The one atomic writer: whole or not at all, no temporary file left
 * behind on success or failure, modes kept, write-once records never
 * replaced, symlinks never written through. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/readfile.h"
#include "unit.h"

/* Entries of the test folder starting with '.': leftover temporaries. */
static int hidden_files(void)
{
    DIR *d = opendir(moe_unit_dir);
    struct dirent *ent;
    int n = 0;

    while (d && (ent = readdir(d)))
        n += ent->d_name[0] == '.' && strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static void holds(const char *path, const char *want)
{
    struct moe_error e;
    char *text = moe_read_file(path, "test", NULL, &e);

    assert_non_null(text);
    assert_string_equal(text, want);
    free(text);
}

static void replaces_whole_with_an_exact_mode(void **state)
{
    const struct moe_atomic_file how = { .mode = 0644, .exact_mode = true };
    mode_t old = umask(077);
    struct moe_error e;
    struct stat st;

    (void)state;
    assert_int_equal(moe_atomic_write(moe_unit_path("cache.xml"), "one", 3, &how, &e), 0);
    assert_int_equal(moe_atomic_write(moe_unit_path("cache.xml"), "two!", 4, &how, &e), 0);
    umask(old);
    holds(moe_unit_path("cache.xml"), "two!");
    assert_int_equal(stat(moe_unit_path("cache.xml"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    assert_int_equal(hidden_files(), 0);
}

/* The time asked for is the file's: the topology cache compares it. */
static void sets_the_mtime(void **state)
{
    const struct timespec when = { .tv_sec = 1000000000, .tv_nsec = 0 };
    const struct moe_atomic_file how = { .mode = 0644, .mtime = &when };
    struct moe_error e;
    struct stat st;

    (void)state;
    assert_int_equal(moe_atomic_write(moe_unit_path("dated"), "x", 1, &how, &e), 0);
    assert_int_equal(stat(moe_unit_path("dated"), &st), 0);
    assert_int_equal(st.st_mtim.tv_sec, when.tv_sec);
}

/* A record written once is never replaced: 1, and the first text stays. */
static void once_never_replaces(void **state)
{
    const struct moe_atomic_file once = { .mode = 0444, .once = true, .sync_dir = true };
    struct moe_error e;
    int dfd = open(moe_unit_dir, O_RDONLY | O_DIRECTORY);

    (void)state;
    assert_true(dfd >= 0);
    assert_int_equal(moe_atomic_write_at(dfd, "frozen.json", "{}", 2, &once, &e), 0);
    assert_int_equal(moe_atomic_write_at(dfd, "frozen.json", "[]", 2, &once, &e), 1);
    close(dfd);
    holds(moe_unit_path("frozen.json"), "{}");
    assert_int_equal(hidden_files(), 0);
}

/* A symlink at the name is replaced, its target untouched; with once it
 * counts as a taken name. */
static void symlinks_are_not_written_through(void **state)
{
    const struct moe_atomic_file how = { .mode = 0666 }, once = { .mode = 0444, .once = true };
    struct moe_error e;
    struct stat st;
    char target[128];

    (void)state;
    snprintf(target, sizeof(target), "%s", moe_unit_path("victim"));
    assert_int_equal(moe_atomic_write(target, "victim", 6, &how, &e), 0);
    assert_int_equal(symlink(target, moe_unit_path("link")), 0);
    assert_int_equal(moe_atomic_write(moe_unit_path("link"), "new", 3, &once, &e), 1);
    assert_int_equal(moe_atomic_write(moe_unit_path("link"), "new", 3, &how, &e), 0);
    holds(target, "victim");
    assert_int_equal(lstat(moe_unit_path("link"), &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(hidden_files(), 0);
}

/* Failures name the path and leave nothing behind. */
static void errors_name_the_path_and_clean_up(void **state)
{
    const struct moe_atomic_file how = { .mode = 0666 };
    struct moe_error e;
    char buf[512];

    (void)state;
    assert_int_equal(mkdir(moe_unit_path("busy"), 0755), 0);
    assert_int_equal(moe_atomic_write(moe_unit_path("busy"), "x", 1, &how, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "busy: cannot replace"));
    assert_int_equal(moe_atomic_write(moe_unit_path("none/x"), "x", 1, &how, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "none/x: cannot write"));
    assert_int_equal(moe_atomic_write(moe_unit_path(""), "x", 1, &how, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "not a file name"));
    assert_int_equal(hidden_files(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replaces_whole_with_an_exact_mode),
        cmocka_unit_test(sets_the_mtime),
        cmocka_unit_test(once_never_replaces),
        cmocka_unit_test(symlinks_are_not_written_through),
        cmocka_unit_test(errors_name_the_path_and_clean_up),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, moe_unit_make_dir, moe_unit_remove_dir);
}
