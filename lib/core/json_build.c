#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/json_build_internal.h"

void moe_jb_init(struct moe_jb *b, struct moe_error *err)
{
    memset(b, 0, sizeof(*b));
    b->err = err;
}

/* err's text is "path: why", or why alone while no key is known yet. */
static void say(struct moe_jb *b)
{
    if (b->path[0])
        moe_error_set(b->err, "%s: %s", b->path, b->why);
    else
        moe_error_set(b->err, "%s", b->why);
}

/* seg ("key" or "[i]") goes in front of the failure's path: the failure
 * travels out of the inner build that made it. */
static void prefix(struct moe_jb *b, const char *seg)
{
    char old[sizeof(b->path)];
    int n;

    if (!seg[0])
        return;
    memcpy(old, b->path, sizeof(old));
    n = snprintf(b->path, sizeof(b->path), "%s%s%s", seg, old[0] && old[0] != '[' ? "." : "",
                 old);
    if (n < 0 || (size_t)n >= sizeof(b->path)) /* a cut path still says where it starts */
        memcpy(b->path + sizeof(b->path) - 4, "...", 4);
    say(b);
}

/* The first failure is kept; a later one only grows its path. */
static int fail(struct moe_jb *b, const char *seg, const char *why)
{
    if (b->failed) {
        prefix(b, seg);
        return -1;
    }
    b->failed = true;
    /* a message: a reason too long to hold still says what went wrong */
    snprintf(b->why, sizeof(b->why), "%s", why);
    b->path[0] = '\0';
    prefix(b, seg); /* the path, cut as prefix() marks it */
    say(b);
    return -1;
}

void moe_jb_within(struct moe_jb *b, const char *seg)
{
    if (b->failed)
        prefix(b, seg);
}

json_t *moe_json_number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

const char *moe_json_non_finite_name(double v)
{
    if (isnan(v))
        return "nan";
    if (isinf(v))
        return v > 0 ? "inf" : "-inf";
    return NULL;
}

int moe_jb_set(struct moe_jb *b, json_t *obj, const char *key, json_t *v)
{
    if (!v)
        return fail(b, key, "no value (out of memory, or a value that could not be made)");
    if (!obj) {
        json_decref(v);
        return fail(b, key, "no object to hold it (out of memory)");
    }
    if (json_object_set_new(obj, key, v) < 0)
        return fail(b, key, "could not be set (out of memory, or a key that is not UTF-8)");
    return 0;
}

/* owner's "non_finite" gets name = what v was. */
static int record_non_finite(struct moe_jb *b, json_t *owner, const char *name, double v)
{
    json_t *nf = json_object_get(owner, MOE_JSON_NON_FINITE);

    if (!nf) {
        if (moe_jb_set(b, owner, MOE_JSON_NON_FINITE, json_object()) < 0)
            return -1;
        nf = json_object_get(owner, MOE_JSON_NON_FINITE);
    }
    if (!json_is_object(nf))
        return fail(b, MOE_JSON_NON_FINITE, "is already a value that is not an object");
    return moe_jb_set(b, nf, name, json_string(moe_json_non_finite_name(v)));
}

int moe_jb_num(struct moe_jb *b, json_t *obj, const char *key, double v)
{
    if (moe_jb_set(b, obj, key, moe_json_number(v)) < 0)
        return -1;
    return isfinite(v) ? 0 : record_non_finite(b, obj, key, v);
}

int moe_jb_num_opt(struct moe_jb *b, json_t *obj, const char *key, double v)
{
    return isnan(v) ? moe_jb_set(b, obj, key, json_null()) : moe_jb_num(b, obj, key, v);
}

int moe_jb_str(struct moe_jb *b, json_t *obj, const char *key, const char *s)
{
    json_t *v;

    if (!s)
        return fail(b, key, "no string");
    if (!(v = json_string(s)))
        return fail(b, key, "not UTF-8 (or out of memory)");
    return moe_jb_set(b, obj, key, v);
}

int moe_jb_str_opt(struct moe_jb *b, json_t *obj, const char *key, const char *s)
{
    return s ? moe_jb_str(b, obj, key, s) : moe_jb_set(b, obj, key, json_null());
}

int moe_jb_int(struct moe_jb *b, json_t *obj, const char *key, json_int_t v)
{
    return moe_jb_set(b, obj, key, json_integer(v));
}

int moe_jb_bool(struct moe_jb *b, json_t *obj, const char *key, bool v)
{
    return moe_jb_set(b, obj, key, json_boolean(v));
}

int moe_jb_copy(struct moe_jb *b, json_t *obj, const char *key, json_t *v)
{
    return v ? moe_jb_set(b, obj, key, json_incref(v)) : fail(b, key, "no value to copy");
}

json_t *moe_jb_pack(struct moe_jb *b, const char *fmt, ...)
{
    json_error_t e;
    json_t *v;
    va_list ap;
    char why[sizeof(b->why)];

    va_start(ap, fmt);
    v = json_vpack_ex(&e, 0, fmt, ap);
    va_end(ap);
    if (!v && !b->failed) {
        /* a message: Jansson's reason, cut at worst */
        snprintf(why, sizeof(why), "%s (column %d of \"%s\")", e.text, e.column, fmt);
        fail(b, "", why);
    }
    return v;
}

int moe_jb_append(struct moe_jb *b, json_t *arr, json_t *v)
{
    char seg[32];

    /* fits: a size_t has at most 20 digits */
    snprintf(seg, sizeof(seg), "[%zu]", json_array_size(arr));
    if (!v)
        return fail(b, seg, "no value (out of memory, or a value that could not be made)");
    if (!arr) {
        json_decref(v);
        return fail(b, seg, "no array to hold it (out of memory)");
    }
    if (json_array_append_new(arr, v) < 0)
        return fail(b, seg, "could not be appended (out of memory)");
    return 0;
}

int moe_jb_append_num(struct moe_jb *b, json_t *owner, const char *key, json_t *arr, double v)
{
    char name[MOE_JB_PATH_MAX];
    int n = snprintf(name, sizeof(name), "%s[%zu]", key, json_array_size(arr));

    if (n < 0 || (size_t)n >= sizeof(name)) /* a cut name would record another key */
        return fail(b, key, "too long a key to name an element under \"" MOE_JSON_NON_FINITE "\"");
    if (moe_jb_append(b, arr, moe_json_number(v)) < 0)
        return -1;
    return isfinite(v) ? 0 : record_non_finite(b, owner, name, v);
}

int moe_jb_append_num_opt(struct moe_jb *b, json_t *owner, const char *key, json_t *arr,
                          double v)
{
    return isnan(v) ? moe_jb_append(b, arr, json_null()) : moe_jb_append_num(b, owner, key, arr, v);
}

json_t *moe_jb_done(struct moe_jb *b, json_t *obj)
{
    if (!b->failed && obj)
        return obj;
    if (!obj)
        fail(b, "", "no object (out of memory)");
    json_decref(obj);
    return NULL;
}
