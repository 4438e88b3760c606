/* Kineto (PyTorch profiler) JSON traces, plain or gzip-compressed: the
 * first input byte picks the wrapping (odd: gzip the rest, as traces
 * usually arrive), the reader sniffs it as `moeflow overlap` does, and a
 * trace that loads goes through the overlap analysis. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "fuzz.h"
#include "analysis/overlap.h"
#include "analysis/trace.h"

static unsigned char *gzip(const uint8_t *data, size_t size, size_t *out)
{
    z_stream z;
    uLong cap = compressBound(size) + 64;
    unsigned char *buf = malloc(cap);

    memset(&z, 0, sizeof(z));
    if (!buf || deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(buf);
        return NULL;
    }
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)size;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
        deflateEnd(&z);
        free(buf);
        return NULL;
    }
    *out = z.total_out;
    deflateEnd(&z);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct moe_trace t;
    struct moe_error err;
    unsigned char *gz = NULL;
    size_t gzlen = 0;
    const char *path;

    if (size < 1)
        return 0;
    if (data[0] & 1) {
        if (!(gz = gzip(data + 1, size - 1, &gzlen)))
            return 0;
        path = fuzz_file(gz, gzlen, ".json.gz");
    } else {
        path = fuzz_file(data + 1, size - 1, ".json");
    }
    free(gz);
    if (!path)
        return 0;
    moe_trace_init(&t, "fuzz", NULL, NULL);
    if (moe_trace_load(&t, path, &err) == 0) {
        struct moe_overlap o;
        struct moe_window w = { .kind = MOE_WINDOW_ALL };

        moe_overlap_init(&o);
        if (moe_overlap_add_trace(&o, &t, &w, &err) == 0 && moe_overlap_finish(&o, 5, &err) == 0)
            json_decref(moe_overlap_to_json(&o, &w, NULL));
        moe_overlap_free(&o);
    }
    moe_trace_free(&t);
    return 0;
}
