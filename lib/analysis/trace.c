#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/trace.h"
#include "analysis/trace_internal.h"
#include "core/strbuf.h"
#include "core/readfile.h"

const char *const moe_trace_default_comm[] = {
    "nccl*",                  /* ncclKernel_*, ncclDevKernel_* (short names) */
    "*ncclDevKernel_*",       /* demangled: "void ncclDevKernel_..." */
    "*ncclKernel*",
    "*deep_ep::*dispatch*",   /* DeepEP intranode / internode / low-latency */
    "*deep_ep::*combine*",
    "*hybrid_ep*dispatch*",   /* HybridEP (DeepEP hybrid-ep branch) */
    "*hybrid_ep*combine*",
    "*HybridEP*",
    "*nvshmem*",              /* NVSHMEM-based dispatch / combine, e.g. NVSHMEMI kernels */
    "*NVSHMEM*",
    NULL,
};

void moe_trace_init(struct moe_trace *t, const char *source, const char *const *patterns,
                    const char *step_prefix)
{
    memset(t, 0, sizeof(*t));
    t->source = source ? source : "";
    t->comm_patterns = patterns ? patterns : moe_trace_default_comm;
    t->step_prefix = step_prefix ? step_prefix : MOE_TRACE_STEP_PREFIX;
}

void moe_trace_free(struct moe_trace *t)
{
    for (size_t i = 0; i < t->nnames; i++)
        free(t->names[i].text);
    free(t->names);
    free(t->slots);
    for (size_t i = 0; i < t->ndevices; i++) {
        free(t->devices[i].comm);
        free(t->devices[i].compute);
        free(t->devices[i].compute_names);
    }
    free(t->devices);
    free(t->devslots);
    free(t->steps);
    memset(t, 0, sizeof(*t));
}

/* Grows *p (of *cap elements of size sz) to hold at least need elements. */
static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
    void *np = moe_grow_array(*p, cap, need, sz);

    if (!np)
        return -1;
    *p = np;
    return 0;
}

static int is_comm(const struct moe_trace *t, const char *text)
{
    for (const char *const *p = t->comm_patterns; *p; p++)
        if (fnmatch(*p, text, 0) == 0)
            return 1;
    return 0;
}

static long add_name_len(struct moe_trace *t, const char *text, size_t len)
{
    char *copy;

    if (grow((void **)&t->names, &t->capnames, t->nnames + 1, sizeof(*t->names)) < 0)
        return -1;
    copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, text, len);
    copy[len] = '\0';
    t->names[t->nnames].text = copy;
    t->names[t->nnames].comm = is_comm(t, copy);
    return (long)t->nnames++;
}

long moe_trace_add_name(struct moe_trace *t, const char *text)
{
    return add_name_len(t, text, strlen(text));
}

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Slots hold name index + 1; 0 is empty.  Kept at most half full. */
static int rehash(struct moe_trace *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 1024;
    uint32_t *s = calloc(n, sizeof(*s));

    if (!s)
        return -1;
    for (size_t i = 0; i < t->nnames; i++) {
        const char *txt = t->names[i].text;
        size_t h = (size_t)hash_bytes(txt, strlen(txt)) & (n - 1);

        while (s[h])
            h = (h + 1) & (n - 1);
        s[h] = (uint32_t)(i + 1);
    }
    free(t->slots);
    t->slots = s;
    t->nslots = n;
    return 0;
}

long moe_trace_intern(struct moe_trace *t, const char *text, size_t len)
{
    size_t h;
    long id;

    if ((t->nnames + 1) * 2 > t->nslots && rehash(t) < 0)
        return -1;
    h = (size_t)hash_bytes(text, len) & (t->nslots - 1);
    while (t->slots[h]) {
        const char *cand = t->names[t->slots[h] - 1].text;

        if (strncmp(cand, text, len) == 0 && cand[len] == '\0')
            return (long)t->slots[h] - 1;
        h = (h + 1) & (t->nslots - 1);
    }
    id = add_name_len(t, text, len);
    if (id >= 0)
        t->slots[h] = (uint32_t)id + 1;
    return id;
}

const char *moe_trace_failure(int rc)
{
    if (rc == MOE_TRACE_TOO_MANY_DEVICES)
        return "more than " MOE_TRACE_DEVICES_MAX_TEXT " devices: not one process's or one "
               "node's trace";
    return "out of memory";
}

