/* What `moeflow report` needs to know about a generated study directory
 * (its manifest.json): per stage, its candidates labelled by variable and
 * value, where each one's launch log is, the stage's own reference run and
 * the study's window for it:
 *   scale     reference: its baseline candidate; window: the screening
 *             steps (warmup + 1 .. warmup + screen_steps)
 *   retune    reference: the scale stage's baseline (retune has no
 *             baseline of its own: the plugin refuses a retune run that
 *             changes nothing; scale's baseline is the same configuration
 *             over the same steps); window: the screening steps
 *   validate  reference: its baseline candidate; window: report_window
 * Launch logs are results/<stage>/<candidate id>.log; the plugin's run
 * records are runs/<run id>/ (contract.json names stage and candidate, and
 * launch.log is the run's log). */
#ifndef MOEFLOW_STUDY_REPORT_H
#define MOEFLOW_STUDY_REPORT_H

#include <stddef.h>

#include <jansson.h>

#include "core/error.h"
#include "core/manifest.h"

struct moe_study_cand {
    char id[72];
    char label[200]; /* "variable=value", or "baseline" */
    char *log;       /* its launch log (malloc'd; the view's or where's free frees it) */
    int baseline;
    char semantics[32];   /* the manifest's label: "training-equivalent" | "benchmark-only" */
    char semantics_text[256]; /* with its reasons: "benchmark-only: mock data" */
};

struct moe_study_view {
    char *study;     /* malloc'd, as given */
    char name[128];
    char stage[16];
    long first, last;
    char window_note[128]; /* where the window comes from, in words */
    struct moe_study_cand ref;
    char ref_note[256];    /* which run the reference is, in words */
    struct moe_study_cand *cands; /* the stage's candidates but the reference */
    size_t n;
};

/* Whether a directory is a generated study: moe_study_is_dir
 * (core/manifest.h). */

/* stage NULL or "": the last of validate, retune, scale that has a log. */
int moe_study_view_load(const char *study, const char *stage, struct moe_study_view *v,
                        struct moe_error *err);
void moe_study_view_free(struct moe_study_view *v);

/* Where path sits inside a study: <study>/results/<stage>[/<id>.log] or
 * <study>/runs/<run id>.  1 with study and stage (and the candidate's id,
 * label and window when the path names one run), 0 when path is not inside
 * a generated study, -1 with err when the study says something impossible. */
struct moe_study_where {
    char *study;     /* malloc'd; NULL when path is not inside a study */
    char stage[16];
    struct moe_study_cand cand; /* id[0] == 0: the path is a whole stage */
    long first, last;
};
int moe_study_locate(const char *path, struct moe_study_where *w, struct moe_error *err);
/* Frees what moe_study_locate allocated (whatever it returned). */
void moe_study_where_free(struct moe_study_where *w);

/* The plugin's record of a run of candidate id in stage: runs/<run id>
 * whose contract.json says so (the first in name order).  1 with *run_dir
 * the malloc'd path (free() it), 0 when there is none, -1 with err; *run_dir
 * is NULL but on 1. */
int moe_study_find_run(const char *study, const char *stage, const char *id, char **run_dir,
                       struct moe_error *err);

#endif
