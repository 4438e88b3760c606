/* PyTorch-profiler (Kineto) traces: Chrome trace JSON, plain or gzip.
 *
 * The file is streamed: zlib's inflate (plain files pass through) fills a
 * window, and Jansson decodes one value at a time from it with
 * JSON_DISABLE_EOF_CHECK, so only one event is ever held as a JSON tree and
 * memory is bounded by the kernels kept, not by the file.  This code only
 * steps over the structural characters between values ({ : , [ ]). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "analysis/trace.h"
#include "analysis/trace_internal.h"
#include "core/strbuf.h"
#include "core/readfile.h"

#define WINDOW_MIN (1u << 20)

struct reader {
    int fd;
    const char *path;
    char *buf;
    size_t cap, pos, len;
    long long consumed; /* bytes of the text before buf[0] */
    unsigned long long unpacked, unpacked_max; /* bytes of text so far, and at most */
    unsigned long long packed;                 /* bytes read from the file so far */
    int eof;
    struct moe_error *err;
    /* the file's bytes: gzip members are inflated, anything else is text */
    z_stream z;
    int gz, zinit, file_eof;
    unsigned char in[1 << 17];
};

/* Errors name the byte offset: lines can be megabytes long in these files. */
static int fail(struct reader *r, const char *what)
{
    moe_error_at(r->err, r->path, 0, 0, "byte %lld: %s",
                 (long long)(r->consumed + (long long)r->pos), what);
    return -1;
}

/* Refills r->in from the file after its first keep bytes (what is left
 * of the input, moved to its start); the bytes read, 0 at the file's end. */
static long file_read(struct reader *r, size_t keep)
{
    ssize_t n;

    if (keep)
        memmove(r->in, r->z.next_in, keep);
    r->z.next_in = r->in;
    r->z.avail_in = (uInt)keep;
    do
        n = read(r->fd, r->in + keep, sizeof(r->in) - keep);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        moe_error_at(r->err, r->path, 0, 0, "trace: %s", strerror(errno));
        return -1;
    }
    r->packed += (unsigned long long)n;
    r->file_eof = n == 0;
    r->z.avail_in += (uInt)n;
    return n;
}

/* A gzip member ended: another may follow (its text is then checked like
 * any other: a second trace after the first is refused), anything else is
 * not gzip, and is refused here rather than ignored as zlib's gzread did.
 * 1: go on inflating; 0: the file ended; -1: refused. */
static int member_end(struct reader *r)
{
    /* two bytes to tell a gzip header, which a read may split */
    while (r->z.avail_in < 2 && !r->file_eof)
        if (file_read(r, r->z.avail_in) < 0)
            return -1;
    if (r->z.avail_in == 0)
        return 0;
    if (r->z.avail_in >= 2 && r->z.next_in[0] == 0x1f && r->z.next_in[1] == 0x8b)
        return inflateReset(&r->z) == Z_OK ? 1 : -1;
    moe_error_at(r->err, r->path, 0, 0, "byte %llu of the file: what follows the gzip data is "
                 "not gzip: the file is damaged, or something was appended to it",
                 r->packed - r->z.avail_in);
    return -1;
}

