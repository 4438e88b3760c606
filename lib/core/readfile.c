#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/readfile.h"
#include "core/strbuf.h"

static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    return "not a plain file";
}

static char *fail(int fd, char *buf, const char *path, const char *what, struct moe_error *err,
                  const char *reason)
{
    moe_error_at(err, path, 0, 0, "%s: %s", what, reason);
    free(buf);
    close(fd);
    return NULL;
}

/* 0 when fd is a regular file (st filled), else -1 with err. */
static int check_regular(int fd, struct stat *st, const char *path, const char *what,
                         struct moe_error *err)
{
    if (fstat(fd, st) != 0) {
        moe_error_at(err, path, 0, 0, "%s: %s", what, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        moe_error_at(err, path, 0, 0, "%s: not a regular file (%s)", what,
                     file_kind(st->st_mode));
        return -1;
    }
    return 0;
}

/* Reads to end of file rather than trusting st_size: /proc reports 0, and a
 * file may grow while it is read. */
char *moe_read_fd(int fd, const char *path, const char *what, size_t *len_out,
                  struct moe_error *err)
{
    char *buf = NULL;
    size_t len = 0, cap;
    struct stat st;

    if (check_regular(fd, &st, path, what, err) != 0) {
        close(fd);
        return NULL;
    }
    /* room for the file, its NUL and one byte more, so that the read which
     * finds the end needs no second allocation */
    cap = st.st_size > 0 && st.st_size <= MOE_READ_FILE_MAX ? (size_t)st.st_size + 2 : 4096;
    for (;;) {
        ssize_t n;

        if (len > (size_t)MOE_READ_FILE_MAX || st.st_size > MOE_READ_FILE_MAX)
            return fail(fd, buf, path, what, err,
                        "too large (at most " MOE_READ_FILE_MAX_TEXT " is read whole)");
        if (len + 1 >= cap || !buf) {
            /* the first allocation is the file's size; each after doubles */
            char *p = moe_grow_array(buf, &cap, buf ? cap + 1 : cap, 1);
            if (!p)
                return fail(fd, buf, path, what, err, "out of memory");
            buf = p;
        }
        n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail(fd, buf, path, what, err, strerror(errno));
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    if (len_out)
        *len_out = len;
    return buf;
}

char *moe_read_file(const char *path, const char *what, size_t *len, struct moe_error *err)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (the plugin
     * reads the user's files inside sbatch and slurmstepd); moe_read_fd
     * then refuses it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

    if (fd < 0) {
        moe_error_at(err, path, 0, 0, "%s: %s", what, strerror(errno));
        return NULL;
    }
    return moe_read_fd(fd, path, what, len, err);
}

int moe_open_regular(const char *path, const char *what, struct moe_error *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), flags;

    if (fd < 0) {
        moe_error_at(err, path, 0, 0, "%s: %s", what, strerror(errno));
        return -1;
    }
    if (check_regular(fd, &st, path, what, err) != 0) {
        close(fd);
        return -1;
    }
    /* A regular file never blocks; clearing the flag keeps stdio and zlib
     * from ever seeing EAGAIN. */
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
        moe_error_at(err, path, 0, 0, "%s: %s", what, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

json_t *moe_read_json(const char *path, const char *what, struct moe_error *err)
{
    size_t len;
    char *text = moe_read_file(path, what, &len, err);
    json_error_t jerr;
    json_t *doc;

    if (!text)
        return NULL;
    /* A key given twice has two meanings (Jansson keeps the last, other
     * readers the first): such a document is refused, as a YAML study is. */
    doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!doc)
        moe_error_at(err, path, jerr.line, jerr.column, "%s: %s", what, jerr.text);
    return doc;
}

int moe_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int moe_replace_file(const char *path, const char *data, size_t len, int mode,
                     struct moe_error *err)
{
    /* An exact mode is set whatever the umask: scripts keep their x bits. */
    const struct moe_atomic_file how = { .mode = mode < 0 ? 0666 : (mode_t)mode,
                                         .exact_mode = mode >= 0 };

    return moe_atomic_write(path, data, len, &how, err);
}
