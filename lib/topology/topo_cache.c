#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/readfile.h"
#include "core/sha256.h"
#include "core/strbuf.h"
#include "topology/nodetopo_internal.h"
#include "topology/topo_cache_internal.h"

/* Bump when the filters of moe_nodetopo_filters change: an XML written
 * with other filters loads into another tree. */
#define CACHE_FORMAT "1"
#define MAX_GPUS 512
/* The XML is followed by this comment holding its SHA-256 and the file's
 * mtime as written: hwloc's parsers skip it, and a damaged file is caught
 * before hwloc sees it (hwloc 2.9 leaks part of a tree it fails to import).
 * Like git's index, a file whose size and mtime are still those it was
 * written with has not been written to since, so its digest is checked
 * only when they differ: hashing would load libcrypto into every job
 * step, about 1 ms each (tests/bench/launch-overhead.sh). */
#define SUM_OPEN "<!-- moeflow-cache sha256="
#define SUM_MTIME " mtime="
#define SUM_CLOSE " -->\n"
#define SUM_MTIME_LEN 30 /* seconds as 20 digits, '.', 9 digits of ns */

void moe_topo_cache_defaults(struct moe_topo_cache *c, const char *dir)
{
    c->dir = dir && dir[0] ? dir : MOE_TOPO_CACHE_DIR;
    c->boot_id_path = "/proc/sys/kernel/random/boot_id";
    c->pci_dir = "/sys/bus/pci/devices";
    c->owner = 0;
}

static int read_boot_id(const char *path, char *out, size_t len, struct moe_error *err)
{
    size_t n;
    char *text = moe_read_file(path, "boot id", NULL, err);

    if (!text)
        return -1;
    n = strcspn(text, " \t\r\n");
    if (n == 0 || n >= len || strspn(text, "0123456789abcdefABCDEF-") != n) {
        moe_error_at(err, path, 0, 0, "not a boot id");
        free(text);
        return -1;
    }
    memcpy(out, text, n);
    out[n] = '\0';
    free(text);
    return 0;
}

/* A sysfs attribute is a few bytes and a node has hundreds of PCI
 * functions: one read into a stack buffer, no allocation per file.  DEV/NAME
 * is opened relative to the open PCI folder: no path is built that could be
 * cut. */
