/* A stand-in for sbatch, srun and slurmstepd that loads the built
 * spank_moeflow.so with dlopen and calls its slurm_spank_* entry points in
 * the order Slurm does, so that tests reach every message of the plugin,
 * also those a cluster without GPUs or with Slurm's own environment can
 * never show.  It provides the SPANK and logging functions the plugin
 * takes from the process that loads it (exported with -export-dynamic),
 * and libslurm's hostlist functions for simple lists.
 *
 *   plugin-host PLUGIN CONTEXT [-a ARG]... [-o NAME=VALUE]... [-g NAME=VALUE]...
 *               [-i ITEM=VALUE]... [-n TASKS] [--array=...]
 *
 * CONTEXT: allocator (sbatch), local (srun) or remote (slurmstepd).
 * -a: a plugstack.conf argument.  -o: an option on the command line (its
 * callback runs, twice in slurmstepd, as there).  -g: an option only
 * spank_option_getopt returns (a batch step's case).  -i: a spank_get_item
 * value: jobid, stepid, nodeid, ntasks (local), total, cores, array,
 * arraytask.  -n: tasks to run task_init for (slurmstepd; default 1).
 * The plugin's environment is this process's: set it with env(1).
 * --array... is ignored here; sbatch's plugin reads it from the command line.
 *
 * Prints the options the plugin registers ("register --NAME=ARG"), its log
 * lines ("error: ...", "info: ...", ...), every variable it sets or unsets
 * for a task ("setenv NAME=VALUE", "unsetenv NAME") and each callback's
 * return value ("rc CALLBACK VALUE", "rc option --NAME VALUE"); the
 * plugin's own stderr goes to stderr.  Exits 0 unless the host itself
 * fails. */
#include "config.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#define MAX_ARGS 64

struct handle_value {
    const char *name;
    const char *value;
};

static struct {
    spank_context_t context;
    struct spank_option options[MAX_ARGS];
    int noptions;
    struct handle_value cli[MAX_ARGS], getopt[MAX_ARGS], items[MAX_ARGS];
    int ncli, ngetopt, nitems;
    int task;          /* the task task_init runs for, -1 outside */
} host = { .task = -1 };

static void say(const char *level, const char *fmt, va_list ap)
{
    printf("%s: ", level);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
}

#define LOGGER(fn, level)                   \
    void fn(const char *fmt, ...)           \
    {                                       \
        va_list ap;                         \
        va_start(ap, fmt);                  \
        say(level, fmt, ap);                \
        va_end(ap);                         \
    }
LOGGER(slurm_error, "error")
LOGGER(slurm_info, "info")
LOGGER(slurm_verbose, "verbose")
LOGGER(slurm_debug, "debug")

spank_context_t spank_context(void)
{
    return host.context;
}

const char *spank_strerror(spank_err_t err)
{
    static const char *const text[] = {
        "Generic error", "Bad argument", "Not in task context", "Environment variable exists",
        "No such environment variable", "Buffer too small", "Valid only in remote context",
        "Id/PID does not exist on this node", "Lookup by PID requested, but no tasks running",
        "Item not available from this callback", "Valid only in local or allocator context",
    };

    if (err == ESPANK_SUCCESS)
        return "Success";
    if (err >= ESPANK_ERROR && err <= ESPANK_NOT_LOCAL)
        return text[err - ESPANK_ERROR];
    return "Unknown error";
}

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
    (void)sp;
    if (host.noptions == MAX_ARGS)
        return ESPANK_ERROR;
    host.options[host.noptions++] = *opt;
    printf("register --%s=%s\n", opt->name, opt->arginfo ? opt->arginfo : "");
    return ESPANK_SUCCESS;
}

static const char *lookup(const struct handle_value *v, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return v[i].value;
    return NULL;
}

spank_err_t spank_option_getopt(spank_t sp, struct spank_option *opt, char **optarg)
{
    const char *v = lookup(host.getopt, host.ngetopt, opt->name);

    (void)sp;
    if (!v)
        v = lookup(host.cli, host.ncli, opt->name);
    if (!v)
        return ESPANK_ERROR;
    *optarg = (char *)v;
    return ESPANK_SUCCESS;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
    const char *v = getenv(var);

    (void)sp;
    if (!v)
        return ESPANK_ENV_NOEXIST;
    if (snprintf(buf, (size_t)len, "%s", v) >= len)
        return ESPANK_NOSPACE;
    return ESPANK_SUCCESS;
}

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val, int overwrite)
{
    (void)sp;
    if (host.context != S_CTX_REMOTE)
        return ESPANK_NOT_REMOTE;
    if (getenv("PLUGIN_HOST_SETENV_FAILS"))
        return ESPANK_BAD_ARG;
    printf("setenv %s=%s\n", var, val);
    setenv(var, val, overwrite);
    return ESPANK_SUCCESS;
}

