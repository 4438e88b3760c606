#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "contract/contract_check.h"
#include "contract/contract_store.h"
#include "contract/contract_store_internal.h"
#include "core/json_build.h"
#include "core/atomic_file.h"
#include "core/contract_keys.h"
#include "core/json_canon.h"
#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/study_dir.h"
#include "contract/contract_internal.h"


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
 * file and a writer killed mid-way leaves nothing behind
 * (core/atomic_file.h); a record is never replaced.  1 = name taken. */
static int write_once(int dirfd, const char *name, const char *text, struct moe_error *err)
{
    static const struct moe_atomic_file once = { .mode = 0444, .once = true, .sync_dir = true };
    struct moe_error e;
    int rc;

    moe_error_clear(&e);
    rc = moe_atomic_write_at(dirfd, name, text, strlen(text), &once, &e);
    if (rc < 0)
        moe_error_set(err, "%s: %s%s", name, e.text, remedy(errno));
    return rc;
}

/* Rule 3: the seals are digests, not signatures, so they hold only while
 * nobody but the study's owner can rewrite a sealed file, its seal or the
 * folder holding them.  st: of the file or folder shown. */
static int check_sealed_stat(const struct stat *st, const char *shown, uid_t owner,
                             struct moe_error *err)
{
    if (st->st_uid != owner)
        moe_error_set(err, "%s is owned by uid %u, not by the study's owner (uid %u): its seal "
                      "cannot be trusted", shown, (unsigned)st->st_uid, (unsigned)owner);
    else if (st->st_mode & (S_IWGRP | S_IWOTH))
        moe_error_set(err, "%s is writable by others (mode %04o): anyone could rewrite it and "
                      "its seal, so it cannot be trusted; chmod go-w it", shown,
                      (unsigned)(st->st_mode & 07777));
    else
        return 0;
    return -1;
}

/* Every byte of a file: a NUL would end the text that the canonical check
 * and the digest read, so bytes after it would escape both (rule 3).
 * owner: the uid a sealed file must have, writable by nobody else; NULL for
 * a contract file outside a study.  O_NOFOLLOW: a symlink planted in the
 * study is not followed; O_NONBLOCK: nor may a FIFO hang the plugin
 * (moe_read_fd refuses it). */
static char *read_whole(int dirfd, const char *name, const char *shown, const char *what,
                        const uid_t *owner, struct moe_error *err)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    size_t len;
    char *text;

    if (fd < 0) {
        moe_error_at(err, shown, 0, 0, "%s: %s", what,
                     errno == ELOOP ? "is a symlink" : strerror(errno));
        return NULL;
    }
    if (owner && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        check_sealed_stat(&st, shown, *owner, err) != 0) {
        close(fd);
        return NULL;
    }
    if (!(text = moe_read_fd(fd, shown, what, &len, err)))
        return NULL;
    if (strlen(text) != len) {
        moe_error_set(err, "%s holds a NUL byte (byte %zu of %zu): not a file moeflow wrote, "
                      "and what follows it would escape the digest", shown, strlen(text), len);
        free(text);
        return NULL;
    }
    return text;
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

/* The seal is exactly the line seal_as() writes (sha256sum's): the digest
 * first was all that was compared, so a seal with other lines added, or
 * naming another file, passed. */
static int seal_matches(const char *seal, const char *digest, const char *name)
{
    char line[MOE_SHA256_HEX_LEN + 160];

    /* a line too long to build matches nothing */
    return (size_t)snprintf(line, sizeof(line), "%s  %s\n", digest, name) < sizeof(line) &&
           strcmp(seal, line) == 0;
}

/* The .sha256 goes in after the contract: a reader racing a writer waits
 * for it briefly rather than reporting a half-finished freeze. */
static char *read_seal_of(int dfd, const char *name, const char *shown, uid_t owner,
                          struct moe_error *err)
{
    struct timespec pause = { 0, 20 * 1000 * 1000 };
    char seal_name[128], seal_shown[PATH_MAX + 8];

