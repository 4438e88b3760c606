/* Rank placement in slurmstepd: every node computes the same node order
 * from the same inputs (step node list, NVLink-domain map, layout), with no
 * communication, and each task gets its permuted RANK. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

#include "topology/domains.h"
#include "enforce.h"
#include "topology/hostlist.h"
#include "plugin.h"

static struct {
    bool placed;
    enum moe_placement_mode mode;
    struct moe_layout layout;
    struct moe_domains domains;
    char **nodes;
    int nnodes, *dom, gpn;
    uint32_t nodeid, jobid;
    struct moe_placement plan;
} pl;

/* Problems of the admin's setup or of an uneven step: placement is skipped
 * (with a warning) unless the user asked for strict mode.  source: where
 * the problem lies (the map, a variable), when err does not say. */
static int skip(const char *source, const struct moe_error *err)
{
    bool strict = pl.mode == MOE_PLACEMENT_STRICT;

    moe_report(strict ? MOE_REPORT_DEFER : MOE_REPORT_INFO,
               strict ? "nvlink-strict" : "rank placement skipped", source, err);
    return 0;
}

/* The same for what the step itself shows; rc: the SPANK call that failed. */
static int skip_step(const char *text, spank_err_t rc)
{
    struct moe_error err;

    moe_error_clear(&err);
    if (rc != ESPANK_SUCCESS)
        moe_error_set(&err, "%s: %s", text, spank_strerror(rc));
    else
        moe_error_set(&err, "%s", text);
    return skip(NULL, &err);
}

static int skip_quietly(const char *msg)
{
    slurm_verbose(MOE_LOG_PREFIX "the candidate's layout is not placed: %s", msg);
    return 0;
}

static int load_inputs(spank_t sp)
{
    const char *var = "SLURM_STEP_NODELIST";
    char list[65536];
    struct moe_error err;
    spank_err_t rc;

    moe_error_clear(&err);
    if (moe_plugin.config.topology[0] &&
        moe_domains_load(&pl.domains, moe_plugin.config.topology, &err) != 0)
        return skip(moe_plugin.config.topology, &err), -1;
    rc = spank_getenv(sp, var, list, sizeof(list));
    if (rc != ESPANK_SUCCESS) {
        var = "SLURM_JOB_NODELIST";
        rc = spank_getenv(sp, var, list, sizeof(list));
    }
    if (rc != ESPANK_SUCCESS)
        return skip_step("no SLURM_STEP_NODELIST in the step's environment", rc), -1;
    if (moe_hostlist_expand(list, &pl.nodes, &pl.nnodes, &err) != 0)
        return skip(var, &err), -1;
    return 0;
}

/* Every node must run the same number of tasks, one per GPU rank slot. */
static int step_shape(spank_t sp)
{
    uint32_t local = 0, total = 0;
    spank_err_t rc;

    if ((rc = spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local)) != ESPANK_SUCCESS ||
        (rc = spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total)) != ESPANK_SUCCESS ||
        (rc = spank_get_item(sp, S_JOB_NODEID, &pl.nodeid)) != ESPANK_SUCCESS ||
        (rc = spank_get_item(sp, S_JOB_ID, &pl.jobid)) != ESPANK_SUCCESS)
        return skip_step("cannot read the step's task counts", rc), -1;
    if (local == 0 || total != local * (uint32_t)pl.nnodes || pl.nodeid >= (uint32_t)pl.nnodes)
        return skip_step("tasks are not spread evenly over the step's nodes", ESPANK_SUCCESS), -1;
    pl.gpn = (int)local;
    return 0;
}

/* Names the first group forced across domains, for strict mode. */
static void refuse_split(void)
{
    const struct moe_placement *p = &pl.plan;
    int lo = p->first_split * p->block, hi = lo + p->block - 1;
    int a = p->order[lo / p->gpn], b = p->order[hi / p->gpn];
    const char *group = pl.layout.etp * pl.layout.ep >= pl.layout.tp * pl.layout.cp ? "EP" : "TP";
    struct moe_error err;

    moe_error_clear(&err);
    moe_error_set(&err, "the %s group of ranks %d-%d spans NVLink domains %s (%s) and %s (%s); "
                  "%d of %d groups fit in one domain", group, lo, hi,
                  pl.dom[a] >= 0 ? pl.domains.domains[pl.dom[a]].name : "node-local", pl.nodes[a],
                  pl.dom[b] >= 0 ? pl.domains.domains[pl.dom[b]].name : "node-local", pl.nodes[b],
                  p->intra, p->blocks);
    moe_report(MOE_REPORT_DEFER, "nvlink-strict", NULL, &err);
}

