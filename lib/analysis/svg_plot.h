/* A small hand-written SVG plot writer for the evidence pack's plots: one
 * chart per document, an axis pair with ticks at nice numbers, and the
 * marks the pack draws (lines, points, bars, shaded spans, polygons, text).
 * No library: the pack must open offline in any browser and the bytes
 * must be the same for the same data, so a golden test can compare them.
 *
 * Every string the caller passes as text is data, never markup: it is
 * XML-escaped (& < > " ') and control characters and invalid UTF-8 are
 * written visibly as \xHH.  Numbers are written in fixed point with at
 * most two decimals, trailing zeros cut, never "-0", never in the C
 * library's locale-dependent %g. */
#ifndef MOEFLOW_SVG_PLOT_H
#define MOEFLOW_SVG_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/strbuf.h"

/* An axis: data from lo to hi, a tick every step from lo (ticks of them). */
struct moe_svg_axis {
    double lo, hi, step;
    int ticks;
};

/* One chart: the document so far, its size and plot area in pixels, its
 * axes once framed, and how many points were not drawn because a
 * coordinate was NaN or infinite. */
struct moe_svg {
    struct moe_strbuf b;
    double width, height;
    double left, right, top, bottom; /* the plot area's edges, in pixels */
    struct moe_svg_axis x, y;
    size_t dropped;
    double legend_x; /* where the legend's next entry starts */
};

#endif