    if (moe_fmt_fixed(seal_name, sizeof(seal_name), err, "%s.sha256", name) != 0 ||
        moe_fmt_fixed(seal_shown, sizeof(seal_shown), err, "%s.sha256", shown) != 0)
        return NULL;
    for (int i = 0; i < 100; i++) {
        if (faccessat(dfd, seal_name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
            return read_whole(dfd, seal_name, seal_shown, "seal", &owner, err);
        nanosleep(&pause, NULL);
    }
    moe_error_set(err, "%s.sha256 is missing: the write was interrupted or the seal was removed",
                  shown);
    return NULL;
}

/* Rule 3's one reader of a sealed contract: name in dfd, read whole, in
 * canonical form, its digest the one in name.sha256 beside it, both the
 * owner's and writable by nobody else (the folder is checked by whoever
 * opened dfd, open_sealed_dir).  edited: what a mismatch means. */
static json_t *load_sealed(int dfd, const char *name, const char *shown, uid_t owner,
                           const char *edited, char digest[MOE_SHA256_HEX_LEN + 1],
                           struct moe_error *err)
{
    char *text = read_whole(dfd, name, shown, "contract", &owner, err), *seal = NULL;
    json_t *doc = text ? parse_canonical(text, shown, digest, err) : NULL;

    free(text);
    if (doc && !(seal = read_seal_of(dfd, name, shown, owner, err))) {
        json_decref(doc);
        doc = NULL;
    } else if (doc && !seal_matches(seal, digest, name)) {
        moe_error_set(err, "%s does not match its .sha256: it was %s (content %.12s…, seal "
                      "%.12s…)", shown, edited, digest, seal);
        json_decref(doc);
        doc = NULL;
    }
    free(seal);
    return doc;
}

/* The study's owner: the uid every sealed file of it must have. */
static int study_owner(const char *study, uid_t *owner, struct moe_error *err)
{
    struct stat st;

    if (stat(study, &st) != 0) {
        moe_error_set(err, "study directory %s: %s", study, strerror(errno));
        return -1;
    }
    *owner = st.st_uid;
    return 0;
}

/* A folder holding sealed files: no symlink, the study owner's, writable by
 * nobody else.  -2 (err untouched) when it does not exist. */
static int open_sealed_dir(const char *path, uid_t owner, struct moe_error *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0 && errno == ENOENT)
        return -2;
    if (fd < 0) {
        moe_error_set(err, "%s: %s", path,
                      errno == ELOOP || errno == ENOTDIR ? "is a symlink or not a directory"
                                                         : strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || check_sealed_stat(&st, path, owner, err) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int seal_as(int dfd, const char *name, const char *digest, struct moe_error *err)
{
    char line[MOE_SHA256_HEX_LEN + 160], seal_name[128];

    if (moe_fmt_fixed(line, sizeof(line), err, "%s  %s\n", digest, name) != 0 ||
        moe_fmt_fixed(seal_name, sizeof(seal_name), err, "%s.sha256", name) != 0)
        return -1;
    return write_once(dfd, seal_name, line, err) < 0 ? -1 : 0;
}

static int seal(int cfd, const char *digest, struct moe_error *err)
{
    return seal_as(cfd, MOE_STUDY_FROZEN_NAME, digest, err);
}

static int freeze_at(int cfd, const json_t *doc, char digest[MOE_SHA256_HEX_LEN + 1],
                     struct moe_error *err)
{
    char *canon = moe_json_canonical(doc), theirs[MOE_SHA256_HEX_LEN + 1];
    json_t *existing;
    int rc = -1;

    if (!canon || moe_sha256_hex(canon, strlen(canon), digest, err) != 0)
        goto out;
    rc = write_once(cfd, MOE_STUDY_FROZEN_NAME, canon, err);
    if (rc == 0)
        rc = seal(cfd, digest, err);
    else if (rc == 1) {
        /* someone froze first: fine if it is the same contract */
        uid_t me = geteuid();
        char *prior = read_whole(cfd, MOE_STUDY_FROZEN_NAME, MOE_STUDY_FROZEN, "contract", &me,
                                 err);
        existing = prior ? parse_canonical(prior, MOE_STUDY_FROZEN, theirs, err) : NULL;
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
    cfd = open_owned_subdir(sfd, MOE_STUDY_CONTRACT_DIR, study, err);
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
    uid_t owner;
    int cfd;

    /* a longer path could not be opened: PATH_MAX bounds it */
    if (moe_fmt_fixed(path, sizeof(path), err, "%s/contract", study) != 0 ||
        check_path_links(study, err) != 0 || study_owner(study, &owner, err) != 0)
        return NULL;
    cfd = open_sealed_dir(path, owner, err);
    if (cfd == -2)
        moe_error_set(err, "%s: %s (freeze the baseline first: --moe-stage=contract)", path,
                      strerror(ENOENT));
    if (cfd < 0)
        return NULL;
    doc = load_sealed(cfd, MOE_STUDY_FROZEN_NAME, MOE_STUDY_FROZEN, owner, "tampered with", digest,
                      err);
    close(cfd);
    return doc;
}

static const char *run_field(const json_t *doc, const char *key)
{
    return json_string_value(json_object_get(json_object_get(doc, MOE_CONTRACT_RUN), key));
}

static bool same_field(const json_t *a, const json_t *b, const char *key)
{
    const char *x = run_field(a, key), *y = run_field(b, key);

    return x && y && strcmp(x, y) == 0;
}

/* runs/<id>/contract.json was there before this task: another task, node
 * or step of the same job (same stage and candidate) is fine, and a torn
 * record of it gets its seal; any other run's record means the job id was
 * used before: 2 with its digest in moved, for the caller to move that
 * run aside (spank_moeflow(8): job ids reused). */
static int recorded_before(int run, const char *run_id, const json_t *doc,
                           char moved[MOE_SHA256_HEX_LEN + 1], struct moe_error *err)
{
    char shown[128], digest[MOE_SHA256_HEX_LEN + 1], *text;
    uid_t me = geteuid();
    json_t *prior;
    int rc = -1;

    /* fits: 83 at most */
    snprintf(shown, sizeof(shown), MOE_STUDY_RUNS "/%.64s/contract.json", run_id);
    text = read_whole(run, "contract.json", shown, "contract", &me, err);
    prior = text ? parse_canonical(text, shown, digest, err) : NULL;
    free(text);
    if (prior && !(same_field(prior, doc, MOE_CONTRACT_RUN_STAGE) &&
                   same_field(prior, doc, MOE_CONTRACT_RUN_CANDIDATE))) {
        memcpy(moved, digest, sizeof(digest));
        rc = 2;
    } else if (prior && seal_as(run, "contract.json", digest, err) == 0) {
        json_decref(prior);
        prior = load_sealed(run, "contract.json", shown, me, "edited after the run", digest, err);
        rc = prior ? 1 : -1;
    }
    json_decref(prior);
    return rc;
}

/* A job id used before: the earlier run's folder (its record and the logs
 * its job copied there) moves whole to runs/<id>.reused-<its record's
 * digest>, so that nothing of it is lost and runs/<id> is this run's
 * alone.  The name follows the record, and no rename replaces a name:
 * when two tasks of the new job both find the old record, one moves it and
 * the other's rename finds the name taken and looks again (0 either way). */
static int move_aside(int runs, const char *run_id, const char *digest, struct moe_error *err)
{
    char aside[160];

    snprintf(aside, sizeof(aside), "%.64s.reused-%.16s", run_id, digest); /* fits: 88 at most */
    if (renameat2(runs, run_id, runs, aside, RENAME_NOREPLACE) == 0 || errno == EEXIST ||
        errno == ENOENT)
        return 0;
    moe_error_set(err, MOE_STUDY_RUNS "/%s holds another run's record (job id %s used before) "
                  "and cannot be moved aside to " MOE_STUDY_RUNS "/%s: %s", run_id, run_id, aside,
                  strerror(errno));
    return -1;
}

/* Writes runs/<id>/contract.json once: 0 written, 1 this run's record was
 * there, 2 another run's record is there (moved holds its digest). */
static int record_once(int runs, const char *study, const char *run_id, const json_t *doc,
                       const char *canon, const char *digest,
                       char moved[MOE_SHA256_HEX_LEN + 1], struct moe_error *err)
{
    int run = open_owned_subdir(runs, run_id, study, err), rc = -1;

    if (run < 0)
        return -1;
    rc = write_once(run, "contract.json", canon, err);
    /* Sealed like the frozen baseline, so that verify notices an edit. */
    if (rc == 0 && seal_as(run, "contract.json", digest, err) < 0)
        rc = -1;
    else if (rc == 1)
        rc = recorded_before(run, run_id, doc, moved, err);
    close(run);
    return rc;
}

int moe_contract_record_run(const char *study, const char *run_id, const json_t *doc,
                            struct moe_error *err)
{
    char *canon = NULL, digest[MOE_SHA256_HEX_LEN + 1], moved[MOE_SHA256_HEX_LEN + 1];
    int sfd, runs = -1, rc = -1;

    sfd = open_study(study, err);
    if (sfd < 0)
        return -1;
    runs = open_owned_subdir(sfd, MOE_STUDY_RUNS, study, err);
    canon = runs >= 0 ? moe_json_canonical(doc) : NULL;
    if (canon && moe_sha256_hex(canon, strlen(canon), digest, err) == 0) {
        /* twice at most: another run's folder is moved aside once */
        rc = record_once(runs, study, run_id, doc, canon, digest, moved, err);
        if (rc == 2)
            rc = move_aside(runs, run_id, moved, err) < 0
                     ? -1
                     : record_once(runs, study, run_id, doc, canon, digest, moved, err);
        if (rc == 2) {
            moe_error_set(err, MOE_STUDY_RUNS
                               "/%s holds another run's record again after it was moved "
                          "aside: job id %s is being used by two jobs at once", run_id, run_id);
            rc = -1;
        }
    }
    free(canon);
    if (runs >= 0)
        close(runs);
    close(sfd);
    return rc;
}

/* A run directory lies at <study>/runs/<id>: its study's owner is the
 * owner of its record. */
json_t *moe_contract_load_run(const char *run_dir, char digest[MOE_SHA256_HEX_LEN + 1],
                              struct moe_error *err)
{
    char shown[PATH_MAX], *study;
    json_t *doc = NULL;
    uid_t owner;
    int dfd, rc;

    if (moe_fmt_fixed(shown, sizeof(shown), err, "%s/contract.json", run_dir) != 0 ||
        check_path_links(run_dir, err) != 0)
        return NULL;
    if (!(study = moe_path_join(run_dir, "../.."))) {
        moe_error_set(err, "%s: out of memory", run_dir);
        return NULL;
    }
    rc = study_owner(study, &owner, err);
    free(study);
    if (rc != 0)
        return NULL;
    dfd = open_sealed_dir(run_dir, owner, err);
    if (dfd == -2)
        moe_error_set(err, "%s: %s", run_dir, strerror(ENOENT));
    if (dfd < 0)
        return NULL;
    doc = load_sealed(dfd, "contract.json", shown, owner, "edited after the run", digest, err);
    close(dfd);
    return doc;
}

/* ---- winners: sealed like run records ---- */

/* 1 when run_dir is <study>/runs/<id>: a winner comes from this study's
 * own run records, not from another study's. */
static int run_of_study(const char *study, const char *run_dir)
{
    char rs[PATH_MAX], rr[PATH_MAX], runs[PATH_MAX + 8];
    char *slash;

    if (!realpath(study, rs) || !realpath(run_dir, rr) || !(slash = strrchr(rr, '/')))
        return 0;
    *slash = '\0';
    /* realpath's results are below PATH_MAX, so runs always fits */
    return (size_t)snprintf(runs, sizeof(runs), "%s/" MOE_STUDY_RUNS, strcmp(rs, "/") == 0 ? "" : rs) <
               sizeof(runs) && strcmp(rr, runs) == 0;
}

/* The retune run at run_dir, without its "run" part, when `contract
 * verify` accepts it (moe_contract_check_run, rule 3); NULL with err for
 * anything else (a contract-stage run's contract is the baseline). */
static json_t *winning_run(const char *study, const char *run_dir, struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1];
    struct moe_run_check c;
    const char *stage;
    bool checked;
    json_t *doc;

    if (!run_of_study(study, run_dir)) {
        moe_error_set(err, "%s is not a run record of %s (STUDY/" MOE_STUDY_RUNS
                           "/ID)", run_dir, study);
        return NULL;
    }
    if (!(doc = moe_contract_load_run(run_dir, digest, err)))
        return NULL;
    stage = run_field(doc, MOE_CONTRACT_RUN_STAGE);
    if (!stage || strcmp(stage, "retune") != 0) {
        moe_error_set(err, "%s ran the %s stage: only a retune run can win", run_dir,
                      stage ? stage : "unknown");
        json_decref(doc);
        return NULL;
    }
    json_decref(doc);
    doc = NULL;
    checked = moe_contract_check_run(run_dir, &c, err) == 0;
    if (checked && !c.verdict.allowed)
        moe_error_set(err, "%s: contract verify refuses it by rule %s (%s): only a run the "
                      "rules allow can win", run_dir, c.verdict.rule, c.verdict.reason);
    else if (checked) {
        doc = json_incref(c.record);
        json_object_del(doc, MOE_CONTRACT_RUN);
    }
    moe_run_check_free(&c);
    return doc;
}

/* name (already there) holds exactly canon: a second recording of the same
 * winner, or a file someone else put in its place. */
static int same_file(int wfd, const char *name, const char *canon, struct moe_error *err)
{
    uid_t me = geteuid();
    char *text = read_whole(wfd, name, name, "winner", &me, err);
    int same = text && strcmp(text, canon) == 0;

    if (text && !same)
        moe_error_set(err, MOE_STUDY_WINNERS "/%s exists and is not this winner: remove it", name);
    free(text);
    return same ? 0 : -1;
}

/* <digest>.json, then its seal, each written once in a folder that only
 * the user can write; 1 when the winner was there already (its seal is
 * added if it lacks one: a winner recorded before winners were sealed). */
static int write_winner(int wfd, const json_t *doc, char *name, size_t len,
                        struct moe_error *err)
{
    char *canon = moe_json_canonical(doc), digest[MOE_SHA256_HEX_LEN + 1], *seal = NULL;
    int rc = -1;

    if (!canon || moe_sha256_hex(canon, strlen(canon), digest, err) != 0)
        goto out;
    if (moe_fmt_fixed(name, len, err, "%s.json", digest) != 0)
        goto out;
    rc = write_once(wfd, name, canon, err);
    if (rc == 1 && same_file(wfd, name, canon, err) < 0)
        rc = -1;
    if (rc >= 0 && seal_as(wfd, name, digest, err) < 0)
        rc = -1;
    /* a seal that was there already must be this one */
    if (rc >= 0 && (!(seal = read_seal_of(wfd, name, name, geteuid(), err)) ||
                    !seal_matches(seal, digest, name))) {
        if (seal)
            moe_error_set(err, MOE_STUDY_WINNERS "/%s.sha256 does not match it: remove both", name);
        rc = -1;
    }
out:
    free(seal);
    free(canon);
    return rc;
}

int moe_contract_record_winner(const char *study, const char *run_dir, char *path, size_t len,
                               struct moe_error *err)
{
    char name[MOE_SHA256_HEX_LEN + 8];
    json_t *doc;
    int sfd, wfd, rc = -1;

    if (geteuid() == 0) {
        moe_error_set(err, "refusing to record winners as root: they belong to the job user");
        return -1;
    }
    /* as freeze: no world-writable study, no winners/ anyone else can write */
    if ((sfd = open_study(study, err)) < 0)
        return -1;
    doc = winning_run(study, run_dir, err);
    wfd = doc ? open_owned_subdir(sfd, MOE_STUDY_WINNERS, study, err) : -1;
    if (wfd >= 0) {
        rc = write_winner(wfd, doc, name, sizeof(name), err);
        /* recorded, but a caller's path cut short would name another file */
        if (rc >= 0 && moe_fmt_fixed(path, len, err, "%s/" MOE_STUDY_WINNERS
                                                     "/%s", study, name) != 0)
            rc = -1;
        close(wfd);
    }
    json_decref(doc);
    close(sfd);
    return rc;
}

/* One run directory's record, when `contract verify` accepts it as a
 * retune run (moe_contract_check_run): its digest without "run" -> its
 * "run" part, added to out.  Records of other stages are skipped before
 * their seal is waited for. */
static void add_retune_run(int runs, const char *study, const char *id, json_t *out,
                           struct moe_jb *b)
{
    char digest[MOE_SHA256_HEX_LEN + 1], *text = NULL, *path;
    struct moe_error ignored;
    struct moe_run_check c = { 0 };
    json_t *doc = NULL, *run;
    int dfd = openat(runs, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    moe_error_clear(&ignored);
    if (dfd < 0)
        return;
    text = read_whole(dfd, "contract.json", id, "contract", NULL, &ignored);
    close(dfd);
    doc = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    path = doc && run_field(doc, MOE_CONTRACT_RUN_STAGE) &&
                   strcmp(run_field(doc, MOE_CONTRACT_RUN_STAGE), "retune") == 0
               ? moe_strdup_printf("%s/" MOE_STUDY_RUNS "/%s", study, id)
               : NULL;
    json_decref(doc);
    if (path && moe_contract_check_run(path, &c, &ignored) == 0 && c.verdict.allowed) {
        run = json_incref(json_object_get(c.record, MOE_CONTRACT_RUN));
        json_object_del(c.record, MOE_CONTRACT_RUN);
        /* a run that could not be added is a failure, not a winner
         * refused later as unrecorded */
        if (moe_contract_digest(c.record, digest, &ignored) == 0 && !json_object_get(out, digest) &&
            moe_jb_copy(b, out, digest, run) < 0)
            moe_jb_within(b, id);
        json_decref(run);
    }
    moe_run_check_free(&c);
    free(path);
}

/* digest (without "run") -> "run" part of every run record that `contract
 * verify` accepts as a retune run. */
static json_t *accepted_retune_runs(const char *study, uid_t owner, struct moe_error *err)
{
    json_t *out = json_object();
    char *path = moe_path_join(study, MOE_STUDY_RUNS);
    struct dirent *e;
    struct moe_jb b;
    DIR *d;
    int fd = path ? open_sealed_dir(path, owner, err) : -1;

    free(path);
    if (fd == -2)
        return out;
    if (fd < 0 || !(d = fdopendir(fd))) {
        if (fd >= 0)
            close(fd);
        json_decref(out);
        return NULL;
    }
    moe_jb_init(&b, err);
    while (!b.failed && (e = readdir(d)))
        if (e->d_name[0] != '.')
            add_retune_run(dirfd(d), study, e->d_name, out, &b);
    closedir(d);
    if (b.failed)
        moe_jb_within(&b, MOE_STUDY_RUNS);
    return moe_jb_done(&b, out);
}

static int is_winner_name(const char *name)
{
    size_t n = strlen(name);

    if (n != MOE_SHA256_HEX_LEN + 5 || strcmp(name + MOE_SHA256_HEX_LEN, ".json") != 0)
        return 0;
    for (size_t i = 0; i < MOE_SHA256_HEX_LEN; i++)
        if (!strchr("0123456789abcdef", name[i]))
            return 0;
    return 1;
}

/* winners/<name>: read whole, canonical, named by its own digest, sealed,
 * the study owner's, and the contract of a retune run `contract verify`
 * accepts; {"digest", "contract", "run"} or NULL. */
static json_t *load_winner(int wfd, const char *name, const json_t *runs, uid_t owner,
                           struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1], shown[300], *text, *seal = NULL;
    json_t *doc = NULL, *run;

    snprintf(shown, sizeof(shown), MOE_STUDY_WINNERS "/%s", name); /* fits: name is one entry */
    if (!(text = read_whole(wfd, name, shown, "winner", &owner, err)))
        return NULL;
    doc = parse_canonical(text, shown, digest, err);
    free(text);
    if (doc && strncmp(name, digest, MOE_SHA256_HEX_LEN) != 0)
        moe_error_set(err, "%s holds a contract of another digest (%.12s…): not a recorded "
                      "winner", shown, digest);
    else if (doc && (seal = read_seal_of(wfd, name, shown, owner, err)) &&
             !seal_matches(seal, digest, name))
        moe_error_set(err, "%s does not match its .sha256: it was edited after it was recorded",
                      shown);
    else if (seal && !(run = json_object_get(runs, digest)))
        moe_error_set(err, "%s: no sealed retune run record under " MOE_STUDY_RUNS
                           "/ that contract verify "
                      "accepts has this contract: not a recorded winner", shown);
    else if (seal) {
        struct moe_jb b;
        json_t *w = json_object();

        free(seal);
        moe_jb_init(&b, err);
        moe_jb_str(&b, w, "digest", digest);
        moe_jb_set(&b, w, "contract", doc);
        moe_jb_copy(&b, w, MOE_CONTRACT_RUN, run);
        moe_jb_within(&b, shown);
        return moe_jb_done(&b, w);
    }
    free(seal);
    json_decref(doc);
    return NULL;
}

static int winner_entry(const struct dirent *e)
{
    return is_winner_name(e->d_name);
}

/* Every winners/<sha256>.json in file-name order, each one loaded. */
static json_t *load_winners_at(int wfd, const char *study, uid_t owner, struct moe_error *err)
{
    struct dirent **ents = NULL;
    json_t *runs = NULL, *out = json_array(), *w;
    int n = scandirat(wfd, ".", &ents, winner_entry, alphasort);

    if (n < 0) {
        moe_error_set(err, "%s/" MOE_STUDY_WINNERS ": %s", study, strerror(errno));
        json_decref(out);
        return NULL;
    }
    if (n > 0 && !(runs = accepted_retune_runs(study, owner, err)))
        goto fail;
    for (int i = 0; i < n; i++) {
        if (!(w = load_winner(wfd, ents[i]->d_name, runs, owner, err)))
            goto fail;
        if (json_array_append_new(out, w) < 0) { /* checked: out of memory */
            moe_error_set(err, "%s/" MOE_STUDY_WINNERS ": out of memory", study);
            goto fail;
        }
    }
    goto done;
fail:
    json_decref(out);
    out = NULL;
done:
    for (int i = 0; i < n; i++)
        free(ents[i]);
    free(ents);
    json_decref(runs);
    return out;
}

json_t *moe_contract_load_winners(const char *study, struct moe_error *err)
{
    char *path = moe_path_join(study, MOE_STUDY_WINNERS);
    json_t *out;
    uid_t owner;
    int wfd = -1;

    if (!path)
        moe_error_set(err, "%s: out of memory", study);
    else if (check_path_links(study, err) == 0 && study_owner(study, &owner, err) == 0)
        wfd = open_sealed_dir(path, owner, err);
    free(path);
    if (wfd == -2)
        return json_array(); /* no winner recorded yet */
    if (wfd < 0)
        return NULL;
    out = load_winners_at(wfd, study, owner, err);
    close(wfd);
    return out;
}

json_t *moe_contract_load_file(const char *path, struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1];
    char *text = read_whole(AT_FDCWD, path, path, "contract", NULL, err);
    json_t *doc;

    if (!text)
        return NULL;
    doc = parse_canonical(text, path, digest, err);
    free(text);
    return doc;
}

/* ---- decisions: moeflow run's trail, sealed like winners ---- */

/* "NN-STAGE.json": two digits, then a stage name of letters. */
static int is_decision_name(const char *name)
{
    size_t n = strlen(name);

    if (n < 9 || n > 40 || !isdigit((unsigned char)name[0]) ||
        !isdigit((unsigned char)name[1]) || name[2] != '-' || strcmp(name + n - 5, ".json") != 0)
        return 0;
    for (size_t i = 3; i < n - 5; i++)
        if (!islower((unsigned char)name[i]))
            return 0;
    return 1;
}

static int decision_entry(const struct dirent *e)
{
    return is_decision_name(e->d_name);
}

/* A decision is canonical JSON naming its own stage; its "baseline", when
 * it adopts one, has a contract's shape. */
static json_t *parse_decision(const char *text, const char *shown,
                              char digest[MOE_SHA256_HEX_LEN + 1], struct moe_error *err)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &jerr), *base;
    char *canon = doc ? moe_json_canonical(doc) : NULL;
    struct moe_error shape;

    moe_error_clear(&shape);

    if (!doc)
        moe_error_at(err, shown, jerr.line, jerr.column, "not valid JSON: %s", jerr.text);
    else if (!canon || strcmp(canon, text) != 0)
        moe_error_set(err, "%s is not in canonical form: it was edited by hand", shown);
    else if (!json_is_object(doc) || !json_is_string(json_object_get(doc, "stage")))
        moe_error_set(err, "%s names no stage: not a decision moeflow run records", shown);
    else if ((base = json_object_get(doc, "baseline")) &&
             moe_contract_check_shape(base, &shape) != 0)
        moe_error_set(err, "%s: its baseline is not a contract: %s", shown, shape.text);
    else if (moe_sha256_hex(canon, strlen(canon), digest, err) == 0) {
        free(canon);
        return doc;
    }
    free(canon);
    json_decref(doc);
    return NULL;
}

int moe_contract_record_decision(const char *study, const json_t *doc, char *path, size_t len,
                                 struct moe_error *err)
{
    char *canon = moe_json_canonical(doc), digest[MOE_SHA256_HEX_LEN + 1], name[48];
    const char *stage = json_string_value(json_object_get(doc, "stage"));
    struct dirent **ents = NULL;
    int sfd = -1, dfd = -1, n = -1, rc = -1;

