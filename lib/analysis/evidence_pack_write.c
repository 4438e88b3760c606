/* The evidence pack's folder, put in place whole or not at all (rule 9 of
 * lib/README.md).  Its files (README.md, pack.json, the plots, index.html)
 * are written into a sibling folder with a
 * fixed name, .NAME.moeflow-new, which then trades places with NAME in one
 * renameat2(RENAME_EXCHANGE): NAME is the old pack or the new one at every
 * instant, and a writer killed at any point leaves at most the sibling,
 * which the next writer removes first.  Where the file system cannot
 * exchange, the old pack moves to .NAME.moeflow-old first; a writer killed
 * between the two renames leaves no NAME, and the next one moves the old
 * pack back before anything else. */
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

#include "analysis/evidence_pack.h"
#include "analysis/evidence_pack_internal.h"
#include "core/readfile.h"
#include "core/strbuf.h"

/* Whether the folder name of pfd (never a symlink) holds a pack's files
 * and nothing else: only then may it be replaced or removed. */
static bool holds_only_a_pack(int pfd, const char *name)
{
    int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *e;
    bool ok = d != NULL;

    while (ok && (e = readdir(d)))
        ok = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
             moe_evidence_pack_file_name(e->d_name);
    if (d)
        closedir(d);
    else if (fd >= 0)
        close(fd);
    return ok;
}

