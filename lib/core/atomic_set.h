/* Several files of one folder put in place together, so that a writer
 * killed at any point leaves the old set or the new one (rule 9 of
 * lib/README.md): gen --winners (validate.sbatch, candidates.tsv,
 * manifest.json, new contracts) and report -o (report.json, report.md,
 * step-time.svg).
 *
 * The protocol, under an flock of the folder:
 *   0. recovery: a journal left by a killed writer is finished (below),
 *      then every .moeflow-new.* left by a set never committed is removed;
 *   1. each new file is written whole and fsynced as .moeflow-new.I;
 *   2. the journal .moeflow-commit, one name a line (line I for
 *      .moeflow-new.I), is linked in once and the folder synced: the
 *      commit point;
 *   3. each .moeflow-new.I that is still there is renamed to its name;
 *   4. the journal is removed.
 * Killed before 2: the old files, and temporaries that step 0 of the next
 * writer removes.  Killed after 2: the journal says what is left, step 0
 * renames it (every temporary it names was whole before the journal
 * existed), and until then readers ask moe_atomic_set_pending (in
 * atomic_set_internal.h) and refuse the folder rather than read a mix.  Each name is replaced only as rule 2
 * allows (core/atomic_file.h). */
#ifndef MOEFLOW_ATOMIC_SET_H
#define MOEFLOW_ATOMIC_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define MOE_ATOMIC_SET_JOURNAL ".moeflow-commit"

struct moe_set_file {
    const char *name; /* relative to the folder; a subfolder is made when absent */
    const char *data;
    size_t len;
    int mode;         /* -1: 0666 less the umask; else exactly this */
};

/* Puts the n files in the folder dirfd (shown in messages) in place
 * together.  0, or -1 with err: nothing new is in place then (a refusal by
 * rule 2 is found before anything is written). */
int moe_atomic_set_write(int dirfd, const char *shown, const struct moe_set_file *files,
                         size_t n, struct moe_error *err);

/* Step 0 alone: finishes what a killed writer committed and removes what
 * it did not.  0, or -1 with err (the journal stays, readers keep
 * refusing). */
int moe_atomic_set_recover(int dirfd, const char *shown, struct moe_error *err);

#endif
