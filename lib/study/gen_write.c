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

#include "core/manifest.h"
#include "core/readfile.h"
#include "core/shquote.h"
#include "study/gen_write.h"

static int write_file(const char *dir, const struct moe_gen_file *f, struct moe_error *err)
{
    char path[4400];
    int fd;

    snprintf(path, sizeof(path), "%.4096s/%s", dir, f->name);
    if (strchr(f->name, '/')) {
        /* one level of subfolder (contracts/, fit-python/) */
        char sub[4200];
        snprintf(sub, sizeof(sub), "%.4096s/%.*s", dir, (int)(strchr(f->name, '/') - f->name),
                 f->name);
        if (mkdir(sub, 0755) < 0 && errno != EEXIST) {
            moe_error_at(err, sub, 0, 0, "cannot create: %s", strerror(errno));
            return -1;
        }
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f->mode);
    if (fd < 0 || write(fd, f->data, f->len) != (ssize_t)f->len) {
        moe_error_at(err, path, 0, 0, "cannot write: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* The umask must not strip the execute bits of the scripts. */
    if (fchmod(fd, (mode_t)f->mode) < 0 || close(fd) < 0) {
        moe_error_at(err, path, 0, 0, "cannot write: %s", strerror(errno));
        return -1;
    }
    return 0;
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

static void remove_tree(const char *dir, const struct moe_gen_output *out)
{
    char path[4400];

    for (int i = 0; i < out->n; i++) {
        snprintf(path, sizeof(path), "%.4096s/%s", dir, out->files[i].name);
        unlink(path);
    }
    /* then the subfolders the files were in (contracts/, fit-python/) */
    for (int i = 0; i < out->n; i++) {
        const char *slash = strchr(out->files[i].name, '/');
        if (slash) {
            snprintf(path, sizeof(path), "%.4096s/%.*s", dir, (int)(slash - out->files[i].name),
                     out->files[i].name);
            rmdir(path);
        }
    }
    snprintf(path, sizeof(path), "%.4096s/logs", dir);
    rmdir(path);
    rmdir(dir);
}

int moe_gen_write_new(const char *dir, const struct moe_gen_output *out, struct moe_error *err)
{
    char tmp[4200], logs[4300];
    struct stat st;

    if (lstat(dir, &st) == 0) {
        moe_error_at(err, dir, 0, 0, "already exists; remove it or choose another -o");
        return -1;
    }
    if (strlen(dir) > 4000) {
        moe_error_at(err, dir, 0, 0, "path too long");
        return -1;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", dir);
    if (!mkdtemp(tmp)) {
        moe_error_at(err, dir, 0, 0, "cannot create a temporary directory beside it: %s",
                     strerror(errno));
        return -1;
    }
    chmod(tmp, 0755);
    snprintf(logs, sizeof(logs), "%s/logs", tmp);
    if (mkdir(logs, 0755) < 0) {
        moe_error_at(err, logs, 0, 0, "cannot create: %s", strerror(errno));
        remove_tree(tmp, out);
        return -1;
    }
    for (int i = 0; i < out->n; i++)
        if (write_file(tmp, &out->files[i], err) < 0) {
            remove_tree(tmp, out);
            return -1;
        }
    /* One flush for the whole tree before it becomes visible, instead of a
     * fsync per file: a crash never leaves DIR with empty scripts. */
    if (sync_tree(tmp, err) < 0 || rename(tmp, dir) < 0) {
        if (!err->text[0])
            moe_error_at(err, dir, 0, 0, "cannot rename %s into place: %s", tmp,
                         strerror(errno));
        remove_tree(tmp, out);
        return -1;
    }
    return 0;
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
    char *d1 = strdup(dir), *d2 = strdup(dir), parent[4096];
    int rc = 0;

    if (!d1 || !d2 || !realpath(dirname(d1), parent)) {
        moe_error_at(err, dir, 0, 0, "cannot resolve the parent folder: %s", strerror(errno));
        rc = -1;
    } else {
        snprintf(buf, len, "%s/%s", strcmp(parent, "/") == 0 ? "" : parent, basename(d2));
        rc = sbatch_path(buf, err);
    }
    free(d1);
    free(d2);
    return rc;
}

/* Replaces dir/name whole: a reader sees the old file or the new one, and
 * a symlink planted at the name is replaced, never written through. */
static int replace_file(const char *dir, const char *name, const char *data, size_t len, int mode,
                        struct moe_error *err)
{
    char path[4400];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return moe_replace_file(path, data, len, mode, err);
}

static const struct moe_gen_file *find_out(const struct moe_gen_output *out, const char *name)
{
    for (int i = 0; i < out->n; i++)
        if (strcmp(out->files[i].name, name) == 0)
            return &out->files[i];
    return NULL;
}

/* DIR's manifest.json (where it comes back in) with its validate stage
 * replaced by (or, without one, added from) the one OUT holds. */
static json_t *merged_manifest(const char *dir, const struct moe_gen_plan *plan,
                               const struct moe_gen_output *out, struct moe_error *err)
{
    json_t *mine = moe_manifest_entry(out->manifest, MOE_STAGE_VALIDATE), *merged;
    struct moe_manifest theirs;

    if (moe_manifest_load(dir, &theirs, err) < 0)
        return NULL;
    if (!theirs.study_hash || strcmp(theirs.study_hash, plan->study_hash) != 0) {
        moe_error_at(err, theirs.path, 0, 0, "study_hash: %s was generated from another study "
                     "(or another version of it) than the one given", dir);
        moe_manifest_free(&theirs);
        return NULL;
    }
    merged = json_incref(theirs.json);
    moe_manifest_put_stage(merged, json_incref(mine));
    moe_manifest_free(&theirs);
    return merged;
}

/* The declared contracts of OUT that DIR does not have yet. */
static int add_contracts(const char *dir, const struct moe_gen_output *out, struct moe_error *err)
{
    char path[4400];

    for (int i = 0; i < out->n; i++) {
        const struct moe_gen_file *g = &out->files[i];
        struct stat sb;

        snprintf(path, sizeof(path), "%s/%s", dir, g->name);
        if (strncmp(g->name, "contracts/", 10) == 0 && stat(path, &sb) != 0 &&
            replace_file(dir, g->name, g->data, g->len, g->mode, err) < 0)
            return -1;
    }
    return 0;
}

/* candidates.tsv: the other stages' rows as they were, then validate's. */
static int merge_candidates(const char *dir, const struct moe_gen_plan *plan,
                            struct moe_error *err)
{
    const struct moe_stage_plan *validate = moe_gen_plan_stage(plan, MOE_STAGE_VALIDATE);
    char path[4400], *text = NULL, *old, *line, *save = NULL;
    char *rows = validate ? moe_gen_tsv(validate, 1, false) : NULL;
    size_t len = 0;
    FILE *m;
    int rc;

    snprintf(path, sizeof(path), "%s/candidates.tsv", dir);
    old = moe_read_file(path, "candidates.tsv", NULL, err);
    m = old && rows ? open_memstream(&text, &len) : NULL;
    if (!m) {
        free(old);
        free(rows);
        return -1;
    }
    for (line = strtok_r(old, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (strncmp(line, "validate\t", 9) != 0)
            fprintf(m, "%s\n", line);
    fputs(rows, m);
    fclose(m);
    rc = replace_file(dir, "candidates.tsv", text, len, 0644, err);
    free(text);
    free(rows);
    free(old);
    return rc;
}

static int write_manifest(const char *dir, const json_t *manifest, struct moe_error *err)
{
    char *text = moe_manifest_text(manifest);
    int rc;

    if (!text)
        return -1;
    rc = replace_file(dir, "manifest.json", text, strlen(text), 0644, err);
    free(text);
    return rc;
}

int moe_gen_update_validate(const char *dir, const struct moe_gen_plan *plan,
                            const struct moe_gen_output *out, struct moe_error *err)
{
    json_t *manifest = merged_manifest(dir, plan, out, err);
    const struct moe_gen_file *f = find_out(out, "validate.sbatch");
    int rc = -1;

    if (manifest && add_contracts(dir, out, err) == 0 && f &&
        replace_file(dir, f->name, f->data, f->len, f->mode, err) == 0 &&
        merge_candidates(dir, plan, err) == 0)
        rc = write_manifest(dir, manifest, err);
    json_decref(manifest);
    return rc;
}
