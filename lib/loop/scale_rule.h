/* Scale -> baseline, and a step-time model that learns from the layouts
 * measured.
 *
 * The baseline of profile, retune and validate is the statistically
 * fastest layout the scale stage measured: the one with the lowest median
 * step over the screening window, unless another is not significantly
 * slower (two-sided Mann-Whitney, analysis/abtest.h, at alpha), in which
 * case the tie keeps the stage's baseline when it is among them (a layout
 * is not moved without evidence that another is faster), and goes to the
 * layout earliest in the seed's rule order (the order the scale rules rank
 * layouts in, fit/layouts.h) when it is not.  A baseline whose screening
 * steps spread more than MOE_REPORT_MAX_REF_CV stays: nothing is adopted
 * on a noisy reference.
 *
 * The measured steps correct the model.  Each prediction is split into
 * three groups of terms (fit/steptime.h): the GPU's own work (compute,
 * routing, unfused scores, pipeline bubble), exposed communication (TP,
 * CP, EP, ETP, PP, DP) and host time not hidden (launch, dispatcher syncs,
 * optimizer).  One factor per group is fitted to the measured medians by
 * least squares on the relative error, pulled toward 1 (ridge, weight
 * MOE_LOOP_RIDGE) so that three layouts cannot move a group no layout
 * exercised; each factor stays within [0.1, 10].  The corrected model
 * re-ranks every layout; when the measured best was not the predicted best
 * or any layout's error was beyond MOE_LOOP_RERANK_PCT, the layouts it now
 * ranks within its own remaining error of the best are the next round.
 * "Was not the predicted best" means measured significantly slower than
 * the fastest: among layouts that tie, the model was not wrong. */
#ifndef MOEFLOW_LOOP_SCALE_RULE_H
#define MOEFLOW_LOOP_SCALE_RULE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "fit/steptime.h"

#define MOE_LOOP_RIDGE 0.001
#define MOE_LOOP_RERANK_PCT MOE_STEPTIME_BAND_PCT
#define MOE_LOOP_GROUPS 3        /* gpu, communication, host */

struct moe_loop_layout {
    char id[72];                 /* the scale candidate; "" for one not run */
    char name[64];               /* tp1.cp1.pp1.vpp1.ep2.etp1 */
    int order;                   /* the seed's rule order (0 first) */
    bool baseline;               /* the stage's reference */
    struct moe_step pred;        /* the model's terms; pred.step_ms <= 0: none */
    const double *samples;       /* measured step times (ms) in the window; NULL: not run */
    size_t n;
    double median;               /* set by moe_loop_scale_decide; NAN when not run */
    double corrected_ms;         /* the corrected model's step */
    double error_pct;            /* (predicted - measured) / measured; NAN when not run */
};

struct moe_loop_scale {
    int best;                    /* the layout adopted; -1 when none was measured */
    int fastest;                 /* the lowest median */
    int predicted_best;          /* the lowest prediction among those measured */
    double p_best;               /* Mann-Whitney p of best against fastest (1 when same) */
    double factor[MOE_LOOP_GROUPS];
    double max_error_pct;        /* largest |error| before correction */
    double residual_pct;         /* largest |error| after correction */
    bool rerank;
    char why[400];               /* the choice in words */
    char rerank_why[300];
};

#endif
