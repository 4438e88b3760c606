/* Scale: every parallel-folding layout Megatron accepts for a world size,
 * one entry per grid (TP, CP, PP, EP, ETP) with its best VPP, ranked by
 * predicted step time with the scaling rules breaking near-ties, with the
 * rule that decided each place and the rule that excluded each rejected
 * layout. */
#ifndef MOEFLOW_LAYOUTS_H
#define MOEFLOW_LAYOUTS_H

#include <stdbool.h>
#include <stddef.h>

#include "fit/fit.h"
#include "fit/memory.h"
#include "core/model.h"
#include "fit/steptime.h"

/* Megatron's validity rules, in the order they are checked: the pipeline
 * split, the attention grid, the MoE grid, then virtual stages. */
enum moe_rule {
    MOE_RULE_OK = 0,
    MOE_RULE_LAYERS_PP,    /* layers % PP, unless an explicit pipeline layout */
    MOE_RULE_WORLD_DENSE,  /* world = TP*CP*DP*PP */
    MOE_RULE_HEADS_TP,     /* num_heads % TP */
    MOE_RULE_GROUPS_TP,    /* num_query_groups % TP or TP % num_query_groups (GQA) */
    MOE_RULE_FFN_TP,       /* ffn and shared-expert ffn % TP */
    MOE_RULE_SEQ_CP,       /* seq % (2*CP) */
    MOE_RULE_SEQ_TP,       /* seq/CP % TP with sequence parallel */
    MOE_RULE_CP_IMPL,      /* CP needs Transformer Engine */
    MOE_RULE_GBS,          /* gbs % (mbs*DP) */
    MOE_RULE_WORLD_EXPERT, /* world = ETP*EP*EDP*PP */
    MOE_RULE_EXPERTS_EP,   /* num_experts % EP */
    MOE_RULE_FFN_ETP,      /* moe_ffn % ETP */
    MOE_RULE_SP,           /* TP > 1 in an MoE model needs sequence parallel */
    MOE_RULE_VPP_PP,       /* VPP needs PP > 1 */
    MOE_RULE_VPP_LAYERS,   /* layers % (PP*VPP), unless an explicit layout */
    MOE_RULE_COUNT
};

/* Short id for messages and JSON, e.g. "heads%tp". */
const char *moe_rule_id(enum moe_rule r);

/* Sets l->dp and l->edp from the world size, then checks every rule.
 * Returns the first broken rule; why gets a sentence with the numbers. */
enum moe_rule moe_layout_check(const struct moe_model *m, struct moe_layout *l,
                               const struct moe_workload *w, const struct moe_train *t,
                               int world, char *why, size_t len);

/* The rules that rank valid layouts, in priority order.  Step times
 * within MOE_NEAR_TIE of each other count as one (a bucket on a log
 * scale, so the order stays total); the seed's rules decide among them.
 * On a GPU type the model has no calibration for, MOE_SCALE_STEP_TIME is
 * skipped: the seed's rules come first (moe_layout_set.rules_first). */
enum moe_scale_rule {
    MOE_SCALE_NONE = 0,
    MOE_SCALE_FITS,       /* 1 it fits in memory */
    MOE_SCALE_STEP_TIME,  /* 2 faster predicted step (beyond a near-tie) */
    MOE_SCALE_DP,         /* 3 largest DP */
    MOE_SCALE_NVLINK,     /* 4 TP and EP*ETP inside one NVLink domain */
    MOE_SCALE_EP_OVER_ETP,/* 5 EP preferred over ETP */
    MOE_SCALE_PP_NODES,   /* 6 PP (+VPP) only across nodes */
    MOE_SCALE_CP_LONG,    /* 7 CP only when attention activations dominate */
    MOE_SCALE_NEAR_STEP,  /* 8 faster predicted step inside a near-tie */
    MOE_SCALE_CHEAPER_FIT,/* tie-break: lighter recompute, then less memory */
    MOE_SCALE_COUNT
};
#define MOE_NEAR_TIE 0.02

