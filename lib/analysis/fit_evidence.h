/* The evidence line the fit stage's fit-python/ prints when a run under
 * Megatron's fake process group ends (templates/fit-python/):
 *   moeflow-fake-collectives: torch=V mode=fill|observe native=A,B
 *     filled=kind:N,... dispatch_calls=N rows_min=N rows_mean=X rows_max=N
 *     rows_balanced=X nonfinite=N
 * rows_*: rows one MoE token dispatch received, against the rows balanced
 * routing returns to the rank (what it sent). */
#ifndef MOEFLOW_FIT_EVIDENCE_H
#define MOEFLOW_FIT_EVIDENCE_H

#include <stdbool.h>

struct moe_fit_evidence {
    bool seen;               /* the line was found */
    bool not_installed;      /* "moeflow-fake-collectives: not installed: ..." */
    char torch[32];
    char mode[16];           /* fill: outputs filled; observe: left as torch left them */
    char native[128];        /* collectives the installed torch fills itself */
    char filled[256];        /* kind:count of those fit-python/ filled */
    long dispatch_calls, rows_min, rows_max, nonfinite;
    double rows_mean, rows_balanced;
};

/* Mean rows received per dispatch over the balanced count; 0 when the run
 * made no all-to-all dispatch (EP 1, the allgather dispatcher). */
double moe_fit_evidence_imbalance(const struct moe_fit_evidence *ev);

#endif
