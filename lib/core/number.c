/* strtol/strtod do the reading; this file only decides what they read is
 * acceptable, the same way for every caller. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/number.h"

int moe_number_parse_long(const char *text, long min, long max, long *out,
                          struct moe_error *err)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, 10);
    if (end == text || *end || isspace((unsigned char)*text)) {
        moe_error_set(err, "expected an integer, not '%.40s'", text);
        return -1;
    }
    if (errno == ERANGE || v < min || v > max) {
        moe_error_set(err, "%.40s is out of range %ld..%ld", text, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int moe_number_check(double v, double min, bool min_open, double max, struct moe_error *err)
{
    if (!isfinite(v)) {
        moe_error_set(err, "%s is not a finite number", isnan(v) ? "NaN" : "infinity");
        return -1;
    }
    /* A subnormal keeps a few bits of precision and its reciprocal is
     * infinite: it is no quantity anyone measured (1e-320 TFLOP/s). */
    if (v != 0 && fabs(v) < DBL_MIN) {
        moe_error_set(err, "%g is too small to be a measured quantity (below %g)", v, DBL_MIN);
        return -1;
    }
    if (min_open && v <= min) {
        moe_error_set(err, "%g is not above %g", v, min);
        return -1;
    }
    if (v < min || v > max) {
        moe_error_set(err, "%g is out of range %g..%g", v, min, max);
        return -1;
    }
    return 0;
}

/* Decimal notation only: [+-]digits[.digits][e[+-]digits], digits on at
 * least one side of the point.  strtod also reads hexadecimal (0x1p10),
 * which no integer field takes (0x8 is refused there) and no user means. */
static bool decimal(const char *t)
{
    size_t digits;

    t += *t == '+' || *t == '-';
    digits = strspn(t, "0123456789");
    t += digits;
    if (*t == '.') {
        size_t frac = strspn(t + 1, "0123456789");
        digits += frac;
        t += 1 + frac;
    }
    if (!digits)
        return false;
    if (*t == 'e' || *t == 'E') {
        t += 1 + (t[1] == '+' || t[1] == '-');
        if (!isdigit((unsigned char)*t))
            return false;
        t += strspn(t, "0123456789");
    }
    return *t == '\0';
}

int moe_number_parse_double(const char *text, double min, double max, double *out,
                            struct moe_error *err)
{
    char *end;
    double v;

    v = strtod(text, &end);
    if (end == text || *end || isspace((unsigned char)*text)) {
        moe_error_set(err, "expected a number, not '%.40s'", text);
        return -1;
    }
    /* inf and nan get the finite check's message; hex its own */
    if (isfinite(v) && !decimal(text)) {
        moe_error_set(err, "expected a decimal number, not '%.40s'", text);
        return -1;
    }
    if (moe_number_check(v, min, false, max, err) < 0)
        return -1;
    *out = v;
    return 0;
}
