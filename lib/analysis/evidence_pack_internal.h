/* The evidence pack's parts that only lib/analysis (and its unit tests)
 * use: evidence_pack*.c build and render pack.json in pieces. */
#ifndef MOEFLOW_EVIDENCE_PACK_INTERNAL_H
#define MOEFLOW_EVIDENCE_PACK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "analysis/evidence_pack.h"
#include "core/json_build.h"

/* The validate stage's part of it (evidence_pack_runs.c): per run of the
 * baseline, each winner alone and the combination, its command, its
 * config diff against the baseline, what ran and what it measured.  A
 * study without a validate stage or without its baseline's log gets
 * {"status": "not run", ...}.  NULL with err naming the file, or the key
 * that could not be made. */
json_t *moe_evidence_pack_runs(const char *study, const struct moe_manifest *m,
                               const json_t *study_json, const struct moe_report_opts *opts,
                               struct moe_error *err);

/* The plots' part of it (evidence_pack_plots.c): which validate runs the
 * step-time plot sets side by side (from validate's runs, the "validate"
 * value), memory and step time modeled against measured per candidate
 * (the fit stage's predicted_mib and logs; the scale stage's notes and
 * logs), and each scale round's ranking (the scale stage's runs, then
 * every decision of trail of stage "scale").  What cannot be plotted is
 * listed with why; a decision whose ranking is not the documented shape
 * is refused by name, never half read, and a trail the store refused is
 * listed as refused with its reason.  NULL with b's failure naming the key
 * that could not be made. */
json_t *moe_evidence_pack_plots(struct moe_jb *b, const char *study,
                                const struct moe_manifest *m, const json_t *validate,
                                const struct moe_pack_trail *trail);

/* Whether a pack may hold a file of this name: README.md, pack.json,
 * index.html, or a plot (lowercase letters, digits and dashes, .svg). */
bool moe_evidence_pack_file_name(const char *name);

/* README.md rendered from pack.json; malloc'd, NULL when out of memory.
 * Every string from the study or a log reaches it as data: control
 * characters made visible, Markdown's table pipes and backticks escaped. */
char *moe_evidence_pack_markdown(const json_t *pack);

/* The plots as SVG documents, then index.html showing them, rendered
 * from pack.json alone (evidence_pack_svg.c), as README.md is.  *files is
 * the caller's (moe_pack_files_free); -1 when out of memory. */
int moe_evidence_pack_render(const json_t *pack, struct moe_pack_file **files, size_t *n);
void moe_pack_files_free(struct moe_pack_file *files, size_t n);

/* moe_evidence_pack, then moe_evidence_pack_put into dir (NULL:
 * STUDY/evidence-pack). */
int moe_evidence_pack_write(const char *study, const char *dir,
                            const struct moe_report_opts *opts,
                            const struct moe_pack_trail *trail, struct moe_error *err);

#endif
