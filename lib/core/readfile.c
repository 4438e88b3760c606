#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/readfile.h"

char *moe_read_file(const char *path, const char *what, size_t *len_out, struct moe_error *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;

    if (!f) {
        moe_error_at(err, path, 0, 0, "cannot open %s: %s", what, strerror(errno));
        return NULL;
    }
    do {
        if (len + 4097 > cap) {
            char *p = realloc(buf, cap = cap ? cap * 2 : 16384);
            if (!p) {
                free(buf);
                fclose(f);
                moe_error_at(err, path, 0, 0, "out of memory reading %s", what);
                return NULL;
            }
            buf = p;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    if (ferror(f)) {
        moe_error_at(err, path, 0, 0, "cannot read %s: %s", what, strerror(errno));
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[len] = '\0';
    fclose(f);
    if (len_out)
        *len_out = len;
    return buf;
}