/* Up to len bytes of the trace's text; 0 at its end, -1 with r->err. */
static long text_read(struct reader *r, char *dst, size_t len)
{
    if (!r->gz) {
        long n;

        if (r->z.avail_in) { /* the bytes the format probe read */
            n = (long)(r->z.avail_in < len ? r->z.avail_in : len);
            memcpy(dst, r->z.next_in, (size_t)n);
            r->z.next_in += n;
            r->z.avail_in -= (uInt)n;
            return n;
        }
        if ((n = file_read(r, 0)) <= 0)
            return n;
        return text_read(r, dst, len);
    }
    r->z.next_out = (Bytef *)dst;
    r->z.avail_out = (uInt)(len < (1u << 30) ? len : 1u << 30);
    while (r->z.next_out == (Bytef *)dst) {
        int zrc, more;

        if (r->z.avail_in == 0 && !r->file_eof && file_read(r, 0) < 0)
            return -1;
        zrc = inflate(&r->z, Z_NO_FLUSH);
        if (zrc == Z_STREAM_END) {
            if ((more = member_end(r)) <= 0)
                return more < 0 ? -1 : (long)((char *)r->z.next_out - dst);
            continue;
        }
        if (zrc == Z_BUF_ERROR && r->file_eof && r->z.avail_in == 0) {
            moe_error_at(r->err, r->path, 0, 0, "byte %llu of the file: the gzip data is cut "
                         "short", r->packed);
            return -1;
        }
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
            moe_error_at(r->err, r->path, 0, 0, "byte %llu of the file: not valid gzip data "
                         "(%s)", r->packed - r->z.avail_in, r->z.msg ? r->z.msg : "zlib");
            return -1;
        }
    }
    return (long)((char *)r->z.next_out - dst);
}

/* The one bound on decompression (trace.h): the text may be at most
 * MOE_TRACE_UNPACK_RATIO times the file's bytes inflated so far, past a floor, and at
 * most unpacked_max.  Reading is linear in the text, so this bounds the time
 * per MiB of the file, not only the memory (a 256 KB gzip of 256 MiB of
 * '{},' took 18-31 s). */
static int unpack_bounded(struct reader *r)
{
    char what[200];

    if (r->unpacked > r->unpacked_max) {
        /* a message: what[200] holds the fixed text and a 20-digit number */
        snprintf(what, sizeof(what), "unpacks to more than %llu MiB: not a profiler's trace "
                 "(a gzip bomb?)", r->unpacked_max >> 20);
        return fail(r, what);
    }
    if (r->gz && r->unpacked > MOE_TRACE_UNPACK_FLOOR +
                         MOE_TRACE_UNPACK_RATIO * (r->packed - r->z.avail_in)) {
        /* a message: what[200] holds the fixed text and an int */
        snprintf(what, sizeof(what), "the gzip unpacks to more than %d times its size (a "
                 "profiler's trace to about 13): a gzip bomb? gunzip a real trace and give "
                 "the plain file", MOE_TRACE_UNPACK_RATIO);
        return fail(r, what);
    }
    return 0;
}

/* Keeps unread bytes, drops read ones, reads more; grows the window only
 * when a single value fills it. */
static int refill(struct reader *r)
{
    long n;

    if (r->eof)
        return 0;
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->consumed += (long long)r->pos;
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->len == r->cap) {
        char *nb;

        /* The window holds one value at a time: a value that outgrows the
         * bound is no profiler's event (a gzip of one 3 GB string once
         * took 4.2 GB here). */
        if (r->cap >= MOE_TRACE_VALUE_MAX)
            return fail(r, "one JSON value is longer than " MOE_TRACE_VALUE_MAX_TEXT
                        ": not a trace event");
        nb = moe_grow_array(r->buf, &r->cap, r->cap + 1, 1);

        if (!nb)
            return fail(r, "out of memory");
        r->buf = nb;
    }
    n = text_read(r, r->buf + r->len, r->cap - r->len);
    if (n < 0)
        return -1;
    if (n == 0)
        r->eof = 1;
    r->len += (size_t)n;
    r->unpacked += (unsigned long long)n;
    return unpack_bounded(r);
}

/* The next non-blank character, not consumed; -1 at end of input. */
static int peek(struct reader *r)
{
    for (;;) {
        while (r->pos < r->len) {
            char c = r->buf[r->pos];

            if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                return (unsigned char)c;
            r->pos++;
        }
        if (r->eof)
            return -1;
        if (refill(r) < 0)
            return -2;
    }
}

static int expect(struct reader *r, char want)
{
    int c = peek(r);
    char what[16];

    if (c == -2)
        return -1;
    if (c != (unsigned char)want) {
        /* fits: 12 bytes and one character in what[16] */
        snprintf(what, sizeof(what), "expected '%c'", want);
        return fail(r, what);
    }
    r->pos++;
    return 0;
}