spank_err_t spank_unsetenv(spank_t sp, const char *var)
{
    (void)sp;
    if (host.context != S_CTX_REMOTE)
        return ESPANK_NOT_REMOTE;
    printf("unsetenv %s\n", var);
    unsetenv(var);
    return ESPANK_SUCCESS;
}

static spank_err_t item_u32(const char *name, uint32_t *out)
{
    const char *v = lookup(host.items, host.nitems, name);

    if (!v)
        return ESPANK_NOT_AVAIL;
    *out = (uint32_t)strtoul(v, NULL, 0);
    return ESPANK_SUCCESS;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
    spank_err_t rc = ESPANK_SUCCESS;
    va_list ap;

    (void)sp;
    va_start(ap, item);
    switch (item) {
    case S_JOB_ID: rc = item_u32("jobid", va_arg(ap, uint32_t *)); break;
    case S_JOB_STEPID: rc = item_u32("stepid", va_arg(ap, uint32_t *)); break;
    case S_JOB_NODEID: rc = item_u32("nodeid", va_arg(ap, uint32_t *)); break;
    case S_JOB_LOCAL_TASK_COUNT: rc = item_u32("ntasks", va_arg(ap, uint32_t *)); break;
    case S_JOB_TOTAL_TASK_COUNT: rc = item_u32("total", va_arg(ap, uint32_t *)); break;
    case S_JOB_ARRAY_ID: rc = item_u32("array", va_arg(ap, uint32_t *)); break;
    case S_JOB_ARRAY_TASK_ID: rc = item_u32("arraytask", va_arg(ap, uint32_t *)); break;
    case S_STEP_ALLOC_CORES: {
        const char *v = lookup(host.items, host.nitems, "cores");
        if (v)
            *va_arg(ap, char **) = (char *)v;
        else
            rc = ESPANK_NOT_AVAIL;
        break;
    }
    case S_TASK_ID:
        if (host.task < 0)
            rc = ESPANK_NOT_TASK;
        else
            *va_arg(ap, int *) = host.task;
        break;
    default:
        rc = ESPANK_BAD_ARG;
    }
    va_end(ap);
    return rc;
}

/* libslurm's hostlist, for lists such as "a,n[1-3,5]x" (one bracket per
 * name): enough for the plugin's placement; a malformed list is refused,
 * as libslurm does. */
struct hostlist {
    char **names;
    int n, next;
};

void *slurm_hostlist_create(const char *expr);
char *slurm_hostlist_shift(void *hl);
void slurm_hostlist_destroy(void *hl);

static void push(struct hostlist *hl, const char *name, size_t len)
{
    hl->names = realloc(hl->names, (size_t)(hl->n + 1) * sizeof(char *));
    hl->names[hl->n++] = strndup(name, len);
}

/* One name pattern, expr[0..len). */
static int expand(struct hostlist *hl, const char *p, size_t len)
{
    const char *open = memchr(p, '[', len), *close, *r;
    char name[256];

    if (!open) {
        push(hl, p, len);
        return 0;
    }
    close = memchr(open, ']', len - (size_t)(open - p));
    if (!close)
        return -1;
    for (r = open + 1; r < close;) {
        char *end;
        long lo = strtol(r, &end, 10), hi = lo;
        int width = (int)(end - r);
        if (end == r)
            return -1;
        if (*end == '-')
            hi = strtol(end + 1, &end, 10);
        if (hi < lo || (*end != ',' && end != close))
            return -1;
        for (long i = lo; i <= hi; i++) {
            int n = snprintf(name, sizeof(name), "%.*s%0*ld%.*s", (int)(open - p), p, width, i,
                             (int)(len - (size_t)(close + 1 - p)), close + 1);
            push(hl, name, (size_t)n);
        }
        r = end + (*end == ',');
    }
    return 0;
}

void *slurm_hostlist_create(const char *expr)
{
    struct hostlist *hl = calloc(1, sizeof(*hl));
    const char *p = expr;

    while (*p) {
        size_t len = 0;
        int depth = 0;
        while (p[len] && (depth || p[len] != ',')) {
            depth += p[len] == '[' ? 1 : p[len] == ']' ? -1 : 0;
            len++;
        }
        if (depth || expand(hl, p, len) != 0) {
            slurm_hostlist_destroy(hl);
            return NULL;
        }
        p += len + (p[len] == ',');
    }
    return hl;
}

