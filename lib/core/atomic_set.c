/* The journal protocol of core/atomic_set.h.  Temporary names are fixed
 * (.moeflow-new.I), not random, so that the next writer finds and removes
 * what a killed one left; the folder's flock keeps two moeflow writers
 * from sharing them (on a file system without flock, best effort). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/atomic_file_internal.h"
#include "core/atomic_set.h"
#include "core/atomic_set_internal.h"
#include "core/readfile.h"
#include "core/strbuf.h"

#define TEMP_PREFIX ".moeflow-new."
#define JOURNAL MOE_ATOMIC_SET_JOURNAL
/* the journal's own temporary name, where there is no O_TMPFILE */
#define JOURNAL_TEMP "." JOURNAL "."
#define JOURNAL_MAX (1024 * 1024)

static void temp_name(char *buf, size_t len, size_t i)
{
    snprintf(buf, len, TEMP_PREFIX "%zu", i); /* a size_t always fits in 48 */
}

static char *shown_path(const char *shown, const char *name)
{
    return moe_path_join(shown ? shown : ".", name);
}

static int fail_at(struct moe_error *err, const char *shown, const char *name, const char *what,
                   int e)
{
    char *path = shown_path(shown, name);

    moe_error_at(err, path ? path : name, 0, 0, "%s: %s", what, strerror(e));
    free(path);
    errno = e;
    return -1;
}

/* Removes what a set never committed left: the temporaries and the
 * journal's own temporary file.  unlinkat removes a name, whatever it
 * names, and never writes through it. */
static void sweep(int dirfd)
{
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *e;

    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    while ((e = readdir(d)))
        if (strncmp(e->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX)) == 0 ||
            strncmp(e->d_name, JOURNAL_TEMP, strlen(JOURNAL_TEMP)) == 0)
            unlinkat(dirfd, e->d_name, 0);
    closedir(d);
}

/* Step 3: each temporary still there takes its name (line i of names).
 * names is cut in place. */
