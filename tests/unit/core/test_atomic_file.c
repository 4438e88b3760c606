/* The one atomic writer: whole or not at all, no temporary file left
 * behind on success or failure, modes kept, write-once records never
 * replaced, and (rule 2) nothing but a regular file of the user's own
 * replaced: no device, FIFO, symlink or other user's file. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/atomic_set.h"
#include "core/atomic_set_internal.h"
#include "core/readfile.h"
#include "core/strbuf.h"
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

/* A symlink at the name is neither written through nor replaced (rule 2);
 * with once it counts as a taken name. */
static void symlinks_are_not_written_through(void **state)
{
    const struct moe_atomic_file how = { .mode = 0666 }, once = { .mode = 0444, .once = true };
    struct moe_error e;
    struct stat st;
    char target[128], buf[512];

    (void)state;
    snprintf(target, sizeof(target), "%s", moe_unit_path("victim"));
    assert_int_equal(moe_atomic_write(target, "victim", 6, &how, &e), 0);
    assert_int_equal(symlink(target, moe_unit_path("link")), 0);
    assert_int_equal(moe_atomic_write(moe_unit_path("link"), "new", 3, &once, &e), 1);
    assert_int_equal(moe_atomic_write(moe_unit_path("link"), "new", 3, &how, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "link: cannot write: a symlink is there"));
    holds(target, "victim");
    assert_int_equal(lstat(moe_unit_path("link"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(hidden_files(), 0);
}

/* What may stand at a name before a write. */
enum kind { ABSENT, OWN_FILE, HARD_LINK, LINK_TO_FILE, DANGLING_LINK, LINK_TO_DIR, FOLDER,
            FIFO, SOCKET, DEVICE, FOREIGN_FILE, KINDS };
static const char *const kind_names[] = { "absent", "own file", "hard link", "link to a file",
                                          "dangling link", "link to a folder", "folder",
                                          "FIFO", "socket", "device", "another user's file" };

/* Puts kind k at name in dirfd; false when this user cannot make it. */
static bool plant(int dirfd, const char *name, enum kind k)
{
    int fd;

    switch (k) {
    case ABSENT:
        return true;
    case OWN_FILE:
    case FOREIGN_FILE:
        if ((fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL, 0644)) < 0)
            return false;
        close(fd);
        return k == OWN_FILE || fchownat(dirfd, name, 65534, 65534, 0) == 0;
    case HARD_LINK:
        return linkat(dirfd, "victim", dirfd, name, 0) == 0;
    case LINK_TO_FILE:
        return symlinkat("victim", dirfd, name) == 0;
    case DANGLING_LINK:
        return symlinkat("nowhere/at/all", dirfd, name) == 0;
    case LINK_TO_DIR:
        return symlinkat(".", dirfd, name) == 0;
    case FOLDER:
        return mkdirat(dirfd, name, 0755) == 0;
    case FIFO:
        return mknodat(dirfd, name, S_IFIFO | 0666, 0) == 0;
    case SOCKET:
        return mknodat(dirfd, name, S_IFSOCK | 0666, 0) == 0;
    case DEVICE: /* /dev/null's own numbers, made here: as root only */
        return mknodat(dirfd, name, S_IFCHR | 0666, makedev(1, 3)) == 0;
    default:
        return false;
    }
}

/* Rule 2 explored: 400 writes, each over a name holding one of the kinds
 * above (chosen by a fixed pseudo-random sequence), with random data,
 * modes and both entry points.  A write succeeds exactly when the name is
 * absent or a regular file of this user's; a refusal leaves the name as
 * it was (same inode, type and size), the victim every link points at
 * untouched, and says what is there; no temporary file is ever left. */
static void only_own_regular_files_are_replaced(void **state)
{
    int dirfd = open(moe_unit_dir, O_RDONLY | O_DIRECTORY), made[KINDS] = { 0 };
    unsigned seed = 38;

    (void)state;
    assert_true(dirfd >= 0);
    for (int i = 0; i < 400; i++) {
        enum kind k = (enum kind)(rand_r(&seed) % KINDS);
        const struct moe_atomic_file how = { .mode = (mode_t)(0600 | (rand_r(&seed) % 2 ? 0055 : 0)),
                                             .exact_mode = rand_r(&seed) % 2 };
        char name[32], data[64], buf[512], *path;
        struct stat before, after;
        size_t len = (size_t)(rand_r(&seed) % sizeof(data));
        struct moe_error e;
        bool may, absent;
        int rc;

        snprintf(name, sizeof(name), "n%d", i);
        for (size_t j = 0; j < len; j++)
            data[j] = (char)('a' + rand_r(&seed) % 26);
        unlinkat(dirfd, "victim", 0);
        assert_int_equal(moe_atomic_write_at(dirfd, "victim", "victim", 6, &how, &e), 0);
        if (!plant(dirfd, name, k))
            continue; /* not this user's to make (a device, a gift to another user) */
        made[k]++;
        absent = fstatat(dirfd, name, &before, AT_SYMLINK_NOFOLLOW) != 0;
        may = k == ABSENT || k == OWN_FILE || k == HARD_LINK;
        path = moe_path_join(moe_unit_dir, name);
        moe_error_clear(&e);
        rc = rand_r(&seed) % 2 ? moe_atomic_write(path, data, len, &how, &e)
                               : moe_atomic_write_at(dirfd, name, data, len, &how, &e);
        assert_int_equal(rc, may ? 0 : -1);
        holds(moe_unit_path("victim"), "victim");
        assert_int_equal(fstatat(dirfd, name, &after, AT_SYMLINK_NOFOLLOW), 0);
        if (may) {
            char *text = moe_read_file(path, "test", NULL, &e);

            assert_true(S_ISREG(after.st_mode));
            assert_memory_equal(text, data, len);
            assert_int_equal(after.st_size, (off_t)len);
            free(text);
        } else {
            assert_false(absent);
            assert_int_equal(after.st_ino, before.st_ino);
            assert_int_equal(after.st_mode, before.st_mode);
            assert_int_equal(after.st_size, before.st_size);
            assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "is there"));
        }
        assert_int_equal(hidden_files(), 0);
        free(path);
    }
    for (int k = 0; k < KINDS; k++)
        print_message("# %s: %d writes\n", kind_names[k], made[k]);
    assert_true(made[ABSENT] && made[OWN_FILE] && made[LINK_TO_FILE] && made[FIFO]);
    close(dirfd);
}

