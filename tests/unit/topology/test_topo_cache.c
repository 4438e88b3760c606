/* The per-boot topology cache (lib/topology/topo_cache.c) on real hwloc XML
 * topologies: a fresh cache is a hit; another boot, another hwloc, another
 * GPU set, a damaged file or an unsafe owner or mode is a miss, never
 * trusted.  Each case gets a private directory with its own boot id file and
 * a fake /sys/bus/pci/devices that lists the GPUs of the topology. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/readfile.h"
#include "topology/nodetopo_internal.h"
#include "topology/topo_cache_internal.h"
#include "unit.h"

#define BOOT_A "0f3c6a4e-8d1b-4f7a-9c2e-5b6d7e8f9a01"
#define BOOT_B "7a2b9c1d-3e4f-4a5b-8c6d-1e2f3a4b5c6d"

struct fixture {
    char base[64];
    char boot[128], pci[128], dir[128], file[160];
    struct moe_topo_cache c;
    struct moe_topo_cache_key k;
    struct moe_nodetopo nt;
};

static void data_path(char *buf, size_t len, const char *rel)
{
    const char *src = getenv("MOEFLOW_SRCDIR");

    snprintf(buf, len, "%s/tests/data/topology/%s", src ? src : "..", rel);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void pci_device(struct fixture *f, const char *busid, const char *vendor, const char *class)
{
    char path[256];

    snprintf(path, sizeof(path), "%s/%s", f->pci, busid);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/%s/vendor", f->pci, busid);
    put(path, vendor);
    snprintf(path, sizeof(path), "%s/%s/class", f->pci, busid);
    put(path, class);
}

/* The topology of a real machine, and a fake sysfs listing its GPUs (in
 * reverse, to prove the order does not matter) next to a NIC and an NVIDIA
 * bridge function that are not GPUs. */
static struct fixture *setup(const char *xml)
{
    static struct fixture f;
    struct moe_error err;
    char path[512], bus[MOE_BUSID_MAX];

    memset(&f, 0, sizeof(f));
    moe_error_clear(&err);
    snprintf(f.base, sizeof(f.base), "/tmp/moeflow-test-topocache-XXXXXX");
    assert_non_null(mkdtemp(f.base));
    snprintf(f.boot, sizeof(f.boot), "%s/boot_id", f.base);
    snprintf(f.pci, sizeof(f.pci), "%s/pci", f.base);
    snprintf(f.dir, sizeof(f.dir), "%s/cache", f.base);
    snprintf(f.file, sizeof(f.file), "%s/cache/topology.xml", f.base);
    put(f.boot, BOOT_A "\n");
    assert_int_equal(mkdir(f.pci, 0755), 0);
    data_path(path, sizeof(path), xml);
    assert_int_equal(moe_nodetopo_load(&f.nt, path, &err), 0);
    for (int i = f.nt.ngpus - 1; i >= 0; i--) {
        moe_nodetopo_gpu_busid(&f.nt, i, bus, sizeof(bus));
        pci_device(&f, bus, "0x10de\n", i % 2 ? "0x030200\n" : "0x030000\n");
    }
    pci_device(&f, "0000:ff:00.0", "0x15b3\n", "0x020700\n");
    pci_device(&f, "0000:fe:00.0", "0x10de\n", "0x068000\n");
    moe_topo_cache_defaults(&f.c, f.dir);
    f.c.boot_id_path = f.boot;
    f.c.pci_dir = f.pci;
    f.c.owner = geteuid();
    assert_int_equal(moe_topo_cache_key_now(&f.c, &f.k, &err), 0);
    return &f;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[128];

    moe_nodetopo_free(&f->nt);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->base);
    return system(cmd) == 0 ? 0 : -1;
}

static int setup_g4dn(void **state)
{
    *state = setup("mpibind-g4dnmetal.xml");
    return 0;
}

static int setup_h200(void **state)
{
    *state = setup("h200x2-vm.xml");
    return 0;
}

static void write_ok(struct fixture *f)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (moe_topo_cache_write(&f->c, &f->k, &f->nt, &err) != 0)
        fail_msg("write: %s: %s", err.source, err.text);
}

