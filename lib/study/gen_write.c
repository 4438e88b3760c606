/* Writing a generated study directory.  The files are built in memory by
 * moe_gen_build; here they land on disk. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core/atomic_set.h"
#include "core/manifest.h"
#include "core/readfile.h"
#include "core/shquote.h"
#include "core/strbuf.h"
#include "core/study_dir.h"
#include "study/gen_write.h"
#include "study/stagegen_internal.h"

/* One level of subfolder (contracts/, fit-python/) for name, if it has one. */
static int make_subdir(const char *dir, const char *name, struct moe_error *err)
{
    const char *slash = strchr(name, '/');
    char *sub;
    int rc = 0;

    if (!slash)
        return 0;
    if (!(sub = moe_strdup_printf("%s/%.*s", dir, (int)(slash - name), name))) {
        moe_error_at(err, dir, 0, 0, "out of memory");
        return -1;
    }
    if (mkdir(sub, 0755) < 0 && errno != EEXIST) {
        moe_error_at(err, sub, 0, 0, "cannot create: %s", strerror(errno));
        rc = -1;
    }
    free(sub);
    return rc;
}

/* A fresh file in the new tree: nothing to replace, so O_EXCL, and the
 * whole tree is flushed and renamed into place at once. */
static int write_file(const char *dir, const struct moe_gen_file *f, struct moe_error *err)
{
    char *path = moe_path_join(dir, f->name);
    int fd, rc = -1;

    if (!path) {
        moe_error_at(err, dir, 0, 0, "out of memory");
        return -1;
    }
    if (make_subdir(dir, f->name, err) < 0)
        goto out;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f->mode);
    if (fd < 0 || moe_write_all(fd, f->data, f->len) != 0) {
        moe_error_at(err, path, 0, 0, "cannot write: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        goto out;
    }
    /* The umask must not strip the execute bits of the scripts. */
    if (fchmod(fd, (mode_t)f->mode) < 0 || close(fd) < 0)
        moe_error_at(err, path, 0, 0, "cannot write: %s", strerror(errno));
    else
        rc = 0;
out:
    free(path);
    return rc;
}

