/* The one rule for text that a study, a command line or a data file hands
 * to moeflow and that may land in a generated script or on a terminal: no
 * control characters.  A newline would end a script line (and with it an
 * #SBATCH directive or a comment); an ESC or a C1 control would drive the
 * terminal that shows a message. */
#ifndef MOEFLOW_TEXT_H
#define MOEFLOW_TEXT_H

#include <stddef.h>

#include "core/error.h"

/* Offset of the first control character in s[0..len): C0 (U+0000..U+001F,
 * tab included), DEL (U+007F) or, in UTF-8, C1 (U+0080..U+009F); -1 when
 * there is none. */
long moe_text_control_at(const char *s, size_t len);

/* A name for the control character at s (as moe_text_control_at found
 * it), for messages: "a newline (U+000A)", "U+001B". */
const char *moe_text_control_name(const char *s, char *buf, size_t len);

/* 0, or -1 with err's text naming what ("--expect: holds an escape
 * (U+001B) at byte 3: no control characters are allowed") when s holds a
 * control character.  The character itself is never echoed. */
int moe_text_check(const char *what, const char *s, struct moe_error *err);

/* s for a terminal: each control character written as \xHH (C0, DEL) or
 * \u00HH (C1), in buf, cut to len - 1 bytes; s itself when it holds none.
 * For text that came from a file or a command line and is shown back. */
const char *moe_text_visible(const char *s, char *buf, size_t len);

#endif