    if (!canon || !stage || strlen(stage) > 20 || moe_sha256_hex(canon, strlen(canon), digest, err))
        moe_error_set(err, "a decision must be JSON naming its stage");
    else if ((sfd = open_study(study, err)) >= 0 &&
             (dfd = open_owned_subdir(sfd, MOE_STUDY_DECISIONS, study, err)) >= 0 &&
             (n = scandirat(dfd, ".", &ents, decision_entry, alphasort)) < 0)
        moe_error_set(err, "%s/" MOE_STUDY_DECISIONS ": %s", study, strerror(errno));
    if (n >= 0 && n < 99) {
        snprintf(name, sizeof(name), "%02d-%s.json", n + 1, stage); /* fits: stage <= 20 */
        /* the next number, never a name taken: a second writer fails here */
        rc = write_once(dfd, name, canon, err);
        if (rc == 1)
            moe_error_set(err, "%s/" MOE_STUDY_DECISIONS
                               "/%s exists: another moeflow run recorded a decision "
                          "at the same time", study, name);
        rc = rc == 0 ? seal_as(dfd, name, digest, err) : -1;
        if (rc == 0 && moe_fmt_fixed(path, len, err, "%s/" MOE_STUDY_DECISIONS
                                                     "/%s", study, name) != 0)
            rc = -1;
    } else if (n >= 99) {
        moe_error_set(err, "%s/" MOE_STUDY_DECISIONS " holds 99 decisions: the trail is full", study);
    }
    for (int i = 0; i < n; i++)
        free(ents[i]);
    free(ents);
    if (dfd >= 0)
        close(dfd);
    if (sfd >= 0)
        close(sfd);
    free(canon);
    return rc;
}

/* decisions/<name>: the owner's, read whole, canonical, sealed. */
static json_t *load_decision(int dfd, const char *entry, uid_t owner, struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1], name[48], shown[80], *text, *seal = NULL;
    struct moe_jb b;
    json_t *doc, *out;

