#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_build.h"
#include "contract/node_facts.h"
#include "contract/node_facts_internal.h"
#include "core/contract_keys.h"
#include "core/readfile.h"
#include "contract/contract_internal.h"

/* Versions NGC-style containers advertise in their environment. */
static const char *const container_vars[] = {
    "CUDA_VERSION", "CUDA_DRIVER_VERSION", "NCCL_VERSION", "CUDNN_VERSION",
    "NVIDIA_PYTORCH_VERSION", "PYTORCH_VERSION", "TRANSFORMER_ENGINE_VERSION",
    "NVIDIA_BUILD_ID", NULL,
};

/* "section.key" paths of the runtime facts, for inheritance. */
static const char *const runtime_paths[][2] = {
    { MOE_CONTRACT_ENVIRONMENT, "driver" },
    { MOE_CONTRACT_ENVIRONMENT, "container" },
    { MOE_CONTRACT_HARDWARE, "gpu_name" },
    { MOE_CONTRACT_HARDWARE, "node_gpus" },
    { MOE_CONTRACT_HARDWARE, "node_topology_digest" },
    { MOE_CONTRACT_HARDWARE, "domain_map_digest" },
};
#define N_RUNTIME_PATHS (sizeof(runtime_paths) / sizeof(runtime_paths[0]))

/* contract.section.key = value (taken), and sources["section.key"] =
 * source; a failure is recorded in b, naming the key. */
static void set_fact(struct moe_jb *b, json_t *contract, const char *section, const char *key,
                     json_t *value, const char *source)
{
    json_t *sources = json_object_get(contract, MOE_CONTRACT_SOURCES);
    char path[128];

    if (!sources) {
        moe_jb_set(b, contract, MOE_CONTRACT_SOURCES, json_object());
        sources = json_object_get(contract, MOE_CONTRACT_SOURCES);
    }
    if (moe_jb_set(b, json_object_get(contract, section), key, value) < 0) {
        moe_jb_within(b, section);
        return;
    }
    /* fits: a section and a key of runtime_paths, 40 bytes at most */
    snprintf(path, sizeof(path), "%s.%s", section, key);
    if (moe_jb_str(b, sources, path, source) < 0)
        moe_jb_within(b, MOE_CONTRACT_SOURCES);
}

static void apply_nvml(struct moe_jb *b, json_t *contract, const struct moe_nvml_report *nvml)
{
    set_fact(b, contract, MOE_CONTRACT_ENVIRONMENT, "driver", json_string(nvml->driver), "nvml");
    set_fact(b, contract, MOE_CONTRACT_HARDWARE, "node_gpus", json_integer(nvml->count), "nvml");
    if (nvml->count > 0)
        set_fact(b, contract, MOE_CONTRACT_HARDWARE, "gpu_name", json_string(nvml->gpus[0].name),
                 "nvml");
}

static void apply_env(struct moe_jb *b, json_t *contract, moe_env_lookup env, void *ctx)
{
    json_t *container = json_object();
    char value[256];

    for (const char *const *v = container_vars; *v; v++)
        if (env(ctx, *v, value, sizeof(value)) == 0)
            moe_jb_str(b, container, *v, value);
    set_fact(b, contract, MOE_CONTRACT_ENVIRONMENT, "container", container, "environment");
}

int moe_node_facts_apply(json_t *contract, hwloc_topology_t topo,
                         const struct moe_nvml_report *nvml, moe_env_lookup env, void *ctx,
                         struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1];
    struct moe_jb b;

    if (moe_contract_check_shape(contract, err) != 0)
        return -1;
    moe_jb_init(&b, err);
    if (nvml)
        apply_nvml(&b, contract, nvml);
    if (env)
        apply_env(&b, contract, env, ctx);
    if (topo && !b.failed) {
        if (moe_topology_digest(topo, digest, err) != 0)
            return -1;
        set_fact(&b, contract, MOE_CONTRACT_HARDWARE, "node_topology_digest",
                 json_string(digest), "hwloc");
    }
    return b.failed ? -1 : 0;
}

json_t *moe_node_facts_gather(hwloc_topology_t topo, const struct moe_nvml_report *nvml,
                              moe_env_lookup env, void *ctx, const char *domain_map,
                              struct moe_error *err)
{
    json_t *facts = json_object();
    struct moe_jb b;