/* The other VPP values of a grid, fastest first; a grid lists at most
 * MOE_VPP_ALT_MAX of them (n_vpp counts all). */
#define MOE_VPP_ALT_MAX 8
struct moe_vpp_alt {
    int vpp;
    bool fits;
    double step_ms;
};

const char *moe_scale_rule_text(enum moe_scale_rule r);

struct moe_layout_entry {
    struct moe_layout layout;
    bool fits;
    int step;               /* fit ladder step: the set's steps[step] are the settings */
    struct moe_memory mem;  /* the estimate at that step */
    long long footprint;    /* TP*CP*PP*ETP: the model parallelism (EP folds into DP) */
    bool nvlink_ok, pp_ok, cp_ok;
    enum moe_scale_rule decided_by; /* why it ranks above the next one */
    struct moe_step time;   /* predicted step time at that ladder step */
    long step_bucket;       /* its near-tie group (MOE_NEAR_TIE), set when ranking */
    int n_vpp;              /* valid VPP values of this grid, this one included */
    struct moe_vpp_alt alt[MOE_VPP_ALT_MAX]; /* the others, min(n_vpp-1, MAX) */
};

struct moe_rejected {
    struct moe_layout layout;
    enum moe_rule rule;
};

struct moe_layout_set {
    struct moe_layout_entry *valid; /* ranked grids, best first: all, or the top asked for */
    size_t n_ranked;                /* entries in valid */
    size_t n_valid;                 /* valid layouts found (every VPP counts) */
    size_t n_fitting;               /* ... of which fit */
    size_t n_grids;                 /* distinct valid grids (TP, CP, PP, EP, ETP) */
    struct moe_layout_entry lightest; /* the valid layout needing the least memory */
    size_t considered;              /* combinations examined */
    size_t rejected_by[MOE_RULE_COUNT];
    struct moe_rejected *rejected;  /* only with keep_rejected */
    size_t n_rejected;
    struct moe_train steps[MOE_FIT_MAX_STEPS]; /* the fit ladder the entries refer to */
    int n_steps;
    bool rules_first;               /* no step time on this GPU type checks the model
                                       (fit/gpu.h): the seed's rules rank before it,
                                       and predicted step time only breaks their ties */
};

/* The entry as a moe_fit (settings of its ladder step included). */
void moe_layout_entry_fit(const struct moe_layout_set *s, const struct moe_layout_entry *e,
                          struct moe_fit *out);

/* Enumerates every TP, CP, PP, VPP, EP, ETP for c->gpus, estimates, fits
 * and times each valid layout, keeps the best VPP of each grid and ranks
 * the grids; top > 0 keeps only the best top grids (a bounded heap, so 10^5
 * layouts cost no memory), exactly the first top of the full ranking.  -1
 * with err on allocation failure or bad input (gpus < 1). */
int moe_layouts_enumerate(const struct moe_model *m, const struct moe_workload *w,
                          const struct moe_train *t, const struct moe_machine *c, size_t top,
                          bool keep_rejected, struct moe_layout_set *out,
                          struct moe_error *err);

void moe_layout_set_free(struct moe_layout_set *s);

/* The fitting entry with the smallest model-parallel footprint (what
 * `moeflow fit` proposes), the fastest among equals; NULL if none fits. */
const struct moe_layout_entry *moe_layouts_smallest_fit(const struct moe_layout_set *s);

/* When nothing fits: the valid layout closest to fitting (NULL when there
 * is no valid layout), and a sentence naming the knob that closes the gap. */
const struct moe_layout_entry *moe_layouts_nearest_miss(const struct moe_layout_set *s,
                                                        const struct moe_machine *c,
                                                        char *advice, size_t len);

/* "Attention: TP2×CP1×DP4×PP2" / "MoE: ETP1×EP4×EDP2×PP2" (UTF-8). */
const char *moe_layout_format_attention(const struct moe_layout *l, char *buf, size_t len);
const char *moe_layout_format_moe(const struct moe_layout *l, char *buf, size_t len);

#endif
