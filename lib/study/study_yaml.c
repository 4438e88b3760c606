/* libyaml's document API gives every node its start mark; we walk the
 * document once against the schema and convert scalars by the schema's type,
 * not by guessing from the text. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "core/suggest.h"
#include "core/yaml_depth.h"
#include "study/study_yaml.h"

struct walk {
    const char *name;
    yaml_document_t *doc;
    json_t *pos;
    struct moe_error *err;
};

static int fail_at(struct walk *w, const yaml_node_t *node, const char *path, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

static int fail_at(struct walk *w, const yaml_node_t *node, const char *path, const char *fmt,
                   ...)
{
    char text[MOE_ERROR_TEXT_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    moe_error_at(w->err, w->name, (int)node->start_mark.line + 1,
                 (int)node->start_mark.column + 1, "%s: %s", path, text);
    return -1;
}

static const char *scalar(const yaml_node_t *node)
{
    return (const char *)node->data.scalar.value;
}

static const char *type_name(enum moe_ftype t)
{
    static const char *const names[] = { "an integer", "a number", "a string", "true or false",
                                         "one of the listed names", "a list of names",
                                         "a list of integers", "a mapping" };
    return names[t];
}

static int parse_long(const char *s, long *out)
{
    char *end;

    errno = 0;
    *out = strtol(s, &end, 10);
    return (errno || end == s || *end) ? -1 : 0;
}

static const char *choices_text(const char *const *choices, char *buf, size_t len)
{
    size_t off = 0;

    buf[0] = '\0';
    for (int i = 0; choices[i] && off + 1 < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "|" : "", choices[i]);
    return buf;
}

static int count(const char *const *list)
{
    int n = 0;

    while (list[n])
        n++;
    return n;
}

static int check_choice(struct walk *w, const yaml_node_t *node, const char *path,
                        const char *const *choices)
{
    char buf[512];
    const char *v = scalar(node), *near;

    for (int i = 0; choices[i]; i++)
        if (strcmp(v, choices[i]) == 0)
            return 0;
    near = moe_suggest(v, choices, count(choices));
    choices_text(choices, buf, sizeof(buf));
    if (near)
        return fail_at(w, node, path, "'%s' is not valid (did you mean '%s'?); choose %s", v,
                       near, buf);
    return fail_at(w, node, path, "'%s' is not valid; choose %s", v, buf);
}

static int int_in_range(struct walk *w, const yaml_node_t *node, const char *path,
                        const struct moe_field *f, long *out)
{
    char range[64];

    if (node->type != YAML_SCALAR_NODE)
        return fail_at(w, node, path, "expected an integer");
    if (parse_long(scalar(node), out) < 0)
        return fail_at(w, node, path, "expected an integer, not '%s'", scalar(node));
    if (*out < f->min || (f->max && *out > f->max)) {
        snprintf(range, sizeof(range), "%ld..%ld", f->min, f->max);
        return fail_at(w, node, path, "%s is out of range %s", scalar(node), range);
    }
    return 0;
}

static json_t *convert(struct walk *w, yaml_node_t *node, const struct moe_field *f,
                       const char *path);

static json_t *convert_map(struct walk *w, yaml_node_t *node, const struct moe_field *keys,
                           const char *path)
{
    json_t *obj;
    const char *names[128];
    int n_names = 0;

    if (node->type != YAML_MAPPING_NODE) {
        fail_at(w, node, path[0] ? path : "(top)", "expected a mapping");
        return NULL;
    }
    for (const struct moe_field *k = keys; k->key && n_names < 128; k++)
        names[n_names++] = k->key;
    obj = json_object();
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
         p < node->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(w->doc, p->value);
        const struct moe_field *f = NULL;
        char sub[256];
        json_t *v;

        if (kn->type != YAML_SCALAR_NODE) {
            fail_at(w, kn, path[0] ? path : "(top)", "keys must be plain names");
            goto fail;
        }
        snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", scalar(kn));
        for (const struct moe_field *k = keys; k->key; k++)
            if (strcmp(k->key, scalar(kn)) == 0)
                f = k;
        if (!f) {
            const char *near = moe_suggest(scalar(kn), names, n_names);
            if (near)
                fail_at(w, kn, sub, "unknown key (did you mean '%s'?)", near);
            else
                fail_at(w, kn, sub, "unknown key");
            goto fail;
        }
        if (json_object_get(obj, f->key)) {
            fail_at(w, kn, sub, "key given twice");
            goto fail;
        }
        json_object_set_new(w->pos, sub, json_pack("[ii]", (int)vn->start_mark.line + 1,
                                                   (int)vn->start_mark.column + 1));
        v = convert(w, vn, f, sub);
        if (!v)
            goto fail;
        json_object_set_new(obj, f->key, v);
    }
    return obj;
fail:
    json_decref(obj);
    return NULL;
}

static json_t *convert_list(struct walk *w, yaml_node_t *node, const struct moe_field *f,
                            const char *path)
{
    json_t *arr;

    if (node->type != YAML_SEQUENCE_NODE) {
        fail_at(w, node, path, "expected %s", type_name(f->type));
        return NULL;
    }
    arr = json_array();
    for (yaml_node_item_t *it = node->data.sequence.items.start;
         it < node->data.sequence.items.top; it++) {
        yaml_node_t *item = yaml_document_get_node(w->doc, *it);
        char sub[300];
        long v;

        snprintf(sub, sizeof(sub), "%.256s[%d]", path,
                 (int)(it - node->data.sequence.items.start));
        if (item->type != YAML_SCALAR_NODE) {
            fail_at(w, item, sub, "expected a scalar");
            goto fail;
        }
        if (f->type == MOE_F_STRLIST) {
            if (check_choice(w, item, sub, f->choices) < 0)
                goto fail;
            json_array_append_new(arr, json_string(scalar(item)));
        } else {
            if (int_in_range(w, item, sub, f, &v) < 0)
                goto fail;
            json_array_append_new(arr, json_integer(v));
        }
    }
    return arr;
fail:
    json_decref(arr);
    return NULL;
}

static json_t *convert_scalar(struct walk *w, yaml_node_t *node, const struct moe_field *f,
                              const char *path)
{
    const char *s;
    long l;
    char *end;
    double d;

    if (node->type != YAML_SCALAR_NODE) {
        fail_at(w, node, path, "expected %s", type_name(f->type));
        return NULL;
    }
    s = scalar(node);
    switch (f->type) {
    case MOE_F_INT:
        return int_in_range(w, node, path, f, &l) < 0 ? NULL : json_integer(l);
    case MOE_F_NUM:
        errno = 0;
        d = strtod(s, &end);
        if (errno || end == s || *end) {
            fail_at(w, node, path, "expected a number, not '%s'", s);
            return NULL;
        }
        return json_real(d);
    case MOE_F_BOOL:
        if (strcmp(s, "true") == 0)
            return json_true();
        if (strcmp(s, "false") == 0)
            return json_false();
        fail_at(w, node, path, "expected true or false, not '%s'", s);
        return NULL;
    case MOE_F_ENUM:
        return check_choice(w, node, path, f->choices) < 0 ? NULL : json_string(s);
    default:
        if (node->data.scalar.length != strlen(s)) {
            fail_at(w, node, path, "embedded NUL byte");
            return NULL;
        }
        return json_string(s);
    }
}

static json_t *convert(struct walk *w, yaml_node_t *node, const struct moe_field *f,
                       const char *path)
{
    switch (f->type) {
    case MOE_F_MAP:
        return convert_map(w, node, f->sub, path);
    case MOE_F_STRLIST:
    case MOE_F_INTLIST:
        return convert_list(w, node, f, path);
    default:
        return convert_scalar(w, node, f, path);
    }
}

json_t *moe_study_yaml_parse(const char *name, const char *text, size_t len,
                             const struct moe_field *schema, json_t **positions,
                             struct moe_error *err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_node_t *root;
    json_t *out = NULL;
    struct walk w = { name, &doc, json_object(), err };

    *positions = NULL;
    if (moe_yaml_check_depth(name, text, len, err) != 0) {
        json_decref(w.pos);
        return NULL;
    }
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        moe_error_at(err, name, (int)parser.problem_mark.line + 1,
                     (int)parser.problem_mark.column + 1, "YAML: %s",
                     parser.problem ? parser.problem : "syntax error");
        yaml_parser_delete(&parser);
        json_decref(w.pos);
        return NULL;
    }
    root = yaml_document_get_root_node(&doc);
    if (!root)
        moe_error_at(err, name, 1, 1, "empty study");
    else
        out = convert_map(&w, root, schema, "");
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (!out) {
        json_decref(w.pos);
        return NULL;
    }
    *positions = w.pos;
    return out;
}
