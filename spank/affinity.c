/* CPU affinity in slurmstepd: plan once per node and step in user_init,
 * bind each task in task_init (after Slurm's own binding and GPU env). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "enforce.h"
#include "topology/nodetopo.h"
#include "plugin.h"

static struct {
    enum moe_affinity_mode mode;
    bool verbose, membind;
    bool planned;                   /* plan holds one entry per local task */
    char why[MOE_ERROR_TEXT_MAX];   /* when !planned: why Slurm's binding stays */
    const struct moe_nodetopo *nt;  /* moe_topology_get's, shared */
    struct moe_affinity_plan plan;
} aff;

static void effective_options(void)
{
    const struct moe_affinity_opts *o = &moe_enforce.affinity;
    bool given = moe_option_given(MOE_OPT_AFFINITY);

    aff.mode = moe_plugin.config.affinity;
    /* A denied override was refused at submission; here it is just ignored. */
    if (given && o->mode_set && moe_plugin.config.affinity_user_override)
        aff.mode = o->mode;
    aff.verbose = given && o->verbose;
    aff.membind = given && o->membind;
}

static void step_env(spank_t sp, const char *name, char *buf, size_t len)
{
    if (spank_getenv(sp, name, buf, len) != ESPANK_SUCCESS)
        buf[0] = '\0';
}

/* Fills the plan, or aff.why; never fails the step: Slurm's binding stays. */
static void plan(spank_t sp)
{
    uint32_t ntasks = 0;
    char *cores = NULL, gpus[1024];
    hwloc_bitmap_t allowed = NULL;
    int *task_gpu = NULL;
    struct moe_error err;
    char buf[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 8];
    spank_err_t rc;

    moe_error_clear(&err);
    if ((rc = spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks)) != ESPANK_SUCCESS) {
        /* a message: why Slurm's binding stays, cut at worst */
        snprintf(aff.why, sizeof(aff.why), "cannot read the local task count: %s",
                 spank_strerror(rc));
        return;
    }
    if (ntasks == 0) {
        snprintf(aff.why, sizeof(aff.why), "no local task"); /* fits: a constant */
        return;
    }
    /* SLURM_STEP_GPUS holds node-level indices; CUDA_VISIBLE_DEVICES may be
     * renumbered inside a device cgroup. */
    step_env(sp, "SLURM_STEP_GPUS", gpus, sizeof(gpus));
    if (!gpus[0])
        step_env(sp, "CUDA_VISIBLE_DEVICES", gpus, sizeof(gpus));
    if (!gpus[0] || strcmp(gpus, "NoDevFiles") == 0) {
        /* nothing to bind next to: spare every launch the hwloc load */
        snprintf(aff.why, sizeof(aff.why), "the step has no GPU"); /* fits: a constant */
        return;
    }
    aff.nt = moe_topology_get(&err);
    if (!aff.nt)
        goto fail;
    allowed = hwloc_bitmap_alloc();
    task_gpu = calloc(ntasks, sizeof(int));
    if (!allowed || !task_gpu) {
        moe_error_set(&err, "out of memory");
        goto fail;
    }
    if ((rc = spank_get_item(sp, S_STEP_ALLOC_CORES, &cores)) != ESPANK_SUCCESS) {
        moe_error_set(&err, "cannot read the step's allocated cores: %s", spank_strerror(rc));
        goto fail;
    }
    if (!cores || !cores[0]) {
        moe_error_set(&err, "the step has no allocated cores");
        goto fail;
    }
    if (moe_nodetopo_cores_to_cpuset(aff.nt, cores, allowed, &err) != 0)
        goto fail;
    if (moe_affinity_task_gpus(gpus, (int)ntasks, task_gpu, &err) != 0 ||
        moe_affinity_plan(aff.nt, aff.mode, allowed, (int)ntasks, task_gpu, &aff.plan, &err))
        goto fail;
    aff.planned = true;
    goto out;
fail:
    /* a message: the error, as much of it as the reason holds */
    snprintf(aff.why, sizeof(aff.why), "%s", moe_error_format(&err, buf, sizeof(buf)));
out:
    hwloc_bitmap_free(allowed);
    free(task_gpu);
}

bool moe_affinity_wanted(void)
{
    effective_options();
    return aff.mode != MOE_AFFINITY_NONE || aff.verbose;
}

int moe_affinity_user_init(spank_t sp)
{
    if (!moe_affinity_wanted()) {
        snprintf(aff.why, sizeof(aff.why), "--moe-affinity=none"); /* fits: a constant */
        return 0;
    }
    plan(sp);
    return 0;
}

static void bind(const struct moe_affinity_task *t, int task)
{
    struct moe_error err;
    char what[32];

    moe_error_clear(&err);
    if (!aff.nt->this_system) {
        if (aff.verbose)
            fprintf(stderr, MOE_LOG_PREFIX "task %d: plan only, %s is not this machine\n", task,
                    moe_plugin.config.hwloc_xml);
        return;
    }
    if (moe_affinity_bind(aff.nt, t, aff.membind, &err) != 0) {
        snprintf(what, sizeof(what), "task %d", task); /* fits: an int has 11 characters */
        moe_report(MOE_REPORT_TASK, what, moe_topology_source(), &err);
    }
}

static void report(const struct moe_affinity_task *t, int task, const char *cpus,
                   const char *numa)
{
    if (!aff.verbose)
        return;
    if (t->bind)
        fprintf(stderr, MOE_LOG_PREFIX "task %d: gpu %d pci %s numa %s cpus %s (%s)\n", task,
                t->gpu, t->busid, numa[0] ? numa : "-", cpus, moe_affinity_mode_name(aff.mode));
    else
        fprintf(stderr, MOE_LOG_PREFIX "task %d: Slurm's binding stays: %s\n", task, t->why);
}

/* Never fails: a task we cannot place better keeps what Slurm gave it. */
int moe_affinity_task_init(spank_t sp)
{
    int task = 0;
    const struct moe_affinity_task *t;
    char *cpus = NULL, *numa = NULL;

    if (spank_get_item(sp, S_TASK_ID, &task) != ESPANK_SUCCESS)
        return 0;
    moe_enforce_setenv(sp, "LOCAL_RANK", "%d", task);
    if (!aff.planned || task < 0 || task >= aff.plan.ntasks) {
        moe_enforce_setenv(sp, "MOEFLOW_AFFINITY_SKIPPED", "%s",
                           aff.why[0] ? aff.why : "no plan for this task");
        if (aff.verbose)
            fprintf(stderr, MOE_LOG_PREFIX "task %d: Slurm's binding stays: %s\n", task,
                    aff.why[0] ? aff.why : "no plan for this task");
        return 0;
    }
    t = &aff.plan.tasks[task];
    hwloc_bitmap_list_asprintf(&cpus, t->cpuset);
    hwloc_bitmap_list_asprintf(&numa, t->nodeset);
    if (t->gpu >= 0) {
        moe_enforce_setenv(sp, "MOEFLOW_GPU_PCI", "%s", t->busid);
        moe_enforce_setenv(sp, "MOEFLOW_NUMA", "%s", numa ? numa : "");
    }
    if (t->bind) {
        moe_enforce_setenv(sp, "MOEFLOW_CPUSET", "%s", cpus ? cpus : "");
        bind(t, task);
    } else {
        moe_enforce_setenv(sp, "MOEFLOW_AFFINITY_SKIPPED", "%s", t->why);
    }
    report(t, task, cpus ? cpus : "", numa ? numa : "");
    free(cpus);
    free(numa);
    return 0;
}
