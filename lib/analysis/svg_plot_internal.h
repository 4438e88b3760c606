/* svg_plot.h's functions: only lib/analysis (evidence_pack_svg.c) and
 * its unit tests draw with them. */
#ifndef MOEFLOW_SVG_PLOT_INTERNAL_H
#define MOEFLOW_SVG_PLOT_INTERNAL_H

#include "analysis/svg_plot.h"

/* Ticks at 1, 2 or 5 times a power of ten, at most max_ticks intervals,
 * covering [lo, hi] (lo <= hi; finite).  An empty span is widened around
 * its value; non-finite bounds give 0..1.  with_zero: the axis also
 * covers 0. */
void moe_svg_axis_nice(double lo, double hi, int max_ticks, bool with_zero,
                       struct moe_svg_axis *a);

/* A number as the writer prints it: fixed point, at most two decimals,
 * trailing zeros and "-0" cut ("12.5", "3", "-0.25").  buf of at least 32
 * bytes; a non-finite value is written "nan". */
const char *moe_svg_num(double v, char *buf, size_t len);

/* Appends text escaped for XML character data and attribute values. */
void moe_svg_escape(struct moe_strbuf *b, const char *text);

/* Starts the document: a white page, the title (bold) and a subtitle
 * (NULL: none) above the plot area, whose margins are the caller's. */
void moe_svg_begin(struct moe_svg *s, double width, double height, double left, double right,
                   double top, double bottom, const char *title, const char *subtitle);

/* The axes: a grid line and label at every tick, the axis titles, and,
 * for an axis whose range does not start at 0, a note saying where it
 * starts.  x NULL: a categorical x axis (no ticks, 0..1 per unit of
 * xcount); the caller labels the categories. */
void moe_svg_frame(struct moe_svg *s, const struct moe_svg_axis *x, const struct moe_svg_axis *y,
                   const char *xlabel, const char *ylabel);

/* Data to pixels; a value outside the axis is clamped to its edge. */
double moe_svg_px(const struct moe_svg *s, double x);
double moe_svg_py(const struct moe_svg *s, double y);
/* Whether a data value lies inside the axis. */
bool moe_svg_inside(const struct moe_svg_axis *a, double v);

/* A line through the points in order; a point with a non-finite
 * coordinate is dropped (and counted), and breaks the line there. */
void moe_svg_polyline(struct moe_svg *s, const double *xs, const double *ys, size_t n,
                      const char *colour, double width, const char *dash);

/* A filled polygon through data points (a band); non-finite ones dropped. */
void moe_svg_polygon(struct moe_svg *s, const double *xs, const double *ys, size_t n,
                     const char *fill, double opacity);

/* A round point at data (x, y) with an optional label beside it (NULL:
 * none) and a tooltip (NULL: none); dropped and counted when a coordinate
 * is not finite.  Returns whether it was drawn. */
bool moe_svg_point(struct moe_svg *s, double x, double y, double radius, const char *colour,
                   const char *label, const char *tooltip);

/* A bar of category i of n (the categorical x axis) from 0 (or the y
 * axis' bottom) to y; dropped and counted when y is not finite. */
bool moe_svg_bar(struct moe_svg *s, size_t i, size_t n, double y, const char *fill,
                 const char *stroke, const char *tooltip);

/* The x span [x0, x1] of the data shaded over the plot's height, with a
 * caption at its top (NULL: none). */
void moe_svg_xspan(struct moe_svg *s, double x0, double x1, const char *fill,
                   const char *caption);

/* Text at pixel (x, y); anchor "start", "middle" or "end"; rotate in
 * degrees (0: none). */
void moe_svg_text(struct moe_svg *s, double x, double y, const char *anchor, double size,
                  const char *colour, double rotate, const char *text);

/* The legend's next entry, in one row along the bottom edge, below the x
 * axis' title (outside the plot area, so it never hides a point): a
 * swatch ("line", "dash", "point", "bar" or "band") and its name. */
void moe_svg_legend(struct moe_svg *s, const char *swatch, const char *colour,
                    const char *name);

/* Ends the document; the text, the caller's to free, or NULL when out of
 * memory (s is emptied either way). */
char *moe_svg_end(struct moe_svg *s);

#endif
