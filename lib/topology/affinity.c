#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/affinity.h"
#include "topology/nodetopo_internal.h"
#include "core/text.h"

int moe_affinity_opts_parse(const char *s, struct moe_affinity_opts *o, struct moe_error *err)
{
    struct moe_affinity_opts out = { MOE_AFFINITY_EXCLUSIVE, false, false, false };
    char word[32];
    const char *p = s;

    if (moe_text_check("--moe-affinity", s, err) != 0)
        return -1;
    for (;;) {
        size_t len = strcspn(p, ",");
        bool *flag = NULL;

        /* cut on purpose: a long word is unknown either way */
        snprintf(word, sizeof(word), "%.*s", (int)(len < sizeof(word) ? len : sizeof(word) - 1), p);
        if (strcmp(word, "verbose") == 0)
            flag = &out.verbose;
        else if (strcmp(word, "membind") == 0)
            flag = &out.membind;
        else if (len < sizeof(word) && !out.mode_set && moe_affinity_mode_parse(word, &out.mode) == 0)
            flag = &out.mode_set;
        if (!flag || *flag) {
            moe_error_set(err, "--moe-affinity=%s: '%.*s' is not valid here (expected "
                          "exclusive|closest|none, then ,verbose and/or ,membind)", s, (int)len, p);
            return -1;
        }
        *flag = true;
        if (!p[len])
            break;
        p += len + 1;
    }
    *o = out;
    return 0;
}

/* "3" or "0-7" at *p; advances p past it and its comma. */
static int parse_range(const char **p, long *lo, long *hi)
{
    char *end;

    errno = 0;
    *lo = *hi = strtol(*p, &end, 10);
    if (end == *p || errno || *lo < 0)
        return -1;
    if (*end == '-') {
        const char *q = end + 1;
        *hi = strtol(q, &end, 10);
        if (end == q || errno || *hi < *lo)
            return -1;
    }
    if (*end && *end != ',')
        return -1;
    *p = *end ? end + 1 : end;
    return 0;
}

int moe_affinity_task_gpus(const char *gpus, int ntasks, int *task_gpu, struct moe_error *err)
{
    int list[1024], n = 0;
    const char *p = gpus;

    for (int r = 0; r < ntasks; r++)
        task_gpu[r] = -1;
    if (!gpus || !gpus[0] || strcmp(gpus, "NoDevFiles") == 0)
        return 0;
    while (*p) {
        long lo, hi;

        if (parse_range(&p, &lo, &hi) != 0 || hi > 65535 ||
            hi - lo >= (long)(sizeof(list) / sizeof(list[0])) - n) {
            moe_error_set(err, "GPU list '%s' is not a list of device indices", gpus);
            return -1;
        }
        for (long v = lo; v <= hi; v++)
            list[n++] = (int)v;
    }
    for (int r = 0; r < ntasks; r++)
        task_gpu[r] = list[r % n];
    return 0;
}

