/* The runs `moeflow report` compares, read from disk: a run is one log
 * file, or a directory of rank logs (*.log, *.out, *.err, *.txt) with its
 * profiles (*.json, *.json.gz, *.sqlite) beside them; a stage of a
 * generated study is its reference run and its candidates'. */
#ifndef MOEFLOW_REPORT_RUNS_H
#define MOEFLOW_REPORT_RUNS_H

#include <stddef.h>

#include <jansson.h>

#include "core/error.h"
#include "core/manifest.h"
#include "analysis/megatron_log.h"
#include "analysis/report.h"
#include "analysis/study_report.h"

/* An argument value the runs were asked for; run NULL: every run, else the
 * run of that name only. */
struct moe_report_expect_for {
    const char *run;
    struct moe_report_expect e;
};

/* How to read runs: the expectations to check, and what the caller wants
 * to hear while it goes on (either hook may be NULL). */
struct moe_report_reader {
    const struct moe_report_expect_for *expect;
    size_t nexpect;
    long first, last;                         /* the window */
    void (*file_read)(void *data);            /* after each log file */
    void (*warnings)(const struct moe_log *log, void *data); /* a run's logs, all read */
    void *data;
};

/* The log files the runs at PATHS hold (a file counts as one). */
size_t moe_report_count_logs(char *const *paths, int n);

/* The run at PATH, named LABEL (NULL: the last part of PATH).  0, or -1
 * with err and nothing to free. */
int moe_report_load_run(const char *path, const char *label, const struct moe_report_reader *rd,
                        struct moe_report_run *r, struct moe_error *err);

/* A flag whose effect a report proves, with its key in Megatron's
 * argument dump (argparse's dest: --fp8-format is "fp8"). */
struct moe_report_flag {
    const char *flag, *key;
};

/* The run of candidate c of study v (its log), named label, checked against
 * rd's expectations and against what the candidate asked for in manifest.json
 * (moe_report_requested).  0, or -1 with err. */
int moe_report_load_study_run(const struct moe_study_view *v, const struct moe_study_cand *c,
                              const char *label, const struct moe_report_reader *rd,
                              struct moe_report_run *r, struct moe_error *err);

/* Every candidate of the stage V with a readable log, appended to runs
 * (room for v->n), labelled by variable and value; each other one goes to
 * SKIPPED as {candidate, id, reason}.  Returns how many were added. */
size_t moe_report_load_candidates(const struct moe_study_view *v,
                                  const struct moe_report_reader *rd,
                                  struct moe_report_run *runs, json_t *skipped);

/* The contract's "winner" rule for runs[i], a win over runs[0]: 1 when it
 * is the best win of its variable (the largest speed-up; one value of a
 * variable can win), else 0 with *better naming the run that wins more. */
int moe_report_best_win(const struct moe_report_run *runs, size_t nruns, size_t i,
                        const struct moe_report_opts *o, const char **better);

#endif