static int read_attr(int pci, const char *dev, const char *name, char *buf, size_t len)
{
    char rel[NAME_MAX + 16];
    ssize_t n;
    int fd;

    /* fits: dev is one directory entry (NAME_MAX), name one of ours */
    if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", dev, name) >= sizeof(rel))
        return -1;
    fd = openat(pci, rel, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* The test moe_nodetopo applies to hwloc's PCI objects: vendor NVIDIA,
 * base class display. */
static bool sysfs_nvidia_gpu(int pci, const char *dev)
{
    char vendor[32], class[32];

    return read_attr(pci, dev, "vendor", vendor, sizeof(vendor)) == 0 &&
           strtoul(vendor, NULL, 16) == 0x10de &&
           read_attr(pci, dev, "class", class, sizeof(class)) == 0 &&
           (strtoul(class, NULL, 16) >> 16) == 0x03;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, comma-separated; -1 when they do not fit. */
static int join_sorted(char **ids, int n, char *out, size_t len)
{
    size_t off = 0;

    qsort(ids, (size_t)n, sizeof(char *), cmp_str);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        int w = snprintf(out + off, len - off, "%s%s", i ? "," : "", ids[i]);
        if (w < 0 || (size_t)w >= len - off)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

static int pci_gpus(const char *dir, char *out, size_t len, struct moe_error *err)
{
    char *ids[MAX_GPUS];
    struct dirent *e;
    int n = 0, rv = -1;
    DIR *d = opendir(dir);

    if (!d) {
        moe_error_at(err, dir, 0, 0, "cannot list PCI devices: %s", strerror(errno));
        return -1;
    }
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !sysfs_nvidia_gpu(dirfd(d), e->d_name))
            continue;
        if (n == MAX_GPUS || !(ids[n] = strdup(e->d_name))) {
            moe_error_at(err, dir, 0, 0, "more than %d GPUs, or out of memory", MAX_GPUS);
            goto out;
        }
        n++;
    }
    rv = join_sorted(ids, n, out, len);
    if (rv != 0)
        moe_error_at(err, dir, 0, 0, "GPU list too long");
out:
    closedir(d);
    while (n > 0)
        free(ids[--n]);
    return rv;
}

int moe_topo_cache_key_now(const struct moe_topo_cache *c, struct moe_topo_cache_key *k,
                           struct moe_error *err)
{
    memset(k, 0, sizeof(*k));
    k->hwloc_api = hwloc_get_api_version();
    if (read_boot_id(c->boot_id_path, k->boot_id, sizeof(k->boot_id), err) != 0)
        return -1;
    return pci_gpus(c->pci_dir, k->gpus, sizeof(k->gpus), err);
}

/* The GPUs the loaded topology holds, spelt like the key's. */
static int topology_gpus(const struct moe_nodetopo *nt, char *out, size_t len)
{
    char bus[MAX_GPUS][MOE_BUSID_MAX], *ids[MAX_GPUS];

    if (nt->ngpus > MAX_GPUS)
        return -1;
    for (int i = 0; i < nt->ngpus; i++) {
        moe_nodetopo_gpu_busid(nt, i, bus[i], sizeof(bus[i]));
        ids[i] = bus[i];
    }
    return join_sorted(ids, nt->ngpus, out, len);
}

/* Only the owner may have written it: otherwise it could steer every job's
 * binding.  A directory nobody else can write also keeps the file from
 * being swapped between this check and the read. */
static int trusted(const struct moe_topo_cache *c, const char *path, bool dir,
                   struct stat *out, struct moe_error *why)
{
    struct stat own, *st = out ? out : &own;

    if (lstat(path, st) != 0) {
        moe_error_at(why, path, 0, 0, "%s", errno == ENOENT ? "no cache yet" : strerror(errno));
        return -1;
    }
    if (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode)) {
        moe_error_at(why, path, 0, 0, "not a %s (symbolic links are not followed)",
                     dir ? "directory" : "regular file");
        return -1;
    }
    if (st->st_uid != c->owner) {
        moe_error_at(why, path, 0, 0, "owned by uid %u, not %u: not trusted", (unsigned)st->st_uid,
                     (unsigned)c->owner);
        return -1;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        moe_error_at(why, path, 0, 0, "writable by group or others (mode %04o): not trusted",
                     (unsigned)(st->st_mode & 07777));
        return -1;
    }
    return 0;
}

static int file_path(const struct moe_topo_cache *c, char *path, size_t len, struct moe_error *err)
{
    if ((size_t)snprintf(path, len, "%s/%s", c->dir, MOE_TOPO_CACHE_FILE) >= len) {
        moe_error_at(err, c->dir, 0, 0, "cache directory path too long");
        return -1;
    }
    return 0;
}

static const char *root_info(const struct moe_nodetopo *nt, const char *name)
{
    const char *v = hwloc_obj_get_info_by_name(hwloc_get_root_obj(nt->topo), name);

    return v ? v : "";
}

/* Each mismatch names what changed since the cache was written. */
static int check_key(const struct moe_nodetopo *nt, const struct moe_topo_cache_key *k,
                     const char *path, struct moe_error *why)
{
    char api[32], gpus[MOE_TOPO_CACHE_GPUS_MAX];
    const char *version = root_info(nt, "hwlocVersion");

    snprintf(api, sizeof(api), "%#lx", k->hwloc_api); /* fits: 18 at most */
    if (strcmp(root_info(nt, "MoeflowCacheFormat"), CACHE_FORMAT) != 0)
        moe_error_at(why, path, 0, 0, "not a moeflow topology cache of format %s", CACHE_FORMAT);
    else if (strcmp(root_info(nt, "MoeflowBootId"), k->boot_id) != 0)
        moe_error_at(why, path, 0, 0, "written in another boot (%s, now %s)",
                     root_info(nt, "MoeflowBootId"), k->boot_id);
    else if (strcmp(root_info(nt, "MoeflowHwlocApi"), api) != 0)
        moe_error_at(why, path, 0, 0, "written by hwloc API %s, this one is %s",
                     root_info(nt, "MoeflowHwlocApi"), api);
    else if (strtoul(version, NULL, 10) != k->hwloc_api >> 16 || !strchr(version, '.'))
        moe_error_at(why, path, 0, 0, "its XML comes from hwloc '%s', not hwloc %lu.x", version,
                     k->hwloc_api >> 16);
    else if (strcmp(root_info(nt, "MoeflowGpus"), k->gpus) != 0)
        moe_error_at(why, path, 0, 0, "written for GPUs [%s], the node has [%s]",
                     root_info(nt, "MoeflowGpus"), k->gpus);
    else if (topology_gpus(nt, gpus, sizeof(gpus)) != 0 || strcmp(gpus, k->gpus) != 0)
        moe_error_at(why, path, 0, 0, "its topology holds GPUs [%s], the node has [%s]", gpus,
                     k->gpus);
    else
        return 0;
    return -1;
}

static void format_mtime(const struct timespec *t, char out[SUM_MTIME_LEN + 1])
{
    /* fits: 20 digits, a dot and 9 (SUM_MTIME_LEN) */
    snprintf(out, SUM_MTIME_LEN + 1, "%020lld.%09ld", (long long)t->tv_sec, (long)t->tv_nsec);
}

/* The file as written: its size and mtime are those the comment records. */
static bool unchanged(const struct stat *st, size_t len, const char *mtime)
{
    char now[SUM_MTIME_LEN + 1];

    format_mtime(&st->st_mtim, now);
    return (size_t)st->st_size == len && memcmp(now, mtime, SUM_MTIME_LEN) == 0;
}

/* 0 and *len cut to the XML when the checksum comment matches it. */
static int checked_body(const char *text, size_t *len, const struct stat *st, const char *path,
                        struct moe_error *why)
{
    const size_t open = strlen(SUM_OPEN), at_mtime = open + MOE_SHA256_HEX_LEN,
                 at_close = at_mtime + strlen(SUM_MTIME) + SUM_MTIME_LEN;
    char want[MOE_SHA256_HEX_LEN + 1], got[MOE_SHA256_HEX_LEN + 1];
    const char *sum = NULL;
    size_t body;

    for (const char *p = strstr(text, SUM_OPEN); p; p = strstr(p + 1, SUM_OPEN))
        sum = p;
    if (sum && strlen(sum) == at_mtime + strlen(SUM_CLOSE) &&
        strcmp(sum + at_mtime, SUM_CLOSE) == 0) {
        moe_error_at(why, path, 0, 0, "written by an older moeflow (no mtime in its checksum "
                     "comment)");
        return -1;
    }
    if (!sum || strlen(sum) != at_close + strlen(SUM_CLOSE) ||
        strncmp(sum + at_mtime, SUM_MTIME, strlen(SUM_MTIME)) != 0 ||
        strcmp(sum + at_close, SUM_CLOSE) != 0) {
        moe_error_at(why, path, 0, 0, "damaged: no checksum at its end (truncated?)");
        return -1;
    }
    body = (size_t)(sum - text);
    if (!unchanged(st, *len, sum + at_mtime + strlen(SUM_MTIME))) {
        memcpy(want, sum + open, MOE_SHA256_HEX_LEN);
        want[MOE_SHA256_HEX_LEN] = '\0';
        if (moe_sha256_hex(text, body, got, why) != 0)
            return -1;
        if (strcmp(got, want) != 0) {
            moe_error_at(why, path, 0, 0, "damaged: its checksum does not match");
            return -1;
        }
    }
    *len = body;
    return 0;
}

int moe_topo_cache_read(const struct moe_topo_cache *c, const struct moe_topo_cache_key *k,
                        struct moe_nodetopo *nt, struct moe_error *why)
{
    char path[PATH_MAX];
    struct stat st;
    size_t len;
    char *xml;
    int rv;

    memset(nt, 0, sizeof(*nt));
    if (file_path(c, path, sizeof(path), why) != 0 || trusted(c, c->dir, true, NULL, why) != 0 ||
        trusted(c, path, false, &st, why) != 0)
        return -1;
    xml = moe_read_file(path, "topology cache", &len, why);
    if (!xml)
        return -1;
    rv = checked_body(xml, &len, &st, path, why);
    if (rv == 0)
        rv = moe_nodetopo_load_this_xml(nt, xml, len, path, why);
    free(xml);
    if (rv != 0)
        return -1;
    if (check_key(nt, k, path, why) != 0) {
        moe_nodetopo_free(nt);
        return -1;
    }
    return 0;
}

static int ensure_dir(const struct moe_topo_cache *c, struct moe_error *err)
{
    if (mkdir(c->dir, 0755) == 0) {
        /* the umask may have taken bits that readers need */
        if (chmod(c->dir, 0755) != 0) {
            moe_error_at(err, c->dir, 0, 0, "chmod: %s", strerror(errno));
            return -1;
        }
    } else if (errno != EEXIST) {
        moe_error_at(err, c->dir, 0, 0, "cannot create the cache directory: %s", strerror(errno));
        return -1;
    }
    return trusted(c, c->dir, true, NULL, err);
}

/* A reader sees the old cache or the new one, never half of one. */
static int write_file(const char *path, const char *buf, size_t len, const char *tail,
                      const struct timespec *mtime, struct moe_error *err)
{
    const struct moe_atomic_file how = { .mode = 0644, .exact_mode = true, .mtime = mtime };
    struct moe_strbuf text = { 0 };
    struct stat st;
    int rc = -1;

    /* the cache's folder is the trusted owner's alone: another user's file
     * in it is stale and goes (the atomic writer replaces only its own) */
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid != geteuid())
        unlink(path);
    if (moe_strbuf_add(&text, buf, len) != 0 || moe_strbuf_puts(&text, tail) != 0)
        moe_error_at(err, path, 0, 0, "cannot write: out of memory");
    else
        rc = moe_atomic_write(path, text.buf, text.len, &how, err);
    moe_strbuf_free(&text);
    return rc;
}

