#include "config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "topology/hostlist.h"

static struct moe_hostlist_api api;

void moe_hostlist_bind(const struct moe_hostlist_api *a)
{
    api = *a;
}

/* dlsym returns an object pointer; POSIX guarantees this copy is valid. */
static int lookup(const char *name, void *fnp)
{
    void *sym = dlsym(RTLD_DEFAULT, name);

    if (!sym)
        return -1;
    memcpy(fnp, &sym, sizeof(sym));
    return 0;
}

static int resolve(struct moe_error *err)
{
    struct moe_hostlist_api found;

    if (api.create)
        return 0;
    if (lookup("slurm_hostlist_create", &found.create) != 0 ||
        lookup("slurm_hostlist_shift", &found.shift) != 0 ||
        lookup("slurm_hostlist_destroy", &found.destroy) != 0) {
        moe_error_set(err, "libslurm's hostlist functions are not loaded in this process");
        return -1;
    }
    api = found;
    return 0;
}

/* How many hosts expr can name at most: each bracket's numbers and ranges
 * counted, brackets of one host pattern multiplied, patterns added.  Not a
 * parser (libslurm's is the judge); it exists because libslurm expands
 * "gb[009-236][019-236][019-2336]" (115 million hosts, 10 GB) before we
 * could count, in slurmstepd, at every step. */
static double expansion_bound(const char *p)
{
    double total = 0, pattern = 1;

    while (*p) {
        if (*p == ',') {
            total += pattern;
            pattern = 1;
            p++;
        } else if (*p == '[') {
            double k = 0;

            /* Brackets hold numbers, ranges and commas only; anything else
             * (libslurm reads "[019V-2336]" as a wide range) cannot be
             * bounded here, so it counts as too many. */
            if (strspn(p + 1, "0123456789,-") != strcspn(p + 1, "]"))
                return HUGE_VAL;
            for (p++; *p && *p != ']';) {
                char *end;
                unsigned long a = strtoul(p, &end, 10), b = a;

                if (end == p) {
                    while (*p && *p != ',' && *p != ']')
                        p++;
                } else {
                    p = end;
                    if (*p == '-') {
                        b = strtoul(p + 1, &end, 10);
                        p = end;
                    }
                }
                k += b >= a ? (double)(b - a) + 1 : 1;
                if (*p && *p != ']')
                    p++;
            }
            pattern *= k > 0 ? k : 1;
            if (*p)
                p++;
        } else {
            p++;
        }
    }
    return total + pattern;
}

/* Brackets come in pairs and never nest: libslurm reads "n[1-2" as a host
 * named "n]" (and a node list from Slurm always closes its brackets).
 * Inside them, N and N-M with N <= M, comma-separated: libslurm refuses a
 * backwards range only after printing its own error and leaking what it
 * had parsed.  NULL, or what is wrong. */
static const char *brackets_problem(const char *p)
{
    while ((p = strpbrk(p, "[]"))) {
        const char *close = strchr(p + 1, ']'), *open = strchr(p + 1, '[');

        if (*p == ']' || !close || (open && open < close))
            return "its brackets do not pair up";
        if (close == p + 1)
            return "a bracket is empty";
        for (p++; p < close; p++) {
            char *end;
            unsigned long a = strtoul(p, &end, 10), b = a;

            if (end == p || !isdigit((unsigned char)*p))
                return "a bracket holds something other than numbers and ranges";
            if (*end == '-') {
                p = end + 1;
                b = strtoul(p, &end, 10);
                if (end == p || !isdigit((unsigned char)*p))
                    return "a bracket holds something other than numbers and ranges";
            }
            if (b < a)
                return "a range in brackets runs backwards";
            p = end;
            if (p < close && *p != ',')
                return "a bracket holds something other than numbers and ranges";
        }
        p = close + 1;
    }
    return NULL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A host named twice would get two nodes' ranks. */
static const char *named_twice(char **names, int n)
{
    char **sorted = malloc((size_t)n * sizeof(*sorted));
    const char *twice = NULL;

    if (!sorted)
        return NULL;
    memcpy(sorted, names, (size_t)n * sizeof(*sorted));
    qsort(sorted, (size_t)n, sizeof(*sorted), by_name);
    for (int i = 1; i < n && !twice; i++)
        if (strcmp(sorted[i - 1], sorted[i]) == 0)
            twice = sorted[i];
    free(sorted);
    return twice;
}

int moe_hostlist_expand(const char *expr, char ***names, int *n, struct moe_error *err)
{
    void *hl;
    char *host, **out = NULL;
    const char *twice, *why;
    int count = 0;
    size_t cap = 0;
    char **grown;

    *names = NULL;
    *n = 0;
    if (resolve(err) != 0)
        return -1;
    if ((why = brackets_problem(expr))) {
        moe_error_set(err, "'%.80s' is not a Slurm hostlist: %s", expr, why);
        return -1;
    }
    if (expansion_bound(expr) > MOE_HOSTLIST_MAX) {
        moe_error_set(err, "hostlist '%.80s' names more than %d hosts (a typo such as "
                      "gb[001-018][001-018]?)", expr, MOE_HOSTLIST_MAX);
        return -1;
    }
    hl = api.create(expr);
    if (!hl) {
        moe_error_set(err, "'%s' is not a Slurm hostlist", expr);
        return -1;
    }
    while ((host = api.shift(hl))) {
        if (count == MOE_HOSTLIST_MAX) {
            free(host);
            moe_hostlist_free(out, count);
            api.destroy(hl);
            moe_error_set(err, "hostlist '%.80s' names more than %d hosts (a typo such as "
                          "gb[001-018][001-018]?)", expr, MOE_HOSTLIST_MAX);
            return -1;
        }
        if (!(grown = moe_grow_array(out, &cap, (size_t)count + 1, sizeof(*out)))) {
            free(host);
            moe_hostlist_free(out, count);
            api.destroy(hl);
            moe_error_set(err, "out of memory");
            return -1;
        }
        out = grown;
        out[count++] = host;
    }
    api.destroy(hl);
    if (count == 0) {
        moe_error_set(err, "hostlist '%s' names no host", expr);
        return -1;
    }
    if ((twice = named_twice(out, count))) {
        moe_error_set(err, "hostlist '%.80s' names host %.64s twice", expr, twice);
        moe_hostlist_free(out, count);
        return -1;
    }
    *names = out;
    *n = count;
    return 0;
}

void moe_hostlist_free(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
