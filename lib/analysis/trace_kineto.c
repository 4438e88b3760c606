/* PyTorch-profiler (Kineto) traces: Chrome trace JSON, plain or gzip.
 *
 * The file is streamed: zlib's gzread (which passes plain files through)
 * fills a window, and Jansson decodes one value at a time from it with
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
#include "core/readfile.h"

#define WINDOW_MIN (1u << 20)

struct reader {
    gzFile gz;
    const char *path;
    char *buf;
    size_t cap, pos, len;
    long long consumed; /* bytes of the file before buf[0] */
    unsigned long long unpacked, unpacked_max; /* bytes gzread gave so far, and may */
    int eof;
    struct moe_error *err;
};

/* Errors name the byte offset: lines can be megabytes long in these files. */
static int fail(struct reader *r, const char *what)
{
    moe_error_at(r->err, r->path, 0, 0, "byte %lld: %s",
                 (long long)(r->consumed + (long long)r->pos), what);
    return -1;
}

/* Keeps unread bytes, drops read ones, reads more; grows the window only
 * when a single value fills it. */
static int refill(struct reader *r)
{
    int n;

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
        nb = realloc(r->buf, r->cap * 2);

        if (!nb)
            return fail(r, "out of memory");
        r->buf = nb;
        r->cap *= 2;
    }
    n = gzread(r->gz, r->buf + r->len, (unsigned)(r->cap - r->len));
    if (n < 0) {
        int zerr;
        const char *msg = gzerror(r->gz, &zerr);

        return fail(r, msg);
    }
    if (n == 0)
        r->eof = 1;
    r->len += (size_t)n;
    r->unpacked += (unsigned long long)n;
    if (r->unpacked > r->unpacked_max) {
        char what[96];

        snprintf(what, sizeof(what), "unpacks to more than %llu MiB: not a profiler's trace "
                 "(a gzip bomb?)", r->unpacked_max >> 20);
        return fail(r, what);
    }
    return 0;
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

int moe_trace_read_kineto(struct moe_trace *t, const char *path, struct moe_error *err)
{
    struct reader r = { .path = path, .err = err, .cap = WINDOW_MIN,
                        .unpacked_max = t->unpacked_max ? t->unpacked_max
                                                        : MOE_TRACE_UNPACKED_MAX };
    int c, rc = -1, fd;

    /* gzip-streamed through a window, not moe_read_file(): a trace is
     * hundreds of MiB unpacked. */
    fd = moe_open_regular(path, "trace", err);
    if (fd < 0)
        return -1;
    r.gz = gzdopen(fd, "rb");
    if (!r.gz) {
        moe_error_at(err, path, 0, 0, "trace: out of memory");
        close(fd);
        return -1;
    }
    gzbuffer(r.gz, 1u << 17);
    r.buf = malloc(r.cap);
    if (!r.buf) {
        moe_error_at(err, path, 0, 0, "out of memory");
        goto out;
    }
    c = peek(&r);
    if (c == '{')
        rc = top_object(&r, t);
    else if (c == '[') /* the Chrome format also allows a bare event array */
        rc = event_array(&r, t);
    else if (c >= -1)
        rc = fail(&r, "not a Kineto JSON trace (nor an nsys SQLite export)");
out:
    free(r.buf);
    gzclose(r.gz);
    return rc;
}
