/* The one whole-file reader: studies, templates, contracts, manifests,
 * reports, admin maps, batch scripts.  One limit and one message style,
 * "PATH: what: reason" (what names the file's role: "study", "contract").
 *
 * Readers that stream on purpose do not read whole files here, but open
 * them with moe_open_regular(), so that a FIFO or a device is refused the
 * same way: Megatron logs (megatron_log.c, line by line: a long run's log
 * is unbounded), Kineto traces (trace_kineto.c, gzip-streamed: hundreds of
 * MiB unpacked), trace.c's format probe before SQLite opens an Nsight
 * Systems export itself, and the admin's topology.conf (domains.c, fixed
 * line buffers).  The line readers of kernel pseudo-files (gpuminor.c,
 * affinity.c) read only what the kernel writes. */
#ifndef MOEFLOW_READFILE_H
#define MOEFLOW_READFILE_H

#include <stddef.h>

#include <jansson.h>

#include "core/error.h"

/* The limit on a file read whole.  The plugin reads the user's study files
 * (contracts, manifest.json) with root's rights inside sbatch and
 * slurmstepd, so the bound is small: the largest real input, the manifest of
 * the 1024-GPU DeepSeek-V3 example, is 0.23 MiB.  SECURITY.md states it. */
#define MOE_READ_FILE_MAX (16L * 1024 * 1024)
#define MOE_READ_FILE_MAX_TEXT "16 MiB"

/* NUL-terminated contents (free() them); len, when not NULL, gets the byte
 * count (an empty file gives "" and 0).  Only a regular file of at most
 * MOE_READ_FILE_MAX bytes is read; it is opened non-blocking, so a FIFO in
 * its place is refused at once instead of waiting for a writer. */
char *moe_read_file(const char *path, const char *what, size_t *len, struct moe_error *err);

/* The same from an open descriptor, which it closes; path is for messages.
 * For callers that open the file their own way (openat, O_NOFOLLOW). */
char *moe_read_fd(int fd, const char *path, const char *what, size_t *len,
                  struct moe_error *err);

/* Opens path for reading when it is a regular file, else -1 with err
 * ("PATH: what: not a regular file (a FIFO)").  The open is non-blocking,
 * so a FIFO cannot make it wait for a writer; the descriptor returned
 * blocks as usual. */
int moe_open_regular(const char *path, const char *what, struct moe_error *err);

/* A JSON file through moe_read_file; a parse error, or an object key given
 * twice, is "PATH:LINE:COL: what: reason". */
json_t *moe_read_json(const char *path, const char *what, struct moe_error *err);

/* Writes all of buf to fd, retrying short writes and EINTR; -1 with errno
 * set otherwise.  The atomic writers (temp file, fsync, rename) share it. */
int moe_write_all(int fd, const char *buf, size_t len);

/* Writes an output file the user asked for (a report, a hostfile, a
 * regenerated script) whole or not at all: a new file beside path, then
 * rename() over it.  A symlink or anything else at path is replaced, never
 * written through.  mode: -1 for 0666 less the umask, else exactly that. */
int moe_replace_file(const char *path, const char *data, size_t len, int mode,
                     struct moe_error *err);

#endif