static int sync_tree(const char *dir, struct moe_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0 || syncfs(fd) < 0) {
        moe_error_at(err, dir, 0, 0, "cannot flush: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* Best effort: a name that cannot be built (out of memory) stays. */
static void remove_tree(const char *dir, const struct moe_gen_output *out)
{
    char *path;

    for (int i = 0; i < out->n; i++)
        if ((path = moe_path_join(dir, out->files[i].name))) {
            unlink(path);
            free(path);
        }
    /* then the subfolders the files were in (contracts/, fit-python/) */
    for (int i = 0; i < out->n; i++) {
        const char *name = out->files[i].name, *slash = strchr(name, '/');

        if (slash && (path = moe_strdup_printf("%s/%.*s", dir, (int)(slash - name), name))) {
            rmdir(path);
            free(path);
        }
    }
    if ((path = moe_path_join(dir, "logs"))) {
        rmdir(path);
        free(path);
    }
    rmdir(dir);
}

/* DIR.tmp-XXXXXX with its logs/ folder: the tree built before it is named. */
static char *make_temp_tree(const char *dir, struct moe_error *err)
{
    char *tmp = moe_strdup_printf("%s.tmp-XXXXXX", dir), *logs = NULL;

    if (!tmp || !mkdtemp(tmp)) {
        moe_error_at(err, dir, 0, 0, "cannot create a temporary directory beside it: %s",
                     strerror(tmp ? errno : ENOMEM));
        free(tmp);
        return NULL;
    }
    chmod(tmp, 0755);
    if (!(logs = moe_path_join(tmp, "logs")) || mkdir(logs, 0755) < 0) {
        moe_error_at(err, logs ? logs : tmp, 0, 0, "cannot create: %s",
                     strerror(logs ? errno : ENOMEM));
        rmdir(tmp);
        free(tmp);
        tmp = NULL;
    }
    free(logs);
    return tmp;
}

int moe_gen_write_new(const char *dir, const struct moe_gen_output *out, struct moe_error *err)
{
    struct stat st;
    char *tmp;

    if (lstat(dir, &st) == 0) {
        moe_error_at(err, dir, 0, 0, "already exists; remove it or choose another -o");
        return -1;
    }
    if (strlen(dir) > 4000) {
        moe_error_at(err, dir, 0, 0, "path too long");
        return -1;
    }
    if (!(tmp = make_temp_tree(dir, err)))
        return -1;
    for (int i = 0; i < out->n; i++)
        if (write_file(tmp, &out->files[i], err) < 0)
            goto fail;
    /* One flush for the whole tree before it becomes visible, instead of a
     * fsync per file: a crash never leaves DIR with empty scripts. */
    if (sync_tree(tmp, err) < 0 || rename(tmp, dir) < 0) {
        if (!err->text[0])
            moe_error_at(err, dir, 0, 0, "cannot rename %s into place: %s", tmp,
                         strerror(errno));
        goto fail;
    }
    free(tmp);
    return 0;
fail:
    remove_tree(tmp, out);
    free(tmp);
    return -1;
}

/* The path lands in "#SBATCH --moe-study=": sbatch's rule for it
 * (core/shquote.h), told without echoing the path (it may hold the very
 * control character that is refused). */
static int sbatch_path(const char *path, struct moe_error *err)
{
    struct moe_error e;
    char *q;

    moe_error_clear(&e);
    if ((q = moe_sbatch_quote(path, &e))) {
        free(q);
        return 0;
    }
    moe_error_at(err, "-o", 0, 0, "the study directory's absolute path %s",
                 e.text[0] ? e.text : "cannot be quoted: out of memory");
    return -1;
}

int moe_gen_target_path(const char *dir, char *buf, size_t len, struct moe_error *err)
{
    char *d1 = strdup(dir), *d2 = strdup(dir), *parent = NULL;
    int rc = -1;

    if (!d1 || !d2 || !(parent = realpath(dirname(d1), NULL)))
        moe_error_at(err, dir, 0, 0, "cannot resolve the parent folder: %s", strerror(errno));
    else if ((size_t)snprintf(buf, len, "%s/%s", strcmp(parent, "/") == 0 ? "" : parent,
                              basename(d2)) >= len)
        moe_error_at(err, dir, 0, 0, "path too long");
    else
        rc = sbatch_path(buf, err);
    free(parent);
    free(d1);
    free(d2);
    return rc;
}

static const struct moe_gen_file *find_out(const struct moe_gen_output *out, const char *name)
{
    for (int i = 0; i < out->n; i++)
        if (strcmp(out->files[i].name, name) == 0)
            return &out->files[i];
    return NULL;
}

/* DIR's manifest.json (where it comes back in) with each stage of PLAN
 * replaced by (or, without one, added from) the one OUT holds. */
static json_t *merged_manifest(const char *dir, const struct moe_gen_plan *plan,
                               const struct moe_gen_output *out, struct moe_error *err)
{
    struct moe_manifest theirs;
    json_t *merged;

    if (moe_manifest_load(dir, &theirs, err) < 0)
        return NULL;
    if (!theirs.study_hash || strcmp(theirs.study_hash, plan->study_hash) != 0) {
        moe_error_at(err, theirs.path, 0, 0, "study_hash: %s was generated from another study "
                     "(or another version of it) than the one given", dir);
        moe_manifest_free(&theirs);
        return NULL;
    }
    merged = json_incref(theirs.json);
    for (int i = 0; i < plan->n; i++)
        if (moe_manifest_put_stage(merged, json_incref(moe_manifest_entry(
                                               out->manifest, plan->stages[i].stage))) < 0) {
            moe_error_at(err, theirs.path, 0, 0, "stages: the %s entry could not be put in "
                         "place (not generated, no \"stages\" array, or out of memory)",
                         moe_stage_name(plan->stages[i].stage));
            json_decref(merged);
            merged = NULL;
            break;
        }
    moe_manifest_free(&theirs);
    return merged;
}

/* The declared contracts of OUT that DIR does not have yet, added to set. */
static int add_contracts(int dirfd, const struct moe_gen_output *out, struct moe_set_file *set,
                         size_t *n)
{
    for (int i = 0; i < out->n; i++) {
        const struct moe_gen_file *g = &out->files[i];
        struct stat sb;

        if (strncmp(g->name, MOE_STUDY_CONTRACTS "/", 10) != 0)
            continue;
        if (fstatat(dirfd, g->name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
            continue;
        if (errno != ENOENT)
            return -1;
        set[(*n)++] = (struct moe_set_file){ g->name, g->data, g->len, g->mode };
    }
    return 0;
}

static bool planned(const struct moe_gen_plan *plan, const char *line)
{
    for (int i = 0; i < plan->n; i++) {
        const char *name = moe_stage_name(plan->stages[i].stage);
        size_t n = strlen(name);

        if (strncmp(line, name, n) == 0 && line[n] == '\t')
            return true;
    }
    return false;
}

/* candidates.tsv: the other stages' rows as they were, then the planned
 * stages'; NULL with err. */
static char *merged_candidates(const char *dir, const struct moe_gen_plan *plan, size_t *len,
                               struct moe_error *err)
{
    char *path = moe_path_join(dir, "candidates.tsv"), *text = NULL, *old, *line, *save = NULL;
    char *rows = moe_gen_tsv(plan->stages, plan->n, false);
    FILE *m;

    old = path ? moe_read_file(path, "candidates.tsv", NULL, err) : NULL;
    free(path);
    m = old && rows ? open_memstream(&text, len) : NULL;
    if (m) {
        for (line = strtok_r(old, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
            if (!planned(plan, line))
                fprintf(m, "%s\n", line);
        fputs(rows, m);
        if (fclose(m) != 0) {
            free(text);
            text = NULL;
        }
    }
    if (!text && !err->text[0])
        moe_error_at(err, dir, 0, 0, "candidates.tsv: out of memory");
    free(rows);
    free(old);
    return text;
}

int moe_gen_finish_interrupted(const char *dir, struct moe_error *err)
{
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

    if (dirfd < 0) {
        moe_error_at(err, dir, 0, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    rc = moe_atomic_set_recover(dirfd, dir, err);
    close(dirfd);
    return rc;
}

/* The planned stages' scripts, candidates.tsv, manifest.json and the new
 * contracts go in together (core/atomic_set.h): killed at any point, the
 * study is the old one or the new one, never a script of one with the
 * manifest of the other. */
static int put_stages(int dirfd, const char *dir, const struct moe_gen_plan *plan,
                      const struct moe_gen_output *out, const json_t *manifest,
                      struct moe_error *err)
{
    struct moe_set_file *set = calloc((size_t)out->n + (size_t)plan->n + 2, sizeof(*set));
    char *tsv = NULL, *json = moe_manifest_text(manifest);
    size_t n = 0, tsv_len = 0;
    int rc = -1;

    if (!set || !json)
        moe_error_at(err, dir, 0, 0, "cannot write: out of memory");
    else if (add_contracts(dirfd, out, set, &n) < 0)
        moe_error_at(err, dir, 0, 0, MOE_STUDY_CONTRACTS "/: %s", strerror(errno));
    else if ((tsv = merged_candidates(dir, plan, &tsv_len, err))) {
        for (int i = 0; i < plan->n; i++) {
            char name[64];
            const struct moe_gen_file *f;

            /* fits: a stage name and ".sbatch" */
            snprintf(name, sizeof(name), "%s.sbatch", moe_stage_name(plan->stages[i].stage));
            if ((f = find_out(out, name)))
                set[n++] = (struct moe_set_file){ f->name, f->data, f->len, f->mode };
        }
        set[n++] = (struct moe_set_file){ "candidates.tsv", tsv, tsv_len, 0644 };
        set[n++] = (struct moe_set_file){ MOE_STUDY_MANIFEST, json, strlen(json), 0644 };
        rc = moe_atomic_set_write(dirfd, dir, set, n, err);
    }
    free(tsv);
    free(json);
    free(set);
    return rc;
}

int moe_gen_update_stages(const char *dir, const struct moe_gen_plan *plan,
                          const struct moe_gen_output *out, struct moe_error *err)
{
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = -1;
    json_t *manifest = NULL;

    if (dirfd < 0)
        moe_error_at(err, dir, 0, 0, "cannot open: %s", strerror(errno));
    else if (moe_atomic_set_recover(dirfd, dir, err) == 0 &&
             (manifest = merged_manifest(dir, plan, out, err)))
        rc = put_stages(dirfd, dir, plan, out, manifest, err);
    json_decref(manifest);
    if (dirfd >= 0)
        close(dirfd);
    return rc;
}
