/* The one numeric check for every entry point: study fields, command-line
 * flags, a custom model's JSON, training logs and kernel traces.  A number
 * is finite and inside the range its reader names, or it is refused with a
 * message that says which it is not; NaN and infinity never get through,
 * and a whole number never wraps on the way into a narrower type. */
#ifndef MOEFLOW_NUMBER_H
#define MOEFLOW_NUMBER_H

#include <stdbool.h>

#include "core/error.h"

/* text as a whole decimal number in [min, max].  -1 with err's text set
 * ("expected an integer, not 'x'", "4294967296 is out of range 1..4096"). */
int moe_number_parse_long(const char *text, long min, long max, long *out,
                          struct moe_error *err);

/* text as a finite number in [min, max], in decimal notation (strtod's
 * hexadecimal is refused). */
int moe_number_parse_double(const char *text, double min, double max, double *out,
                            struct moe_error *err);

/* v finite, not subnormal, and in [min, max]; with min_open, v > min. */
int moe_number_check(double v, double min, bool min_open, double max, struct moe_error *err);

#endif
