/* Where a configuration that does not fit would: the answer `moeflow gen`
 * and `moeflow run` give when they refuse a study whose baseline cannot
 * fit under any recompute or offload, and `moeflow fit` gives in place of
 * a step time.  A plan built on a baseline that cannot run is 25 jobs that
 * each end out of memory. */
#ifndef MOEFLOW_FIT_WHERE_H
#define MOEFLOW_FIT_WHERE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "fit/fit.h"
#include "fit/layouts.h"

/* GPU counts tried: the machine's, then twice as many, ... up to this
 * factor (a 16-GPU study of a 671B model asks for 8x). */
#define MOE_FIT_WHERE_MAX_FACTOR 256

struct moe_fit_where {
    bool found;
    int gpus;                  /* the smallest GPU count tried with a fitting layout */
    struct moe_layout layout;  /* its smallest fitting layout (moe_layouts_smallest_fit) */
    double peak_gib;           /* that layout's modeled peak per GPU */
    const char *settings;      /* the fit step it needs: "none", "selective", ... */
};

/* The smallest layout that fits on c's GPUs, else on the smallest of 2x,
 * 4x, ... MOE_FIT_WHERE_MAX_FACTOR x as many GPUs in whole nodes of
 * gpus_per_node.  A pinned PP/VPP (an explicit pipeline layout) is let go:
 * a new layout needs a new split.  out->found false when none fits
 * within the factor; -1 with err only on allocation failure. */
int moe_fit_where(const struct moe_model *m, const struct moe_workload *w,
                  const struct moe_train *t, const struct moe_machine *c, int gpus_per_node,
                  struct moe_fit_where *out, struct moe_error *err);

/* One sentence: "the smallest layout that fits on 16 GPUs is Attention:
 * ... (61.2 GiB, selective recompute)" or "no layout fits on 16 GPUs; the
 * smallest GPU count tried with one that does is 64 (8 nodes): ...". */
const char *moe_fit_where_text(const struct moe_fit_where *wh, const struct moe_machine *c,
                               int gpus_per_node, char *buf, size_t len);

#endif
