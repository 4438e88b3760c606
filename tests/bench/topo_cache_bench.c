/* make bench: what the per-boot topology cache saves each job step on this
 * machine.  Times live hwloc discovery (the reference: what a step paid
 * before the cache) against a cache hit as slurmstepd takes it (key from
 * sysfs, file still as written, so no digest), and a hit whose digest must
 * be checked (the file's mtime moved); and, for the GPU minor map that both
 * pay on a node with GPUs, the driver's /proc files against NVML.  Prints
 * medians and the ratio live / hit.  The cache goes to a private directory owned by the caller.
 *
 *   topo_cache_bench DIR [RUNS] */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "topology/gpuminor.h"
#include "topology/gpuminor_internal.h"
#include "topology/topo_cache.h"
#include "topology/topo_cache_internal.h"
#include "bench.h"

enum what { LIVE, KEY, MINORS_PROC, MINORS_NVML, HIT, HIT_DIGEST };

/* One timed operation; -1 when it did not do what it is named for. */
static double once(enum what w, const struct moe_topo_cache *c, const char *file)
{
    struct moe_nodetopo nt;
    struct moe_topo_cache_key k;
    struct moe_error err;
    enum moe_topo_cache_outcome how = MOE_TOPO_CACHE_LIVE;
    double t0, t;
    int rv;

    moe_error_clear(&err);
    if (w == HIT_DIGEST && utimensat(AT_FDCWD, file, NULL, 0) != 0) /* mtime: now */
        return -1;
    t0 = bench_now_ms(CLOCK_MONOTONIC);
    if (w == LIVE)
        rv = moe_nodetopo_load(&nt, NULL, &err);
    else if (w == KEY)
        rv = moe_topo_cache_key_now(c, &k, &err);
    else if (w == MINORS_PROC || w == MINORS_NVML) {
        struct moe_gpu_minor m[256];
        rv = (w == MINORS_PROC ? moe_gpu_minors_proc("/proc/driver/nvidia", m, 256)
                               : moe_gpu_minors_nvml(m, 256)) < 0;
    }
    else
        rv = moe_topo_cache_load(c, false, &nt, &how, NULL, 0, &err);
    t = (bench_now_ms(CLOCK_MONOTONIC) - t0) * 1e3; /* us */
    if (w == MINORS_NVML && rv != 0)
        return 0; /* no NVML here: nothing to time */
    if (rv != 0 || (w >= HIT && how != MOE_TOPO_CACHE_HIT)) {
        fprintf(stderr, "topo_cache_bench: %s\n", err.text[0] ? err.text : "not a cache hit");
        return -1;
    }
    if (w == LIVE || w >= HIT)
        moe_nodetopo_free(&nt);
    return t;
}

static double timed(enum what w, const struct moe_topo_cache *c, const char *file, int runs)
{
    double *v = calloc((size_t)runs, sizeof(double)), m;

    if (!v)
        return -1;
    for (int i = 0; i < runs; i++)
        if ((v[i] = once(w, c, file)) < 0) {
            free(v);
            return -1;
        }
    m = bench_median(v, runs);
    free(v);
    return m;
}

static int count_pci(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    struct moe_topo_cache c;
    struct moe_nodetopo nt;
    struct moe_topo_cache_key k;
    struct moe_error err;
    enum moe_topo_cache_outcome how;
    char file[4200], note[1024];
    double live, key, hit, digest, proc, nvml;
    struct moe_gpu_minor m[256];
    int runs = argc > 2 ? atoi(argv[2]) : 21;
    struct stat st;

    if (argc < 2 || runs < 1) {
        fprintf(stderr, "usage: topo_cache_bench DIR [RUNS]\n");
        return 2;
    }
    moe_topo_cache_defaults(&c, argv[1]);
    c.owner = geteuid(); /* a private cache: trusted when the caller owns it */
    snprintf(file, sizeof(file), "%s/%s", c.dir, MOE_TOPO_CACHE_FILE);
    moe_error_clear(&err);
    if (moe_topo_cache_load(&c, true, &nt, &how, note, sizeof(note), &err) != 0 ||
        how != MOE_TOPO_CACHE_WRITTEN || moe_topo_cache_key_now(&c, &k, &err) != 0) {
        fprintf(stderr, "topo_cache_bench: cannot write the cache: %s%s\n", err.text, note);
        return 1;
    }
    moe_nodetopo_free(&nt);
    live = timed(LIVE, &c, file, runs);
    key = timed(KEY, &c, file, runs);
    proc = timed(MINORS_PROC, &c, file, runs);
    nvml = timed(MINORS_NVML, &c, file, runs);
    hit = timed(HIT, &c, file, runs);
    digest = timed(HIT_DIGEST, &c, file, runs);
    if (live < 0 || key < 0 || proc < 0 || nvml < 0 || hit < 0 || digest < 0 ||
        stat(file, &st) != 0)
        return 1;
    printf("topology cache: %d runs each, medians; %d PCI functions, GPUs [%s], cache %lld bytes\n",
           runs, count_pci(c.pci_dir), k.gpus, (long long)st.st_size);
    printf("  live hwloc discovery (reference): %9.0f us\n", live);
    printf("  cache key (boot id, sysfs GPUs):  %9.0f us\n", key);
    printf("  GPU minors from /proc (%2d GPUs):   %9.0f us\n",
           moe_gpu_minors_proc("/proc/driver/nvidia", m, 256), proc);
    printf("  GPU minors from NVML (%2d GPUs):    %9.0f us\n", moe_gpu_minors_nvml(m, 256), nvml);
    printf("  cache hit, file as written:       %9.0f us\n", hit);
    printf("  cache hit, digest checked:        %9.0f us\n", digest);
    /* the cache is there to save time: a hit slower than live discovery misses */
    printf("  ratio live / hit: %.1f (target > 1)  %s\n", live / hit, live > hit ? "ok" : "MISSED");
    return live > hit ? 0 : 1;
}
