#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topology/gpuminor.h"
#include "topology/gpuminor_internal.h"
#include "topology/nvml.h"

/* gpus/BUSID/information, opened relative to gpus/: BUSID is one
 * directory entry, so no path is built that could be cut. */
static int read_information(int gpus, const char *busid, struct moe_gpu_minor *g)
{
    char rel[NAME_MAX + sizeof("/information")], line[256];
    int fd, have = 0;
    FILE *f;

    /* fits: a directory entry's name is at most NAME_MAX bytes */
    snprintf(rel, sizeof(rel), "%s/information", busid);
    if ((fd = openat(gpus, rel, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    if (!(f = fdopen(fd, "r"))) {
        close(fd);
        return -1;
    }
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
    int top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), gpus, n = 0;
    struct dirent *e;
    DIR *d;

    /* DIR and DIR/gpus are opened, not joined: no path is built here */
    gpus = top < 0 ? -1 : openat(top, "gpus", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top >= 0)
        close(top);
    if (gpus < 0)
        return 0;
    if (!(d = fdopendir(gpus))) {
        close(gpus);
        return 0;
    }
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] == '.')
            continue;
        n += read_information(dirfd(d), e->d_name, &out[n]) == 0;
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
        /* NVML spells the domain with 8 digits (00000000:18:00.0); hwloc with 4.
         * fits: three 32-bit numbers in hex are 28 bytes at most */
        snprintf(out[n].busid, sizeof(out[n].busid), "%04x:%02x:%02x.0", g->pci_domain,
                 g->pci_bus, g->pci_device);
        n++;
    }
    return n;
}