/* The system's own /dev/null and /dev/stdout: refused before anything is
 * written, by anyone (the check reads the name; it writes nothing). */
static void dev_null_and_stdout_are_refused(void **state)
{
    const struct moe_atomic_file how = { .mode = 0666 };
    struct stat before, after;
    struct moe_error e;
    char buf[512];

    (void)state;
    assert_int_equal(lstat("/dev/null", &before), 0);
    assert_int_equal(moe_atomic_write("/dev/null", "x", 1, &how, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "a device is there"));
    assert_int_equal(lstat("/dev/null", &after), 0);
    assert_true(S_ISCHR(after.st_mode) && after.st_ino == before.st_ino);
    if (lstat("/dev/stdout", &before) == 0 && S_ISLNK(before.st_mode)) {
        assert_int_equal(moe_atomic_write("/dev/stdout", "x", 1, &how, &e), -1);
        assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "a symlink is there"));
        assert_int_equal(lstat("/dev/stdout", &after), 0);
        assert_true(S_ISLNK(after.st_mode) && after.st_ino == before.st_ino);
    }
}

/* A folder path just under PATH_MAX: the file's whole name is written
 * (relative to the opened folder, so DIR/NAME may pass PATH_MAX), never a
 * cut one; a folder path over it is an error naming the cause. */
static void names_at_path_max_are_whole_or_refused(void **state)
{
    const struct moe_atomic_file how = { .mode = 0666 };
    struct moe_strbuf dir = { 0 };
    struct moe_error e;
    char seg[201], buf[512], *path;
    struct stat st;

    (void)state;
    memset(seg, 'd', 200);
    seg[200] = '\0';
    moe_strbuf_puts(&dir, moe_unit_dir);
    while (dir.len + 201 < 4085) {
        moe_strbuf_printf(&dir, "/%s", seg);
        assert_true(mkdir(dir.buf, 0755) == 0 || errno == EEXIST);
    }
    moe_strbuf_printf(&dir, "/%.*s", (int)(4085 - dir.len - 1), seg);
    assert_int_equal(dir.len, 4085);
    assert_int_equal(mkdir(dir.buf, 0755), 0);
    path = moe_path_join(dir.buf, "report.json");
    assert_int_equal(moe_atomic_write(path, "{}", 2, &how, &e), 0);
    free(path);
    path = moe_path_join(dir.buf, "report.js");
    assert_int_equal(lstat(path, &st), -1);
    free(path);
    {
        int fd = open(dir.buf, O_RDONLY | O_DIRECTORY);

        assert_true(fd >= 0);
        assert_int_equal(fstatat(fd, "report.json", &st, 0), 0);
        close(fd);
    }
    moe_strbuf_printf(&dir, "/%s/%s/report.json", seg, seg);
    assert_int_equal(moe_atomic_write(dir.buf, "{}", 2, &how, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "cannot write"));
    moe_strbuf_free(&dir);
}

