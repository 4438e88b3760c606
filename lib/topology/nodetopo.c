#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/readfile.h"
#include "topology/gpuminor.h"
#include "topology/gpuminor_internal.h"
#include "core/number.h"
#include "topology/nodetopo_internal.h"

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_BASE_CLASS_DISPLAY 0x03

static bool is_nvidia_gpu(hwloc_obj_t pci)
{
    return pci->attr->pcidev.vendor_id == PCI_VENDOR_NVIDIA &&
           (pci->attr->pcidev.class_id >> 8) == PCI_BASE_CLASS_DISPLAY;
}

static unsigned long bus_key(hwloc_obj_t pci)
{
    const struct hwloc_pcidev_attr_s *a = &pci->attr->pcidev;

    return ((unsigned long)a->domain << 24) | ((unsigned long)a->bus << 16) |
           ((unsigned long)a->dev << 8) | a->func;
}

static int bus_cmp(const void *x, const void *y)
{
    unsigned long a = bus_key(*(hwloc_obj_t const *)x), b = bus_key(*(hwloc_obj_t const *)y);

    return (a > b) - (a < b);
}

/* Bus order is NVML's default device order and, on ordinary systems, the
 * order of the /dev/nvidiaN minor numbers.  hwloc lists PCI devices in tree
 * order, which need not be bus order: sort. */
static int collect_gpus(struct moe_nodetopo *nt, struct moe_error *err)
{
    hwloc_obj_t pci = NULL;
    int n = 0;

    while ((pci = hwloc_get_next_pcidev(nt->topo, pci)))
        n += is_nvidia_gpu(pci);
    nt->gpus = calloc(n ? (size_t)n : 1, sizeof(hwloc_obj_t));
    if (!nt->gpus) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    while ((pci = hwloc_get_next_pcidev(nt->topo, pci)))
        if (is_nvidia_gpu(pci))
            nt->gpus[nt->ngpus++] = pci;
    qsort(nt->gpus, (size_t)nt->ngpus, sizeof(hwloc_obj_t), bus_cmp);
    return 0;
}

/* hwloc's own XML reader is about 4x faster than its libxml2 one; hwloc
 * reads this variable once, when the first XML backend is set up. */
static int set_xmlbuffer(hwloc_topology_t topo, const char *buf, size_t len)
{
    bool set = !getenv("HWLOC_LIBXML_IMPORT");
    int rv;

    if (len > INT_MAX) {
        errno = EFBIG;
        return -1;
    }
    if (set)
        setenv("HWLOC_LIBXML_IMPORT", "0", 0);
    rv = hwloc_topology_set_xmlbuffer(topo, buf, (int)len);
    if (set)
        unsetenv("HWLOC_LIBXML_IMPORT");
    return rv;
}

/* The admin's or the user's XML, read through the one file reader rather
 * than by hwloc: a FIFO or a device in its place is refused at once (hwloc
 * would wait on the one, read the other for ever), and its size is
 * bounded.  NULL with err. */
static char *read_xml(const char *xml, size_t *len, struct moe_error *err)
{
    char *text = moe_read_file(xml, "hwloc XML", len, err);
    size_t used;

    /* The plugin reads it as the job user: an admin's 0600 file fails. */
    if (!text && errno == EACCES && (used = strlen(err->text)) < sizeof(err->text))
        /* a message: cut, it still reads and names no file */
        snprintf(err->text + used, sizeof(err->text) - used, " (plugstack hwloc_xml= must be "
                 "readable by every job user, e.g. mode 0644)");
    return text;
}