/* A miss whose reason contains want. */
static void expect_miss(struct fixture *f, const struct moe_topo_cache_key *k, const char *want)
{
    struct moe_nodetopo got;
    struct moe_error why;

    moe_error_clear(&why);
    assert_int_equal(moe_topo_cache_read(&f->c, k, &got, &why), -1);
    if (!strstr(why.text, want))
        fail_msg("reason '%s' lacks '%s'", why.text, want);
    assert_null(got.topo);
}

static void expect_hit(struct fixture *f)
{
    struct moe_nodetopo got;
    struct moe_error why;
    char a[MOE_BUSID_MAX], b[MOE_BUSID_MAX];

    moe_error_clear(&why);
    if (moe_topo_cache_read(&f->c, &f->k, &got, &why) != 0)
        fail_msg("miss: %s: %s", why.source, why.text);
    assert_true(got.this_system);
    assert_int_equal(got.ngpus, f->nt.ngpus);
    for (int i = 0; i < got.ngpus; i++) {
        moe_nodetopo_gpu_busid(&got, i, a, sizeof(a));
        moe_nodetopo_gpu_busid(&f->nt, i, b, sizeof(b));
        assert_string_equal(a, b);
    }
    assert_int_equal(hwloc_get_nbobjs_by_type(got.topo, HWLOC_OBJ_CORE),
                     hwloc_get_nbobjs_by_type(f->nt.topo, HWLOC_OBJ_CORE));
    assert_int_equal(hwloc_get_nbobjs_by_type(got.topo, HWLOC_OBJ_PU),
                     hwloc_get_nbobjs_by_type(f->nt.topo, HWLOC_OBJ_PU));
    assert_int_equal(hwloc_get_nbobjs_by_type(got.topo, HWLOC_OBJ_NUMANODE),
                     hwloc_get_nbobjs_by_type(f->nt.topo, HWLOC_OBJ_NUMANODE));
    /* each GPU keeps its locality: same nearest CPUs */
    for (int i = 0; i < got.ngpus; i++)
        assert_true(hwloc_bitmap_isequal(
            hwloc_get_non_io_ancestor_obj(got.topo, got.gpus[i])->cpuset,
            hwloc_get_non_io_ancestor_obj(f->nt.topo, f->nt.gpus[i])->cpuset));
    moe_nodetopo_free(&got);
}

static void test_key_lists_gpus_only(void **state)
{
    struct fixture *f = *state;

    /* h200x2-vm: two H200s; the NIC and the NVIDIA bridge are left out */
    assert_string_equal(f->k.boot_id, BOOT_A);
    assert_string_equal(f->k.gpus, "0000:00:06.0,0000:00:07.0");
    assert_int_equal(f->k.hwloc_api, hwloc_get_api_version());
}