static int roll_forward(int dirfd, const char *shown, char *names, struct moe_error *err)
{
    char *save = NULL, tmp[48];
    size_t i = 0;
    struct stat st;

    for (char *name = strtok_r(names, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
        char *path;
        int rc;

        temp_name(tmp, sizeof(tmp), i++);
        if (fstatat(dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* renamed before the writer was killed */
        if (!(path = shown_path(shown, name)))
            return fail_at(err, shown, name, "cannot replace", ENOMEM);
        rc = moe_atomic_replaceable(dirfd, name, path, err);
        free(path);
        if (rc < 0)
            return -1;
        if (renameat(dirfd, tmp, dirfd, name) != 0)
            return fail_at(err, shown, name, "cannot replace", errno);
    }
    if (fsync(dirfd) != 0 || unlinkat(dirfd, JOURNAL, 0) != 0)
        return fail_at(err, shown, JOURNAL, "cannot finish", errno);
    return fsync(dirfd) == 0 ? 0 : fail_at(err, shown, JOURNAL, "cannot finish", errno);
}

/* The journal's names: NULL with *absent when there is none, NULL with err
 * when it cannot be trusted or read. */
static char *read_journal(int dirfd, const char *shown, bool *absent, struct moe_error *err)
{
    int fd = openat(dirfd, JOURNAL, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    const char *what;
    char *path;

    *absent = fd < 0 && errno == ENOENT;
    if (*absent)
        return NULL;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fail_at(err, shown, JOURNAL, "cannot read the journal of an interrupted write", errno);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if ((what = moe_atomic_refusal(&st)) || st.st_size > JOURNAL_MAX) {
        close(fd);
        path = shown_path(shown, JOURNAL);
        moe_error_at(err, path ? path : JOURNAL, 0, 0, "the journal of an interrupted write "
                     "is %s: not followed (remove it if no moeflow wrote it)",
                     what ? what : "too large");
        free(path);
        return NULL;
    }
    path = shown_path(shown, JOURNAL);
    {
        char *text = moe_read_fd(fd, path ? path : JOURNAL, "journal", NULL, err);

        free(path);
        return text;
    }
}

static int recover_locked(int dirfd, const char *shown, struct moe_error *err)
{
    bool absent;
    char *names = read_journal(dirfd, shown, &absent, err);
    int rc = 0;

    if (!names && !absent)
        return -1;
    if (names)
        rc = roll_forward(dirfd, shown, names, err);
    free(names);
    if (rc == 0)
        sweep(dirfd);
    return rc;
}

int moe_atomic_set_recover(int dirfd, const char *shown, struct moe_error *err)
{
    int rc;

    (void)flock(dirfd, LOCK_EX); /* best effort: NFS may have no flock */
    rc = recover_locked(dirfd, shown, err);
    (void)flock(dirfd, LOCK_UN);
    return rc;
}

bool moe_atomic_set_pending(const char *dir)
{
    char *path = moe_path_join(dir, JOURNAL);
    struct stat st;
    bool pending = path && lstat(path, &st) == 0;

    free(path);
    return pending;
}

/* The subfolder of name (contracts/ of contracts/X.json), when it has one. */
static int make_parent(int dirfd, const char *shown, const char *name, struct moe_error *err)
{
    const char *slash = strrchr(name, '/');
    char *sub;
    int rc = 0;

    if (!slash)
        return 0;
    if (!(sub = strndup(name, (size_t)(slash - name))))
        return fail_at(err, shown, name, "cannot write", ENOMEM);
    if (mkdirat(dirfd, sub, 0777) != 0 && errno != EEXIST)
        rc = fail_at(err, shown, sub, "cannot create the folder", errno);
    free(sub);
    return rc;
}

/* Step 1 for file i: whole and on disk before any journal names it. */
static int write_temp(int dirfd, const char *shown, size_t i, const struct moe_set_file *f,
                      struct moe_error *err)
{
    char tmp[48];
    int fd, e;

    temp_name(tmp, sizeof(tmp), i);
    fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                f->mode < 0 ? 0666 : (mode_t)f->mode);
    if (fd < 0)
        return fail_at(err, shown, f->name, "cannot write", errno);
    /* an exact mode whatever the umask: scripts keep their x bits */
    if ((f->mode >= 0 && fchmod(fd, (mode_t)f->mode) != 0) ||
        moe_write_all(fd, f->data, f->len) != 0 || fsync(fd) != 0) {
        e = errno;
        close(fd);
        return fail_at(err, shown, f->name, "cannot write", e);
    }
    return close(fd) == 0 ? 0 : fail_at(err, shown, f->name, "cannot write", errno);
}

/* Every name may be replaced (rule 2) and can be a journal line. */
static int check_names(int dirfd, const char *shown, const struct moe_set_file *files, size_t n,
                       struct moe_error *err)
{
    for (size_t i = 0; i < n; i++) {
        char *path = shown_path(shown, files[i].name);
        int rc;

        if (!path)
            return fail_at(err, shown, files[i].name, "cannot write", ENOMEM);
        if (!files[i].name[0] || strchr(files[i].name, '\n')) {
            moe_error_at(err, path, 0, 0, "cannot write: not a file name");
            rc = -1;
        } else {
            rc = make_parent(dirfd, shown, files[i].name, err);
            if (rc == 0)
                rc = moe_atomic_replaceable(dirfd, files[i].name, path, err);
        }
        free(path);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Steps 1 and 2: the temporaries, then the journal that commits them. */
static int prepare(int dirfd, const char *shown, const struct moe_set_file *files, size_t n,
                   char **names, struct moe_error *err)
{
    const struct moe_atomic_file once = { .mode = 0600, .exact_mode = true, .once = true,
                                          .sync_dir = true };
    struct moe_strbuf j = { 0 };
    char *path;
    int rc;

    for (size_t i = 0; i < n; i++)
        if (write_temp(dirfd, shown, i, &files[i], err) < 0)
            return -1;
    for (size_t i = 0; i < n; i++)
        moe_strbuf_printf(&j, "%s\n", files[i].name);
    if (!(*names = moe_strbuf_take(&j)) || !(path = shown_path(shown, JOURNAL)))
        return fail_at(err, shown, JOURNAL, "cannot write", ENOMEM);
    rc = moe_atomic_write_at(dirfd, JOURNAL, *names, strlen(*names), &once, err);
    if (rc > 0)
        fail_at(err, shown, JOURNAL, "cannot write", EEXIST);
    else if (rc < 0)
        moe_error_locate(err, path, 0, 0);
    free(path);
    return rc == 0 ? 0 : -1;
}

int moe_atomic_set_write(int dirfd, const char *shown, const struct moe_set_file *files,
                         size_t n, struct moe_error *err)
{
    char *names = NULL;
    int rc;

    (void)flock(dirfd, LOCK_EX); /* best effort: NFS may have no flock */
    rc = recover_locked(dirfd, shown, err);
    if (rc == 0 && (rc = check_names(dirfd, shown, files, n, err)) == 0) {
        rc = prepare(dirfd, shown, files, n, &names, err);
        if (rc == 0)
            rc = roll_forward(dirfd, shown, names, err);
        else
            sweep(dirfd); /* nothing was committed: nothing new stays */
    }
    free(names);
    (void)flock(dirfd, LOCK_UN);
    return rc;
}