    moe_jb_init(&b, err);
    for (const char *const *sec = moe_contract_sections; *sec; sec++)
        moe_jb_set(&b, facts, *sec, json_object());
    if (!(facts = moe_jb_done(&b, facts)))
        return NULL;
    if (moe_node_facts_apply(facts, topo, nvml, env, ctx, err) == 0 && domain_map &&
        domain_map[0])
        moe_node_facts_domain_map(facts, domain_map, err);
    return facts;
}

int moe_node_facts_inherit(json_t *dst, const json_t *src)
{
    int rc = 0;

    for (size_t i = 0; i < N_RUNTIME_PATHS; i++) {
        json_t *section = json_object_get(dst, runtime_paths[i][0]);
        json_t *value = json_object_get(json_object_get(src, runtime_paths[i][0]),
                                        runtime_paths[i][1]);
        char path[128];
        json_t *source;

        if (!section || !value || json_object_get(section, runtime_paths[i][1]))
            continue;
        rc |= json_object_set(section, runtime_paths[i][1], value);
        /* fits: a section and a key of runtime_paths, 40 bytes at most */
        snprintf(path, sizeof(path), "%s.%s", runtime_paths[i][0], runtime_paths[i][1]);
        source = json_object_get(json_object_get(src, MOE_CONTRACT_SOURCES), path);
        if (source) {
            /* checked: rc collects every set's result */
            if (!json_object_get(dst, MOE_CONTRACT_SOURCES))
                rc |= json_object_set_new(dst, MOE_CONTRACT_SOURCES, json_object());
            rc |= json_object_set(json_object_get(dst, MOE_CONTRACT_SOURCES), path, source);
        }
    }
    return rc ? -1 : 0;
}

int moe_node_facts_domain_map(json_t *contract, const char *path, struct moe_error *err)
{
    char hex[MOE_SHA256_HEX_LEN + 1];
    size_t len = 0;
    char *data = moe_read_file(path, "the NVLink-domain map", &len, err);
    struct moe_jb b;
    int rc = -1;

    moe_jb_init(&b, err);
    if (data && moe_sha256_hex(data, len, hex, err) == 0) {
        set_fact(&b, contract, MOE_CONTRACT_HARDWARE, "domain_map_digest", json_string(hex),
                 "plugstack topology=");
        rc = b.failed ? -1 : 0;
    }
    free(data);
    return rc;
}

static int is_nvidia_gpu(hwloc_obj_t obj)
{
    unsigned cls = obj->attr->pcidev.class_id;
    /* 0x0300 VGA, 0x0302 3D controller (data-centre GPUs) */
    return obj->attr->pcidev.vendor_id == 0x10de && (cls == 0x0300 || cls == 0x0302);
}

static json_t *gpu_summary(struct moe_jb *b, hwloc_topology_t topo)
{
    json_t *gpus = json_array();
    hwloc_obj_t obj = NULL;

    while ((obj = hwloc_get_next_pcidev(topo, obj)) != NULL) {
        hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(topo, obj);
        char busid[32], *cpus = NULL;

        if (!is_nvidia_gpu(obj))
            continue;
        /* fits: four hex numbers of 32 bits, 36 bytes at most */
        snprintf(busid, sizeof(busid), "%04x:%02x:%02x.%01x", obj->attr->pcidev.domain,
                 obj->attr->pcidev.bus, obj->attr->pcidev.dev, obj->attr->pcidev.func);
        if (near && near->cpuset)
            hwloc_bitmap_list_asprintf(&cpus, near->cpuset);
        moe_jb_append(b, gpus, moe_jb_pack(b, "{s:s, s:s}", "busid", busid, "cpus", cpus ? cpus : ""));
        free(cpus);
    }
    return gpus;
}

int moe_topology_digest(hwloc_topology_t topo, char hex[MOE_SHA256_HEX_LEN + 1],
                        struct moe_error *err)
{
    json_t *summary;
    struct moe_jb b;
    int rc;

    moe_jb_init(&b, err);
    summary = moe_jb_pack(&b, "{s:i, s:i, s:i, s:i}", "packages",
                          hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE), "numa",
                          hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE), "cores",
                          hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE), "pus",
                          hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));
    if (summary)
        moe_jb_set(&b, summary, "gpus", gpu_summary(&b, topo));
    moe_jb_within(&b, "node topology");
    if (!(summary = moe_jb_done(&b, summary)))
        return -1;
    rc = moe_contract_digest(summary, hex, err);
    json_decref(summary);
    return rc;
}
