/* Two passes: split the template into tokens (dropping the lines that hold
 * only a section tag), then render the token list recursively against a
 * stack of contexts.  Every lookup miss is an error, never an empty string:
 * a silently blank #SBATCH line is worse than no script. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/readfile.h"
#include "core/strbuf.h"
#include "core/text.h"
#include "study/template.h"
#include "study/template_internal.h"

enum tok_kind { T_TEXT, T_VAR, T_OPEN, T_INVERT, T_CLOSE };

struct tok {
    enum tok_kind kind;
    const char *s;       /* text or tag name (not NUL-terminated) */
    size_t n;
    int line;
    size_t match;        /* T_OPEN/T_INVERT: index of the matching T_CLOSE */
};

struct out {
    char *s;
    size_t n, cap;
};

struct render {
    const char *name;
    struct tok *toks;
    const json_t *stack[32];
    int depth;
    struct out out;
    struct moe_error *err;
};

static int out_put(struct out *o, const char *s, size_t n)
{
    char *p = moe_grow_array(o->s, &o->cap, o->n + n + 1, 1);

    if (!p)
        return -1;
    o->s = p;
    memcpy(o->s + o->n, s, n);
    o->n += n;
    o->s[o->n] = '\0';
    return 0;
}

static int is_blank(const char *s, const char *e)
{
    for (; s < e; s++)
        if (*s != ' ' && *s != '\t')
            return 0;
    return 1;
}

/* Appends a token, growing the array. */
static int push(struct tok **toks, size_t *n, size_t *cap, struct tok t)
{
    struct tok *p = moe_grow_array(*toks, cap, *n + 1, sizeof(*p));

    if (!p)
        return -1;
    *toks = p;
    (*toks)[(*n)++] = t;
    return 0;
}

static struct tok *tokenize(const char *name, const char *text, size_t *count,
                            struct moe_error *err)
{
    struct tok *toks = NULL;
    size_t n = 0, cap = 0, open[32];
    int depth = 0, line = 1;
    const char *p = text, *line_start = text;

    while (*p) {
        const char *tag = strstr(p, "{{"), *end, *name_s, *after;
        enum tok_kind kind = T_VAR;
        struct tok t;

        if (!tag)
            tag = p + strlen(p);
        for (const char *q = p; q < tag; q++)
            if (*q == '\n') {
                line++;
                line_start = q + 1;
            }
        if (!*tag) {
            if (push(&toks, &n, &cap, (struct tok){ T_TEXT, p, (size_t)(tag - p), line, 0 }) < 0)
                goto oom;
            break;
        }
        if (!(end = strstr(tag + 2, "}}"))) {
            moe_error_at(err, name, line, 0, "unclosed '{{'");
            goto fail;
        }
        name_s = tag + 2;
        if (*name_s == '#' || *name_s == '^' || *name_s == '/')
            kind = *name_s == '#' ? T_OPEN : *name_s == '^' ? T_INVERT : T_CLOSE, name_s++;
        while (*name_s == ' ')
            name_s++;
        t = (struct tok){ kind, name_s, (size_t)(end - name_s), line, 0 };
        while (t.n && t.s[t.n - 1] == ' ')
            t.n--;
        if (!t.n || memchr(t.s, '\n', t.n)) {
            moe_error_at(err, name, line, 0, "empty or broken tag");
            goto fail;
        }
        after = end + 2;
        /* A section tag alone on its line: drop the indentation and newline. */
        if (kind != T_VAR && is_blank(line_start, tag)) {
            const char *e = after;
            while (*e == ' ' || *e == '\t')
                e++;
            if (*e == '\n' || !*e) {
                if (push(&toks, &n, &cap,
                         (struct tok){ T_TEXT, p, (size_t)(line_start - p), line, 0 }) < 0)
                    goto oom;
                p = *e ? e + 1 : e;
                if (*e) {
                    line++;
                    line_start = p;
                }
                goto tag;
            }
        }
        if (push(&toks, &n, &cap, (struct tok){ T_TEXT, p, (size_t)(tag - p), line, 0 }) < 0)
            goto oom;
        p = after;
tag:
        if (kind == T_OPEN || kind == T_INVERT) {
            if (depth == 32) {
                moe_error_at(err, name, t.line, 0, "sections nest too deep");
                goto fail;
            }
            open[depth++] = n;
        } else if (kind == T_CLOSE) {
            if (!depth || toks[open[depth - 1]].n != t.n ||
                memcmp(toks[open[depth - 1]].s, t.s, t.n) != 0) {
                moe_error_at(err, name, t.line, 0, "'{{/%.*s}}' closes no open section",
                             (int)t.n, t.s);
                goto fail;
            }
            toks[open[--depth]].match = n;
        }
        if (push(&toks, &n, &cap, t) < 0)
            goto oom;
    }
    if (depth) {
        struct tok *o = &toks[open[depth - 1]];
        moe_error_at(err, name, o->line, 0, "section '%.*s' is never closed", (int)o->n, o->s);
        goto fail;
    }
    *count = n;
    return toks;
oom:
    moe_error_at(err, name, line, 0, "out of memory");
fail:
    free(toks);
    return NULL;
}

