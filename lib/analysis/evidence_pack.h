/* The evidence pack of a study (`moeflow report STUDY_DIR --pack`): one
 * folder, README.md and pack.json, that a reviewer reads without moeflow.
 * It is built only from what the study directory already holds after its
 * stages ran: manifest.json and study.json (commands, config diffs, the
 * label), contracts/baseline.json and contract/measured.json (commit,
 * container, hardware, topology), the validate stage's logs (step time,
 * TFLOP/s/GPU, loss, skipped/NaN, peak memory, the proof of what ran,
 * read as `moeflow report` reads them) and results/validate/report/
 * report.json (the checkpoint verdict, the matched A/B profiles).  A stage
 * that did not run is said so in its section; a file that is there but
 * cannot be read stops the pack, naming the file.
 *
 * pack.json is the document; README.md is rendered from it alone, so the
 * two never disagree.  Every number carries its source ("measured" here:
 * the pack holds no modeled number). */
#ifndef MOEFLOW_EVIDENCE_PACK_H
#define MOEFLOW_EVIDENCE_PACK_H

#include <jansson.h>

#include "core/error.h"
#include "core/manifest.h"
#include "analysis/report.h"

/* The folder's name under the study when the caller names none. */
#define MOE_PACK_DIR "evidence-pack"

/* pack.json of the study directory study; NULL with err naming the file
 * that could not be read. */
json_t *moe_evidence_pack(const char *study, const struct moe_report_opts *opts,
                          struct moe_error *err);

/* The validate stage's part of it (evidence_pack_runs.c): per run of the
 * baseline, each winner alone and the combination, its command, its
 * config diff against the baseline, what ran and what it measured.  A
 * study without a validate stage or without its baseline's log gets
 * {"status": "not run", ...}.  NULL with err. */
json_t *moe_evidence_pack_runs(const char *study, const struct moe_manifest *m,
                               const json_t *study_json, const struct moe_report_opts *opts,
                               struct moe_error *err);

/* README.md rendered from pack.json; malloc'd, NULL when out of memory.
 * Every string from the study or a log reaches it as data: control
 * characters made visible, Markdown's table pipes and backticks escaped. */
char *moe_evidence_pack_markdown(const json_t *pack);

/* Writes pack into the folder dir whole or not at all (rule 9 of
 * lib/README.md): both files go into the sibling .NAME.moeflow-new, which
 * trades places with dir at the end; a previous pack there (README.md and
 * pack.json, nothing else) is replaced, anything else at dir (a symlink,
 * a file, another folder) is refused.  What a killed writer left is
 * removed (or, for a pack moved aside, moved back) first.  0, or -1 with
 * err naming dir: nothing new is left behind. */
int moe_evidence_pack_put(const json_t *pack, const char *dir, struct moe_error *err);

/* moe_evidence_pack, then moe_evidence_pack_put into dir (NULL:
 * STUDY/evidence-pack). */
int moe_evidence_pack_write(const char *study, const char *dir,
                            const struct moe_report_opts *opts, struct moe_error *err);

#endif