static void no_bind(struct moe_affinity_task *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void no_bind(struct moe_affinity_task *t, const char *fmt, ...)
{
    va_list ap;

    t->bind = false;
    hwloc_bitmap_zero(t->cpuset);
    va_start(ap, fmt);
    /* a message: cut, it still reads and names no file */
    vsnprintf(t->why, sizeof(t->why), fmt, ap);
    va_end(ap);
}

/* The GPU's locality domain: the cpuset of its nearest non-I/O ancestor. */
static hwloc_obj_t gpu_domain(const struct moe_nodetopo *nt, int gpu)
{
    return hwloc_get_non_io_ancestor_obj(nt->topo, nt->gpus[gpu]);
}

static int init_tasks(const struct moe_nodetopo *nt, struct moe_affinity_plan *plan,
                      int ntasks, const int *task_gpu, struct moe_error *err)
{
    plan->tasks = calloc((size_t)ntasks, sizeof(*plan->tasks));
    if (!plan->tasks)
        goto oom;
    plan->ntasks = ntasks;
    for (int r = 0; r < ntasks; r++) {
        struct moe_affinity_task *t = &plan->tasks[r];

        t->cpuset = hwloc_bitmap_alloc();
        t->nodeset = hwloc_bitmap_alloc();
        if (!t->cpuset || !t->nodeset)
            goto oom;
        /* Slurm's GPU indices are device minor numbers */
        t->gpu = task_gpu && task_gpu[r] >= 0 ? moe_nodetopo_gpu_of_minor(nt, task_gpu[r]) : -1;
        if (task_gpu && task_gpu[r] >= 0 && t->gpu < 0) {
            moe_error_set(err, "local task %d: GPU %d does not exist (node has %d)", r,
                          task_gpu[r], nt->ngpus);
            return -1;
        }
        if (t->gpu >= 0) {
            moe_nodetopo_gpu_busid(nt, t->gpu, t->busid, sizeof(t->busid));
            hwloc_bitmap_copy(t->nodeset, gpu_domain(nt, t->gpu)->nodeset);
        }
    }
    return 0;
oom:
    moe_error_set(err, "out of memory");
    return -1;
}

/* Physical cores with at least one allowed PU inside dom, in logical order. */
static int domain_cores(const struct moe_nodetopo *nt, hwloc_const_bitmap_t dom,
                        hwloc_obj_t *cores, int max)
{
    int n = 0;
    hwloc_obj_t c = NULL;

    while ((c = hwloc_get_next_obj_by_type(nt->topo, HWLOC_OBJ_CORE, c)) && n < max)
        if (hwloc_bitmap_intersects(c->cpuset, dom))
            cores[n++] = c;
    return n;
}

/* The k tasks listed in members (local rank order) share dom:
 * task j gets cores [j*n/k, (j+1)*n/k), so shares differ by at most one.
 * -1 when there are fewer cores than tasks (then none is bound). */
static int split_domain(const struct moe_nodetopo *nt, struct moe_affinity_plan *plan,
                        const int *members, int k, hwloc_const_bitmap_t dom, hwloc_obj_t *cores)
{
    int n = domain_cores(nt, dom, cores, hwloc_get_nbobjs_by_type(nt->topo, HWLOC_OBJ_CORE));

    for (int j = 0; j < k; j++) {
        struct moe_affinity_task *t = &plan->tasks[members[j]];

        if (n < k) {
            no_bind(t, "%d tasks share this GPU's domain, which has only %d allowed cores", k, n);
            continue;
        }
        hwloc_bitmap_zero(t->cpuset);
        for (int c = j * n / k; c < (j + 1) * n / k; c++)
            hwloc_bitmap_or(t->cpuset, t->cpuset, cores[c]->cpuset);
        hwloc_bitmap_and(t->cpuset, t->cpuset, dom);
        t->bind = true;
    }
    return n < k ? -1 : 0;
}

/* Tasks whose GPUs have the same locality cpuset form one group; members
 * lists them group after group, in local rank order within a group. */
struct group {
    hwloc_obj_t anc;   /* the GPU's nearest non-I/O ancestor */
    int first, k;      /* members[first .. first+k) */
};

static int group_weight_cmp(const void *x, const void *y)
{
    const struct group *a = x, *b = y;
    int wa = hwloc_bitmap_weight(a->anc->cpuset), wb = hwloc_bitmap_weight(b->anc->cpuset);

    if (wa != wb)
        return wa - wb;
    return a->first - b->first;
}

static int make_groups(const struct moe_nodetopo *nt, const struct moe_affinity_plan *plan,
                       int *members, struct group *g)
{
    int ng = 0, m = 0;

    for (int r = 0; r < plan->ntasks; r++) {
        hwloc_obj_t anc;
        bool seen = false;

        if (!plan->tasks[r].bind)
            continue;
        anc = gpu_domain(nt, plan->tasks[r].gpu);
        for (int j = 0; j < ng && !seen; j++)
            seen = hwloc_bitmap_isequal(g[j].anc->cpuset, anc->cpuset);
        if (seen)
            continue;
        g[ng] = (struct group){ anc, m, 0 };
        for (int s = r; s < plan->ntasks; s++)
            if (plan->tasks[s].bind &&
                hwloc_bitmap_isequal(gpu_domain(nt, plan->tasks[s].gpu)->cpuset, anc->cpuset)) {
                members[m++] = s;
                g[ng].k++;
            }
        ng++;
    }
    return ng;
}

/* Plans each group once.  In exclusive mode the smallest domains go first
 * and each takes its cores out of the pool, so a GPU whose domain nests in
 * another's (a GPU below one die, another below the whole package) keeps
 * its own cores and no two tasks overlap. */
static int plan_domains(const struct moe_nodetopo *nt, struct moe_affinity_plan *plan,
                        hwloc_const_bitmap_t allowed, struct moe_error *err)
{
    int ntasks = plan->ntasks, rv = -1, ng;
    int *members = calloc((size_t)ntasks, sizeof(int));
    struct group *g = calloc((size_t)ntasks, sizeof(*g));
    int ncores = hwloc_get_nbobjs_by_type(nt->topo, HWLOC_OBJ_CORE); /* -1: several depths */
    hwloc_obj_t *cores = calloc((size_t)(ncores > 0 ? ncores : 0) + 1, sizeof(hwloc_obj_t));
    hwloc_bitmap_t dom = hwloc_bitmap_alloc(), pool = hwloc_bitmap_dup(allowed);

    if (!members || !g || !cores || !dom || !pool) {
        moe_error_set(err, "out of memory");
        goto out;
    }
    ng = make_groups(nt, plan, members, g);
    if (plan->mode == MOE_AFFINITY_EXCLUSIVE)
        qsort(g, (size_t)ng, sizeof(*g), group_weight_cmp);
    for (int j = 0; j < ng; j++) {
        const int *mem = members + g[j].first;

        hwloc_bitmap_and(dom, g[j].anc->cpuset, plan->mode == MOE_AFFINITY_CLOSEST ? allowed : pool);
        if (hwloc_bitmap_iszero(dom)) {
            for (int i = 0; i < g[j].k; i++)
                no_bind(&plan->tasks[mem[i]], "none of the step's CPUs is near GPU %d",
                        plan->tasks[mem[i]].gpu);
        } else if (plan->mode == MOE_AFFINITY_CLOSEST) {
            for (int i = 0; i < g[j].k; i++)
                hwloc_bitmap_copy(plan->tasks[mem[i]].cpuset, dom);
        } else if (split_domain(nt, plan, mem, g[j].k, dom, cores) == 0) {
            hwloc_bitmap_andnot(pool, pool, dom);
        }
    }
    rv = 0;
out:
    free(members);
    free(g);
    free(cores);
    hwloc_bitmap_free(dom);
    hwloc_bitmap_free(pool);
    return rv;
}

/* Cores with at least one allowed PU: more tasks than that, and Slurm's own
 * packing is as good as it gets. */
static int allowed_cores(const struct moe_nodetopo *nt, hwloc_const_bitmap_t allowed)
{
    hwloc_obj_t c = NULL;
    int n = 0;

    while ((c = hwloc_get_next_obj_by_type(nt->topo, HWLOC_OBJ_CORE, c)))
        n += hwloc_bitmap_intersects(c->cpuset, allowed);
    return n;
}

int moe_affinity_plan(const struct moe_nodetopo *nt, enum moe_affinity_mode mode,
                      hwloc_const_bitmap_t allowed, int ntasks, const int *task_gpu,
                      struct moe_affinity_plan *plan, struct moe_error *err)
{
    hwloc_bitmap_t all = NULL;
    int ncores, rv = -1;

    memset(plan, 0, sizeof(*plan));
    plan->mode = mode;
    if (ntasks < 1) {
        moe_error_set(err, "a step needs at least one task, not %d", ntasks);
        return -1;
    }
    if (init_tasks(nt, plan, ntasks, task_gpu, err) != 0)
        goto out;
    all = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(nt->topo));
    if (!all) {
        moe_error_set(err, "out of memory");
        goto out;
    }
    if (allowed)
        hwloc_bitmap_and(all, all, allowed);
    ncores = allowed_cores(nt, all);
    for (int r = 0; r < ntasks; r++) {
        struct moe_affinity_task *t = &plan->tasks[r];

        t->bind = true;
        if (mode == MOE_AFFINITY_NONE)
            no_bind(t, "--moe-affinity=none");
        else if (t->gpu < 0)
            no_bind(t, "no GPU found for local task %d", r);
        else if (mode == MOE_AFFINITY_EXCLUSIVE && ntasks > ncores)
            no_bind(t, "oversubscribed: %d tasks on %d allowed cores", ntasks, ncores);
    }
    rv = plan_domains(nt, plan, all, err);
out:
    hwloc_bitmap_free(all);
    if (rv != 0)
        moe_affinity_plan_free(plan);
    return rv;
}

