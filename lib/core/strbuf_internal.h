/* What lib/core shares among its own files (and its unit tests) beside
 * core/strbuf.h: private to the folder (tests/lint/include-direction.sh). */
#ifndef MOEFLOW_STRBUF_INTERNAL_H
#define MOEFLOW_STRBUF_INTERNAL_H

#include "core/strbuf.h"

/* Room for more bytes and a NUL; -1 when out of memory (the text is kept). */
int moe_strbuf_grow(struct moe_strbuf *b, size_t more);

#endif
