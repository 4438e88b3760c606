/* The fit stage reconciled: for each fit candidate of a generated study,
 * the peak its run measured (Megatron's largest "max allocated" of every
 * rank and line of results/fit/<id>.log), the memory model's prediction
 * for the rank it stood in for (manifest.json's predicted_mib, written by
 * `moeflow gen`), and fit-python/'s routing evidence, with the flags a
 * reader must see before trusting the number. */
#ifndef MOEFLOW_FIT_REPORT_H
#define MOEFLOW_FIT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "analysis/fit_evidence.h"
#include "core/error.h"

/* Beyond this |error| the row is flagged ("measured beats modeled"). */
#define MOE_FIT_ERROR_FLAG_PCT 10.0
/* Mean rows received per dispatch over balanced beyond this: routing
 * collapsed (garbage activations route every token to the same experts). */
#define MOE_FIT_COLLAPSE_RATIO 1.5

enum moe_fit_flag {
    MOE_FIT_NOT_RUN = 1u << 0,     /* no log */
    MOE_FIT_FAILED = 1u << 1,      /* exit status != 0 or no memory line */
    MOE_FIT_NO_EVIDENCE = 1u << 2, /* fit-python/ did not report: outputs unfilled? */
    MOE_FIT_UNFILLED = 1u << 3,    /* mode observe: collectives left as torch left them */
    MOE_FIT_COLLAPSED = 1u << 4,   /* routing collapsed or non-finite tokens */
    MOE_FIT_OFF = 1u << 5,         /* |error| > MOE_FIT_ERROR_FLAG_PCT */
    MOE_FIT_STALE_RC = 1u << 6,    /* the .rc is older than the log (issue 42) */
    MOE_FIT_SHAPES_MOVED = 1u << 7, /* drop-and-pad, yet the rows per dispatch varied */
};

struct moe_fit_row {
    char id[72];
    char label[200];       /* variable=value */
    char recompute[160];   /* none, full, or the selective modules */
    char routing[16];      /* the contract's semantics.routing: dropless, drop-and-pad, ... */
    int rank, world;
    int tp, cp, pp, vpp, ep, etp;
    double measured_mib;   /* NAN: none */
    double predicted_mib;  /* NAN: the manifest has none */
    int rc;                /* exit status; -1 when no .rc was written */
    struct moe_fit_evidence ev;
    char error[200];       /* the run's last Python exception, if any */
    unsigned flags;        /* enum moe_fit_flag */
};

struct moe_fit_report {
    char study[128];
    struct moe_fit_row *rows;
    size_t n;
};

int moe_fit_report_load(const char *study_dir, struct moe_fit_report *r, struct moe_error *err);
void moe_fit_report_free(struct moe_fit_report *r);

/* (predicted - measured) / measured in percent; NAN when either is. */
double moe_fit_row_error_pct(const struct moe_fit_row *row);

/* The row's verdict in words: "ok", or what is wrong, most serious first. */
const char *moe_fit_row_verdict(const struct moe_fit_row *row, char *buf, size_t len);

/* The largest measured/predicted ratio over the rows a reader can trust
 * (run, evidence sound, filled); 0 when there is none.  `moeflow gen
 * --fit-memory-from` scales the scale stage's memory filter by it. */
double moe_fit_report_ratio(const struct moe_fit_report *r, const struct moe_fit_row **from);

/* Static shapes, which a full-iteration CUDA graph needs (issue 41), as
 * the fit stage's runs show them: drop-and-pad pads every expert's input to
 * its capacity, so each all-to-all dispatch of a sound run receives the
 * same rows.  STATIC: every such run with a dispatch did; VARY: one did
 * not (*from names it); UNKNOWN: no such run (EP 1, dropless, not run,
 * untrusted). */
enum moe_fit_shapes { MOE_FIT_SHAPES_UNKNOWN, MOE_FIT_SHAPES_STATIC, MOE_FIT_SHAPES_VARY };
enum moe_fit_shapes moe_fit_report_shapes(const struct moe_fit_report *r,
                                          const struct moe_fit_row **from);
/* The same in words, for the report's last lines and gen's skip reasons. */
const char *moe_fit_shapes_text(enum moe_fit_shapes s, const struct moe_fit_row *from, char *buf,
                                size_t len);
/* The fit stage's report.json; NULL with err (may be NULL) naming the key
 * when a value could not be made (out of memory), never a row or key left
 * out. */
json_t *moe_fit_report_json(const struct moe_fit_report *r, struct moe_error *err);

#endif