/* Decodes one JSON value at the read position. */
static json_t *value(struct reader *r)
{
    for (;;) {
        json_error_t je;
        size_t avail;
        json_t *v;

        if (peek(r) < -1)
            return NULL;
        avail = r->len - r->pos;
        v = json_loadb(r->buf + r->pos, avail, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &je);
        /* A value must end before the window does, or a number such as
         * 12|34 split by the window edge would decode as 12. */
        if (v && ((size_t)je.position < avail || r->eof)) {
            r->pos += (size_t)je.position;
            return v;
        }
        json_decref(v);
        if (r->eof) {
            r->pos += (size_t)(je.position > 0 ? je.position : 0);
            fail(r, je.text);
            return NULL;
        }
        /* An error well inside the window is real; at its edge, read on. */
        if (!v && (size_t)je.position + 8 < avail && avail >= WINDOW_MIN / 2) {
            r->pos += (size_t)je.position;
            fail(r, je.text);
            return NULL;
        }
        if (refill(r) < 0)
            return NULL;
    }
}

/* -1: out of memory; -2: a bad value, with r's error set. */
/* event()'s return when it has said why already; the others are
 * moe_trace_add_kernel's (moe_trace_failure names them). */
#define EVENT_REFUSED (-100)

/* A CUDA graph launch as Kineto records it: the runtime call
 * {"cat": "cuda_runtime", "name": "cudaGraphLaunch"} (the recorded H200
 * traces, torch 2.11).  Not the driver's cuGraphLaunch: a traced runtime
 * call may make one, and the launch would count twice. */
static int graph_launch(const char *cat, const char *name)
{
    return cat && strcmp(cat, "cuda_runtime") == 0 && strncmp(name, "cudaGraphLaunch", 15) == 0;
}

static int event(struct reader *r, struct moe_trace *t, json_t *ev)
{
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    const char *cat = json_string_value(json_object_get(ev, "cat"));
    const char *name = json_string_value(json_object_get(ev, "name"));
    json_t *ts = json_object_get(ev, "ts"), *dur = json_object_get(ev, "dur");
    int64_t start, end;

    if (!ph || strcmp(ph, "X") != 0 || !name || !json_is_number(ts) || !json_is_number(dur))
        return 0;
    /* Kineto times are microseconds, fractional since PyTorch 2.x. */
    start = llround(json_number_value(ts) * 1000.0);
    end = llround((json_number_value(ts) + json_number_value(dur)) * 1000.0);
    if (graph_launch(cat, name)) {
        t->graph_launches++;
        return 0;
    }
    if (cat && strcmp(cat, "kernel") == 0) {
        json_t *dev = json_object_get(json_object_get(ev, "args"), "device");
        long id;
        int device;

        /* Kineto before args.device put the device index in pid. */
        if (!json_is_integer(dev))
            dev = json_object_get(ev, "pid");
        if (!json_is_integer(dev))
            return 0;
        if (moe_trace_device_id(json_integer_value(dev), name, &device, r->err) < 0) {
            char what[MOE_ERROR_TEXT_MAX];

            /* fits: a copy of an error text into a buffer of its size */
            snprintf(what, sizeof(what), "%s", r->err->text);
            fail(r, what);
            return EVENT_REFUSED;
        }
        id = moe_trace_intern(t, name, strlen(name));
        if (id < 0)
            return -1;
        return moe_trace_add_kernel(t, device, (uint32_t)id, start, end);
    }
    return moe_trace_add_marker(t, name, start, end,
                                cat && strcmp(cat, "gpu_user_annotation") == 0);
}

