/* Where `moeflow gen` puts what moe_gen_build made: a new study directory,
 * written so that readers see either none or a complete one, or the
 * validate stage of an existing one, whose files change together. */
#ifndef MOEFLOW_GEN_WRITE_H
#define MOEFLOW_GEN_WRITE_H

#include <stddef.h>

#include "core/error.h"
#include "study/stagegen.h"

/* Builds everything in DIR.tmp-XXXXXX beside DIR, flushes it, then renames
 * it to DIR, which must not exist.  0, or -1 with err and nothing left. */
int moe_gen_write_new(const char *dir, const struct moe_gen_output *out, struct moe_error *err);

/* The absolute path DIR will have (its parent must exist), for --moe-study:
 * the plugin resolves it in sbatch and again in slurmstepd, where the
 * working directory differs.  0, or -1 with err, also for a path that no
 * #SBATCH line can carry (core/shquote.h moe_sbatch_quote). */
int moe_gen_target_path(const char *dir, char *buf, size_t len, struct moe_error *err);

/* gen --winners DIR, before it reads DIR: finishes what a killed gen
 * --winners committed, removes what it did not (core/atomic_set.h).  0,
 * or -1 with err. */
int moe_gen_finish_interrupted(const char *dir, struct moe_error *err);

/* gen --winners DIR and gen --rebuild DIR: the stages of PLAN (rebuilt
 * from DIR's recorded winners or decisions) go into DIR itself: their
 * scripts, the new declared contracts, their entries of manifest.json and
 * rows of candidates.tsv, all put in place together (core/atomic_set.h).
 * Nothing else of DIR changes; PLAN must come from the same study (its
 * study_hash).  0, or -1 with err. */
int moe_gen_update_stages(const char *dir, const struct moe_gen_plan *plan,
                          const struct moe_gen_output *out, struct moe_error *err);

#endif
