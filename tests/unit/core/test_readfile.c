/* The one whole-file reader: its limit and its messages, "PATH: what:
 * reason", for each way a file can be unreadable. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/readfile.h"
#include "unit.h"

/* A file of exactly size bytes (sparse: zeros). */
static const char *sized(const char *name, off_t size)
{
    const char *path = moe_unit_path(name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, size), 0);
    close(fd);
    return path;
}

static void formatted(const struct moe_error *e, const char *want)
{
    char buf[1024];

    assert_string_equal(moe_error_format(e, buf, sizeof(buf)), want);
}

static void reads_a_file_whole(void **state)
{
    const char *path = moe_unit_path("a.txt");
    struct moe_error e;
    size_t len = 0;
    FILE *f = fopen(path, "w");
    char *text;

    (void)state;
    fputs("one\ntwo\n", f);
    fclose(f);
    assert_non_null(text = moe_read_file(path, "template", &len, &e));
    assert_string_equal(text, "one\ntwo\n");
    assert_int_equal(len, 8);
    free(text);
}

/* An empty file is read: "" and length 0, no error. */
static void empty_file_is_empty(void **state)
{
    struct moe_error e;
    size_t len = 99;
    char *text;

    (void)state;
    moe_error_clear(&e);
    assert_non_null(text = moe_read_file(sized("empty", 0), "study", &len, &e));
    assert_string_equal(text, "");
    assert_int_equal(len, 0);
    assert_string_equal(e.text, "");
    free(text);
}

static void missing_file(void **state)
{
    struct moe_error e;
    char want[256];

    (void)state;
    assert_null(moe_read_file(moe_unit_path("nope.yaml"), "study", NULL, &e));
    snprintf(want, sizeof(want), "%s: study: No such file or directory",
             moe_unit_path("nope.yaml"));
    formatted(&e, want);
}

static void directory_is_refused(void **state)
{
    struct moe_error e;
    char want[256];

    (void)state;
    assert_null(moe_read_file(moe_unit_dir, "manifest", NULL, &e));
    snprintf(want, sizeof(want), "%s: manifest: not a regular file (a directory)", moe_unit_dir);
    formatted(&e, want);
}

/* A FIFO is refused at once: the open does not wait for a writer. */
static void fifo_is_refused_at_once(void **state)
{
    const char *path = moe_unit_path("fifo");
    struct moe_error e;
    char want[256];

    (void)state;
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(10);
    assert_null(moe_read_file(path, "contract", NULL, &e));
    alarm(0);
    snprintf(want, sizeof(want), "%s: contract: not a regular file (a FIFO)", path);
    formatted(&e, want);
}

/* The limit is MOE_READ_FILE_MAX bytes, inclusive. */
static void limit_is_exact(void **state)
{
    struct moe_error e;
    size_t len = 0;
    char *text, want[256];
    const char *path;

    (void)state;
    assert_int_equal(MOE_READ_FILE_MAX, 16 * 1024 * 1024);
    assert_non_null(text = moe_read_file(sized("max", MOE_READ_FILE_MAX), "study", &len, &e));
    assert_int_equal(len, MOE_READ_FILE_MAX);
    free(text);
    path = sized("over", MOE_READ_FILE_MAX + 1);
    assert_null(moe_read_file(path, "study", NULL, &e));
    snprintf(want, sizeof(want), "%s: study: too large (at most 16 MiB is read whole)", path);
    formatted(&e, want);
}

/* /proc says size 0 and still has content: read to the end, not to st_size. */
static void pseudo_files_are_read_to_the_end(void **state)
{
    struct moe_error e;
    size_t len = 0;
    char *text;

    (void)state;
    assert_non_null(text = moe_read_file("/proc/self/cmdline", "command line", &len, &e));
    assert_true(len > 0);
    assert_non_null(strstr(text, "test_readfile"));
    free(text);
}