static size_t device_slot(uint32_t id, size_t nslots)
{
    return (size_t)((id * 2654435761u) & (uint32_t)(nslots - 1)); /* Knuth's multiplier */
}

/* Slots hold device index + 1; 0 is empty.  Kept at most half full. */
static int device_rehash(struct moe_trace *t)
{
    size_t n = t->ndevslots ? t->ndevslots * 2 : 16;
    uint32_t *s = calloc(n, sizeof(*s));

    if (!s)
        return -1;
    for (size_t i = 0; i < t->ndevices; i++) {
        size_t h = device_slot((uint32_t)t->devices[i].id, n);

        while (s[h])
            h = (h + 1) & (n - 1);
        s[h] = (uint32_t)(i + 1);
    }
    free(t->devslots);
    t->devslots = s;
    t->ndevslots = n;
    return 0;
}

/* The device of that id, added when new; NULL with *rc set when it cannot
 * be.  A hash, not a scan: a trace may name many ids, and every kernel
 * whose device differs from the last one's looks its device up. */
static struct moe_trace_device *device_get(struct moe_trace *t, int id, int *rc)
{
    struct moe_trace_device *d;
    size_t h;

    *rc = -1;
    if ((t->ndevices + 1) * 2 > t->ndevslots && device_rehash(t) < 0)
        return NULL;
    h = device_slot((uint32_t)id, t->ndevslots);
    while (t->devslots[h]) {
        d = &t->devices[t->devslots[h] - 1];
        if (d->id == id)
            return d;
        h = (h + 1) & (t->ndevslots - 1);
    }
    if (t->ndevices >= MOE_TRACE_DEVICES_MAX) {
        *rc = MOE_TRACE_TOO_MANY_DEVICES;
        return NULL;
    }
    if (grow((void **)&t->devices, &t->capdevices, t->ndevices + 1, sizeof(*d)) < 0)
        return NULL;
    d = &t->devices[t->ndevices++];
    memset(d, 0, sizeof(*d));
    d->id = id;
    t->devslots[h] = (uint32_t)t->ndevices;
    return d;
}

static int time_valid(int64_t start, int64_t end)
{
    return start >= 0 && start <= end && end <= MOE_TRACE_TIME_MAX;
}

int moe_trace_add_kernel(struct moe_trace *t, int device, uint32_t name, int64_t start,
                         int64_t end)
{
    struct moe_trace_device *d;
    int rc;

    if (!time_valid(start, end)) {
        t->dropped++;
        return 0;
    }
    /* Most consecutive kernels share a device: remember the last one. */
    if (t->last_device < t->ndevices && t->devices[t->last_device].id == device) {
        d = &t->devices[t->last_device];
    } else {
        d = device_get(t, device, &rc);
        if (!d)
            return rc;
        t->last_device = (size_t)(d - t->devices);
    }
    if (name < t->nnames && t->names[name].comm) {
        if (d->ncomm == d->capcomm &&
            grow((void **)&d->comm, &d->capcomm, d->ncomm + 1, sizeof(*d->comm)) < 0)
            return -1;
        d->comm[d->ncomm].start = start;
        d->comm[d->ncomm].end = end;
        d->comm[d->ncomm].name = name;
        d->ncomm++;
    } else {
        if (t->compute_names &&
            grow((void **)&d->compute_names, &d->capcompute_names, d->ncompute + 1,
                 sizeof(*d->compute_names)) < 0)
            return -1;
        if (d->ncompute == d->capcompute &&
            grow((void **)&d->compute, &d->capcompute, d->ncompute + 1,
                 sizeof(*d->compute)) < 0)
            return -1;
        if (t->compute_names)
            d->compute_names[d->ncompute] = name;
        d->compute[d->ncompute].start = start;
        d->compute[d->ncompute].end = end;
        d->ncompute++;
    }
    return 0;
}

