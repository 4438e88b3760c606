/* moeflow topo: the CPU affinity plan the plugin would apply on a node, so an
 * admin can check it (and a cached XML) before installing the plugin. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/affinity.h"
#include "cli.h"

struct topo_args {
    const char *xml;
    const char *gpus;   /* like SLURM_STEP_GPUS; NULL = every GPU */
    const char *cores;  /* like S_STEP_ALLOC_CORES; NULL = every core */
    enum moe_affinity_mode mode;
    int tasks;          /* 0 = one per GPU */
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: moeflow topo [--xml FILE] [--tasks N] [--mode exclusive|closest|none]\n"
            "                    [--gpus LIST] [--cores LIST]\n"
            "Prints each local task's GPU, PCI bus id, NUMA node and CPU list.\n"
            "  --xml FILE    hwloc XML topology (default: this machine)\n"
            "  --tasks N     tasks on the node (default: one per GPU)\n"
            "  --gpus LIST   the step's GPU indices, as in SLURM_STEP_GPUS (default: all)\n"
            "  --cores LIST  the step's Slurm core indices (hwloc logical cores; default: all)\n"
            "example: moeflow topo --xml g4dn.xml --tasks 8 --cores 0-23\n");
}

static int parse_args(int argc, char **argv, struct topo_args *a)
{
    static const struct option longopts[] = {
        { "xml", required_argument, NULL, 'x' },  { "tasks", required_argument, NULL, 'n' },
        { "mode", required_argument, NULL, 'm' }, { "gpus", required_argument, NULL, 'g' },
        { "cores", required_argument, NULL, 'c' }, { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;
    char *end;

    memset(a, 0, sizeof(*a));
    optind = 1;
    while ((c = getopt_long(argc, argv, "x:n:m:g:c:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'x': a->xml = optarg; break;
        case 'g': a->gpus = optarg; break;
        case 'c': a->cores = optarg; break;
        case 'n':
            a->tasks = (int)strtol(optarg, &end, 10);
            if (*end || a->tasks < 1 || a->tasks > 4096) {
                fprintf(stderr, "moeflow topo: --tasks must be 1..4096, not '%s'\n", optarg);
                return MOE_EXIT_USAGE;
            }
            break;
        case 'm':
            if (moe_affinity_mode_parse(optarg, &a->mode) != 0) {
                fprintf(stderr, "moeflow topo: --mode must be exclusive, closest or none\n");
                return MOE_EXIT_USAGE;
            }
            break;
        case 'h': usage(stdout); return -1;
        default:
            moe_cli_suggest_option(argc, argv, longopts);
            usage(stderr);
            return MOE_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return MOE_EXIT_USAGE;
    }
    return MOE_EXIT_OK;
}

static void print_task(int r, const struct moe_affinity_task *t)
{
    char *cpus = NULL, *numa = NULL;

    hwloc_bitmap_list_asprintf(&cpus, t->cpuset);
    hwloc_bitmap_list_asprintf(&numa, t->nodeset);
    printf("task %d: gpu ", r);
    if (t->gpu < 0)
        printf("- ");
    else
        printf("%d ", t->gpu);
    printf("pci %s numa %s ", t->busid[0] ? t->busid : "-", numa && numa[0] ? numa : "-");
    if (t->bind)
        printf("cpus %s\n", cpus);
    else
        printf("unbound (%s)\n", t->why);
    free(cpus);
    free(numa);
}

/* Builds the request the plugin would see, plans it, prints it. */
static int run(const struct topo_args *a, struct moe_nodetopo *nt)
{
    struct moe_affinity_plan plan;
    struct moe_error err;
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    char all[32];
    int ntasks, *gpu, rc = MOE_EXIT_INVALID_INPUT;

    moe_error_clear(&err);
    snprintf(all, sizeof(all), "0-%d", nt->ngpus - 1);
    ntasks = a->tasks ? a->tasks : (nt->ngpus ? nt->ngpus : 1);
    gpu = calloc((size_t)ntasks, sizeof(int));
    if (!gpu || !allowed)
        goto out;
    if (a->cores && moe_nodetopo_cores_to_cpuset(nt, a->cores, allowed, &err) != 0)
        goto report;
    if (moe_affinity_task_gpus(a->gpus ? a->gpus : nt->ngpus ? all : NULL, ntasks, gpu, &err))
        goto report;
    if (moe_affinity_plan(nt, a->mode, a->cores ? allowed : NULL, ntasks, gpu, &plan, &err))
        goto report;
    printf("node: %s: %d GPUs, %d cores, %d PUs%s\n", a->xml ? a->xml : "this machine",
           nt->ngpus, hwloc_get_nbobjs_by_type(nt->topo, HWLOC_OBJ_CORE),
           hwloc_get_nbobjs_by_type(nt->topo, HWLOC_OBJ_PU),
           nt->this_system ? "" : " (not this machine: plan only)");
    printf("mode: %s, %d tasks\n", moe_affinity_mode_name(a->mode), ntasks);
    for (int r = 0; r < ntasks; r++)
        print_task(r, &plan.tasks[r]);
    moe_affinity_plan_free(&plan);
    rc = MOE_EXIT_OK;
    goto out;
report:
    moe_cli_report(&err);
out:
    free(gpu);
    hwloc_bitmap_free(allowed);
    return rc;
}

int cmd_topo(int argc, char **argv)
{
    struct topo_args a;
    struct moe_nodetopo nt;
    struct moe_error err;
    int rc = parse_args(argc, argv, &a);

    if (rc != MOE_EXIT_OK)
        return rc < 0 ? MOE_EXIT_OK : rc;
    moe_error_clear(&err);
    if (moe_nodetopo_load(&nt, a.xml, &err) != 0) {
        moe_cli_report(&err);
        return a.xml ? MOE_EXIT_INVALID_INPUT : MOE_EXIT_SYSTEM;
    }
    rc = run(&a, &nt);
    moe_nodetopo_free(&nt);
    return rc;
}
