/* State shared by the per-context files of spank_moeflow.so.  SPANK loads
 * one copy of the plugin per process, so one static state is enough. */
#ifndef MOEFLOW_SPANK_PLUGIN_H
#define MOEFLOW_SPANK_PLUGIN_H

#include <slurm/spank.h>

#include "core/error.h"
#include "contract/jobopts.h"
#include "core/plugin_config.h"

#define MOE_LOG_PREFIX "moeflow: "
/* One message: what, source, position and text. */
#define MOE_REPORT_MAX (MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 256)

/* The user options, rows of args.c's table. */
enum moe_opt {
    MOE_OPT_STAGE,
    MOE_OPT_STUDY,
    MOE_OPT_CANDIDATE,
    MOE_OPT_ENFORCE,
    MOE_OPT_AFFINITY,
    MOE_OPT_LAYOUT,
    MOE_OPT_PLACEMENT,
    MOE_OPT_COUNT
};

struct moe_plugin {
    struct moe_plugin_config config;
    struct moe_jobopts opts;
    unsigned given;    /* 1 << enum moe_opt for each option set */
    /* A problem found where failing would drain the node (plugin init in
     * slurmstepd, user_init): kept here and reported from task_init. */
    int deferred_rc;
    char deferred_msg[MOE_REPORT_MAX];
};

extern struct moe_plugin moe_plugin;

/* report.c: the one way a problem is reported,
 *     moeflow: [WHAT: ]SOURCE[:LINE[:COLUMN]]: TEXT
 * SOURCE is err's own (lib/ sets it: a file, a plugstack argument), else
 * `source`, the one the caller names (the study directory, the map, the
 * variable a value came from); left out only where TEXT already names it.
 * what may be NULL.  Returns -1. */
enum moe_report_to {
    MOE_REPORT_ERROR,   /* slurm_error: sbatch/srun print it, slurmstepd logs it */
    MOE_REPORT_INFO,    /* slurm_info: a warning, nothing fails */
    MOE_REPORT_TASK,    /* the task's stderr: the job's output */
    MOE_REPORT_DEFER,   /* kept for task_init, which reports it and fails;
                           the first one is kept */
};
int moe_report(enum moe_report_to to, const char *what, const char *source,
               const struct moe_error *err);
/* A SPANK call that failed: "moeflow: SOURCE: DOING: spank_strerror(rc)"; -1. */
int moe_report_spank(enum moe_report_to to, const char *source, const char *doing,
                     spank_err_t rc);
/* task_init: reports the deferred problem, if any; -1 then, else 0. */
int moe_report_deferred(void);

/* args.c: the user options.  register runs in every context's init;
 * recover in slurmstepd, for values whose callback did not run there. */
int moe_args_register(spank_t sp);
int moe_args_recover(spank_t sp);

static inline bool moe_option_given(enum moe_opt opt)
{
    return moe_plugin.given & (1u << opt);
}

/* contract.c: the measurement contract. */
int moe_contract_at_submit(void);
int moe_submission_rules(bool array);
int moe_contract_at_task(spank_t sp, bool batch);
void moe_contract_user_init(spank_t sp);
/* The parallel layout of the candidate this task runs (from the study's
 * declared contract), for placement when no --moe-layout is given. */
struct moe_layout;
bool moe_contract_candidate_layout(spank_t sp, struct moe_layout *l);

/* topology.c: this node's topology, loaded once per step.  prepare runs as
 * root in init_post_opt (it may refresh the per-boot cache); get loads on
 * first use otherwise.  NULL and err when it cannot be loaded. */
struct moe_nodetopo;
void moe_topology_prepare(spank_t sp, bool batch);
const struct moe_nodetopo *moe_topology_get(struct moe_error *err);
/* Where it comes from, for messages: hwloc_xml= or the cache directory. */
const char *moe_topology_source(void);

/* Per-context handlers; each returns 0 or -1 (never a positive ESPANK_*). */
int moe_alloc_post_opt(spank_t sp);
int moe_srun_post_opt(spank_t sp);
int moe_stepd_post_opt(spank_t sp);
int moe_stepd_user_init(spank_t sp);
int moe_stepd_task_init(spank_t sp);

#endif
