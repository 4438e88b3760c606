/* The layout of a study folder, owned here: every name inside it that two
 * modules share (the generator, the job scripts through the renderer, the
 * plugin, moeflow run, report and the evidence pack), and the environment
 * variables the job scripts and the plugin share.  Spelled nowhere else:
 * tests/lint/study-dir-owner.sh fails on a copy in lib/, gen/, spank/ or
 * templates/.  Names are relative to the study folder; the builders put a
 * study folder in front. */
#ifndef MOEFLOW_STUDY_DIR_H
#define MOEFLOW_STUDY_DIR_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* What moeflow gen writes at the top. */
#define MOE_STUDY_MANIFEST "manifest.json"
#define MOE_STUDY_BASELINE "contracts/baseline.json"
#define MOE_STUDY_CONTRACTS "contracts"       /* contracts/<id>.json: each candidate's */

/* What the contract stage captures, and the frozen contract with its seal. */
#define MOE_STUDY_CONTRACT_DIR "contract"
#define MOE_STUDY_FROZEN_NAME "frozen.json"
#define MOE_STUDY_FROZEN MOE_STUDY_CONTRACT_DIR "/" MOE_STUDY_FROZEN_NAME
#define MOE_STUDY_MEASURED_NAME "measured.json"
#define MOE_STUDY_MEASURED MOE_STUDY_CONTRACT_DIR "/" MOE_STUDY_MEASURED_NAME

/* The plugin's run records (runs/<job id>[_<task>]), each with the job
 * script's copy of its launch log. */
#define MOE_STUDY_RUNS "runs"
#define MOE_STUDY_LAUNCH_LOG "launch.log"
/* Sealed winners (winners/<sha>.json) and moeflow run's decisions. */
#define MOE_STUDY_WINNERS "winners"
#define MOE_STUDY_DECISIONS "decisions"
#define MOE_STUDY_RUN_STATE "run-state.json"
#define MOE_STUDY_PACK "evidence-pack"

/* results/<stage>/<id><suffix>: what each job writes (its log, then its
 * exit status once the log is whole), and results/<stage>/report, where
 * moeflow run saves the stage's report. */
#define MOE_STUDY_RESULTS "results"
#define MOE_RESULT_LOG ".log"
#define MOE_RESULT_RC ".rc"
#define MOE_RESULT_RESUMED_LOG ".resumed.log"          /* validation.checkpoint's second run */
#define MOE_RESULT_CHECKPOINT_BYTES ".checkpoint-bytes" /* its folder's size */
#define MOE_RESULT_WINDOW ".window"                    /* validate's report window */
#define MOE_STUDY_REPORT_DIR "report"
#define MOE_STUDY_REPORT_JSON "report.json"
#define MOE_STUDY_VALIDATE_REPORT \
    MOE_STUDY_RESULTS "/validate/" MOE_STUDY_REPORT_DIR "/" MOE_STUDY_REPORT_JSON

/* Set by a chunked array's submission (submit.sh, moeflow run) for every
 * chunk past the first: the index of its first candidate, which the job
 * script adds to SLURM_ARRAY_TASK_ID and the plugin reads (spank/contract.c,
 * through core/number.h). */
#define MOE_ENV_INDEX_OFFSET "MOEFLOW_INDEX_OFFSET"

/* "STUDY/results/STAGE/IDSUFFIX"; without study, relative to it; without
 * id, the stage's folder (suffix then ignored).  malloc'd; NULL when out of
 * memory. */
char *moe_study_result(const char *study, const char *stage, const char *id,
                       const char *suffix);

/* A job writes its .rc after its log is whole, so an .rc older than its log
 * belongs to an earlier attempt, and the log to a later one that is running
 * or was cut short (issue 42).  A checkout or copy writes both within
 * moments, in either order: only a gap beyond this many seconds counts. */
#define MOE_RESULT_STALE_RC_SLACK_S 2

/* Whether study's results/STAGE/ID.rc is stale so; false when either file
 * is missing, or out of memory. */
bool moe_study_result_rc_stale(const char *study, const char *stage, const char *id);

/* What the job script templates of stage (NULL: submit.sh and the like)
 * spell through the renderer instead of by hand: {{layout.results}},
 * {{layout.runs}}, {{layout.launch_log}}, {{layout.index_offset}} (the shell
 * expansion of MOE_ENV_INDEX_OFFSET, 0 when unset) and the rest.  NULL
 * when out of memory. */
json_t *moe_study_dir_template(const char *stage);

#endif