/* A map that names none of the step's nodes is another cluster's, or its
 * node names are wrong (a hostlist typo reads as one odd host name):
 * placing as if every node were its own domain would hide that. */
static bool names_any_node(struct moe_error *err)
{
    for (int i = 0; i < pl.nnodes; i++)
        if (pl.dom[i] >= 0)
            return true;
    moe_error_set(err, "%.300s names none of this step's nodes (%.64s%s): check the node "
                  "names in the map against 'scontrol show hostnames'", moe_plugin.config.topology,
                  pl.nnodes ? pl.nodes[0] : "", pl.nnodes > 1 ? ", ..." : "");
    return false;
}

int moe_placement_user_init(spank_t sp)
{
    struct moe_error err;
    char buf[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 8];
    bool from_study = false;

    pl.mode = moe_option_given(MOE_OPT_PLACEMENT) ? moe_enforce.placement : MOE_PLACEMENT_NVLINK;
    if (pl.mode == MOE_PLACEMENT_NONE)
        return 0;
    if (!moe_enforce.layout[0]) {
        /* the candidate's own layout, when the job runs a generated study */
        if (!moe_contract_candidate_layout(sp, &pl.layout))
            return 0; /* nothing to place without a layout */
        from_study = true;
    }
    if (load_inputs(sp) != 0 || step_shape(sp) != 0)
        return 0;
    moe_error_clear(&err);
    pl.dom = calloc((size_t)pl.nnodes, sizeof(int));
    if (!pl.dom)
        return skip_step("out of memory", ESPANK_SUCCESS);
    for (int i = 0; i < pl.nnodes; i++)
        pl.dom[i] = moe_domains_find(&pl.domains, pl.nodes[i]);
    if (moe_plugin.config.topology[0] && !names_any_node(&err))
        return skip(moe_plugin.config.topology, &err);
    if ((!from_study && moe_layout_parse(moe_enforce.layout, &pl.layout, &err) != 0) ||
        moe_layout_fit(&pl.layout, pl.nnodes * pl.gpn, &err) != 0 ||
        moe_placement_plan(&pl.layout, pl.nnodes, pl.gpn, pl.dom, &pl.plan, &err) != 0) {
        /* a fit-stage step runs one GPU for a rank of the full job: the
         * study's layout is not this step's, so there is nothing to place */
        if (from_study)
            return skip_quietly(moe_error_format(&err, buf, sizeof(buf)));
        /* the user's layout does not fit the step: fail its tasks */
        snprintf(buf, sizeof(buf), "--moe-layout=%s", moe_enforce.layout);
        moe_report(MOE_REPORT_DEFER, buf, NULL, &err);
        return 0;
    }
    if (pl.mode == MOE_PLACEMENT_STRICT && pl.plan.intra < pl.plan.blocks)
        refuse_split();
    pl.placed = true;
    return 0;
}

int moe_placement_task_init(spank_t sp)
{
    const struct moe_placement *p = &pl.plan;
    int task = 0, rank, master = 0, d;

    if (!pl.placed || spank_get_item(sp, S_TASK_ID, &task) != ESPANK_SUCCESS)
        return 0;
    rank = p->pos[pl.nodeid] * pl.gpn + task;
    master = p->order[0];
    d = pl.dom[pl.nodeid];
    if (moe_enforce_setenv(sp, "RANK", "%d", rank) || moe_enforce_setenv(sp, "WORLD_SIZE", "%d", p->world) ||
        moe_enforce_setenv(sp, "LOCAL_RANK", "%d", task) ||
        moe_enforce_setenv(sp, "LOCAL_WORLD_SIZE", "%d", pl.gpn) ||
        moe_enforce_setenv(sp, "MASTER_ADDR", "%s", pl.nodes[master]) ||
        /* a port per job, so two jobs sharing a node do not collide */
        moe_enforce_setenv(sp, "MASTER_PORT", "%u", 20000u + pl.jobid % 20000u) ||
        moe_enforce_setenv(sp, "MOEFLOW_NVLINK_DOMAIN", "%s",
                           d >= 0 ? pl.domains.domains[d].name : pl.nodes[pl.nodeid]) ||
        moe_enforce_setenv(sp, "MOEFLOW_PLACEMENT", "%d/%d blocks of %d ranks in one domain (bound %d)",
                           p->intra, p->blocks, p->block, p->bound))
        return -1;
    if (rank == 0 && p->intra < p->blocks)
        fprintf(stderr, MOE_LOG_PREFIX "warning: %d of %d TP/EP blocks of %d ranks span NVLink "
                "domains (best possible: %d in one domain)\n", p->blocks - p->intra, p->blocks,
                p->block, p->bound);
    return 0;
}