static void test_write_then_hit(void **state)
{
    struct fixture *f = *state;
    struct stat st;
    char *text, cmd[256];

    write_ok(f);
    assert_int_equal(stat(f->dir, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0755);
    assert_int_equal(stat(f->file, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_int_equal(st.st_uid, geteuid());
    /* a plain hwloc XML with the key in the root's infos */
    text = moe_read_file(f->file, "cache", NULL, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "<topology version=\"2.0\">"));
    assert_non_null(strstr(text, "name=\"MoeflowBootId\" value=\"" BOOT_A "\""));
    free(text);
    expect_hit(f);
    /* a second write replaces the file and leaves no temporary behind */
    write_ok(f);
    expect_hit(f);
    snprintf(cmd, sizeof(cmd), "test \"$(ls -A '%s')\" = topology.xml", f->dir);
    assert_int_equal(system(cmd), 0);
}

static void test_no_cache_yet(void **state)
{
    struct fixture *f = *state;

    expect_miss(f, &f->k, "no cache yet");
    assert_int_equal(mkdir(f->dir, 0755), 0);
    expect_miss(f, &f->k, "no cache yet");
}

static void test_other_boot(void **state)
{
    struct fixture *f = *state;
    struct moe_topo_cache_key now;
    struct moe_error err;

    write_ok(f);
    put(f->boot, BOOT_B "\n");
    moe_error_clear(&err);
    assert_int_equal(moe_topo_cache_key_now(&f->c, &now, &err), 0);
    expect_miss(f, &now, "written in another boot (" BOOT_A ", now " BOOT_B ")");
}

static void test_other_hwloc(void **state)
{
    struct fixture *f = *state;
    struct moe_topo_cache_key now = f->k;

    write_ok(f);
    now.hwloc_api = f->k.hwloc_api + 0x100;
    expect_miss(f, &now, "written by hwloc API");
}

/* The XML's own hwlocVersion must be hwloc's, of this major version: a
 * topology without one (here a hand-converted hwloc 3 file) is not cached
 * usefully. */
static void test_xml_without_hwloc_version(void **state)
{
    struct fixture *f = *state;
    char path[512];
    struct moe_error err;

    moe_nodetopo_free(&f->nt);
    data_path(path, sizeof(path), "hwloc-16amd64-8n2c-cpusets.xml");
    moe_error_clear(&err);
    assert_int_equal(moe_nodetopo_load(&f->nt, path, &err), 0);
    assert_int_equal(f->nt.ngpus, 0);
    f->k.gpus[0] = '\0';
    write_ok(f);
    expect_miss(f, &f->k, "its XML comes from hwloc ''");
}

static void test_other_gpus(void **state)
{
    struct fixture *f = *state;
    struct moe_topo_cache_key now;
    struct moe_error err;
    char cmd[256];

    write_ok(f);
    snprintf(cmd, sizeof(cmd), "rm -r '%s/0000:00:07.0'", f->pci);
    assert_int_equal(system(cmd), 0);
    moe_error_clear(&err);
    assert_int_equal(moe_topo_cache_key_now(&f->c, &now, &err), 0);
    assert_string_equal(now.gpus, "0000:00:06.0");
    expect_miss(f, &now, "written for GPUs [0000:00:06.0,0000:00:07.0], the node has [0000:00:06.0]");
    /* and a live topology that disagrees with sysfs is not cached at all */
    moe_error_clear(&err);
    assert_int_equal(moe_topo_cache_write(&f->c, &now, &f->nt, &err), -1);
    assert_non_null(strstr(err.text, "not cached"));
}

static void truncate_to(const char *path, off_t len)
{
    assert_int_equal(truncate(path, len), 0);
}

static void test_truncated(void **state)
{
    struct fixture *f = *state;
    struct stat st;

    write_ok(f);
    assert_int_equal(stat(f->file, &st), 0);
    truncate_to(f->file, st.st_size - 1); /* only the final newline lost */
    expect_miss(f, &f->k, "damaged: no checksum at its end (truncated?)");
    truncate_to(f->file, st.st_size / 2);
    expect_miss(f, &f->k, "damaged: no checksum");
    truncate_to(f->file, 0);
    expect_miss(f, &f->k, "damaged: no checksum");
}

static void overwrite(const char *path, off_t at, const char *bytes)
{
    int fd = open(path, O_WRONLY);

    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, bytes, strlen(bytes), at), (ssize_t)strlen(bytes));
    close(fd);
}

static void test_corrupt(void **state)
{
    struct fixture *f = *state;
    char *text, *digit, path[512], cmd[1200];
    off_t at;

    write_ok(f);
    text = moe_read_file(f->file, "cache", NULL, NULL);
    assert_non_null(text);
    /* one cpuset digit changed: still well-formed XML, but not what was written */
    digit = strstr(text, "cpuset=\"0x");
    assert_non_null(digit);
    at = digit - text + 10;
    overwrite(f->file, at, text[at] == '1' ? "3" : "1");
    expect_miss(f, &f->k, "damaged: its checksum does not match");
    overwrite(f->file, at, (char[]){ text[at], '\0' });
    expect_hit(f);
    overwrite(f->file, (off_t)strlen(text) / 2, "<<<garbage>>>");
    expect_miss(f, &f->k, "damaged: its checksum does not match");
    free(text);
    /* a valid hwloc XML that moeflow did not write */
    data_path(path, sizeof(path), "h200x2-vm.xml");
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path, f->file);
    assert_int_equal(system(cmd), 0);
    expect_miss(f, &f->k, "damaged: no checksum");
}

/* The mtime the checksum comment records, as a timespec. */
static struct timespec recorded_mtime(const char *file)
{
    char *text = moe_read_file(file, "cache", NULL, NULL), *m;
    struct timespec t = { 0 };
    long long sec = 0;
    long nsec = 0;

