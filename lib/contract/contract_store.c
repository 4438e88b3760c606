#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "contract/contract_store.h"
#include "core/json_canon.h"
#include "core/readfile.h"


/* A symlink on the way is fine when the user or root made it; one owned by
 * anybody else could redirect our writes. */
static int check_path_links(const char *path, struct moe_error *err)
{
    char partial[PATH_MAX];
    size_t len = strlen(path);
    struct stat st;

    if (len >= sizeof(partial)) {
        moe_error_set(err, "%s: path too long", path);
        return -1;
    }
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        memcpy(partial, path, i);
        partial[i] = '\0';
        if (lstat(partial, &st) != 0) {
            moe_error_set(err, "%s: %s", partial, strerror(errno));
            return -1;
        }
        if (S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0) {
            moe_error_set(err, "%s is a symlink owned by uid %u, not by you: refusing to follow it",
                          partial, (unsigned)st.st_uid);
            return -1;
        }
    }
    return 0;
}

static int open_study(const char *study, struct moe_error *err)
{
    struct stat st;
    int fd;

    if (geteuid() == 0) {
        moe_error_set(err, "refusing to write contracts as root: they belong to the job user");
        return -1;
    }
    if (check_path_links(study, err) != 0)
        return -1;
    fd = open(study, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        moe_error_set(err, "study directory %s: %s", study, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || (st.st_mode & S_IWOTH)) {
        moe_error_set(err, "study directory %s is world-writable: anyone could replace its "
                      "contract; chmod o-w it", study);
        close(fd);
        return -1;
    }
    return fd;
}

/* A subdirectory we own and nobody else may write: created if missing. */
/* What the user can do about a failed write, after strerror(). */
static const char *remedy(int e)
{
    switch (e) {
    case EACCES:
    case EPERM:
    case EROFS:
        return ": the job user must be able to write the study directory (check its owner and "
               "mode, or generate the study somewhere you can write), then resubmit";
    case ENOSPC:
    case EDQUOT:
        return ": free space (or quota) on the study's file system, then resubmit; nothing was "
               "written";
    default:
        return "";
    }
}

static int open_owned_subdir(int parent, const char *name, const char *study,
                             struct moe_error *err)
{
    struct stat st;
    int fd;

    if (mkdirat(parent, name, 0755) != 0 && errno != EEXIST) {
        moe_error_set(err, "%s/%s: %s%s", study, name, strerror(errno), remedy(errno));
        return -1;
    }
    fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        moe_error_set(err, "%s/%s: %s", study, name,
                      errno == ELOOP || errno == ENOTDIR ? "is a symlink or not a directory"
                                                         : strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        moe_error_set(err, "%s/%s must be owned by you and writable by nobody else", study, name);
        close(fd);
        return -1;
    }
    return fd;
}

/* The file is complete before it has a name, so a reader never sees a torn
 * file and a writer killed mid-way leaves nothing behind.  1 = name taken. */
static int write_once(int dirfd, const char *name, const char *text, struct moe_error *err)
{
    char proc[64];
    int fd, rc = -1;

    fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0444);
    if (fd < 0) {
        moe_error_set(err, "%s: cannot create a temporary file: %s%s", name, strerror(errno),
                      remedy(errno));
        return -1;
    }
    if (moe_write_all(fd, text, strlen(text)) != 0 || fsync(fd) != 0) {
        moe_error_set(err, "%s: write failed: %s%s", name, strerror(errno), remedy(errno));
        goto out;
    }
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) != 0) {
        if (errno == EEXIST)
            rc = 1;
        else
            moe_error_set(err, "%s: cannot link: %s%s", name, strerror(errno), remedy(errno));
        goto out;
    }
    (void)fsync(dirfd); /* best effort: the data itself is on disk already */
    rc = 0;
out:
    close(fd);
    return rc;
}

static char *read_small(int dirfd, const char *name, const char *what, struct moe_error *err)
{
    /* O_NOFOLLOW: a symlink planted in the study must not be followed;
     * O_NONBLOCK: nor may a FIFO hang the plugin (moe_read_fd refuses it). */
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

    if (fd < 0) {
        moe_error_at(err, name, 0, 0, "%s: %s", what,
                     errno == ELOOP ? "is a symlink" : strerror(errno));
        return NULL;
    }
    return moe_read_fd(fd, name, what, NULL, err);
}

/* Parses a contract file and insists that it is in canonical form, so any
 * edit, even of white space, shows up. */
