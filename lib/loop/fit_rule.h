/* Fit -> baseline: the least recompute whose measured peak fits.  The fit
 * stage runs the recompute ladder (none, selective one module at a time,
 * full; candidates.c fit_plan) on the baseline layout, one GPU standing in
 * for each rank that matters; its answer is the first rung of the ladder
 * whose every rank's measured peak is at most the usable memory (the GPU
 * less the study's headroom).  A rung that ran out of memory has answered
 * too: it does not fit.  A rung whose measurement cannot be trusted
 * (fit_report.h flags: unfilled collectives, collapsed routing, no
 * evidence) is never chosen on that number.  When no rung fits and some
 * cannot say, nothing is decided: the baseline keeps the recompute the
 * study wrote (the model found it fits, study/baseline_fit.h); only when
 * every rung was measured too large does the study not fit. */
#ifndef MOEFLOW_LOOP_FIT_RULE_H
#define MOEFLOW_LOOP_FIT_RULE_H

#include <stddef.h>

#include "analysis/fit_report.h"

#define MOE_LOOP_FIT_RUNGS_MAX 16

struct moe_loop_rung {
    char recompute[160];     /* as the fit report names it */
    size_t rows[4];          /* its rows in the report (one per rank it stands in for) */
    size_t n_rows;
    double peak_mib;         /* the largest measured of its rows; NAN when none */
    int fits;                /* 1 fits, 0 does not, -1 cannot say */
    char why[300];           /* why it fits, does not, or cannot be judged */
};

struct moe_loop_fit {
    struct moe_loop_rung rungs[MOE_LOOP_FIT_RUNGS_MAX];
    size_t n;
    int chosen;              /* index into rungs; -1 when none fits or none can say */
    bool none_fits;          /* every rung measured too large or ran out of memory */
    double usable_mib;
};

#endif