static const json_t *lookup(struct render *r, const struct tok *t)
{
    char key[128];
    const json_t *v = NULL;
    const char *seg = t->s, *end = t->s + t->n;

    if (t->n == 1 && t->s[0] == '.')
        return r->stack[r->depth - 1];
    while (seg < end) {
        const char *dot = memchr(seg, '.', (size_t)(end - seg));
        size_t len = (size_t)((dot ? dot : end) - seg);

        if (len >= sizeof(key))
            return NULL;
        memcpy(key, seg, len);
        key[len] = '\0';
        if (seg == t->s) {
            /* The first segment is searched from the innermost context out. */
            for (int i = r->depth - 1; i >= 0 && !v; i--)
                v = json_object_get(r->stack[i], key);
        } else {
            v = json_object_get(v, key);
        }
        if (!v)
            return NULL;
        seg = dot ? dot + 1 : end;
    }
    return v;
}

static int undefined(struct render *r, const struct tok *t)
{
    moe_error_at(r->err, r->name, t->line, 0, "undefined template variable '%.*s'", (int)t->n,
                 t->s);
    return -1;
}

/* A value is text inside one line: a control character in it (a newline
 * above all) would start a line the template never had, a command or an
 * #SBATCH directive, whatever quoting the generator gave the value. */
static int put_value(struct render *r, const struct tok *t, const json_t *v)
{
    char buf[64];
    long ctrl;

    switch (json_typeof(v)) {
    case JSON_STRING:
        if ((ctrl = moe_text_control_at(json_string_value(v), json_string_length(v))) >= 0) {
            moe_error_at(r->err, r->name, t->line, 0, "'%.*s' holds %s: a value is never more "
                         "than part of one line of a script", (int)t->n, t->s,
                         moe_text_control_name(json_string_value(v) + ctrl, buf, sizeof(buf)));
            return -1;
        }
        return out_put(&r->out, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        /* fits: a 64-bit integer */
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        /* fits: 15 significant digits and an exponent */
        snprintf(buf, sizeof(buf), "%.15g", json_real_value(v));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        /* fits: "true" or "false" */
        snprintf(buf, sizeof(buf), "%s", json_is_true(v) ? "true" : "false");
        break;
    case JSON_NULL:
        buf[0] = '\0';
        break;
    default:
        moe_error_at(r->err, r->name, t->line, 0, "'%.*s' is a list or mapping, not a value",
                     (int)t->n, t->s);
        return -1;
    }
    return out_put(&r->out, buf, strlen(buf));
}

static bool truthy(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_FALSE:
    case JSON_NULL:
        return false;
    case JSON_ARRAY:
        return json_array_size(v) > 0;
    case JSON_STRING:
        return json_string_length(v) > 0;
    case JSON_INTEGER:
        return json_integer_value(v) != 0;
    default:
        return true;
    }
}

static int render_range(struct render *r, size_t from, size_t to);

static int render_with(struct render *r, const json_t *ctx, size_t from, size_t to)
{
    int rc;

    if (r->depth == 32) {
        moe_error_at(r->err, r->name, r->toks[from].line, 0, "sections nest too deep");
        return -1;
    }
    r->stack[r->depth++] = ctx;
    rc = render_range(r, from, to);
    r->depth--;
    return rc;
}

static int render_section(struct render *r, size_t i)
{
    const struct tok *t = &r->toks[i];
    const json_t *v = lookup(r, t);
    size_t body = i + 1, end = t->match;

    if (!v)
        return undefined(r, t);
    if (t->kind == T_INVERT)
        return truthy(v) ? 0 : render_range(r, body, end);
    if (!truthy(v))
        return 0;
    if (json_is_array(v)) {
        size_t k;
        const json_t *item;
        json_array_foreach(v, k, item) {
            if (render_with(r, item, body, end) < 0)
                return -1;
        }
        return 0;
    }
    return render_with(r, v, body, end);
}

static int render_range(struct render *r, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        const struct tok *t = &r->toks[i];
        const json_t *v;

        switch (t->kind) {
        case T_TEXT:
            if (out_put(&r->out, t->s, t->n) < 0)
                return -1;
            break;
        case T_VAR:
            if (!(v = lookup(r, t)))
                return undefined(r, t);
            if (put_value(r, t, v) < 0)
                return -1;
            break;
        case T_OPEN:
        case T_INVERT:
            if (render_section(r, i) < 0)
                return -1;
            i = t->match;
            break;
        case T_CLOSE:
            break;
        }
    }
    return 0;
}

char *moe_template_render(const char *name, const char *text, const json_t *data,
                          struct moe_error *err)
{
    struct render r = { name, NULL, { data }, 1, { NULL, 0, 0 }, err };
    size_t n = 0;

    if (!(r.toks = tokenize(name, text, &n, err)))
        return NULL;
    if (out_put(&r.out, "", 0) < 0 || render_range(&r, 0, n) < 0) {
        free(r.out.s);
        r.out.s = NULL;
    }
    free(r.toks);
    return r.out.s;
}

char *moe_template_render_file(const char *path, const json_t *data, struct moe_error *err)
{
    char *text = moe_read_file(path, "template", NULL, err), *out;

    if (!text)
        return NULL;
    out = moe_template_render(path, text, data, err);
    free(text);
    return out;
}
