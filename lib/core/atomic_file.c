#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/atomic_file_internal.h"
#include "core/readfile.h"
#include "core/strbuf.h"

/* ".NAME.XXXXXXXXXXXX" with random letters, as mkstemp picks them, but
 * relative to a folder descriptor (the contract store never follows the
 * study's path again).  O_EXCL | O_NOFOLLOW make a planted file or symlink
 * of that name a retry, never a write through it. */
static int open_temp(int dirfd, const char *name, mode_t mode, char **tmp)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

    for (int tries = 0; tries < 100; tries++) {
        unsigned char rnd[12];
        char suffix[sizeof(rnd) + 1];
        int fd;

        if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
            return -1;
        for (size_t i = 0; i < sizeof(rnd); i++)
            suffix[i] = letters[rnd[i] % (sizeof(letters) - 1)];
        suffix[sizeof(rnd)] = '\0';
        if (!(*tmp = moe_strdup_printf(".%.200s.%s", name, suffix))) {
            errno = ENOMEM;
            return -1;
        }
        fd = openat(dirfd, *tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
        free(*tmp);
        *tmp = NULL;
    }
    errno = EEXIST;
    return -1;
}

/* The data in fd, on disk, with the mode and time asked for. */
static int fill(int fd, const char *data, size_t len, const struct moe_atomic_file *how)
{
    const struct timespec times[2] = { { .tv_nsec = UTIME_OMIT },
                                       how->mtime ? *how->mtime : (struct timespec){ 0 } };

    if (how->exact_mode && fchmod(fd, how->mode) != 0)
        return -1;
    if (moe_write_all(fd, data, len) != 0)
        return -1;
    /* the time is set last: a write after it would stamp the file anew */
    if (how->mtime && futimens(fd, times) != 0)
        return -1;
    return fsync(fd);
}

/* Gives the temporary file its name: rename over whatever is there, or,
 * for once, a hard link that fails on a taken name (1). */
static int put_in_place(int dirfd, const char *tmp, const char *name, bool once)
{
    if (!once)
        return renameat(dirfd, tmp, dirfd, name) == 0 ? 0 : -1;
    if (linkat(dirfd, tmp, dirfd, name, 0) == 0)
        return 0;
    return errno == EEXIST ? 1 : -1;
}

/* A file written once is first made without a name (O_TMPFILE), so that a
 * writer killed before the link leaves nothing behind; -1 where the file
 * system has no unnamed files (the named temporary file is used then). */
static int link_unnamed(int dirfd, const char *name, const char *data, size_t len,
                        const struct moe_atomic_file *how, int *rc)
{
    char proc[64];
    int fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, how->mode), e;

    if (fd < 0)
        return errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL ? -1 : (*rc = -1, 0);
    *rc = -1;
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd); /* an int always fits */
    if (fill(fd, data, len, how) == 0) {
        if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) == 0)
            *rc = 0;
        else if (errno == EEXIST)
            *rc = 1;
    }
    e = errno;
    close(fd);
    errno = e;
    return 0;
}

const char *moe_atomic_refusal(const struct stat *st)
{
    if (S_ISLNK(st->st_mode))
        return "a symlink";
    if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
        return "a device";
    if (S_ISFIFO(st->st_mode))
        return "a FIFO";
    if (S_ISSOCK(st->st_mode))
        return "a socket";
    if (S_ISDIR(st->st_mode))
        return "a folder";
    if (!S_ISREG(st->st_mode))
        return "not a regular file";
    if (st->st_uid != geteuid())
        return "another user's file";
    return NULL;
}

/* Rule 2 (lib/README.md): name may be replaced only when it is absent or
 * a regular file of the caller's; NULL, else what is there.  rename()
 * itself never writes through anything, but it would put a regular file
 * in place of /dev/null, of a link such as /dev/stdout, or of a file a
 * user kept in a shared folder, as root as readily as not. */
static const char *taken_by(int dirfd, const char *name)
{
    struct stat st;

    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? NULL : "something that cannot be examined";
    return moe_atomic_refusal(&st);
}

int moe_atomic_replaceable(int dirfd, const char *name, const char *shown,
                           struct moe_error *err)
{
    const char *what = taken_by(dirfd, name);

