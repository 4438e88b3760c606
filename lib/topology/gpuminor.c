#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/gpuminor.h"
#include "topology/nvml.h"

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
        else if (strncmp(line, "Device Minor:", 13) == 0) {
            /* strtol, not sscanf %d: an out-of-range number is defined */
            char *end;
            long v = strtol(line + 13, &end, 10);

            if (end != line + 13 && v >= 0 && v <= 4096) {
                g->minor = (int)v;
                have |= 2;
            }
        }
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

    /* the plugin's bounded buffer: a cut path must not name another folder */
    if ((size_t)snprintf(path, sizeof(path), "%s/gpus", dir) >= sizeof(path))
        return 0;
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

int moe_gpu_minors_nvml(struct moe_gpu_minor *out, int max)
{
    struct moe_nvml_report report;
    struct moe_error err;
    int n = 0;

    if (moe_nvml_query(&report, &err) != 0)
        return -1;
    for (int i = 0; i < report.count && n < max; i++) {
        const struct moe_nvml_gpu *g = &report.gpus[i];
        if (g->minor < 0)
            continue;
        out[n].minor = g->minor;
        /* NVML spells the domain with 8 digits (00000000:18:00.0); hwloc with 4 */
        snprintf(out[n].busid, sizeof(out[n].busid), "%04x:%02x:%02x.0", g->pci_domain,
                 g->pci_bus, g->pci_device);
        n++;
    }
    return n;
}