/* The XML of nt with the key in its root's info attributes (the file stays
 * a plain hwloc XML that lstopo -i reads), written to path. */
static int export_to(const struct moe_nodetopo *nt, const struct moe_topo_cache_key *k,
                     const char *path, struct moe_error *err)
{
    hwloc_topology_t dup;
    hwloc_obj_t root;
    char api[32], hex[MOE_SHA256_HEX_LEN + 1], when[SUM_MTIME_LEN + 1], tail[160], *buf = NULL;
    struct timespec mtime;
    int len = 0, rv;

    if (hwloc_topology_dup(&dup, nt->topo) != 0) {
        moe_error_set(err, "hwloc_topology_dup: %s", strerror(errno));
        return -1;
    }
    root = hwloc_get_root_obj(dup);
    snprintf(api, sizeof(api), "%#lx", k->hwloc_api); /* fits: 18 at most */
    if (hwloc_obj_add_info(root, "MoeflowCacheFormat", CACHE_FORMAT) ||
        hwloc_obj_add_info(root, "MoeflowBootId", k->boot_id) ||
        hwloc_obj_add_info(root, "MoeflowHwlocApi", api) ||
        hwloc_obj_add_info(root, "MoeflowGpus", k->gpus) ||
        hwloc_topology_export_xmlbuffer(dup, &buf, &len, 0) || len < 1) {
        moe_error_set(err, "cannot export the topology as XML: %s", strerror(errno));
        hwloc_topology_destroy(dup);
        return -1;
    }
    /* A whole second in the past: every file system keeps it exactly, and
     * any later write stamps the file with a newer time. */
    clock_gettime(CLOCK_REALTIME, &mtime);
    mtime.tv_sec -= 1;
    mtime.tv_nsec = 0;
    format_mtime(&mtime, when);
    /* the buffer's length counts a final NUL that the file does not need */
    rv = moe_sha256_hex(buf, (size_t)len - 1, hex, err);
    if (rv == 0) {
        /* fits: markers, a digest and a time, under 160 */
        snprintf(tail, sizeof(tail), "%s%s%s%s%s", SUM_OPEN, hex, SUM_MTIME, when, SUM_CLOSE);
        rv = write_file(path, buf, (size_t)len - 1, tail, &mtime, err);
    }
    hwloc_free_xmlbuffer(dup, buf);
    hwloc_topology_destroy(dup);
    return rv;
}