/* The pack folder name of pfd, when it is one: its files, then itself. */
static void remove_pack(int pfd, const char *name)
{
    int fd;
    DIR *d;
    struct dirent *e;
    bool more = true;

    if (!holds_only_a_pack(pfd, name))
        return;
    if ((fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return;
    if (!(d = fdopendir(fd))) {
        close(fd);
        return;
    }
    /* POSIX leaves readdir after an unlink unspecified: read again until
     * a pass finds nothing to remove (a pack holds a few dozen files) */
    for (int pass = 0; more && pass < 8; pass++) {
        more = false;
        rewinddir(d);
        while ((e = readdir(d)))
            if (moe_evidence_pack_file_name(e->d_name))
                more |= unlinkat(fd, e->d_name, 0) == 0;
    }
    closedir(d);
    unlinkat(pfd, name, AT_REMOVEDIR);
}

/* Where a pack goes: its parent folder, opened, and the names in it. */
struct place {
    int pfd;
    char *base, *fresh, *old;
    const char *shown;
};

static void place_free(struct place *p)
{
    if (p->pfd >= 0)
        close(p->pfd);
    free(p->base);
    free(p->fresh);
    free(p->old);
}

static int place_open(const char *dir, struct place *p, struct moe_error *err)
{
    size_t n = strlen(dir);
    const char *slash;
    char *parent;

    *p = (struct place){ .pfd = -1, .shown = dir };
    while (n > 1 && dir[n - 1] == '/')
        n--;
    slash = memrchr(dir, '/', n);
    parent = slash ? strndup(dir, slash == dir ? 1 : (size_t)(slash - dir)) : strdup(".");
    p->base = slash ? strndup(slash + 1, n - (size_t)(slash + 1 - dir)) : strndup(dir, n);
    if (p->base) {
        p->fresh = moe_strdup_printf(".%s.moeflow-new", p->base);
        p->old = moe_strdup_printf(".%s.moeflow-old", p->base);
    }
    if (!parent || !p->fresh || !p->old || !p->base[0] || strcmp(p->base, ".") == 0 ||
        strcmp(p->base, "..") == 0) {
        moe_error_at(err, dir, 0, 0, "cannot write: %s",
                     parent && p->fresh && p->old ? "not a folder name" : "out of memory");
        free(parent);
        return -1;
    }
    p->pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (p->pfd < 0)
        moe_error_at(err, dir, 0, 0, "cannot open the folder it goes in: %s", strerror(errno));
    free(parent);
    return p->pfd < 0 ? -1 : 0;
}

/* What a killed writer left: the old pack moved aside is moved back, a
 * pack never put in place is removed. */
static void recover(const struct place *p)
{
    struct stat st;

    if (fstatat(p->pfd, p->base, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT &&
        holds_only_a_pack(p->pfd, p->old))
        renameat(p->pfd, p->old, p->pfd, p->base);
    remove_pack(p->pfd, p->old);
    remove_pack(p->pfd, p->fresh);
}

/* A file of the fresh folder, which no one else has written into: O_EXCL
 * (never through anything), and no temporary name, so that the folder of
 * a killed writer holds only pack files and the next one removes it. */
static int fresh_file(int dirfd, const char *name, const char *text)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    int rc = fd >= 0 && moe_write_all(fd, text, strlen(text)) == 0 && fsync(fd) == 0 ? 0 : -1;

    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    return rc;
}

/* The rendered plots and index.html into the fresh folder. */
static int fresh_plots(int fd, const struct moe_pack_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fresh_file(fd, files[i].name, files[i].text) < 0)
            return -1;
    return 0;
}

/* The fresh folder with every file, on disk. */
static int fill(const struct place *p, const char *json_text, const char *md,
                const struct moe_pack_file *files, size_t nfiles, struct moe_error *err)
{
    int fd;

    /* 0755 whatever the umask: the pack is for the reviewers */
    if (mkdirat(p->pfd, p->fresh, 0755) != 0 || fchmodat(p->pfd, p->fresh, 0755, 0) != 0 ||
        (fd = openat(p->pfd, p->fresh, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        moe_error_at(err, p->shown, 0, 0, "cannot create a folder beside it: %s",
                     strerror(errno));
        return -1;
    }
    if (fresh_file(fd, "pack.json", json_text) < 0 || fresh_file(fd, "README.md", md) < 0 ||
        fresh_plots(fd, files, nfiles) < 0 || fsync(fd) < 0) {
        moe_error_at(err, p->shown, 0, 0, "cannot write: %s", strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* The two-rename way, where RENAME_EXCHANGE is not supported. */
static int swap_by_two_renames(const struct place *p)
{
    if (renameat(p->pfd, p->base, p->pfd, p->old) != 0)
        return -1;
    if (renameat(p->pfd, p->fresh, p->pfd, p->base) != 0) {
        int e = errno;

        renameat(p->pfd, p->old, p->pfd, p->base);
        errno = e;
        return -1;
    }
    return 0;
}

/* The fresh folder takes the name; a previous pack goes. */
static int put_in_place(const struct place *p, struct moe_error *err)
{
    struct stat st;
    int rc;

    if (fstatat(p->pfd, p->base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        rc = errno == ENOENT ? renameat(p->pfd, p->fresh, p->pfd, p->base) : -1;
    } else if (!S_ISDIR(st.st_mode) || !holds_only_a_pack(p->pfd, p->base)) {
        moe_error_at(err, p->shown, 0, 0, S_ISDIR(st.st_mode)
                     ? "is there and is not an evidence pack (README.md and pack.json, "
                       "nothing else): not replaced"
                     : "is there and is not a folder: not replaced");
        return -1;
    } else {
        rc = renameat2(p->pfd, p->fresh, p->pfd, p->base, RENAME_EXCHANGE);
        if (rc != 0 && (errno == EINVAL || errno == ENOSYS))
            rc = swap_by_two_renames(p);
    }
    if (rc != 0) {
        moe_error_at(err, p->shown, 0, 0, "cannot put the pack in place: %s", strerror(errno));
        return -1;
    }
    fsync(p->pfd);
    remove_pack(p->pfd, p->fresh); /* after the exchange: the old pack */
    remove_pack(p->pfd, p->old);
    return 0;
}

/* pack.json's text (indented, sorted, a final newline), README.md's and
 * the plots'; -1 when out of memory. */
static int render(const json_t *pack, char **json_text, char **md, struct moe_pack_file **files,
                  size_t *nfiles)
{
    char *dump = json_dumps(pack, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
    int plots = moe_evidence_pack_render(pack, files, nfiles);

    *json_text = dump ? moe_strdup_printf("%s\n", dump) : NULL;
    *md = moe_evidence_pack_markdown(pack);
    free(dump);
    return *json_text && *md && plots == 0 ? 0 : -1;
}

int moe_evidence_pack_put(const json_t *pack, const char *dir, struct moe_error *err)
{
    char *json_text, *md;
    struct moe_pack_file *files = NULL;
    size_t nfiles = 0;
    struct place p = { .pfd = -1 };
    int rc = render(pack, &json_text, &md, &files, &nfiles);

    if (rc < 0)
        moe_error_at(err, dir, 0, 0, "cannot write: out of memory");
    else if ((rc = place_open(dir, &p, err)) == 0) {
        (void)flock(p.pfd, LOCK_EX); /* best effort: NFS may have no flock */
        recover(&p);
        rc = fill(&p, json_text, md, files, nfiles, err) == 0 ? put_in_place(&p, err) : -1;
        if (rc < 0)
            remove_pack(p.pfd, p.fresh);
        (void)flock(p.pfd, LOCK_UN);
    }
    place_free(&p);
    free(json_text);
    free(md);
    moe_pack_files_free(files, nfiles);
    return rc;
}

int moe_evidence_pack_write(const char *study, const char *dir,
                            const struct moe_report_opts *opts,
                            const struct moe_pack_trail *trail, struct moe_error *err)
{
    json_t *pack = moe_evidence_pack(study, opts, trail, err);
    char *own = NULL;
    int rc;

    if (!pack)
        return -1;
    if (!dir && !(dir = own = moe_path_join(study, MOE_PACK_DIR))) {
        json_decref(pack);
        moe_error_set(err, "out of memory");
        return -1;
    }
    rc = moe_evidence_pack_put(pack, dir, err);
    free(own);
    json_decref(pack);
    return rc;
}
