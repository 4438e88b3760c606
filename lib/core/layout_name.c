/* The layout notation (core/layout_name.h): the dotted form every command
 * prints, and the older key=value form, still read. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/layout_name.h"
#include "core/number.h"
#include "core/text.h"

/* What every error ends with: the form to write. */
#define EXPECTED "expected e.g. tp1.cp1.pp2.vpp3.ep8.etp1: tp, cp, pp, vpp, ep, etp in that " \
                 "order, each 1..65536, an omitted one 1"

struct component {
    const char *name;
    size_t off;
};

/* The dotted form's order, which is also the printed one. */
static const struct component components[] = {
    { "tp", offsetof(struct moe_layout, tp) },   { "cp", offsetof(struct moe_layout, cp) },
    { "pp", offsetof(struct moe_layout, pp) },   { "vpp", offsetof(struct moe_layout, vpp) },
    { "ep", offsetof(struct moe_layout, ep) },   { "etp", offsetof(struct moe_layout, etp) },
};
#define N_COMPONENTS (sizeof(components) / sizeof(components[0]))

const char *moe_layout_name(const struct moe_layout *l, char *buf, size_t len)
{
    /* fits: MOE_LAYOUT_NAME_MAX holds six components at their largest */
    snprintf(buf, len, "tp%d.cp%d.pp%d.vpp%d.ep%d.etp%d", l->tp, l->cp, l->pp, l->vpp, l->ep,
             l->etp);
    return buf;
}

static int *field(struct moe_layout *l, size_t k)
{
    return (int *)((char *)l + components[k].off);
}

/* The component named by the LEN bytes at NAME, or N_COMPONENTS. */
static size_t component_named(const char *name, size_t len)
{
    for (size_t k = 0; k < N_COMPONENTS; k++)
        if (strlen(components[k].name) == len && strncmp(name, components[k].name, len) == 0)
            return k;
    return N_COMPONENTS;
}

/* The LEN bytes at DIGITS as a value 1..MAX, digits only: strtol alone
 * would take " 2" and "\n2" for 2 (core/number.h has the one check). */
static int component_value(const char *digits, size_t len, long *v, struct moe_error *err)
{
    char num[24];

    if (len == 0 || len >= sizeof(num) || strspn(digits, "0123456789") < len)
        return -1;
    memcpy(num, digits, len);
    num[len] = '\0';
    return moe_number_parse_long(num, 1, MOE_LAYOUT_COMPONENT_MAX, v, err);
}

/* One dotted component "pp2" at ITEM (LEN bytes); *next is the first
 * component that may still come, so the order is the one printed. */
static int dotted_item(const char *text, const char *item, size_t len, size_t *next,
                       struct moe_layout *l, struct moe_error *err)
{
    size_t n = strspn(item, "abcdefghijklmnopqrstuvwxyz"), k;
    int col = (int)(item - text) + 1, shown = len > 64 ? 64 : (int)len;
    long v;

    if (n > len)
        n = len;
    k = component_named(item, n);
    if (k == N_COMPONENTS) {
        moe_error_at(err, text, 1, col, "'%.*s' is not a layout component (%s)", shown, item,
                     EXPECTED);
        return -1;
    }
    if (k < *next) {
        moe_error_at(err, text, 1, col, "%s %s (%s)", components[k].name,
                     k + 1 == *next ? "is given twice" : "is out of order", EXPECTED);
        return -1;
    }
    if (component_value(item + n, len - n, &v, err) != 0) {
        moe_error_at(err, text, 1, col, "%s: expected a whole number 1..%d, not '%.*s' (%s)",
                     components[k].name, MOE_LAYOUT_COMPONENT_MAX, shown - (int)n, item + n,
                     EXPECTED);
        return -1;
    }
    *field(l, k) = (int)v;
    *next = k + 1;
    return 0;
}

static int parse_dotted(const char *text, struct moe_layout *l, struct moe_error *err)
{
    size_t next = 0;

    for (const char *p = text;;) {
        size_t len = strcspn(p, ".");

        if (dotted_item(text, p, len, &next, l, err) != 0)
            return -1;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

/* One "key=value" of the older form, keys in any order, each once. */
static int keyvalue_item(const char *text, const char *item, size_t len, bool *seen,
                         struct moe_layout *l, struct moe_error *err)
{
    const char *eq = memchr(item, '=', len);
    int col = (int)(item - text) + 1, vlen;
    size_t k = eq ? component_named(item, (size_t)(eq - item)) : N_COMPONENTS;
    long v;

    if (k == N_COMPONENTS) {
        moe_error_at(err, text, 1, col, "'%.*s%s' is not key=value with a key among tp, cp, ep, "
                     "etp, pp, vpp (or write the dotted form: %s)", (int)(len > 64 ? 64 : len),
                     item, len > 64 ? "..." : "", EXPECTED);
        return -1;
    }
    if (seen[k]) {
        moe_error_at(err, text, 1, col, "%s is given twice", components[k].name);
        return -1;
    }
    vlen = (int)(item + len - eq - 1);
    if (component_value(eq + 1, (size_t)vlen, &v, err) != 0) {
        moe_error_at(err, text, 1, col, "%s: expected an integer 1..%d, not '%.*s%s'",
                     components[k].name, MOE_LAYOUT_COMPONENT_MAX, vlen > 64 ? 64 : vlen, eq + 1,
                     vlen > 64 ? "..." : "");
        return -1;
    }
    seen[k] = true;
    *field(l, k) = (int)v;
    return 0;
}

static int parse_keyvalue(const char *text, struct moe_layout *l, struct moe_error *err)
{
    bool seen[N_COMPONENTS] = { false };

    l->etp = 0;
    for (const char *p = text;;) {
        size_t len = strcspn(p, ",");

        if (keyvalue_item(text, p, len, seen, l, err) != 0)
            return -1;
        if (!p[len])
            break;
        p += len + 1;
    }
    /* the older form's documented default, kept: etp follows tp */
    if (l->etp == 0)
        l->etp = l->tp;
    return 0;
}

int moe_layout_name_parse(const char *text, struct moe_layout *l, enum moe_layout_form *form,
                          struct moe_error *err)
{
    struct moe_layout out = { .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 };
    bool keyvalue = text && strchr(text, '=');

    if (!text || !text[0]) {
        moe_error_set(err, "empty layout (%s)", EXPECTED);
        return -1;
    }
    if (moe_text_check("layout", text, err) != 0)
        return -1;
    if ((keyvalue ? parse_keyvalue(text, &out, err) : parse_dotted(text, &out, err)) != 0)
        return -1;
    if (form)
        *form = keyvalue ? MOE_LAYOUT_KEYVALUE : MOE_LAYOUT_DOTTED;
    *l = out;
    return 0;
}