    if (!what)
        return 0;
    moe_error_at(err, shown, 0, 0, "cannot write: %s is there; moeflow replaces only a "
                 "regular file of its own user, never a device, FIFO, symlink or another "
                 "user's file", what);
    errno = EEXIST;
    return -1;
}

/* The named temporary file: 0, 1 (once, name taken), -1 with errno, or -2
 * when only giving it its name failed (the data was fine). */
static int write_named(int dirfd, const char *name, const char *data, size_t len,
                       const struct moe_atomic_file *how)
{
    char *tmp = NULL;
    int fd = open_temp(dirfd, name, how->mode, &tmp), rc = -1, e;

    if (fd >= 0 && fill(fd, data, len, how) == 0) {
        rc = close(fd);
        fd = -1;
        if (rc == 0 && (rc = put_in_place(dirfd, tmp, name, how->once)) < 0)
            rc = -2;
    }
    e = errno;
    if (fd >= 0)
        close(fd);
    /* after a rename the temporary name is gone; after a link or a failure
     * it is removed, so no error leaves it behind */
    if (tmp && (rc != 0 || how->once))
        unlinkat(dirfd, tmp, 0);
    free(tmp);
    errno = e;
    return rc;
}

static int write_at(int dirfd, const char *name, const char *shown, const char *data, size_t len,
                    const struct moe_atomic_file *how, struct moe_error *err)
{
    int rc, e;

    /* once never replaces (link fails on any taken name); else the check
     * comes first, so that a refusal writes nothing at all */
    if (!how->once && moe_atomic_replaceable(dirfd, name, shown, err) < 0)
        return -1;
    if (!how->once || link_unnamed(dirfd, name, data, len, how, &rc) < 0)
        rc = write_named(dirfd, name, data, len, how);
    e = errno;
    if (rc < 0)
        moe_error_at(err, shown, 0, 0, "cannot %s: %s",
                     rc == -1 ? "write" : how->once ? "link" : "replace", strerror(e));
    else if (rc == 0 && how->sync_dir)
        (void)fsync(dirfd); /* best effort: the data itself is on disk already */
    errno = e;
    return rc < 0 ? -1 : rc;
}

int moe_atomic_write_at(int dirfd, const char *name, const char *data, size_t len,
                        const struct moe_atomic_file *how, struct moe_error *err)
{
    return write_at(dirfd, name, name, data, len, how, err);
}

int moe_atomic_write(const char *path, const char *data, size_t len,
                     const struct moe_atomic_file *how, struct moe_error *err)
{
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : NULL;
    int dirfd, rc;

    if (!name[0]) {
        moe_error_at(err, path, 0, 0, "cannot write: not a file name");
        free(dir);
        return -1;
    }
    if (slash && !dir) {
        moe_error_at(err, path, 0, 0, "cannot write: out of memory");
        return -1;
    }
    dirfd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (dirfd < 0) {
        moe_error_at(err, path, 0, 0, "cannot write: %s", strerror(errno));
        return -1;
    }
    rc = write_at(dirfd, name, path, data, len, how, err);
    close(dirfd);
    return rc;
}

/* Why a folder could not be opened: a symlink or any non-folder named as
 * such, else the system's reason. */
static void dir_error(const char *path, const char *dir, int e, struct moe_error *err)
{
    struct stat st;

    const char *what;

    if (lstat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
        moe_error_at(err, path, 0, 0, "cannot write into it: it is %s, not a folder (moeflow "
                     "writes only into a folder it opened itself, never through a symlink)",
                     (what = moe_atomic_refusal(&st)) ? what : "a file");
    else
        moe_error_at(err, path, 0, 0, "cannot open the folder: %s", strerror(e));
}

int moe_output_dir_open(const char *path, struct moe_error *err)
{
    size_t n = strlen(path);
    char *dir;
    int fd = -1;

    /* "out/" would make the kernel follow a symlink named out */
    while (n > 1 && path[n - 1] == '/')
        n--;
    if (n == 0) {
        moe_error_at(err, "-o", 0, 0, "an empty path names no folder");
        return -1;
    }
    if (!(dir = strndup(path, n))) {
        moe_error_at(err, path, 0, 0, "cannot write: out of memory");
        return -1;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        moe_error_at(err, path, 0, 0, "cannot create: %s", strerror(errno));
    else if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        dir_error(path, dir, errno, err);
    free(dir);
    return fd;
}