    snprintf(name, sizeof(name), "%.40s", entry); /* is_decision_name: 40 at most */
    snprintf(shown, sizeof(shown), MOE_STUDY_DECISIONS "/%s", name); /* fits: name is 40 at most */
    if (!(text = read_whole(dfd, name, shown, "decision", &owner, err)))
        return NULL;
    doc = parse_decision(text, shown, digest, err);
    free(text);
    if (doc && (!(seal = read_seal_of(dfd, name, shown, owner, err)) ||
                !seal_matches(seal, digest, name))) {
        if (seal)
            moe_error_set(err, "%s does not match its .sha256: it was edited after it was "
                          "recorded", shown);
        json_decref(doc);
        doc = NULL;
    }
    free(seal);
    if (!doc)
        return NULL;
    moe_jb_init(&b, err);
    out = json_object();
    moe_jb_str(&b, out, "file", shown);
    moe_jb_str(&b, out, "digest", digest);
    moe_jb_set(&b, out, "decision", doc);
    moe_jb_within(&b, shown);
    return moe_jb_done(&b, out);
}

json_t *moe_contract_load_trail(const char *study, struct moe_error *err)
{
    char *path = moe_path_join(study, MOE_STUDY_DECISIONS);
    struct dirent **ents = NULL;
    json_t *out = NULL, *d;
    uid_t owner;
    int dfd = -1, n = 0;

    if (!path)
        moe_error_set(err, "%s: out of memory", study);
    else if (check_path_links(study, err) == 0 && study_owner(study, &owner, err) == 0)
        dfd = open_sealed_dir(path, owner, err);
    free(path);
    if (dfd == -2)
        return json_array(); /* nothing decided yet */
    if (dfd < 0)
        return NULL;
    if ((n = scandirat(dfd, ".", &ents, decision_entry, alphasort)) < 0)
        moe_error_set(err, "%s/" MOE_STUDY_DECISIONS ": %s", study, strerror(errno));
    else
        out = json_array();
    for (int i = 0; out && i < n; i++) {
        if (!(d = load_decision(dfd, ents[i]->d_name, owner, err))) {
            json_decref(out);
            out = NULL;
        } else if (json_array_append_new(out, d) < 0) { /* checked: out of memory */
            moe_error_set(err, "%s/" MOE_STUDY_DECISIONS ": out of memory", study);
            json_decref(out);
            out = NULL;
        }
    }
    for (int i = 0; i < n; i++)
        free(ents[i]);
    free(ents);
    close(dfd);
    return out;
}