int moe_trace_add_marker(struct moe_trace *t, const char *name, int64_t start, int64_t end,
                         int gpu)
{
    size_t plen = strlen(t->step_prefix);
    char *tail;
    long step;

    if (strncmp(name, t->step_prefix, plen) != 0 || !time_valid(start, end))
        return 0;
    errno = 0;
    step = strtol(name + plen, &tail, 10);
    if (tail == name + plen || *tail != '\0' || errno)
        return 0;
    if (grow((void **)&t->steps, &t->capsteps, t->nsteps + 1, sizeof(*t->steps)) < 0)
        return -1;
    t->steps[t->nsteps].step = step;
    t->steps[t->nsteps].start = start;
    t->steps[t->nsteps].end = end;
    t->steps[t->nsteps].gpu = gpu;
    t->nsteps++;
    return 0;
}

/* Appends n elements of size sz from src to *dst (count *nd, capacity
 * *cap); takes src over when *dst is empty. */
static int append(void **dst, size_t *nd, size_t *cap, void **src, size_t *ns, size_t *scap,
                  size_t sz)
{
    if (*ns == 0)
        return 0;
    if (*nd == 0) {
        free(*dst);
        *dst = *src;
        *nd = *ns;
        *cap = *scap;
        *src = NULL;
        *ns = *scap = 0;
        return 0;
    }
    if (grow(dst, cap, *nd + *ns, sz) < 0)
        return -1;
    memcpy((char *)*dst + *nd * sz, *src, *ns * sz);
    *nd += *ns;
    return 0;
}

/* Appends s's compute kernels' names, mapped onto t's, after d's. */
static int append_names(struct moe_trace_device *d, const struct moe_trace_device *s,
                        const uint32_t *remap)
{
    if (s->ncompute == 0)
        return 0;
    if (grow((void **)&d->compute_names, &d->capcompute_names, d->ncompute + s->ncompute,
             sizeof(*d->compute_names)) < 0)
        return -1;
    for (size_t k = 0; k < s->ncompute; k++)
        d->compute_names[d->ncompute + k] = remap[s->compute_names[k]];
    return 0;
}

int moe_trace_absorb(struct moe_trace *t, struct moe_trace *sub)
{
    uint32_t *remap = malloc((sub->nnames + 1) * sizeof(*remap));
    int rc = -1;

    if (!remap)
        return -1;
    for (size_t i = 0; i < sub->nnames; i++) {
        long id = moe_trace_intern(t, sub->names[i].text, strlen(sub->names[i].text));

        if (id < 0) {
            free(remap);
            return -1;
        }
        remap[i] = (uint32_t)id;
    }
    for (size_t i = 0; i < sub->ndevices; i++) {
        struct moe_trace_device *s = &sub->devices[i], *d = device_get(t, s->id, &rc);

        if (!d)
            goto fail;
        for (size_t k = 0; k < s->ncomm; k++)
            s->comm[k].name = remap[s->comm[k].name];
        /* the names before the intervals: append() zeroes the count it moves */
        if ((t->compute_names && append_names(d, s, remap) < 0) ||
            append((void **)&d->comm, &d->ncomm, &d->capcomm, (void **)&s->comm, &s->ncomm,
                   &s->capcomm, sizeof(*d->comm)) < 0 ||
            append((void **)&d->compute, &d->ncompute, &d->capcompute, (void **)&s->compute,
                   &s->ncompute, &s->capcompute, sizeof(*d->compute)) < 0) {
            rc = -1;
            goto fail;
        }
    }
    free(remap);
    return 0;
fail:
    free(remap);
    return rc;
}

int moe_trace_load(struct moe_trace *t, const char *path, struct moe_error *err)
{
    static const char sqlite_magic[16] = "SQLite format 3";
    char head[16];
    ssize_t got;
    int fd = moe_open_regular(path, "trace", err); /* only the 16-byte format probe */

    if (fd < 0)
        return -1;
    got = read(fd, head, sizeof(head));
    close(fd);
    if (got == (ssize_t)sizeof(head) && memcmp(head, sqlite_magic, sizeof(head)) == 0)
        return moe_trace_read_nsys(t, path, err);
    return moe_trace_read_kineto(t, path, err);
}

int moe_trace_device_id(int64_t raw, const char *kernel, int *out, struct moe_error *err)
{
    if (raw < 0 || raw > MOE_TRACE_DEVICE_MAX) {
        moe_error_set(err, "kernel '%.100s': device %lld is out of range 0..%d", kernel,
                      (long long)raw, MOE_TRACE_DEVICE_MAX);
        return -1;
    }
    *out = (int)raw;
    return 0;
}
