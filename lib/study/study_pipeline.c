/* Expands a pipeline layout into one flat string, then counts.  Layouts are
 * short (one character per layer at most), so expansion is cheap. */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "study/study_pipeline.h"
#include "study/study_pipeline_internal.h"

#define EXPANDED_MAX 65536

struct buf {
    char s[EXPANDED_MAX];
    size_t n;
};

static int put(struct buf *b, const char *s, size_t n)
{
    if (b->n + n >= EXPANDED_MAX)
        return -1;
    memcpy(b->s + b->n, s, n);
    b->n += n;
    return 0;
}

static int repeat_count(const char **p)
{
    char *end;
    long n;

    if (**p != '*')
        return 1;
    n = strtol(*p + 1, &end, 10);
    if (end == *p + 1 || n < 0 || n > 4096)
        return -1;
    *p = end;
    return (int)n;
}

/* Expands from *p until ')' or the end; returns -1 on a syntax error. */
static int expand(const char **p, struct buf *out, int depth, struct moe_error *err)
{
    while (**p && **p != ')') {
        char c = *(*p)++;
        struct buf *inner;
        int n;

        if (isspace((unsigned char)c))
            continue;
        if (c == '(') {
            if (depth > 8) {
                moe_error_set(err, "parentheses nest too deep");
                return -1;
            }
            if (!(inner = calloc(1, sizeof(*inner)))) {
                moe_error_set(err, "out of memory");
                return -1;
            }
            if (expand(p, inner, depth + 1, err) < 0) {
                free(inner);
                return -1;
            }
            if (**p != ')') {
                moe_error_set(err, "unbalanced '('");
                free(inner);
                return -1;
            }
            (*p)++;
            n = repeat_count(p);
            for (int i = 0; i < n; i++)
                if (put(out, inner->s, inner->n) < 0) {
                    free(inner);
                    moe_error_set(err, "layout expands too far");
                    return -1;
                }
            free(inner);
            if (n < 0) {
                moe_error_set(err, "bad repeat count after ')'");
                return -1;
            }
            continue;
        }
        if (!strchr("Etm|L", c)) {
            moe_error_set(err, "unexpected '%c' (use E, t, m, L, |, ( ) and *N)", c);
            return -1;
        }
        n = repeat_count(p);
        if (n < 0) {
            moe_error_set(err, "bad repeat count after '%c'", c);
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (put(out, &c, 1) < 0) {
                moe_error_set(err, "layout expands too far");
                return -1;
            }
    }
    return 0;
}

int moe_pipeline_layout_check(const char *layout, int stages, int num_layers, int mtp_layers,
                              struct moe_error *err)
{
    struct buf *b = calloc(1, sizeof(*b));
    const char *p = layout;
    int n_stages = 1, n_t = 0, n_m = 0, rc = -1;

    if (!b) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    if (expand(&p, b, 0, err) < 0)
        goto out;
    if (*p) {
        moe_error_set(err, "unbalanced ')'");
        goto out;
    }
    for (size_t i = 0; i < b->n; i++) {
        n_stages += b->s[i] == '|';
        n_t += b->s[i] == 't';
        n_m += b->s[i] == 'm';
    }
    if (n_stages != stages)
        moe_error_set(err, "'%s' has %d stages, PP x VPP is %d", layout, n_stages, stages);
    else if (n_t != num_layers)
        moe_error_set(err, "'%s' places %d decoder layers, the model has %d", layout, n_t,
                      num_layers);
    else if (n_m != mtp_layers)
        moe_error_set(err, "'%s' places %d MTP layers, the model has %d", layout, n_m,
                      mtp_layers);
    else if (b->n == 0 || b->s[0] != 'E' || b->s[b->n - 1] != 'L')
        moe_error_set(err, "'%s' must start with E (embedding) and end with L (loss)", layout);
    else
        rc = 0;
out:
    free(b);
    return rc;
}
