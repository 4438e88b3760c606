/* The evidence pack's folder, put in place whole or not at all: both files
 * are written into a new sibling folder (DIR.tmp.XXXXXX, on the same file
 * system), which then takes DIR's name by rename.  A reader sees the old
 * pack or the new one, never half of one; on any error the sibling is
 * removed and nothing new remains. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/evidence_pack.h"
#include "core/atomic_file.h"
#include "core/strbuf.h"

static const char *const pack_files[] = { "README.md", "pack.json", NULL };

static bool is_pack_file(const char *name)
{
    for (const char *const *f = pack_files; *f; f++)
        if (strcmp(*f, name) == 0)
            return true;
    return false;
}

/* The pack's files in dir, then dir; nothing else is ever removed. */
static void remove_pack(const char *dir)
{
    char path[4400];

    for (const char *const *f = pack_files; *f; f++) {
        snprintf(path, sizeof(path), "%s/%s", dir, *f);
        unlink(path);
    }
    rmdir(dir);
}

/* Whether the folder dir holds a pack's files and nothing else: only
 * then may a new pack replace it. */
static bool holds_only_a_pack(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool ok = d != NULL;

    while (ok && (e = readdir(d)))
        ok = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
             is_pack_file(e->d_name);
    if (d)
        closedir(d);
    return ok;
}

static int write_file(const char *dir, const char *name, const char *text,
                      struct moe_error *err)
{
    struct moe_atomic_file how = { .mode = 0666 };
    char *path = moe_path_join(dir, name);
    int rc;

    if (!path) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    rc = moe_atomic_write(path, text, strlen(text), &how, err);
    free(path);
    return rc;
}

/* A previous pack at dir moves aside to old (an empty folder mkdtemp
 * made, which rename replaces), tmp takes dir's name, old goes. */
static int replace_pack(const char *tmp, const char *dir, char *old, struct moe_error *err)
{
    if (!holds_only_a_pack(dir)) {
        moe_error_at(err, dir, 0, 0, "is there and is not an evidence pack (README.md and "
                     "pack.json, nothing else): not replaced");
        return -1;
    }
    if (!mkdtemp(old) || rename(dir, old) < 0) {
        moe_error_at(err, dir, 0, 0, "cannot move the previous pack aside: %s", strerror(errno));
        rmdir(old);
        return -1;
    }
    if (rename(tmp, dir) < 0) {
        moe_error_at(err, dir, 0, 0, "cannot put the pack in place: %s", strerror(errno));
        rename(old, dir);
        return -1;
    }
    remove_pack(old);
    return 0;
}

static int put_in_place(const char *tmp, const char *dir, struct moe_error *err)
{
    struct stat st;
    char *old;
    int rc;

    if (lstat(dir, &st) != 0) {
        if (errno == ENOENT && rename(tmp, dir) == 0)
            return 0;
        moe_error_at(err, dir, 0, 0, "cannot put the pack in place: %s", strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        moe_error_at(err, dir, 0, 0, "is there and is not a folder: not replaced");
        return -1;
    }
    if (!(old = moe_strdup_printf("%s.old.XXXXXX", dir))) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    rc = replace_pack(tmp, dir, old, err);
    free(old);
    return rc;
}

/* pack.json's text (indented, sorted, a final newline) and README.md's;
 * -1 when out of memory. */
static int render(const json_t *pack, char **json_text, char **md)
{
    char *dump = json_dumps(pack, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));

    *json_text = dump ? moe_strdup_printf("%s\n", dump) : NULL;
    *md = moe_evidence_pack_markdown(pack);
    free(dump);
    return *json_text && *md ? 0 : -1;
}

static int write_pack(const json_t *pack, const char *dir, struct moe_error *err)
{
    char *json_text, *md, *tmp = moe_strdup_printf("%s.tmp.XXXXXX", dir);
    int rc = render(pack, &json_text, &md);

    if (rc < 0 || !tmp) {
        moe_error_set(err, "out of memory");
        rc = -1;
    } else if (!mkdtemp(tmp)) {
        moe_error_at(err, dir, 0, 0, "cannot create a folder beside it: %s", strerror(errno));
        rc = -1;
    } else {
        /* mkdtemp's 0700 would keep the pack from the reviewers */
        rc = chmod(tmp, 0755) < 0 ? -1 : 0;
        if (rc < 0)
            moe_error_at(err, tmp, 0, 0, "cannot make it readable: %s", strerror(errno));
        if (rc == 0 && (write_file(tmp, "pack.json", json_text, err) < 0 ||
                        write_file(tmp, "README.md", md, err) < 0 ||
                        put_in_place(tmp, dir, err) < 0))
            rc = -1;
        if (rc < 0)
            remove_pack(tmp);
    }
    free(json_text);
    free(md);
    free(tmp);
    return rc;
}

int moe_evidence_pack_write(const char *study, const char *dir,
                            const struct moe_report_opts *opts, struct moe_error *err)
{
    json_t *pack = moe_evidence_pack(study, opts, err);
    char *own = NULL;
    int rc;

    if (!pack)
        return -1;
    if (!dir && !(dir = own = moe_path_join(study, MOE_PACK_DIR))) {
        json_decref(pack);
        moe_error_set(err, "out of memory");
        return -1;
    }
    rc = write_pack(pack, dir, err);
    free(own);
    json_decref(pack);
    return rc;
}