int moe_topo_cache_write(const struct moe_topo_cache *c, const struct moe_topo_cache_key *k,
                         const struct moe_nodetopo *nt, struct moe_error *err)
{
    char path[PATH_MAX], gpus[MOE_TOPO_CACHE_GPUS_MAX];

    if (geteuid() != c->owner) {
        moe_error_at(err, c->dir, 0, 0, "only uid %u writes the cache (this is uid %u)",
                     (unsigned)c->owner, (unsigned)geteuid());
        return -1;
    }
    /* hwloc and sysfs disagreeing would make every read a miss */
    if (topology_gpus(nt, gpus, sizeof(gpus)) != 0 || strcmp(gpus, k->gpus) != 0) {
        moe_error_at(err, c->dir, 0, 0, "hwloc found GPUs [%s], sysfs lists [%s]: not cached",
                     gpus, k->gpus);
        return -1;
    }
    if (file_path(c, path, sizeof(path), err) != 0 || ensure_dir(c, err) != 0)
        return -1;
    return export_to(nt, k, path, err);
}

static void set_note(char *note, size_t len, const char *what, const struct moe_error *e)
{
    char buf[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 8];

    if (note && len)
        /* a message: cut, it still reads and names no file */
        snprintf(note, len, "%s: %s", what, moe_error_format(e, buf, sizeof(buf)));
}

int moe_topo_cache_load(const struct moe_topo_cache *c, bool may_write, struct moe_nodetopo *nt,
                        enum moe_topo_cache_outcome *outcome, char *note, size_t notelen,
                        struct moe_error *err)
{
    struct moe_topo_cache_key k;
    struct moe_error why;
    bool have_key;

    moe_error_clear(&why);
    if (note && notelen)
        note[0] = '\0';
    *outcome = MOE_TOPO_CACHE_LIVE;
    have_key = moe_topo_cache_key_now(c, &k, &why) == 0;
    if (!have_key)
        set_note(note, notelen, "no cache key", &why);
    else if (moe_topo_cache_read(c, &k, nt, &why) == 0) {
        *outcome = MOE_TOPO_CACHE_HIT;
        return 0;
    } else
        set_note(note, notelen, "cache not used", &why);
    if (moe_nodetopo_load(nt, NULL, err) != 0)
        return -1;
    if (!have_key || !may_write)
        return 0;
    moe_error_clear(&why);
    if (moe_topo_cache_write(c, &k, nt, &why) == 0)
        *outcome = MOE_TOPO_CACHE_WRITTEN;
    else
        set_note(note, notelen, "cache not written", &why);
    return 0;
}
