#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "topology/nvml.h"

/* The few NVML types we use, as NVML's stable ABI defines them (nvml.h is
 * not packaged in Debian main). */
typedef int nvml_return;
typedef struct nvml_device *nvml_device;
struct nvml_pci_info_v3 {
    char bus_id_legacy[16];
    unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
struct nvml_memory {
    unsigned long long total, free, used;
};

struct nvml_api {
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*driver_version)(char *, unsigned int);
    nvml_return (*count)(unsigned int *);
    nvml_return (*handle)(unsigned int, nvml_device *);
    nvml_return (*name)(nvml_device, char *, unsigned int);
    nvml_return (*pci)(nvml_device, struct nvml_pci_info_v3 *);
    nvml_return (*memory)(nvml_device, struct nvml_memory *);
    nvml_return (*minor)(nvml_device, unsigned int *); /* optional: absent on some platforms */
};

static int bind_api(void *lib, struct nvml_api *api)
{
    struct { void **slot; const char *symbol; } table[] = {
        { (void **)&api->init, "nvmlInit_v2" },
        { (void **)&api->shutdown, "nvmlShutdown" },
        { (void **)&api->error_string, "nvmlErrorString" },
        { (void **)&api->driver_version, "nvmlSystemGetDriverVersion" },
        { (void **)&api->count, "nvmlDeviceGetCount_v2" },
        { (void **)&api->handle, "nvmlDeviceGetHandleByIndex_v2" },
        { (void **)&api->name, "nvmlDeviceGetName" },
        { (void **)&api->pci, "nvmlDeviceGetPciInfo_v3" },
        { (void **)&api->memory, "nvmlDeviceGetMemoryInfo" },
    };

    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        *table[i].slot = dlsym(lib, table[i].symbol);
        if (!*table[i].slot)
            return -1;
    }
    *(void **)&api->minor = dlsym(lib, "nvmlDeviceGetMinorNumber");
    return 0;
}

static int read_gpus(const struct nvml_api *api, struct moe_nvml_report *r, struct moe_error *err)
{
    unsigned int n = 0;
    nvml_return rc;

    if ((rc = api->driver_version(r->driver, sizeof(r->driver))) != 0 || (rc = api->count(&n)) != 0) {
        moe_error_set(err, "NVML: %s", api->error_string(rc));
        return -1;
    }
    r->count = n > MOE_NVML_MAX_GPUS ? MOE_NVML_MAX_GPUS : (int)n;
    for (int i = 0; i < r->count; i++) {
        struct moe_nvml_gpu *g = &r->gpus[i];
        struct nvml_pci_info_v3 pci;
        struct nvml_memory mem;
        nvml_device dev;

        if ((rc = api->handle((unsigned int)i, &dev)) != 0 ||
            (rc = api->name(dev, g->name, sizeof(g->name))) != 0 ||
            (rc = api->pci(dev, &pci)) != 0 || (rc = api->memory(dev, &mem)) != 0) {
            moe_error_set(err, "NVML GPU %d: %s", i, api->error_string(rc));
            return -1;
        }
        /* fits: NVML's bus id buffer is 32 bytes too */
        snprintf(g->busid, sizeof(g->busid), "%s", pci.bus_id);
        g->pci_domain = pci.domain;
        g->pci_bus = pci.bus;
        g->pci_device = pci.device;
        g->memory_bytes = mem.total;
        g->minor = -1;
        if (api->minor) {
            unsigned int minor;
            if (api->minor(dev, &minor) == 0)
                g->minor = (int)minor;
        }
    }
    return 0;
}

int moe_nvml_query(struct moe_nvml_report *report, struct moe_error *err)
{
    struct nvml_api api;
    void *lib;
    int rc = -1;

    memset(report, 0, sizeof(*report));
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        moe_error_set(err, "NVML is not available (libnvidia-ml.so.1: %s)", dlerror());
        return -1;
    }
    if (bind_api(lib, &api) != 0)
        moe_error_set(err, "libnvidia-ml.so.1 lacks a required symbol: %s", dlerror());
    else if (api.init() != 0)
        moe_error_set(err, "NVML failed to initialise (no NVIDIA driver on this node?)");
    else {
        rc = read_gpus(&api, report, err);
        api.shutdown();
    }
    dlclose(lib);
    return rc;
}