static int configure(struct moe_nodetopo *nt, const char *xml, size_t len, struct moe_error *err)
{
    if (xml && set_xmlbuffer(nt->topo, xml, len) != 0) {
        moe_error_set(err, "not a hwloc XML topology: %s", strerror(errno));
        return -1;
    }
    if (moe_nodetopo_filters(nt->topo) != 0) {
        moe_error_set(err, "cannot configure hwloc: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int moe_nodetopo_filters(hwloc_topology_t topo)
{
    /* Only cores, PUs, NUMA nodes and PCI devices matter here: skipping
     * caches and the like makes discovery cheaper at every job launch. */
    hwloc_topology_set_cache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    /* GPUs are found as PCI functions: OS devices and bridges add nothing */
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_BRIDGE, HWLOC_TYPE_FILTER_KEEP_NONE);
    return hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
}

/* The driver's /proc files cost nothing; NVML's init can take a while. */
static int map_minors(struct moe_nodetopo *nt, struct moe_error *err)
{
    struct moe_gpu_minor m[256];
    int n = moe_gpu_minors_proc("/proc/driver/nvidia", m, 256);

    if (n <= 0)
        n = moe_gpu_minors_nvml(m, 256);
    return n > 0 ? moe_nodetopo_set_minors(nt, m, n, err) : 0;
}

int moe_nodetopo_set_minors(struct moe_nodetopo *nt, const struct moe_gpu_minor *m, int n,
                            struct moe_error *err)
{
    int top = 0;

    for (int i = 0; i < n; i++)
        if (m[i].minor >= top)
            top = m[i].minor + 1;
    free(nt->minor_gpu);
    nt->minor_gpu = malloc((size_t)(top ? top : 1) * sizeof(int));
    nt->nminors = 0;
    if (!nt->minor_gpu) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    for (int i = 0; i < top; i++)
        nt->minor_gpu[i] = -1;
    for (int i = 0; i < n; i++)
        if (m[i].minor >= 0)
            nt->minor_gpu[m[i].minor] = moe_nodetopo_gpu_by_busid(nt, m[i].busid);
    nt->nminors = top;
    return 0;
}

int moe_nodetopo_gpu_of_minor(const struct moe_nodetopo *nt, int minor)
{
    if (minor < 0)
        return -1;
    if (nt->nminors == 0)
        return minor < nt->ngpus ? minor : -1;
    return minor < nt->nminors ? nt->minor_gpu[minor] : -1;
}

static int init(struct moe_nodetopo *nt, struct moe_error *err)
{
    memset(nt, 0, sizeof(*nt));
    if (hwloc_topology_init(&nt->topo) != 0) {
        moe_error_set(err, "hwloc_topology_init: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* The topology is configured: load it and find the GPUs. */
static int finish(struct moe_nodetopo *nt, const char *what, struct moe_error *err)
{
    if (hwloc_topology_load(nt->topo) != 0) {
        moe_error_at(err, what, 0, 0, "cannot load the topology: %s", strerror(errno));
        goto fail;
    }
    nt->this_system = hwloc_topology_is_thissystem(nt->topo);
    if (collect_gpus(nt, err) != 0)
        goto fail;
    if (nt->this_system && nt->ngpus > 0 && map_minors(nt, err) != 0)
        goto fail;
    return 0;
fail:
    moe_nodetopo_free(nt);
    return -1;
}

int moe_nodetopo_load(struct moe_nodetopo *nt, const char *xml, struct moe_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rv;

    memset(nt, 0, sizeof(*nt));
    if (xml && xml[0] && !(text = read_xml(xml, &len, err)))
        return -1;
    if (init(nt, err) != 0) {
        free(text);
        return -1;
    }
    if (configure(nt, text, len, err) != 0) {
        moe_error_locate(err, xml, 0, 0);
        moe_nodetopo_free(nt);
        free(text);
        return -1;
    }
    /* hwloc reads the buffer when it loads, so it lives until then. */
    rv = finish(nt, text ? xml : "hwloc", err);
    free(text);
    return rv;
}

int moe_nodetopo_load_this_xml(struct moe_nodetopo *nt, const char *buf, size_t len,
                               const char *what, struct moe_error *err)
{
    if (init(nt, err) != 0)
        return -1;
    if (set_xmlbuffer(nt->topo, buf, len) != 0) {
        moe_error_at(err, what, 0, 0, "not a hwloc XML topology: %s", strerror(errno));
        moe_nodetopo_free(nt);
        return -1;
    }
    if (moe_nodetopo_filters(nt->topo) != 0 ||
        hwloc_topology_set_flags(nt->topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED |
                                               HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM) != 0) {
        moe_error_at(err, what, 0, 0, "cannot configure hwloc: %s", strerror(errno));
        moe_nodetopo_free(nt);
        return -1;
    }
    return finish(nt, what, err);
}

void moe_nodetopo_free(struct moe_nodetopo *nt)
{
    if (nt->topo)
        hwloc_topology_destroy(nt->topo);
    free(nt->gpus);
    free(nt->minor_gpu);
    memset(nt, 0, sizeof(*nt));
}

void moe_nodetopo_gpu_busid(const struct moe_nodetopo *nt, int gpu, char *buf, size_t len)
{
    const struct hwloc_pcidev_attr_s *a;

    if (gpu < 0 || gpu >= nt->ngpus) {
        if (len)
            buf[0] = '\0';
        return;
    }
    a = &nt->gpus[gpu]->attr->pcidev;
    /* fits the callers' MOE_GPU_BUSID_MAX: four hex numbers, 36 bytes at most */
    snprintf(buf, len, "%04x:%02x:%02x.%01x", (unsigned)a->domain, (unsigned)a->bus,
             (unsigned)a->dev, (unsigned)a->func);
}

int moe_nodetopo_gpu_by_busid(const struct moe_nodetopo *nt, const char *busid)
{
    unsigned dom = 0, bus, dev, func;
    char tail;

    /* Field widths bound every conversion, so none can overflow. */
    // NOLINTNEXTLINE(cert-err34-c)
    if (sscanf(busid, "%8x:%2x:%2x.%1x%c", &dom, &bus, &dev, &func, &tail) != 4) {
        dom = 0;
        // NOLINTNEXTLINE(cert-err34-c)
        if (sscanf(busid, "%2x:%2x.%1x%c", &bus, &dev, &func, &tail) != 3)
            return -1;
    }
    for (int i = 0; i < nt->ngpus; i++) {
        const struct hwloc_pcidev_attr_s *a = &nt->gpus[i]->attr->pcidev;
        if (a->domain == dom && a->bus == bus && a->dev == dev && a->func == func)
            return i;
    }
    return -1;
}

/* A core list is indices N and ranges N-M, separated by commas, as Slurm
 * writes S_STEP_ALLOC_CORES.  hwloc_bitmap_list_sscanf reads more ("-1",
 * "0x5", "1-2-3", "+1", " 1", "0,,1" all made some set) and each index with
 * strtoul into an unsigned int (4294967296 wrapped to core 0): the form
 * is checked here, and every number through the one numeric check. */
static int core_numbers_ok(const char *cores, struct moe_error *err)
{
    for (const char *p = cores;;) {
        for (int k = 0; k < 2; k++) { /* N, then the M of N-M */
            size_t n = strspn(p, "0123456789");
            char num[24];
            long v;

            if (n == 0)
                goto bad;
            /* 24 digits are out of range anyway: no need to copy them all. */
            snprintf(num, sizeof(num), "%.*s", (int)(n < sizeof(num) ? n : sizeof(num) - 1), p);
            if (moe_number_parse_long(num, 0, MOE_CORE_INDEX_MAX, &v, err) < 0 ||
                n >= sizeof(num)) {
                moe_error_set(err, "core list '%.64s': %.24s%s is out of range 0..%d", cores, num,
                              n >= sizeof(num) ? "..." : "", MOE_CORE_INDEX_MAX);
                return -1;
            }
            p += n;
            if (k == 1 || *p != '-')
                break;
            p++;
        }
        if (*p == '\0')
            return 0;
        if (*p++ != ',')
            goto bad;
    }
bad:
    moe_error_set(err, "bad core list '%.64s': expected core indices N and ranges N-M, separated "
                  "by commas", cores);
    return -1;
}

int moe_nodetopo_cores_to_cpuset(const struct moe_nodetopo *nt, const char *cores,
                                 hwloc_bitmap_t out, struct moe_error *err)
{
    hwloc_bitmap_t idx = hwloc_bitmap_alloc();
    int ncores = hwloc_get_nbobjs_by_type(nt->topo, HWLOC_OBJ_CORE);
    int rv = -1, i;

    hwloc_bitmap_zero(out);
    if (core_numbers_ok(cores, err) < 0)
        goto done;
    /* weight -1: an open range such as "4-", which no node has */
    if (!idx || hwloc_bitmap_list_sscanf(idx, cores) != 0 || hwloc_bitmap_iszero(idx) ||
        hwloc_bitmap_weight(idx) < 0) {
        moe_error_set(err, "bad core list '%s'", cores);
        goto done;
    }
    hwloc_bitmap_foreach_begin(i, idx) {
        hwloc_obj_t core = hwloc_get_obj_by_type(nt->topo, HWLOC_OBJ_CORE, (unsigned)i);
        if (!core) {
            moe_error_set(err, "core %d of '%s' is not on this node (%d cores)", i, cores,
                          ncores);
            goto done;
        }
        hwloc_bitmap_or(out, out, core->cpuset);
    }
    hwloc_bitmap_foreach_end();
    rv = 0;
done:
    hwloc_bitmap_free(idx);
    return rv;
}