/* JSON through the same reader; a parse error carries line and column. */
static void json_errors_have_a_position(void **state)
{
    const char *path = moe_unit_path("bad.json");
    struct moe_error e;
    FILE *f = fopen(path, "w");
    char want[256];
    json_t *doc;

    (void)state;
    fputs("{\"a\": 1,\n \"b\": }\n", f);
    fclose(f);
    assert_null(moe_read_json(path, "report", &e));
    snprintf(want, sizeof(want), "%s:2:7: report: unexpected token near '}'", path);
    formatted(&e, want);
    assert_null(moe_read_json(moe_unit_dir, "report", &e));
    snprintf(want, sizeof(want), "%s: report: not a regular file (a directory)", moe_unit_dir);
    formatted(&e, want);
    f = fopen(path, "w");
    fputs("{\"a\": [1, 2.5]}", f);
    fclose(f);
    assert_non_null(doc = moe_read_json(path, "report", &e));
    assert_int_equal(json_array_size(json_object_get(doc, "a")), 2);
    json_decref(doc);
}

/* Names starting with '.' in the test directory: leftover temporaries. */
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

static char *slurp(const char *path)
{
    struct moe_error e;

    return moe_read_file(path, "test", NULL, &e);
}

/* moe_replace_file neither writes through nor replaces a symlink planted
 * at the name (issue 21: report -o overwrote its target; rule 2 of
 * lib/README.md): -1, the link and its target as they were, and no
 * temporary file left behind. */
static void replace_never_writes_through_a_link(void **state)
{
    struct moe_error e;
    char target[128], link[128], *text;
    struct stat st;
    FILE *f;

    (void)state;
    snprintf(target, sizeof(target), "%s", moe_unit_path("victim.txt"));
    snprintf(link, sizeof(link), "%s", moe_unit_path("report.json"));
    f = fopen(target, "w");
    fputs("victim\n", f);
    fclose(f);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(moe_replace_file(link, "new\n", 4, -1, &e), -1);
    assert_non_null(strstr(e.text, "a symlink is there"));
    assert_string_equal(text = slurp(target), "victim\n");
    free(text);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(hidden_files(), 0);
}

/* An exact mode is kept whatever the umask (scripts stay executable);
 * -1 leaves it to the umask, as fopen() did. */
static void replace_sets_the_mode(void **state)
{
    struct moe_error e;
    struct stat st;
    mode_t old = umask(077);

    (void)state;
    assert_int_equal(moe_replace_file(moe_unit_path("run.sbatch"), "#!/bin/sh\n", 10, 0755, &e), 0);
    assert_int_equal(stat(moe_unit_path("run.sbatch"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);
    assert_int_equal(moe_replace_file(moe_unit_path("plain"), "x", 1, -1, &e), 0);
    assert_int_equal(stat(moe_unit_path("plain"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    umask(old);
}

/* A directory in the way is not replaced: an error naming the path. */
static void replace_refuses_a_directory(void **state)
{
    struct moe_error e;
    char buf[512];

    (void)state;
    assert_int_equal(mkdir(moe_unit_path("adir"), 0755), 0);
    assert_int_equal(moe_replace_file(moe_unit_path("adir"), "x", 1, -1, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "adir: cannot write: a folder is there"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_a_file_whole),
        cmocka_unit_test(empty_file_is_empty),
        cmocka_unit_test(missing_file),
        cmocka_unit_test(directory_is_refused),
        cmocka_unit_test(fifo_is_refused_at_once),
        cmocka_unit_test(limit_is_exact),
        cmocka_unit_test(pseudo_files_are_read_to_the_end),
        cmocka_unit_test(json_errors_have_a_position),
        cmocka_unit_test(replace_never_writes_through_a_link),
        cmocka_unit_test(replace_sets_the_mode),
        cmocka_unit_test(replace_refuses_a_directory),
    };
    return MOE_RUN_GROUP(tests, moe_unit_make_dir, moe_unit_remove_dir);
}
