#include "config.h"

#include <stdio.h>

#include "fit/fit_where.h"
#include "study/baseline_fit.h"
#include "study/study_fit.h"
#include "study/study_fit_internal.h"
#include "study/study_internal.h"
#include "study/study_schema.h"

/* A full-iteration graph of a baseline whose fit runs saw the rows per
 * dispatch move would replay one captured shape for all of them
 * (analysis/fit_shapes.c). */
int moe_study_baseline_shapes(const struct moe_study *s, struct moe_error *err)
{
    if (!moe_graphs_full_iteration(&s->baseline) || s->fit_static_shapes >= 0)
        return 0;
    moe_error_at(err, s->path, 0, 0, MOE_SK_BASELINE ".cuda_graph_modules: full_iteration needs "
                 "static shapes, and they are %s: route drop-and-pad with padding to capacity, "
                 "or graph a smaller scope", s->fit_shapes_why);
    return 1;
}

int moe_study_baseline_fit(const struct moe_study *s, struct moe_error *err)
{
    struct moe_layout l = s->baseline.layout;
    struct moe_train t;
    struct moe_machine c;
    struct moe_fit f;
    struct moe_fit_where wh;
    char why[256], describe[200], where[400];

    if (moe_study_layout_check(s, &l, s->workload.mbs, why, sizeof(why)) != MOE_RULE_OK) {
        /* the study reader refuses such a baseline first; nothing to fit */
        moe_error_set(err, "the baseline layout is not one Megatron accepts: %s", why);
        return -1;
    }
    if (moe_study_fit_inputs(s, &t, &c, err) != 0 ||
        moe_fit_layout(&s->model, &l, &s->workload, &t, &c, &f, err) < 0)
        return -1;
    if (f.fits)
        return moe_study_baseline_shapes(s, err);
    if (moe_fit_where(&s->model, &s->workload, &t, &c, s->cluster.gpus_per_node, &wh, err) < 0)
        return -1;
    /* the text stays within MOE_ERROR_TEXT_MAX: the two clauses are the long part */
    moe_error_at(err, s->path, 0, 0, MOE_SK_BASELINE ": does not fit in memory under any "
                 "recompute or offload (%s), and every stage after fit runs it; %s; change "
                 MOE_SK_BASELINE " or " MOE_SK_CLUSTER_NODES " (moeflow layouts STUDY lists "
                 "what fits)",
                 moe_fit_describe(&f, &c, describe, sizeof(describe)),
                 moe_fit_where_text(&wh, &c, s->cluster.gpus_per_node, where, sizeof(where)));
    return 1;
}
