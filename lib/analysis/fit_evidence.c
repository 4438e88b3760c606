#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fit_evidence.h"
#include "analysis/fit_evidence_internal.h"

#define TAG "moeflow-fake-collectives: "

/* The value of " key=" up to the next blank, into buf; false if absent
 * or longer than buf (a cut number would read as another one), leaving
 * buf empty. */
static bool word(const char *line, const char *key, char *buf, size_t len)
{
    char pat[40];
    const char *p, *e;

    /* fits: key is one of this file's literal key names (< 20 bytes) */
    snprintf(pat, sizeof(pat), " %s=", key);
    buf[0] = '\0';
    if (!(p = strstr(line, pat)))
        return false;
    p += strlen(pat);
    e = p + strcspn(p, " \t\r\n");
    if ((size_t)(e - p) >= len)
        return false;
    memcpy(buf, p, (size_t)(e - p));
    buf[e - p] = '\0';
    return true;
}

static bool count(const char *line, const char *key, long *out)
{
    char buf[32], *end;

    if (!word(line, key, buf, sizeof(buf)))
        return false;
    errno = 0;
    *out = strtol(buf, &end, 10);
    return end != buf && !*end && errno == 0 && *out >= 0;
}

static bool real(const char *line, const char *key, double *out)
{
    char buf[40], *end;

    if (!word(line, key, buf, sizeof(buf)))
        return false;
    *out = strtod(buf, &end);
    return end != buf && !*end && isfinite(*out) && *out >= 0;
}

bool moe_fit_evidence_parse(const char *line, struct moe_fit_evidence *ev)
{
    const char *p = strstr(line, TAG);
    struct moe_fit_evidence e = { .seen = true };

    if (!p)
        return false;
    p += strlen(TAG) - 1; /* keep the blank: every key is " key=" */
    if (strncmp(p + 1, "not installed", 13) == 0) {
        ev->not_installed = true;
        return true;
    }
    if (!word(p, "torch", e.torch, sizeof(e.torch)))
        return false; /* the "active" line at start: nothing to keep */
    word(p, "mode", e.mode, sizeof(e.mode));
    word(p, "native", e.native, sizeof(e.native));
    word(p, "filled", e.filled, sizeof(e.filled));
    if (!count(p, "dispatch_calls", &e.dispatch_calls) || !count(p, "rows_min", &e.rows_min) ||
        !count(p, "rows_max", &e.rows_max) || !count(p, "nonfinite", &e.nonfinite) ||
        !real(p, "rows_mean", &e.rows_mean) || !real(p, "rows_balanced", &e.rows_balanced))
        return false;
    e.not_installed = ev->not_installed;
    *ev = e;
    return true;
}

double moe_fit_evidence_imbalance(const struct moe_fit_evidence *ev)
{
    return ev->dispatch_calls > 0 && ev->rows_balanced > 0 ? ev->rows_mean / ev->rows_balanced
                                                           : 0;
}