/* The output folder: made when absent, opened once; a symlink there is
 * refused even with a trailing slash, and so is one planted by another
 * user in a sticky folder (report -o in /tmp). */
static void output_folder_is_never_a_symlink(void **state)
{
    struct moe_error e;
    char buf[512], sticky[128], link[160];
    int fd;

    (void)state;
    fd = moe_output_dir_open(moe_unit_path("out"), &e);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(symlink("out", moe_unit_path("via")), 0);
    snprintf(link, sizeof(link), "%s/", moe_unit_path("via"));
    assert_int_equal(moe_output_dir_open(link, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "it is a symlink"));
    snprintf(sticky, sizeof(sticky), "%s", moe_unit_path("sticky"));
    assert_int_equal(mkdir(sticky, 0755), 0);
    assert_int_equal(chmod(sticky, 01777), 0);
    snprintf(link, sizeof(link), "%s/rep", sticky);
    assert_int_equal(symlink(moe_unit_path("out"), link), 0);
    if (geteuid() == 0)
        assert_int_equal(lchown(link, 65534, 65534), 0);
    assert_int_equal(moe_output_dir_open(link, &e), -1);
    assert_int_equal(mknod(moe_unit_path("pipe"), S_IFIFO | 0600, 0), 0);
    assert_int_equal(moe_output_dir_open(moe_unit_path("pipe"), &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "a FIFO"));
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
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "busy: cannot write: a folder is there"));
    assert_int_equal(moe_atomic_write(moe_unit_path("none/x"), "x", 1, &how, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "none/x: cannot write"));
    assert_int_equal(moe_atomic_write(moe_unit_path(""), "x", 1, &how, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "not a file name"));
    assert_int_equal(hidden_files(), 0);
}

/* Kill points for the set's writer: with -Wl,--wrap (mk/tests-unit.am)
 * every rename, link, unlink and fsync the library makes counts, and the
 * kill_at-th ends the process there, as a SIGKILL would. */
static int kill_at, calls;

static void step(void)
{
    if (kill_at && ++calls == kill_at)
        _exit(77);
}

int __real_renameat(int a, const char *b, int c, const char *d);
int __real_linkat(int a, const char *b, int c, const char *d, int f);
int __real_unlinkat(int a, const char *b, int f);
int __real_fsync(int fd);
int __wrap_renameat(int a, const char *b, int c, const char *d);
int __wrap_linkat(int a, const char *b, int c, const char *d, int f);
int __wrap_unlinkat(int a, const char *b, int f);
int __wrap_fsync(int fd);

int __wrap_renameat(int a, const char *b, int c, const char *d)
{
    step();
    return __real_renameat(a, b, c, d);
}

int __wrap_linkat(int a, const char *b, int c, const char *d, int f)
{
    step();
    return __real_linkat(a, b, c, d, f);
}

int __wrap_unlinkat(int a, const char *b, int f)
{
    step();
    return __real_unlinkat(a, b, f);
}

int __wrap_fsync(int fd)
{
    step();
    return __real_fsync(fd);
}

static const struct moe_set_file old_set[] = { { "a.txt", "old-a", 5, -1 },
                                               { "b.sbatch", "old-b", 5, 0755 } };
static const struct moe_set_file new_set[] = { { "sub/c.json", "new-c", 5, 0644 },
                                               { "a.txt", "new-a", 5, -1 },
                                               { "b.sbatch", "new-b", 5, 0755 } };

/* "old", "new" or NULL (a mix) for the files of the folder dirfd. */
static const char *which_set(int dirfd)
{
    char a[8] = "", b[8] = "";
    int fa = openat(dirfd, "a.txt", O_RDONLY), fb = openat(dirfd, "b.sbatch", O_RDONLY);
    bool c = faccessat(dirfd, "sub/c.json", F_OK, 0) == 0;

    if (fa >= 0 && read(fa, a, 5) < 0)
        a[0] = '\0';
    if (fb >= 0 && read(fb, b, 5) < 0)
        b[0] = '\0';
    close(fa);
    close(fb);
    if (!strcmp(a, "old-a") && !strcmp(b, "old-b") && !c)
        return "old";
    if (!strcmp(a, "new-a") && !strcmp(b, "new-b") && c)
        return "new";
    return NULL;
}

