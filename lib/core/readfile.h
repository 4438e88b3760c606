/* Whole small files into memory: templates, studies, admin maps. */
#ifndef MOEFLOW_READFILE_H
#define MOEFLOW_READFILE_H

#include <stddef.h>

#include "core/error.h"

/* NUL-terminated contents (free() them); len, when not NULL, gets the byte
 * count.  what names the file in messages ("template", "study", ...). */
char *moe_read_file(const char *path, const char *what, size_t *len, struct moe_error *err);

#endif
