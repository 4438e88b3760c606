/* strtol/strtod do the reading; this file only decides what they read is
 * acceptable, the same way for every caller. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

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
    if (moe_number_check(v, min, false, max, err) < 0)
        return -1;
    *out = v;
    return 0;
}
