/* report.c's functions that only lib/analysis (and its unit tests) use. */
#ifndef MOEFLOW_REPORT_INTERNAL_H
#define MOEFLOW_REPORT_INTERNAL_H

#include <jansson.h>

#include "analysis/report.h"
#include "core/error.h"
#include "core/json_build.h"

/* Adds the evidence of a kernel trace: FP8 GEMMs, the dispatcher backend's
 * dispatch/combine kernels; flags what was requested but is missing.  -1
 * with err naming the key that could not be made. */
int moe_report_run_profile(struct moe_report_run *r, const struct moe_trace *t,
                           struct moe_error *err);

/* s as a JSON string; text read from a log or cut to fit a buffer may not
 * be UTF-8, and its bytes past ASCII then become '?' rather than the text
 * being lost.  NULL only for a NULL s or when out of memory. */
json_t *moe_report_text_json(const char *s);

/* [iteration, ms] of one point; a NaN ms (no time) is null, and one the
 * log printed as nan, inf or -inf is null recorded in owner's "non_finite"
 * as key[i][1]. */
json_t *moe_report_point_json(struct moe_jb *b, json_t *owner, const char *key,
                              const struct moe_report_point *p);

/* owner[key] = every logged iteration of r as [iteration, ms]. */
int moe_report_series_json(struct moe_jb *b, json_t *owner, const char *key,
                           const struct moe_report_run *r);

/* report.md and the step-time SVG chart (report.h, moe_report_md and
 * moe_report_svg) written to path whole (core/readfile.h moe_replace_file). */
int moe_report_write_md(const struct moe_report_run *runs, size_t n,
                        const struct moe_report_opts *opts, const char *path,
                        struct moe_error *err);
int moe_report_write_svg(const struct moe_report_run *runs, size_t n, const char *path,
                         struct moe_error *err);

/* Summarises log over [first, last].  A window the run never reached is an
 * error.  expect: nexpect requested argument values to check. */
int moe_report_run_init(struct moe_report_run *r, const char *name, const struct moe_log *log,
                        long first, long last, const struct moe_report_expect *expect,
                        size_t nexpect, struct moe_error *err);

#endif