void moe_affinity_plan_free(struct moe_affinity_plan *plan)
{
    for (int r = 0; plan->tasks && r < plan->ntasks; r++) {
        hwloc_bitmap_free(plan->tasks[r].cpuset);
        hwloc_bitmap_free(plan->tasks[r].nodeset);
    }
    free(plan->tasks);
    memset(plan, 0, sizeof(*plan));
}

/* An XML declared to be this system (HWLOC_THISSYSTEM=1, for a cached copy
 * of the node's topology) may still be another machine's: the kernel would
 * quietly bind to whatever part of the mask exists. */
static bool cpus_online(hwloc_const_bitmap_t set)
{
    FILE *f = fopen("/sys/devices/system/cpu/online", "r");
    hwloc_bitmap_t online = hwloc_bitmap_alloc();
    char line[4096];
    bool ok = false;

    if (f && online && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        ok = hwloc_bitmap_list_sscanf(online, line) == 0 && hwloc_bitmap_isincluded(set, online);
    }
    if (f)
        fclose(f);
    hwloc_bitmap_free(online);
    return ok;
}

int moe_affinity_bind(const struct moe_nodetopo *nt, const struct moe_affinity_task *t,
                      bool membind, struct moe_error *err)
{
    if (!nt->this_system) {
        moe_error_set(err, "the topology is not this machine's: plan only");
        return -1;
    }
    if (!t->bind || hwloc_bitmap_iszero(t->cpuset)) {
        moe_error_set(err, "nothing to bind: %s", t->why);
        return -1;
    }
    if (!cpus_online(t->cpuset)) {
        moe_error_set(err, "the planned CPUs are not all online here: the topology is not "
                      "this machine's");
        return -1;
    }
    if (hwloc_set_cpubind(nt->topo, t->cpuset, HWLOC_CPUBIND_PROCESS) != 0) {
        moe_error_set(err, "cannot bind to the planned CPUs: %s", strerror(errno));
        return -1;
    }
    if (membind && !hwloc_bitmap_iszero(t->nodeset) &&
        hwloc_set_membind(nt->topo, t->nodeset, HWLOC_MEMBIND_BIND,
                          HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET) != 0) {
        moe_error_set(err, "CPUs bound, but cannot bind memory: %s", strerror(errno));
        return -1;
    }
    return 0;
}