    assert_non_null(text);
    m = strstr(text, " mtime=");
    assert_non_null(m);
    assert_int_equal(sscanf(m, " mtime=%20lld.%9ld -->", &sec, &nsec), 2);
    t.tv_sec = (time_t)sec;
    t.tv_nsec = nsec;
    free(text);
    return t;
}

/* A file still at the size and mtime it was written with is taken without
 * its digest (the load that every job step pays): a change hidden behind
 * a restored mtime proves the digest was skipped, and the same change with
 * the mtime a write leaves is caught. */
static void test_digest_skipped_while_unchanged(void **state)
{
    struct fixture *f = *state;
    struct timespec t, times[2];
    struct stat st;
    char *text, *digit;
    off_t at;

    write_ok(f);
    t = recorded_mtime(f->file);
    assert_int_equal(stat(f->file, &st), 0);
    assert_int_equal(st.st_mtim.tv_sec, t.tv_sec);
    assert_int_equal(st.st_mtim.tv_nsec, 0);
    assert_true(t.tv_sec < time(NULL)); /* a second in the past: any write moves it */
    text = moe_read_file(f->file, "cache", NULL, NULL);
    digit = strstr(text, "cpuset=\"0x");
    assert_non_null(digit);
    at = digit - text + 10;
    overwrite(f->file, at, text[at] == '1' ? "3" : "1");
    expect_miss(f, &f->k, "damaged: its checksum does not match");
    times[0] = t;
    times[1] = t;
    assert_int_equal(utimensat(AT_FDCWD, f->file, times, 0), 0);
    expect_hit(f);
    free(text);
}

/* The checksum comment of moeflow 0.1.0, before it held an mtime. */
static void test_older_comment(void **state)
{
    struct fixture *f = *state;
    char *text, *m;

    write_ok(f);
    text = moe_read_file(f->file, "cache", NULL, NULL);
    m = strstr(text, " mtime=");
    assert_non_null(m);
    strcpy(m, " -->\n");
    put(f->file, text);
    expect_miss(f, &f->k, "written by an older moeflow (no mtime in its checksum comment)");
    free(text);
}

static void test_unsafe_modes(void **state)
{
    struct fixture *f = *state;
    struct moe_error err;
    char link[200];

    write_ok(f);
    assert_int_equal(chmod(f->file, 0664), 0);
    expect_miss(f, &f->k, "writable by group or others (mode 0664)");
    assert_int_equal(chmod(f->file, 0646), 0);
    expect_miss(f, &f->k, "writable by group or others");
    assert_int_equal(chmod(f->file, 0644), 0);
    expect_hit(f);
    assert_int_equal(chmod(f->dir, 0775), 0);
    expect_miss(f, &f->k, "writable by group or others (mode 0775)");
    moe_error_clear(&err);
    assert_int_equal(moe_topo_cache_write(&f->c, &f->k, &f->nt, &err), -1);
    assert_non_null(strstr(err.text, "not trusted"));
    assert_int_equal(chmod(f->dir, 0757), 0);
    expect_miss(f, &f->k, "writable by group or others");
    assert_int_equal(chmod(f->dir, 0755), 0);
    /* a symbolic link is not followed, even to a good cache */
    snprintf(link, sizeof(link), "%s/elsewhere.xml", f->dir);
    assert_int_equal(rename(f->file, link), 0);
    assert_int_equal(symlink(link, f->file), 0);
    expect_miss(f, &f->k, "not a regular file");
    /* nor is a directory that is a link */
    assert_int_equal(unlink(f->file), 0);
    assert_int_equal(rename(link, f->file), 0);
    snprintf(link, sizeof(link), "%s/link", f->base);
    assert_int_equal(symlink(f->dir, link), 0);
    f->c.dir = link;
    expect_miss(f, &f->k, "not a directory");
}