static int event_array(struct reader *r, struct moe_trace *t)
{
    int c;

    if (expect(r, '[') < 0)
        return -1;
    if (peek(r) == ']') {
        r->pos++;
        return 0;
    }
    for (;;) {
        json_t *ev = value(r);
        int rc;

        if (!ev)
            return -1;
        rc = json_is_object(ev) ? event(r, t, ev) : 0;
        json_decref(ev);
        if (rc == EVENT_REFUSED)
            return -1;
        if (rc < 0)
            return fail(r, moe_trace_failure(rc));
        c = peek(r);
        if (c == ']') {
            r->pos++;
            return 0;
        }
        if (expect(r, ',') < 0)
            return -1;
    }
}

/* {"schemaVersion": 1, ..., "traceEvents": [...], ...}: every member but
 * traceEvents is decoded and dropped. */
static int top_object(struct reader *r, struct moe_trace *t)
{
    int seen = 0;

    r->pos++; /* '{' */
    if (peek(r) == '}') {
        r->pos++;
        return fail(r, "no traceEvents array");
    }
    for (;;) {
        json_t *key = value(r);
        int rc = 0;

        if (!key)
            return -1;
        if (!json_is_string(key)) {
            json_decref(key);
            return fail(r, "expected a member name");
        }
        if (expect(r, ':') < 0) {
            json_decref(key);
            return -1;
        }
        if (strcmp(json_string_value(key), "traceEvents") == 0 && seen) {
            json_decref(key);
            return fail(r, "traceEvents is given twice (JSON readers keep one of them, this "
                        "one read both)");
        }
        if (strcmp(json_string_value(key), "traceEvents") == 0) {
            rc = event_array(r, t);
            seen = 1;
        } else {
            json_t *v = value(r);

            rc = v ? 0 : -1;
            json_decref(v);
        }
        json_decref(key);
        if (rc < 0)
            return -1;
        if (peek(r) == '}') {
            r->pos++;
            break;
        }
        if (expect(r, ',') < 0)
            return -1;
    }
    return seen ? 0 : fail(r, "no traceEvents array");
}

/* Nothing but blanks may follow the trace: a second trace (cat rank*.json,
 * or two gzip members) was dropped without a word, and garbage accepted. */
static int trace_ends(struct reader *r)
{
    int c = peek(r);

    if (c == -2)
        return -1;
    if (c != -1)
        return fail(r, "more follows the end of the trace (a second trace, or garbage): one "
                    "trace a file");
    return 0;
}

int moe_trace_read_kineto(struct moe_trace *t, const char *path, struct moe_error *err)
{
    struct reader r = { .path = path, .err = err, .cap = WINDOW_MIN,
                        .unpacked_max = t->unpacked_max ? t->unpacked_max
                                                        : MOE_TRACE_UNPACKED_MAX };
    int c, rc = -1;

    /* gzip-streamed through a window, not moe_read_file(): a trace is
     * hundreds of MiB unpacked. */
    r.fd = moe_open_regular(path, "trace", err);
    if (r.fd < 0)
        return -1;
    r.buf = malloc(r.cap);
    if (!r.buf) {
        moe_error_at(err, path, 0, 0, "out of memory");
        goto out;
    }
    while (r.z.avail_in < 2 && !r.file_eof)
        if (file_read(&r, r.z.avail_in) < 0)
            goto out;
    r.gz = r.z.avail_in >= 2 && r.in[0] == 0x1f && r.in[1] == 0x8b;
    if (r.gz && inflateInit2(&r.z, 16 + MAX_WBITS) != Z_OK) {
        moe_error_at(err, path, 0, 0, "trace: out of memory");
        goto out;
    }
    r.zinit = r.gz;
    c = peek(&r);
    if (c == '{')
        rc = top_object(&r, t);
    else if (c == '[') /* the Chrome format also allows a bare event array */
        rc = event_array(&r, t);
    else if (c >= -1)
        rc = fail(&r, "not a Kineto JSON trace (nor an nsys SQLite export)");
    if (rc == 0)
        rc = trace_ends(&r);
out:
    free(r.buf);
    if (r.zinit)
        inflateEnd(&r.z);
    close(r.fd);
    return rc;
}
