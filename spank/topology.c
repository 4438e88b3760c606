/* This node's topology, loaded at most once per step in slurmstepd and
 * shared by affinity.c and contract.c.  Without the admin's hwloc_xml= it
 * comes from the per-boot cache (topology/topo_cache.h).  init_post_opt
 * runs as root, before Slurm drops privileges for user_init, so it is the
 * one callback that may (re)write the cache; it never fails the step:
 * cache trouble costs a live discovery and a log line, nothing else. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "plugin.h"
#include "topology/topo_cache.h"

static struct {
    bool tried, loaded;
    struct moe_nodetopo nt;
    struct moe_error err;     /* when tried && !loaded */
} topo;

static void log_outcome(const struct moe_topo_cache *c, enum moe_topo_cache_outcome how,
                        bool as_root, const char *note)
{
    switch (how) {
    case MOE_TOPO_CACHE_HIT:
        slurm_debug(MOE_LOG_PREFIX "node topology from the cache in %s", c->dir);
        break;
    case MOE_TOPO_CACHE_WRITTEN:
        /* once per boot and node, unless something keeps spoiling it */
        slurm_info(MOE_LOG_PREFIX "node topology discovered, cache in %s rewritten (%s)", c->dir,
                   note);
        break;
    case MOE_TOPO_CACHE_LIVE:
        /* As root the cache should have been (re)written: every step now
         * pays a live discovery until the admin fixes what the note says. */
        if (as_root)
            slurm_info(MOE_LOG_PREFIX "node topology discovered live, at every step until this "
                       "is fixed (%s)", note);
        else
            slurm_verbose(MOE_LOG_PREFIX "node topology discovered live (%s)", note);
        break;
    }
}

static void load(void)
{
    struct moe_topo_cache c;
    enum moe_topo_cache_outcome how;
    char note[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 64];
    bool as_root;

    topo.tried = true;
    moe_error_clear(&topo.err);
    if (moe_plugin.config.hwloc_xml[0]) {
        /* the admin's file is used as it is, and read as the job user */
        topo.loaded = moe_nodetopo_load(&topo.nt, moe_plugin.config.hwloc_xml, &topo.err) == 0;
        return;
    }
    moe_topo_cache_defaults(&c, moe_plugin.config.cache_dir);
    /* Only root writes: the cache must be root's to be trusted. */
    as_root = geteuid() == 0;
    topo.loaded = moe_topo_cache_load(&c, as_root, &topo.nt, &how, note, sizeof(note),
                                      &topo.err) == 0;
    if (topo.loaded)
        log_outcome(&c, how, as_root, note);
}

static bool step_has_gpus(spank_t sp)
{
    char gpus[1024];
    spank_err_t rc = spank_getenv(sp, "SLURM_STEP_GPUS", gpus, sizeof(gpus));

    /* a list too long for the buffer still names GPUs */
    if (rc == ESPANK_NOSPACE)
        return true;
    if (rc != ESPANK_SUCCESS || !gpus[0])
        rc = spank_getenv(sp, "CUDA_VISIBLE_DEVICES", gpus, sizeof(gpus));
    if (rc == ESPANK_NOSPACE)
        return true;
    return rc == ESPANK_SUCCESS && gpus[0] && strcmp(gpus, "NoDevFiles") != 0;
}

void moe_topology_prepare(spank_t sp, bool batch)
{
    /* The admin's hwloc_xml= needs no cache; a batch shell or a step
     * without GPUs is never bound (the contract, if any, loads it later). */
    if (topo.tried || moe_plugin.config.hwloc_xml[0] || batch || !step_has_gpus(sp))
        return;
    load();
}

const char *moe_topology_source(void)
{
    const struct moe_plugin_config *cfg = &moe_plugin.config;

    return cfg->hwloc_xml[0] ? cfg->hwloc_xml : cfg->cache_dir[0] ? cfg->cache_dir
                                                                  : MOE_TOPO_CACHE_DIR;
}

const struct moe_nodetopo *moe_topology_get(struct moe_error *err)
{
    if (!topo.tried)
        load();
    if (!topo.loaded) {
        if (err)
            *err = topo.err;
        return NULL;
    }
    return &topo.nt;
}
