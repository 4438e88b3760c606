/* Control characters, found by byte: the C0 set and DEL are single bytes
 * in UTF-8, and a C1 control is the two bytes C2 80..C2 9F (libyaml and
 * Jansson only hand over valid UTF-8). */
#include "config.h"

#include <stdio.h>

#include "core/text.h"

long moe_text_control_at(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;

    for (size_t i = 0; i < len; i++) {
        if (p[i] < 0x20 || p[i] == 0x7f)
            return (long)i;
        if (p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
            return (long)i;
    }
    return -1;
}

const char *moe_text_control_name(const char *s, char *buf, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned cp = p[0] == 0xc2 ? p[1] : p[0];
    const char *what = cp == '\n' ? "a newline " : cp == '\r' ? "a carriage return "
                       : cp == '\t' ? "a tab " : cp == 0 ? "a NUL byte "
                       : cp == 0x1b ? "an escape " : "";

    snprintf(buf, len, "%s%sU+%04X%s", what, *what ? "(" : "", cp, *what ? ")" : "");
    return buf;
}