static void test_foreign_owner(void **state)
{
    struct fixture *f = *state;
    struct moe_error err;
    struct stat st;

    if (geteuid() != 0)
        MOE_SKIP("needs root: only root can give a file away");
    write_ok(f);
    assert_int_equal(chown(f->file, 65534, 65534), 0);
    expect_miss(f, &f->k, "owned by uid 65534, not 0: not trusted");
    /* the next write replaces it with a file of root's */
    write_ok(f);
    assert_int_equal(stat(f->file, &st), 0);
    assert_int_equal(st.st_uid, 0);
    expect_hit(f);
    /* a directory of someone else's is neither read nor written */
    assert_int_equal(chown(f->dir, 65534, 65534), 0);
    expect_miss(f, &f->k, "owned by uid 65534");
    moe_error_clear(&err);
    assert_int_equal(moe_topo_cache_write(&f->c, &f->k, &f->nt, &err), -1);
    assert_non_null(strstr(err.text, "owned by uid 65534"));
}

/* Only the trusted owner writes: anyone else's file would be refused. */
static void test_write_needs_owner(void **state)
{
    struct fixture *f = *state;
    struct moe_error err;

    f->c.owner = geteuid() + 1;
    moe_error_clear(&err);
    assert_int_equal(moe_topo_cache_write(&f->c, &f->k, &f->nt, &err), -1);
    assert_non_null(strstr(err.text, "writes the cache"));
    assert_int_equal(access(f->dir, F_OK), -1);
}

/* The plugin's path on this machine's live topology (no GPU here): a miss
 * discovers live and writes when allowed; then it hits until the boot id
 * changes. */
static void test_load_live_then_hit(void **state)
{
    struct fixture *f = *state;
    enum moe_topo_cache_outcome how;
    struct moe_nodetopo nt;
    struct moe_error err;
    char note[1024];

    f->c.pci_dir = "/sys/bus/pci/devices";
    moe_error_clear(&err);
    assert_int_equal(moe_topo_cache_load(&f->c, false, &nt, &how, note, sizeof(note), &err), 0);
    assert_int_equal(how, MOE_TOPO_CACHE_LIVE);
    assert_non_null(strstr(note, "no cache yet"));
    assert_true(nt.this_system);
    moe_nodetopo_free(&nt);
    assert_int_equal(access(f->dir, F_OK), -1);

    assert_int_equal(moe_topo_cache_load(&f->c, true, &nt, &how, note, sizeof(note), &err), 0);
    assert_int_equal(how, MOE_TOPO_CACHE_WRITTEN);
    moe_nodetopo_free(&nt);
    assert_int_equal(moe_topo_cache_load(&f->c, true, &nt, &how, note, sizeof(note), &err), 0);
    assert_int_equal(how, MOE_TOPO_CACHE_HIT);
    assert_string_equal(note, "");
    assert_true(nt.this_system);
    assert_int_equal(hwloc_get_nbobjs_by_type(nt.topo, HWLOC_OBJ_PU), sysconf(_SC_NPROCESSORS_CONF));
    moe_nodetopo_free(&nt);

    put(f->boot, BOOT_B "\n");
    assert_int_equal(moe_topo_cache_load(&f->c, true, &nt, &how, note, sizeof(note), &err), 0);
    assert_int_equal(how, MOE_TOPO_CACHE_WRITTEN);
    assert_non_null(strstr(note, "another boot"));
    moe_nodetopo_free(&nt);
    assert_int_equal(moe_topo_cache_load(&f->c, true, &nt, &how, note, sizeof(note), &err), 0);
    assert_int_equal(how, MOE_TOPO_CACHE_HIT);
    moe_nodetopo_free(&nt);

    /* without a boot id there is no key: live, nothing written */
    f->c.boot_id_path = "/nonexistent/boot_id";
    assert_int_equal(moe_topo_cache_load(&f->c, true, &nt, &how, note, sizeof(note), &err), 0);
    assert_int_equal(how, MOE_TOPO_CACHE_LIVE);
    assert_non_null(strstr(note, "no cache key"));
    moe_nodetopo_free(&nt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_key_lists_gpus_only, setup_h200, teardown),
        cmocka_unit_test_setup_teardown(test_write_then_hit, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_no_cache_yet, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_other_boot, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_other_hwloc, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_xml_without_hwloc_version, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_other_gpus, setup_h200, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_digest_skipped_while_unchanged, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_older_comment, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_unsafe_modes, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_owner, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_write_needs_owner, setup_g4dn, teardown),
        cmocka_unit_test_setup_teardown(test_load_live_then_hit, setup_h200, teardown),
    };

    return MOE_RUN_TESTS(tests);
}
