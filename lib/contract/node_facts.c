#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void set_fact(json_t *contract, const char *section, const char *key, json_t *value,
                     const char *source)
{
    json_t *sources = json_object_get(contract, MOE_CONTRACT_SOURCES);
    char path[128];

    if (!sources) {
        sources = json_object();
        json_object_set_new(contract, MOE_CONTRACT_SOURCES, sources);
    }
    json_object_set_new(json_object_get(contract, section), key, value);
    /* fits: a section and a key of runtime_paths, 40 bytes at most */
    snprintf(path, sizeof(path), "%s.%s", section, key);
    json_object_set_new(sources, path, json_string(source));
}

static void apply_nvml(json_t *contract, const struct moe_nvml_report *nvml)
{
    set_fact(contract, MOE_CONTRACT_ENVIRONMENT, "driver", json_string(nvml->driver), "nvml");
    set_fact(contract, MOE_CONTRACT_HARDWARE, "node_gpus", json_integer(nvml->count), "nvml");
    if (nvml->count > 0)
        set_fact(contract, MOE_CONTRACT_HARDWARE, "gpu_name", json_string(nvml->gpus[0].name),
                 "nvml");
}

static void apply_env(json_t *contract, moe_env_lookup env, void *ctx)
{
    json_t *container = json_object();
    char value[256];

    for (const char *const *v = container_vars; *v; v++)
        if (env(ctx, *v, value, sizeof(value)) == 0)
            json_object_set_new(container, *v, json_string(value));
    set_fact(contract, MOE_CONTRACT_ENVIRONMENT, "container", container, "environment");
}

int moe_node_facts_apply(json_t *contract, hwloc_topology_t topo,
                         const struct moe_nvml_report *nvml, moe_env_lookup env, void *ctx,
                         struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1];

    if (moe_contract_check_shape(contract, err) != 0)
        return -1;
    if (nvml)
        apply_nvml(contract, nvml);
    if (env)
        apply_env(contract, env, ctx);
    if (topo) {
        if (moe_topology_digest(topo, digest, err) != 0)
            return -1;
        set_fact(contract, MOE_CONTRACT_HARDWARE, "node_topology_digest", json_string(digest),
                 "hwloc");
    }
    return 0;
}

void moe_node_facts_inherit(json_t *dst, const json_t *src)
{
    for (size_t i = 0; i < N_RUNTIME_PATHS; i++) {
        json_t *section = json_object_get(dst, runtime_paths[i][0]);
        json_t *value = json_object_get(json_object_get(src, runtime_paths[i][0]),
                                        runtime_paths[i][1]);
        char path[128];
        json_t *source;

        if (!section || !value || json_object_get(section, runtime_paths[i][1]))
            continue;
        json_object_set(section, runtime_paths[i][1], value);
        /* fits: a section and a key of runtime_paths, 40 bytes at most */
        snprintf(path, sizeof(path), "%s.%s", runtime_paths[i][0], runtime_paths[i][1]);
        source = json_object_get(json_object_get(src, MOE_CONTRACT_SOURCES), path);
        if (source) {
            if (!json_object_get(dst, MOE_CONTRACT_SOURCES))
                json_object_set_new(dst, MOE_CONTRACT_SOURCES, json_object());
            json_object_set(json_object_get(dst, MOE_CONTRACT_SOURCES), path, source);
        }
    }
}

int moe_node_facts_domain_map(json_t *contract, const char *path, struct moe_error *err)
{
    char hex[MOE_SHA256_HEX_LEN + 1];
    size_t len = 0;
    char *data = moe_read_file(path, "the NVLink-domain map", &len, err);
    int rc = -1;

    if (data && moe_sha256_hex(data, len, hex, err) == 0) {
        set_fact(contract, MOE_CONTRACT_HARDWARE, "domain_map_digest", json_string(hex),
                 "plugstack topology=");
        rc = 0;
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

static json_t *gpu_summary(hwloc_topology_t topo)
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
        json_array_append_new(gpus, json_pack("{s:s, s:s}", "busid", busid, "cpus", cpus ? cpus : ""));
        free(cpus);
    }
    return gpus;
}

int moe_topology_digest(hwloc_topology_t topo, char hex[MOE_SHA256_HEX_LEN + 1],
                        struct moe_error *err)
{
    json_t *summary = json_pack(
        "{s:i, s:i, s:i, s:i, s:o}", "packages", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE),
        "numa", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE), "cores",
        hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE), "pus",
        hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU), "gpus", gpu_summary(topo));
    int rc;

    if (!summary) {
        moe_error_set(err, "cannot summarise the node topology");
        return -1;
    }
    rc = moe_contract_digest(summary, hex, err);
    json_decref(summary);
    return rc;
}
