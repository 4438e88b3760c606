/* moeflow topo: the CPU affinity plan the plugin would apply on a node, so an
 * admin can check it (and a cached XML) before installing the plugin.  On
 * the node itself it reads the topology where the plugin does: the per-boot
 * cache when that can be trusted, else live discovery, and says which. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/affinity.h"
#include "topology/topo_cache.h"
#include "cli.h"
#include "options.h"

#define SOURCE_MAX (MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 128)

struct topo_args {
    const char *xml;
    const char *cache_dir; /* NULL = the plugin's default */
    const char *gpus;   /* like SLURM_STEP_GPUS; NULL = every GPU */
    const char *cores;  /* like S_STEP_ALLOC_CORES; NULL = every core */
    enum moe_affinity_mode mode;
    int tasks;          /* 0 = one per GPU */
};

static int set_mode(void *args, const struct moe_opt *o, char *value)
{
    (void)o;
    if (moe_affinity_mode_parse(value, &((struct topo_args *)args)->mode) != 0)
        return moe_cli_error(MOE_EXIT_USAGE,
                             "moeflow topo: --mode must be exclusive, closest or none\n");
    return MOE_CLI_RUN;
}

/* --gpus LIST: the name before fit and layouts' --gpus N (a count) made
 * it ambiguous across commands. */
static int set_gpus_old(void *args, const struct moe_opt *o, char *value)
{
    moe_cli_note_alias("--gpus LIST", "--step-gpus LIST");
    return moe_opt_string(args, o, value);
}

static const struct moe_opt topo_opts[] = {
    { "xml", required_argument, 'x', "FILE", "hwloc XML topology (default: this machine)",
      .set = moe_opt_string, .field = offsetof(struct topo_args, xml) },
    { "cache-dir", required_argument, 'C', "DIR",
      "the plugin's topology cache, read only (default: " MOE_TOPO_CACHE_DIR ")",
      .set = moe_opt_string, .field = offsetof(struct topo_args, cache_dir) },
    { "tasks", required_argument, 'n', "N", "tasks on the node (default: one per GPU)",
      .set = moe_opt_int, .field = offsetof(struct topo_args, tasks), .min = 1, .max = 4096 },
    { "mode", required_argument, 'm', "MODE",
      "how tasks share the cores near their GPUs: exclusive\n"
      "(default: a domain's cores split evenly, without overlap,\n"
      "SMT siblings together), closest (each task its GPU's\n"
      "whole domain) or none (Slurm's binding stays); see\n"
      "moeflow-affinity(7)", .set = set_mode },
    { "step-gpus", required_argument, 'g', "LIST",
      "the step's GPU indices, as in SLURM_STEP_GPUS (default: all)", .set = moe_opt_string,
      .field = offsetof(struct topo_args, gpus) },
    { "gpus", required_argument, 0, "LIST", NULL, .set = set_gpus_old,
      .field = offsetof(struct topo_args, gpus) },
    { "cores", required_argument, 'c', "LIST",
      "the step's Slurm core indices (hwloc logical cores; default: all)", .set = moe_opt_string,
      .field = offsetof(struct topo_args, cores) },
    { .name = NULL },
};

static const struct moe_cli topo_cli = {
    .usage = "usage: moeflow topo [--xml FILE | --cache-dir DIR] [--tasks N]\n"
             "                    [--mode exclusive|closest|none] [--step-gpus LIST]\n"
             "                    [--cores LIST]\n"
             "Prints each local task's GPU, PCI bus id, NUMA node and CPU list.\n",
    .opts = topo_opts,
    .column = 19,
    .tail = "example: moeflow topo --xml g4dn.xml --tasks 8 --cores 0-23\n",
};

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

/* Builds the request the plugin would see, plans it, prints it; source
 * says where the topology came from. */
static int run(const struct topo_args *a, struct moe_nodetopo *nt, const char *source)
{
    struct moe_affinity_plan plan;
    struct moe_error err;
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    char all[32];
    int ntasks, *gpu, rc = MOE_EXIT_INVALID_INPUT;

    moe_error_clear(&err);
    /* fits: "0-" and an int */
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
    printf("node: %s: %d GPUs, %d cores, %d PUs%s\n", source, nt->ngpus,
           hwloc_get_nbobjs_by_type(nt->topo, HWLOC_OBJ_CORE),
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

/* This machine as the plugin sees it, never writing the cache. */
static int load_here(const struct topo_args *a, struct moe_nodetopo *nt, char *source,
                     struct moe_error *err)
{
    struct moe_topo_cache c;
    enum moe_topo_cache_outcome how;
    char note[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 64];

    moe_topo_cache_defaults(&c, a->cache_dir);
    if (moe_topo_cache_load(&c, false, nt, &how, note, sizeof(note), err) != 0)
        return -1;
    if (how == MOE_TOPO_CACHE_HIT)
        /* a message: where the topology came from, for people */
        snprintf(source, SOURCE_MAX, "this machine (topology cache in %s)", c.dir);
    else
        /* a message: as above */
        snprintf(source, SOURCE_MAX, "this machine (discovered live; %s)", note);
    return 0;
}

int cmd_topo(int argc, char **argv)
{
    struct topo_args a = { 0 };
    struct moe_nodetopo nt;
    struct moe_error err;
    char source[SOURCE_MAX];
    int first, rc = moe_cli_parse(&topo_cli, argc, argv, &a, &first);

    if (rc != MOE_CLI_RUN)
        return rc;
    if (first < argc)
        return moe_cli_misuse(&topo_cli);
    moe_error_clear(&err);
    if (a.xml && a.cache_dir)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow topo: --xml and --cache-dir exclude each "
                             "other (hwloc_xml= makes the plugin skip the cache)\n");
    if (a.xml ? moe_nodetopo_load(&nt, a.xml, &err) != 0 : load_here(&a, &nt, source, &err) != 0)
        return moe_cli_fail(&err, a.xml ? MOE_EXIT_INVALID_INPUT : MOE_EXIT_SYSTEM);
    rc = run(&a, &nt, a.xml ? a.xml : source);
    moe_nodetopo_free(&nt);
    return rc;
}
