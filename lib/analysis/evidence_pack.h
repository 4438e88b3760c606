/* The evidence pack of a study (`moeflow report STUDY_DIR --pack`): one
 * folder, README.md and pack.json, the plots as SVG files and index.html
 * showing them, that a reviewer reads without moeflow.
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
 * pack.json is the document; README.md, the plots and index.html are
 * rendered from it alone, so they never disagree.  Every number carries
 * its source: measured, but for the plots' modeled numbers (moeflow's
 * memory and step-time models), which say so. */
#ifndef MOEFLOW_EVIDENCE_PACK_H
#define MOEFLOW_EVIDENCE_PACK_H

#include <stdbool.h>

#include <jansson.h>

#include "core/error.h"
#include "core/manifest.h"
#include "core/study_dir.h"
#include "analysis/report.h"

/* The folder's name under the study when the caller names none. */
#define MOE_PACK_DIR MOE_STUDY_PACK

/* pack.json of the study directory study; NULL with err naming the file
 * that could not be read. */
/* moeflow run's decision trail as the contract store accepted it
 * (moe_contract_load_trail: each {"file", "digest", "decision"}, seals
 * checked with owner and mode), or why the store refused it.  The pack
 * reads no decision file itself: analysis/ does not judge seals. */
struct moe_pack_trail {
    const json_t *decisions;   /* NULL or empty: no trail */
    const char *error;         /* non-NULL: the store refused it, this is why */
};

json_t *moe_evidence_pack(const char *study, const struct moe_report_opts *opts,
                          const struct moe_pack_trail *trail, struct moe_error *err);

/* A file of the pack beside README.md and pack.json. */
struct moe_pack_file {
    char name[64];
    char *text;
};

/* Writes pack into the folder dir whole or not at all (rule 9 of
 * lib/README.md): every file goes into the sibling .NAME.moeflow-new, which
 * trades places with dir at the end; a previous pack there (nothing but the
 * files moe_evidence_pack_file_name accepts) is replaced, anything else at dir (a symlink,
 * a file, another folder) is refused.  What a killed writer left is
 * removed (or, for a pack moved aside, moved back) first.  0, or -1 with
 * err naming dir: nothing new is left behind. */
int moe_evidence_pack_put(const json_t *pack, const char *dir, struct moe_error *err);

#endif
