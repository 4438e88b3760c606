/* Control characters, found by byte: the C0 set and DEL are single bytes
 * in UTF-8, and a C1 control is the two bytes C2 80..C2 9F (libyaml and
 * Jansson only hand over valid UTF-8). */
#include "config.h"

#include <stdio.h>
#include <string.h>

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

    /* a message: cut, it still reads and names no file */
    snprintf(buf, len, "%s%sU+%04X%s", what, *what ? "(" : "", cp, *what ? ")" : "");
    return buf;
}

int moe_text_check(const char *what, const char *s, struct moe_error *err)
{
    long at = moe_text_control_at(s, strlen(s));
    char name[48];

    if (at < 0)
        return 0;
    moe_error_set(err, "%s: holds %s at byte %ld: no control characters are allowed", what,
                  moe_text_control_name(s + at, name, sizeof(name)), at + 1);
    return -1;
}

const char *moe_text_visible(const char *s, char *buf, size_t len)
{
    size_t n = strlen(s), o = 0;

    if (moe_text_control_at(s, n) < 0 || len == 0)
        return s;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = (const unsigned char *)s + i;
        char esc[8];
        size_t k;

        if (*p < 0x20 || *p == 0x7f) {
            k = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", *p);
        } else if (*p == 0xc2 && i + 1 < n && p[1] >= 0x80 && p[1] <= 0x9f) {
            k = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", p[1]);
            i++;
        } else {
            esc[0] = (char)*p;
            k = 1;
        }
        if (o + k >= len)
            break;
        memcpy(buf + o, esc, k);
        o += k;
    }
    buf[o] = '\0';
    return buf;
}
