/* libyaml's document API gives every node its start mark; we walk the
 * document once against the schema and convert scalars by the schema's type,
 * not by guessing from the text. */
#include "config.h"

#include <float.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "core/json_build.h"
#include "core/number.h"
#include "core/shquote.h"
#include "core/suggest.h"
#include "core/text.h"
#include "core/yaml_depth.h"
#include "study/study.h"
#include "study/study_yaml.h"
#include "study/study_yaml_internal.h"

/* The walk goes on after an error: each is added to errs and its key
 * path to bad, and the key is left out of the tree, so that the reader
 * (study.c) reports what else it can without piling on.  Out of memory
 * (err, fatal) stops it. */
struct walk {
    const char *name;
    yaml_document_t *doc;
    json_t *pos;
    struct moe_error *err;
    struct moe_error_list *errs;
    json_t *bad;
    bool fatal;
};

/* A key path in error; a path that cannot be recorded (out of memory)
 * stops the walk, since the reader would then pile on. */
static void mark_bad(struct walk *w, const char *path)
{
    if (json_object_set_new(w->bad, path, json_true()) < 0) {
        moe_error_set(w->err, "%s: out of memory recording %s", w->name, path);
        w->fatal = true;
    }
}

static int fail_at(struct walk *w, const yaml_node_t *node, const char *path, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

static int fail_at(struct walk *w, const yaml_node_t *node, const char *path, const char *fmt,
                   ...)
{
    char text[MOE_ERROR_TEXT_MAX];
    va_list ap;

    struct moe_error e;

    va_start(ap, fmt);
    /* a message: a cut one still names the key and its line */
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    moe_error_at(&e, w->name, (int)node->start_mark.line + 1,
                 (int)node->start_mark.column + 1, "%s: %s", path, text);
    moe_error_list_add(w->errs, &e);
    mark_bad(w, path);
    return -1;
}

static const char *scalar(const yaml_node_t *node)
{
    return (const char *)node->data.scalar.value;
}

/* The one rule for every string of a study, keys included: no control
 * character (core/text.h).  Checked before a scalar is read as anything,
 * so that no message echoes one to the terminal either. */
static int no_control(struct walk *w, const yaml_node_t *node, const char *path)
{
    const char *s = scalar(node);
    long at = moe_text_control_at(s, node->data.scalar.length);
    char name[48];

    if (at < 0)
        return 0;
    return fail_at(w, node, path, "holds %s at byte %ld: no control characters are allowed",
                   moe_text_control_name(s + at, name, sizeof(name)), at + 1);
}

/* A value quoted in a message is cut at n bytes with "...", so that what
 * the message says about it (the limit) is never cut off instead. */
static const char *ellipsis(const yaml_node_t *node, size_t n)
{
    return node->data.scalar.length > n ? "..." : "";
}

/* A string that lands in an #SBATCH line: the schema's pattern for what
 * Slurm takes there, then sbatch's own rule (core/shquote.h). */
static int sbatch_value(struct walk *w, const yaml_node_t *node, const char *path,
                        const struct moe_field *f)
{
    struct moe_error e;
    regex_t re;
    char *q;
    int nomatch;

    if (regcomp(&re, f->pattern, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0)
        return fail_at(w, node, path, "internal error: bad pattern");
    nomatch = regexec(&re, scalar(node), 0, NULL, 0);
    regfree(&re);
    if (nomatch)
        return fail_at(w, node, path, "'%.80s%s' is not %s", scalar(node), ellipsis(node, 80),
                       f->allows);
    moe_error_clear(&e);
    if (!(q = moe_sbatch_quote(scalar(node), &e)))
        return fail_at(w, node, path, "'%.80s%s' %s", scalar(node), ellipsis(node, 80), e.text);
    free(q);
    return 0;
}

/* Rule 1 (lib/README.md): a string is kept whole or refused with the limit
 * named, never cut.  The limit is the schema's (study.h MOE_STUDY_STR_MAX). */
static int string_limit(struct walk *w, const yaml_node_t *node, const char *path)
{
    if (node->data.scalar.length <= MOE_STUDY_STR_MAX)
        return 0;
    return fail_at(w, node, path, "is %zu bytes, over the limit of %d: each string reaches "
                   "the job as one argument, and Linux refuses an argument over %d bytes "
                   "(MAX_ARG_STRLEN)", node->data.scalar.length, MOE_STUDY_STR_MAX,
                   MOE_STUDY_STR_MAX);
}

static const char *type_name(enum moe_ftype t)
{
    static const char *const names[] = { "an integer", "a number", "a string", "true or false",
                                         "one of the listed names", "a list of names",
                                         "a list of integers", "a mapping",
                                         "a mapping of names to strings", "a list of strings" };
    return names[t];
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

/* Numbers go through the one numeric check (core/number.h). */
static int int_in_range(struct walk *w, const yaml_node_t *node, const char *path,
                        const struct moe_field *f, long *out)
{
    struct moe_error e;

    if (node->type != YAML_SCALAR_NODE)
        return fail_at(w, node, path, "expected an integer");
    moe_error_clear(&e);
    if (moe_number_parse_long(scalar(node), f->min, f->max ? f->max : LONG_MAX, out, &e) < 0)
        return fail_at(w, node, path, "%s", e.text);
    return 0;
}

static json_t *convert(struct walk *w, yaml_node_t *node, const struct moe_field *f,
                       const char *path);

/* The schema's field for the key kn, or NULL with the error added (the key
 * is then left out).  An unknown key that is a slip of a known one marks
 * that one too: it was given, and "is required" would pile on. */
static const struct moe_field *key_field(struct walk *w, yaml_node_t *kn,
                                         const struct moe_field *keys, const char *path,
                                         char *sub, size_t len)
{
    const char *names[128], *near, *where = path[0] ? path : "(top)";
    int n_names = 0, n;

    /* a key that cannot be read could be any of the mapping's: the whole
     * mapping is in error (fail_at marks where), and nothing in it is
     * then reported missing */
    if (kn->type != YAML_SCALAR_NODE) {
        fail_at(w, kn, where, "keys must be plain names");
        return NULL;
    }
    if (no_control(w, kn, where) < 0)
        return NULL;
    n = snprintf(sub, len, "%s%s%s", path, path[0] ? "." : "", scalar(kn));
    if (n < 0 || (size_t)n >= len) {
        /* a cut path would file the value's position under another key */
        fail_at(w, kn, where, "key path too long (at most %zu bytes)", len - 1);
        return NULL;
    }
    for (const struct moe_field *k = keys; k->key; k++)
        if (strcmp(k->key, scalar(kn)) == 0)
            return k;
    for (const struct moe_field *k = keys; k->key && n_names < 128; k++)
        names[n_names++] = k->key;
    if (!(near = moe_suggest(scalar(kn), names, n_names))) {
        fail_at(w, kn, sub, "unknown key");
        return NULL;
    }
    fail_at(w, kn, sub, "unknown key (did you mean '%s'?)", near);
    {
        char meant[256];

        /* a message's bookkeeping: a cut path marks a parent, which skips more */
        snprintf(meant, sizeof(meant), "%s%s%s", path, path[0] ? "." : "", near);
        mark_bad(w, meant);
    }
    return NULL;
}

/* One key and its value into obj: 0, also when the key was in error (added
 * to the list, left out); -1 out of memory. */
static int convert_pair(struct walk *w, json_t *obj, yaml_node_pair_t *p,
                        const struct moe_field *keys, const char *path)
{
    yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
    yaml_node_t *vn = yaml_document_get_node(w->doc, p->value);
    const struct moe_field *f;
    char sub[256];
    struct moe_jb b;
    json_t *v;
    int errors;

    if (!(f = key_field(w, kn, keys, path, sub, sizeof(sub))))
        return w->fatal ? -1 : 0;
    if (json_object_get(obj, f->key)) {
        fail_at(w, kn, sub, "key given twice");
        return w->fatal ? -1 : 0;
    }
    moe_jb_init(&b, w->err);
    if (moe_jb_set(&b, w->pos, sub,
                   moe_jb_pack(&b, "[ii]", (int)vn->start_mark.line + 1,
                               (int)vn->start_mark.column + 1)) < 0)
        return -1;
    errors = w->errs->n;
    if (!(v = convert(w, vn, f, sub))) {
        /* its errors are in the list; the whole value is in error */
        mark_bad(w, sub);
        if (w->errs->n == errors && !w->fatal)
            moe_error_set(w->err, "%s: %s: out of memory", w->name, sub);
        return w->errs->n == errors || w->fatal ? -1 : 0;
    }
    if (moe_jb_set(&b, obj, f->key, v) < 0) {
        moe_jb_within(&b, path);
        return -1;
    }
    return 0;
}

/* The mapping with each key that is not in error; NULL when node is no
 * mapping (the error added) or out of memory (w->fatal). */
static json_t *convert_map(struct walk *w, yaml_node_t *node, const struct moe_field *keys,
                           const char *path)
{
    json_t *obj;

    if (node->type != YAML_MAPPING_NODE) {
        fail_at(w, node, path[0] ? path : "(top)", "expected a mapping");
        return NULL;
    }
    if (!(obj = json_object())) {
        moe_error_set(w->err, "%s: out of memory", w->name);
        w->fatal = true;
        return NULL;
    }
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
         p < node->data.mapping.pairs.top; p++)
        if (convert_pair(w, obj, p, keys, path) < 0) {
            w->fatal = true;
            json_decref(obj);
            return NULL;
        }
    return obj;
}

/* A list is a set of values, each given once; a [first, last] range may
 * repeat (one step).  A repeat would make two candidates of one value. */
static int list_repeat(struct walk *w, const yaml_node_t *item, const char *path,
                       const struct moe_field *f, const json_t *arr, const json_t *v)
{
    size_t i;
    const json_t *prev;

    if (f->range)
        return 0;
    json_array_foreach(arr, i, prev) {
        if (json_equal(prev, v))
            return fail_at(w, item, path, "'%s' is given twice (also item %zu)", scalar(item),
                           i);
    }
    return 0;
}

/* One item of a list: its value, or NULL with the error added. */
static json_t *convert_item(struct walk *w, yaml_node_t *item, const struct moe_field *f,
                            const char *sub, const json_t *arr)
{
    json_t *v;
    long l;

    if (item->type != YAML_SCALAR_NODE) {
        fail_at(w, item, sub, "expected a scalar");
        return NULL;
    }
    if (no_control(w, item, sub) < 0)
        return NULL;
    if (f->type == MOE_F_ARGS) { /* free strings, in order, repeats allowed */
        struct moe_jb b;

        /* the reader checks each word against Megatron's flags (study.c):
         * its error points at the word */
        moe_jb_init(&b, w->err);
        if (moe_jb_set(&b, w->pos, sub, moe_jb_pack(&b, "[ii]", (int)item->start_mark.line + 1,
                                                    (int)item->start_mark.column + 1)) < 0) {
            w->fatal = true;
            return NULL;
        }
        return string_limit(w, item, sub) < 0 ? NULL : json_string(scalar(item));
    }
    if (f->type == MOE_F_STRLIST ? check_choice(w, item, sub, f->choices) < 0
                                 : int_in_range(w, item, sub, f, &l) < 0)
        return NULL;
    v = f->type == MOE_F_STRLIST ? json_string(scalar(item)) : json_integer(l);
    if (list_repeat(w, item, sub, f, arr, v) < 0) {
        json_decref(v);
        return NULL;
    }
    return v;
}

/* Every item is checked, each error added; a list with one is NULL (left
 * out whole: the reader's default stands, and its checks skip it). */
static json_t *convert_list(struct walk *w, yaml_node_t *node, const struct moe_field *f,
                            const char *path)
{
    json_t *arr;
    bool bad = false;

    if (node->type != YAML_SEQUENCE_NODE) {
        fail_at(w, node, path, "expected %s", type_name(f->type));
        return NULL;
    }
    arr = json_array();
    for (yaml_node_item_t *it = node->data.sequence.items.start;
         it < node->data.sequence.items.top && !w->fatal; it++) {
        yaml_node_t *item = yaml_document_get_node(w->doc, *it);
        char sub[300];
        struct moe_jb b;
        json_t *v;

        /* fits: 256 bytes of path and an index */
        snprintf(sub, sizeof(sub), "%.256s[%d]", path,
                 (int)(it - node->data.sequence.items.start));
        if (!(v = convert_item(w, item, f, sub, arr))) {
            bad = true;
            continue;
        }
        moe_jb_init(&b, w->err);
        if (moe_jb_append(&b, arr, v) < 0) {
            moe_jb_within(&b, path);
            w->fatal = true;
        }
    }
    if (bad || w->fatal) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}

/* NAME: value strings under free names (cluster.env): each name and
 * value free of control characters, each value within the string limit;
 * what a name may be is the reader's rule (study.c).  NULL with the error
 * added, or out of memory (w->fatal). */
static json_t *convert_strmap(struct walk *w, yaml_node_t *node, const char *path)
{
    json_t *obj;

    if (node->type != YAML_MAPPING_NODE) {
        fail_at(w, node, path, "expected %s", type_name(MOE_F_STRMAP));
        return NULL;
    }
    obj = json_object();
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
         p < node->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(w->doc, p->value);
        char sub[400];
        struct moe_jb b;

        if (kn->type != YAML_SCALAR_NODE) {
            fail_at(w, kn, path, "names must be plain strings");
            goto fail;
        }
        if (no_control(w, kn, path) < 0)
            goto fail;
        /* fits: 256 bytes of path and a name cut at 128, past the reader's
         * limit for a name (study.c), which refuses a cut one anyway */
        snprintf(sub, sizeof(sub), "%.256s.%.128s", path, scalar(kn));
        if (json_object_get(obj, scalar(kn))) {
            fail_at(w, kn, sub, "given twice");
            goto fail;
        }
        if (vn->type != YAML_SCALAR_NODE) {
            fail_at(w, vn, sub, "expected a string");
            goto fail;
        }
        if (string_limit(w, vn, sub) < 0 || no_control(w, vn, sub) < 0)
            goto fail;
        moe_jb_init(&b, w->err);
        if (moe_jb_set(&b, w->pos, sub, moe_jb_pack(&b, "[ii]", (int)kn->start_mark.line + 1,
                                                    (int)kn->start_mark.column + 1)) < 0 ||
            moe_jb_set(&b, obj, scalar(kn), json_string(scalar(vn))) < 0) {
            moe_jb_within(&b, path);
            w->fatal = true;
            goto fail;
        }
    }
    return obj;
fail:
    json_decref(obj);
    return NULL;
}

static json_t *convert_scalar(struct walk *w, yaml_node_t *node, const struct moe_field *f,
                              const char *path)
{
    struct moe_error e;
    const char *s;
    long l;
    double d;

    if (node->type != YAML_SCALAR_NODE) {
        /* a string's form, where the schema says it, is what a list or a
         * mapping in its place most needs to hear */
        fail_at(w, node, path, "expected %s%s%s", type_name(f->type), f->allows ? ": " : "",
                f->allows ? f->allows : "");
        return NULL;
    }
    if (string_limit(w, node, path) < 0 || no_control(w, node, path) < 0)
        return NULL;
    s = scalar(node);
    moe_error_clear(&e);
    switch (f->type) {
    case MOE_F_INT:
        return int_in_range(w, node, path, f, &l) < 0 ? NULL : json_integer(l);
    case MOE_F_NUM:
        /* Each number's own range is checked where it is used (study.c);
         * here it must be one: NaN and infinity are not. */
        if (moe_number_parse_double(s, -DBL_MAX, DBL_MAX, &d, &e) < 0) {
            fail_at(w, node, path, "%s", e.text);
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
    case MOE_F_STR:
        if (f->pattern && sbatch_value(w, node, path, f) < 0)
            return NULL;
        return json_string(s);
    case MOE_F_STRLIST:
    case MOE_F_INTLIST:
    case MOE_F_MAP:
    case MOE_F_STRMAP:
    case MOE_F_ARGS:
        break;
    }
    /* no default: -Wswitch names a type added without a reader */
    fail_at(w, node, path, "the schema gives this key type %d, which has no scalar reader",
            (int)f->type);
    return NULL;
}

static json_t *convert(struct walk *w, yaml_node_t *node, const struct moe_field *f,
                       const char *path)
{
    switch (f->type) {
    case MOE_F_MAP:
        return convert_map(w, node, f->sub, path);
    case MOE_F_STRMAP:
        return convert_strmap(w, node, path);
    case MOE_F_STRLIST:
    case MOE_F_INTLIST:
    case MOE_F_ARGS:
        return convert_list(w, node, f, path);
    case MOE_F_INT:
    case MOE_F_NUM:
    case MOE_F_STR:
    case MOE_F_BOOL:
    case MOE_F_ENUM:
        return convert_scalar(w, node, f, path);
    }
    /* no default: -Wswitch names a type added without a reader */
    fail_at(w, node, path, "the schema gives this key type %d, which has no reader",
            (int)f->type);
    return NULL;
}

/* libyaml places a reader error (a NUL or another control character,
 * invalid UTF-8) by byte offset only: its line and column, as for every
 * other error. */
static void reader_mark(yaml_parser_t *parser, const char *text, size_t len)
{
    size_t end = parser->problem_offset < len ? parser->problem_offset : len;

    if (parser->error != YAML_READER_ERROR)
        return;
    parser->problem_mark.line = parser->problem_mark.column = 0;
    for (size_t i = 0; i < end; i++) {
        if (text[i] == '\n') {
            parser->problem_mark.line++;
            parser->problem_mark.column = 0;
        } else if (((unsigned char)text[i] & 0xc0) != 0x80) {
            parser->problem_mark.column++;
        }
    }
}

/* After the study's document, the stream ends: a second document ("---")
 * would go unread, which is worse than refused. */
static bool one_document(yaml_parser_t *parser, const char *name, struct moe_error *err)
{
    yaml_document_t next;
    yaml_node_t *root;
    bool one;

    if (!yaml_parser_load(parser, &next)) {
        moe_error_at(err, name, (int)parser->problem_mark.line + 1,
                     (int)parser->problem_mark.column + 1, "YAML: %s",
                     parser->problem ? parser->problem : "syntax error");
        return false;
    }
    root = yaml_document_get_root_node(&next);
    one = !root;
    if (!one)
        moe_error_at(err, name, (int)root->start_mark.line + 1, (int)root->start_mark.column + 1,
                     "a second YAML document: a study is one document");
    yaml_document_delete(&next);
    return one;
}

/* A study is UTF-8.  libyaml would read UTF-16 after its byte-order mark
 * and convert it, but every copy and hash of the study is of its bytes:
 * the study's own copy in a study directory would then be a file no C
 * string holds (D15).  Refused by name; anything else that is not UTF-8
 * is libyaml's reader error, at its line and column. */
static int utf8_only(const char *name, const unsigned char *t, size_t len,
                     struct moe_error *err)
{
    static const struct { unsigned char bom[4]; size_t n; const char *enc; } boms[] = {
        { { 0x00, 0x00, 0xfe, 0xff }, 4, "UTF-32BE" },
        { { 0xff, 0xfe, 0x00, 0x00 }, 4, "UTF-32LE" },
        { { 0xfe, 0xff }, 2, "UTF-16BE" },
        { { 0xff, 0xfe }, 2, "UTF-16LE" },
    };

    for (size_t i = 0; i < sizeof(boms) / sizeof(boms[0]); i++)
        if (len >= boms[i].n && memcmp(t, boms[i].bom, boms[i].n) == 0) {
            moe_error_at(err, name, 1, 1, "the study is %s (its byte-order mark says so); a "
                         "study is UTF-8: iconv -f %s -t UTF-8", boms[i].enc, boms[i].enc);
            return -1;
        }
    return 0;
}

json_t *moe_study_yaml_parse(const char *name, const char *text, size_t len,
                             const struct moe_field *schema, json_t **positions,
                             struct moe_yaml_errors *errors, struct moe_error *err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_node_t *root;
    json_t *out = NULL;
    struct walk w = { name, &doc, json_object(), err, errors->list, errors->bad, false };
    struct moe_error e;

    *positions = NULL;
    if (utf8_only(name, (const unsigned char *)text, len, err) < 0 ||
        moe_yaml_check_depth(name, text, len, err) != 0) {
        json_decref(w.pos);
        return NULL;
    }
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    if (!yaml_parser_load(&parser, &doc)) {
        reader_mark(&parser, text, len);
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
    else if (!w.pos)
        moe_error_set(err, "%s: out of memory", name);
    else if (!(out = convert_map(&w, root, schema, "")) && !w.fatal)
        moe_error_list_take(w.errs, err); /* not a mapping: nothing more to read */
    yaml_document_delete(&doc);
    /* a second document is one more error, and the first is still read */
    if (out && !one_document(&parser, name, &e))
        moe_error_list_add(w.errs, &e);
    yaml_parser_delete(&parser);
    if (!out) {
        json_decref(w.pos);
        return NULL;
    }
    *positions = w.pos;
    return out;
}