static json_t *parse_canonical(const char *text, const char *name,
                               char digest[MOE_SHA256_HEX_LEN + 1], struct moe_error *err)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    char *canon;
    int same;

    if (!doc) {
        moe_error_at(err, name, jerr.line, jerr.column, "not valid JSON: %s", jerr.text);
        return NULL;
    }
    canon = moe_json_canonical(doc);
    same = canon && strcmp(text, canon) == 0;
    if (!same || moe_contract_check_shape(doc, err) != 0 ||
        moe_sha256_hex(canon, strlen(canon), digest, err) != 0) {
        if (!same)
            moe_error_set(err, "%s is not in canonical form: it was edited by hand", name);
        free(canon);
        json_decref(doc);
        return NULL;
    }
    free(canon);
    return doc;
}

static int seal_matches(const char *seal, const char *digest)
{
    return strncmp(seal, digest, MOE_SHA256_HEX_LEN) == 0 && seal[MOE_SHA256_HEX_LEN] == ' ';
}

/* The .sha256 goes in after the contract: a reader racing a writer waits
 * for it briefly rather than reporting a half-finished freeze. */
static char *read_seal_of(int dfd, const char *name, const char *shown, struct moe_error *err)
{
    struct timespec pause = { 0, 20 * 1000 * 1000 };
    char seal_name[64];

    snprintf(seal_name, sizeof(seal_name), "%s.sha256", name);
    for (int i = 0; i < 100; i++) {
        if (faccessat(dfd, seal_name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
            return read_small(dfd, seal_name, "seal", err);
        nanosleep(&pause, NULL);
    }
    moe_error_set(err, "%s.sha256 is missing: the write was interrupted or the seal was removed",
                  shown);
    return NULL;
}

static char *read_seal(int cfd, struct moe_error *err)
{
    return read_seal_of(cfd, "frozen.json", "contract/frozen.json", err);
}

static json_t *load_frozen_at(int cfd, char digest[MOE_SHA256_HEX_LEN + 1], struct moe_error *err)
{
    char *text = read_small(cfd, "frozen.json", "contract", err), *seal = NULL;
    json_t *doc = NULL;

    if (!text)
        return NULL;
    doc = parse_canonical(text, "contract/frozen.json", digest, err);
    if (doc && !(seal = read_seal(cfd, err))) {
        json_decref(doc);
        doc = NULL;
    } else if (doc && !seal_matches(seal, digest)) {
        moe_error_set(err, "contract/frozen.json does not match its .sha256: it was tampered "
                      "with (content %.12s…, seal %.12s…)", digest, seal);
        json_decref(doc);
        doc = NULL;
    }
    free(seal);
    free(text);
    return doc;
}

static int seal_as(int dfd, const char *name, const char *digest, struct moe_error *err)
{
    char line[MOE_SHA256_HEX_LEN + 80], seal_name[64];

    snprintf(line, sizeof(line), "%s  %s\n", digest, name);
    snprintf(seal_name, sizeof(seal_name), "%s.sha256", name);
    return write_once(dfd, seal_name, line, err) < 0 ? -1 : 0;
}

static int seal(int cfd, const char *digest, struct moe_error *err)
{
    return seal_as(cfd, "frozen.json", digest, err);
}

static int freeze_at(int cfd, const json_t *doc, char digest[MOE_SHA256_HEX_LEN + 1],
                     struct moe_error *err)
{
    char *canon = moe_json_canonical(doc), theirs[MOE_SHA256_HEX_LEN + 1];
    json_t *existing;
    int rc = -1;

    if (!canon || moe_sha256_hex(canon, strlen(canon), digest, err) != 0)
        goto out;
    rc = write_once(cfd, "frozen.json", canon, err);
    if (rc == 0)
        rc = seal(cfd, digest, err);
    else if (rc == 1) {
        /* someone froze first: fine if it is the same contract */
        char *prior = read_small(cfd, "frozen.json", "contract", err);
        existing = prior ? parse_canonical(prior, "contract/frozen.json", theirs, err) : NULL;
        free(prior);
        if (!existing)
            rc = -1;
        else if (strcmp(theirs, digest) != 0) {
            moe_error_set(err, "a different contract is already frozen (%.12s…); this run's is "
                          "%.12s…: run 'moeflow contract diff' to see why", theirs, digest);
            rc = -1;
        } else if (seal(cfd, digest, err) != 0)
            rc = -1;
        json_decref(existing);
    }
out:
    free(canon);
    return rc;
}

int moe_contract_freeze(const char *study, const json_t *doc,
                        char digest[MOE_SHA256_HEX_LEN + 1], struct moe_error *err)
{
    int sfd, cfd, rc = -1;

    if (moe_contract_check_shape(doc, err) != 0)
        return -1;
    sfd = open_study(study, err);
    if (sfd < 0)
        return -1;
    cfd = open_owned_subdir(sfd, "contract", study, err);
    if (cfd >= 0) {
        rc = freeze_at(cfd, doc, digest, err);
        close(cfd);
    }
    close(sfd);
    return rc;
}

json_t *moe_contract_load_frozen(const char *study, char digest[MOE_SHA256_HEX_LEN + 1],
                                 struct moe_error *err)
{
    char path[PATH_MAX];
    json_t *doc;
    int cfd;

    snprintf(path, sizeof(path), "%s/contract", study);
    if (check_path_links(study, err) != 0)
        return NULL;
    cfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0) {
        moe_error_set(err, "%s: %s (freeze the baseline first: --moe-stage=contract)", path,
                      strerror(errno));
        return NULL;
    }
    doc = load_frozen_at(cfd, digest, err);
    close(cfd);
    return doc;
}

int moe_contract_record_run(const char *study, const char *run_id, const json_t *doc,
                            struct moe_error *err)
{
    char *canon = NULL, digest[MOE_SHA256_HEX_LEN + 1];
    int sfd, runs = -1, run = -1, rc = -1;

    sfd = open_study(study, err);
    if (sfd < 0)
        return -1;
    runs = open_owned_subdir(sfd, "runs", study, err);
    if (runs >= 0)
        run = open_owned_subdir(runs, run_id, study, err);
    canon = run >= 0 ? moe_json_canonical(doc) : NULL;
    if (canon && moe_sha256_hex(canon, strlen(canon), digest, err) == 0)
        rc = write_once(run, "contract.json", canon, err);
    /* Sealed like the frozen baseline, so that verify notices an edit. */
    if (rc >= 0 && seal_as(run, "contract.json", digest, err) < 0)
        rc = -1;
    free(canon);
    if (run >= 0)
        close(run);
    if (runs >= 0)
        close(runs);
    close(sfd);
    return rc;
}

json_t *moe_contract_load_run(const char *run_dir, char digest[MOE_SHA256_HEX_LEN + 1],
                              struct moe_error *err)
{
    char shown[PATH_MAX], *text = NULL, *sealtext = NULL;
    json_t *doc = NULL;
    int dfd;

    snprintf(shown, sizeof(shown), "%s/contract.json", run_dir);
    if (check_path_links(run_dir, err) != 0)
        return NULL;
    dfd = open(run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        moe_error_set(err, "%s: %s", run_dir, strerror(errno));
        return NULL;
    }
    text = read_small(dfd, "contract.json", "contract", err);
    if (text)
        doc = parse_canonical(text, shown, digest, err);
    if (doc && !(sealtext = read_seal_of(dfd, "contract.json", shown, err))) {
        json_decref(doc);
        doc = NULL;
    } else if (doc && !seal_matches(sealtext, digest)) {
        moe_error_set(err, "%s does not match its .sha256: it was edited after the run "
                      "(content %.12s…, seal %.12s…)", shown, digest, sealtext);
        json_decref(doc);
        doc = NULL;
    }
    free(sealtext);
    free(text);
    close(dfd);
    return doc;
}

int moe_contract_record_winner(const char *study, const char *run_dir, char *path, size_t len,
                               struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1], dir[PATH_MAX];
    json_t *doc;
    int rc;

    if (geteuid() == 0) {
        moe_error_set(err, "refusing to record winners as root: they belong to the job user");
        return -1;
    }
    doc = moe_contract_load_run(run_dir, digest, err);
    if (!doc)
        return -1;
    json_object_del(doc, "run");
    snprintf(dir, sizeof(dir), "%s/winners", study);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        moe_error_set(err, "%s: %s", dir, strerror(errno));
        json_decref(doc);
        return -1;
    }
    rc = moe_contract_digest(doc, digest, err);
    if (rc == 0) {
        snprintf(path, len, "%s/%s.json", dir, digest);
        rc = moe_contract_write_file(path, doc, err);
    }
    json_decref(doc);
    return rc;
}

json_t *moe_contract_load_file(const char *path, struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1];
    char *text = read_small(AT_FDCWD, path, "contract", err);
    json_t *doc;

    if (!text)
        return NULL;
    doc = parse_canonical(text, path, digest, err);
    free(text);
    return doc;
}

int moe_contract_write_file(const char *path, const json_t *doc, struct moe_error *err)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    char *canon;
    int dfd, rc = -1;

    if (geteuid() == 0) {
        moe_error_set(err, "refusing to write contracts as root: they belong to the job user");
        return -1;
    }
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (check_path_links(dir, err) != 0)
        return -1;
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        moe_error_set(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    canon = moe_json_canonical(doc);
    if (canon)
        rc = write_once(dfd, slash ? slash + 1 : path, canon, err);
    free(canon);
    close(dfd);
    return rc;
}