char *slurm_hostlist_shift(void *p)
{
    struct hostlist *hl = p;

    return hl->next < hl->n ? hl->names[hl->next++] : NULL;
}

void slurm_hostlist_destroy(void *p)
{
    struct hostlist *hl = p;

    while (hl->next < hl->n)
        free(hl->names[hl->next++]);
    free(hl->names);
    free(hl);
}

static void add(struct handle_value *v, int *n, char *arg)
{
    char *eq = strchr(arg, '=');

    if (!eq || *n == MAX_ARGS) {
        fprintf(stderr, "plugin-host: expected NAME=VALUE, not '%s'\n", arg);
        exit(2);
    }
    *eq = '\0';
    v[*n].name = arg;
    v[(*n)++].value = eq + 1;
}

static spank_f *entry(void *dl, const char *name)
{
    void *sym = dlsym(dl, name);
    spank_f *fn;

    memcpy(&fn, &sym, sizeof(fn));
    return sym ? fn : NULL;
}

static int call(void *dl, const char *name, int ac, char **av)
{
    spank_f *fn = entry(dl, name);
    int rc;

    if (!fn)
        return 0;
    rc = fn((spank_t)&host, ac, av);
    printf("rc %s %d\n", name + strlen("slurm_spank_"), rc);
    fflush(stdout);
    return rc;
}

/* The option callbacks, as Slurm runs them: once in sbatch and srun,
 * twice in slurmstepd. */
static int run_options(void)
{
    int rounds = host.context == S_CTX_REMOTE ? 2 : 1;

    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < host.ncli; i++) {
            struct spank_option *opt = NULL;
            for (int k = 0; k < host.noptions; k++)
                if (strcmp(host.options[k].name, host.cli[i].name) == 0)
                    opt = &host.options[k];
            if (!opt) {
                printf("host: unrecognized option --%s\n", host.cli[i].name);
                return -1;
            }
            int rc = opt->cb(opt->val, host.cli[i].value, host.context == S_CTX_REMOTE);
            printf("rc option --%s %d\n", opt->name, rc);
            if (rc != 0 && host.context != S_CTX_REMOTE)
                return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    char *plugargs[MAX_ARGS];
    int nplug = 0, ntasks = 1;
    void *dl;

    if (argc < 3) {
        fprintf(stderr, "usage: plugin-host PLUGIN allocator|local|remote [options]\n");
        return 2;
    }
    if (strcmp(argv[2], "allocator") == 0)
        host.context = S_CTX_ALLOCATOR;
    else if (strcmp(argv[2], "local") == 0)
        host.context = S_CTX_LOCAL;
    else if (strcmp(argv[2], "remote") == 0)
        host.context = S_CTX_REMOTE;
    else {
        fprintf(stderr, "plugin-host: unknown context '%s'\n", argv[2]);
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        if (strncmp(argv[i], "--array", 7) == 0)
            continue;
        if (i + 1 >= argc || argv[i][0] != '-' || nplug == MAX_ARGS) {
            fprintf(stderr, "plugin-host: bad argument '%s'\n", argv[i]);
            return 2;
        }
        switch (argv[i][1]) {
        case 'a': plugargs[nplug++] = argv[++i]; break;
        case 'o': add(host.cli, &host.ncli, argv[++i]); break;
        case 'g': add(host.getopt, &host.ngetopt, argv[++i]); break;
        case 'i': add(host.items, &host.nitems, argv[++i]); break;
        case 'n': ntasks = atoi(argv[++i]); break;
        default:
            fprintf(stderr, "plugin-host: unknown flag '%s'\n", argv[i]);
            return 2;
        }
    }
    plugargs[nplug] = NULL;
    dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        fprintf(stderr, "plugin-host: %s\n", dlerror());
        return 2;
    }
    /* Slurm stops at the first failure; so do we. */
    if (call(dl, "slurm_spank_init", nplug, plugargs) != 0 || run_options() != 0 ||
        call(dl, "slurm_spank_init_post_opt", nplug, plugargs) != 0 ||
        host.context != S_CTX_REMOTE || call(dl, "slurm_spank_user_init", nplug, plugargs) != 0)
        return 0;
    for (host.task = 0; host.task < ntasks; host.task++)
        call(dl, "slurm_spank_task_init", nplug, plugargs);
    return 0;
}