/* Entries a set's writer names .moeflow*: temporaries or a journal. */
static int leftovers(int dirfd)
{
    DIR *d = fdopendir(dup(dirfd));
    struct dirent *ent;
    int n = 0;

    while (d && (ent = readdir(d)))
        n += strncmp(ent->d_name, ".moeflow", 8) == 0 || strncmp(ent->d_name, "..moeflow", 9) == 0;
    if (d)
        closedir(d);
    return n;
}

/* Rule 9 explored: the writer of a set is killed at each of its steps in
 * turn (every rename, link, unlink and fsync), until it runs through.
 * After each kill the folder holds the old set or the new one, or a
 * journal (readers refuse it: moe_atomic_set_pending); the next writer's
 * recovery then leaves exactly the old or the new set and no leftover,
 * and the new set once the journal was there. */
static void interrupted_sets_leave_old_or_new(void **state)
{
    int pending = 0, olds = 0, news = 0, k;

    (void)state;
    for (k = 1;; k++) {
        char dir[160];
        struct moe_error e;
        const char *before;
        int dirfd, status;
        bool journal;
        pid_t pid;

        snprintf(dir, sizeof(dir), "%s/set%d", moe_unit_dir, k);
        assert_int_equal(mkdir(dir, 0755), 0);
        dirfd = open(dir, O_RDONLY | O_DIRECTORY);
        assert_int_equal(moe_atomic_set_write(dirfd, dir, old_set, 2, &e), 0);
        assert_string_equal(which_set(dirfd), "old");
        if ((pid = fork()) == 0) {
            calls = 0;
            kill_at = k;
            _exit(moe_atomic_set_write(dirfd, dir, new_set, 3, &e) == 0 ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 0) {
            assert_string_equal(which_set(dirfd), "new");
            assert_int_equal(leftovers(dirfd), 0);
            close(dirfd);
            break;
        }
        assert_int_equal(WEXITSTATUS(status), 77);
        journal = moe_atomic_set_pending(dir);
        before = which_set(dirfd);
        assert_true(journal || before);
        pending += journal;
        assert_int_equal(moe_atomic_set_recover(dirfd, dir, &e), 0);
        assert_false(moe_atomic_set_pending(dir));
        assert_non_null(which_set(dirfd));
        assert_string_equal(which_set(dirfd), journal ? "new" : before);
        olds += !strcmp(which_set(dirfd), "old");
        news += !strcmp(which_set(dirfd), "new");
        assert_int_equal(leftovers(dirfd), 0);
        close(dirfd);
    }
    print_message("# %d kill points: %d left the old set, %d the new one (%d through a "
                  "journal)\n", k - 1, olds, news, pending);
    assert_true(k > 5 && olds > 0 && pending > 0);
}

/* A set of which one name may not be replaced (rule 2) writes nothing. */
static void a_refused_name_writes_no_file_of_the_set(void **state)
{
    char dir[160], buf[512];
    struct moe_error e;
    int dirfd;

    (void)state;
    snprintf(dir, sizeof(dir), "%s/refused", moe_unit_dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    dirfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_int_equal(moe_atomic_set_write(dirfd, dir, old_set, 2, &e), 0);
    assert_int_equal(symlinkat("/dev/null", dirfd, "b.sbatch.tmp"), 0);
    assert_int_equal(renameat(dirfd, "b.sbatch.tmp", dirfd, "b.sbatch"), 0);
    assert_int_equal(moe_atomic_set_write(dirfd, dir, new_set, 3, &e), -1);
    assert_non_null(strstr(moe_error_format(&e, buf, sizeof(buf)), "b.sbatch: cannot write: a symlink"));
    assert_int_equal(faccessat(dirfd, "sub/c.json", F_OK, 0), -1);
    assert_int_equal(leftovers(dirfd), 0);
    close(dirfd);
    holds(moe_unit_path("refused/a.txt"), "old-a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replaces_whole_with_an_exact_mode),
        cmocka_unit_test(sets_the_mtime),
        cmocka_unit_test(once_never_replaces),
        cmocka_unit_test(symlinks_are_not_written_through),
        cmocka_unit_test(only_own_regular_files_are_replaced),
        cmocka_unit_test(dev_null_and_stdout_are_refused),
        cmocka_unit_test(names_at_path_max_are_whole_or_refused),
        cmocka_unit_test(output_folder_is_never_a_symlink),
        cmocka_unit_test(interrupted_sets_leave_old_or_new),
        cmocka_unit_test(a_refused_name_writes_no_file_of_the_set),
        cmocka_unit_test(errors_name_the_path_and_clean_up),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, moe_unit_make_dir, moe_unit_remove_dir);
}
