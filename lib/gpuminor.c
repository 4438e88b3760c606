#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gpuminor.h"

static int read_information(const char *path, struct moe_gpu_minor *g)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int have = 0;

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "Bus Location: %31s", g->busid) == 1)
            have |= 1;
        else if (sscanf(line, "Device Minor: %d", &g->minor) == 1)
            have |= 2;
    }
    fclose(f);
    return have == 3 ? 0 : -1;
}

int moe_gpu_minors_proc(const char *dir, struct moe_gpu_minor *out, int max)
{
    char path[4096];
    struct dirent *e;
    DIR *d;
    int n = 0;

    snprintf(path, sizeof(path), "%s/gpus", dir);
    d = opendir(path);
    if (!d)
        return 0;
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/gpus/%s/information", dir, e->d_name);
        n += read_information(path, &out[n]) == 0;
    }
    closedir(d);
    return n;
}

/* The few NVML entry points used, with nvml.h's types spelled out so that
 * building needs no CUDA headers. */
typedef void *nvml_device;
struct nvml_pci_info_v3 {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
struct nvml_api {
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned *);
    int (*handle)(unsigned, nvml_device *);
    int (*minor)(nvml_device, unsigned *);
    int (*pci)(nvml_device, struct nvml_pci_info_v3 *);
};

static int sym(void *lib, const char *name, void *fnp)
{
    void *s = dlsym(lib, name);

    if (!s)
        return -1;
    memcpy(fnp, &s, sizeof(s));
    return 0;
}

static int query(const struct nvml_api *api, struct moe_gpu_minor *out, int max)
{
    unsigned count = 0;
    int n = 0;

    if (api->count(&count) != 0)
        return -1;
    for (unsigned i = 0; i < count && n < max; i++) {
        nvml_device dev;
        unsigned minor;
        struct nvml_pci_info_v3 pci;

        if (api->handle(i, &dev) != 0 || api->minor(dev, &minor) != 0 || api->pci(dev, &pci) != 0)
            continue;
        out[n].minor = (int)minor;
        /* NVML spells the domain with 8 digits: 00000000:18:00.0 */
        snprintf(out[n].busid, sizeof(out[n].busid), "%04x:%02x:%02x.0", pci.domain, pci.bus,
                 pci.device);
        n++;
    }
    return n;
}

int moe_gpu_minors_nvml(struct moe_gpu_minor *out, int max)
{
    struct nvml_api api;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    int n = -1;

    if (!lib)
        return -1;
    if (sym(lib, "nvmlInit_v2", &api.init) == 0 && sym(lib, "nvmlShutdown", &api.shutdown) == 0 &&
        sym(lib, "nvmlDeviceGetCount_v2", &api.count) == 0 &&
        sym(lib, "nvmlDeviceGetHandleByIndex_v2", &api.handle) == 0 &&
        sym(lib, "nvmlDeviceGetMinorNumber", &api.minor) == 0 &&
        sym(lib, "nvmlDeviceGetPciInfo_v3", &api.pci) == 0 && api.init() == 0) {
        n = query(&api, out, max);
        api.shutdown();
    }
    dlclose(lib);
    return n;
}
