/* The one way a file is put in place whole: a temporary file beside it
 * with a name nobody can guess, the data, fsync, then rename (or link, for
 * a file written once), so a reader sees the old file or the new one and
 * never half of one.  Every error removes the temporary file.
 *
 * Callers: moe_replace_file (reports, hostfiles, regenerated scripts,
 * manifest.json), the topology cache, and the contract store's sealed
 * records, which are written once and never replaced. */
#ifndef MOEFLOW_ATOMIC_FILE_H
#define MOEFLOW_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "core/error.h"

struct moe_atomic_file {
    mode_t mode;                 /* the new file's mode, less the umask... */
    bool exact_mode;             /* ...or exactly this mode, whatever the umask */
    bool once;                   /* never replace: returns 1 when the name is taken */
    bool sync_dir;               /* fsync the folder too: the new name survives a crash */
    const struct timespec *mtime; /* the file's modification time, when not NULL */
};

/* Writes data as name in the open folder dirfd.  Rule 2 of lib/README.md:
 * the name is replaced only when it is a regular file of the caller's
 * (effective) user; a device, FIFO, socket, folder, symlink or another
 * user's file is left as it is and refused ("NAME: cannot write: a symlink
 * is there; ..."), as root or not.  With once, any taken name is left
 * alone.  0 when written, 1 when once found the name taken, -1 with err
 * ("NAME: cannot write: reason", or "cannot replace"/"cannot link"
 * when the data was written but could not take the name) and errno set to the cause. */
int moe_atomic_write_at(int dirfd, const char *name, const char *data, size_t len,
                        const struct moe_atomic_file *how, struct moe_error *err);

/* The same for a path: its folder ("." for a bare name) is opened first;
 * messages name the whole path. */
int moe_atomic_write(const char *path, const char *data, size_t len,
                     const struct moe_atomic_file *how, struct moe_error *err);


/* The output folder of report -o, gen -o or --pack, made when absent (0777
 * less the umask) and opened once: every file then goes in relative to the
 * descriptor returned, so its names are never cut or resolved again.  A
 * symlink there is refused, not followed: in a shared sticky folder
 * another user may have planted it.  Trailing slashes are ignored.  The
 * descriptor, or -1 with err naming path. */
int moe_output_dir_open(const char *path, struct moe_error *err);

#endif
