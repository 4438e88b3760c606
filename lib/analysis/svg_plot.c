/* The SVG writer of the evidence pack's plots (svg_plot.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/svg_plot.h"
#include "analysis/svg_plot_internal.h"

/* Past this many intervals a tick label would overlap the next one on any
 * plot the pack draws; it also bounds every tick loop. */
#define TICKS_MAX 20
#define FONT 12.0
/* An average glyph's width at FONT pixels of sans-serif, for laying out
 * the legend (the browser's metrics are unknown to the writer). */
#define GLYPH_W 6.6

/* 1, 2 or 5 times a power of ten, the smallest at least raw. */
static double nice_step(double raw)
{
    double p = pow(10.0, floor(log10(raw)));
    double f = raw / p;

    /* 1e-9 of slack: 0.3 / 3 must not become 0.2 */
    if (f <= 1.0 + 1e-9)
        return p;
    if (f <= 2.0 + 1e-9)
        return 2 * p;
    return f <= 5.0 + 1e-9 ? 5 * p : 10 * p;
}

void moe_svg_axis_nice(double lo, double hi, int max_ticks, bool with_zero,
                       struct moe_svg_axis *a)
{
    if (!isfinite(lo) || !isfinite(hi) || lo > hi)
        lo = 0, hi = 1;
    if (with_zero && lo > 0)
        lo = 0;
    if (with_zero && hi < 0)
        hi = 0;
    if (hi - lo < 1e-9 * (fabs(lo) + 1)) {
        double pad = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1;

        lo = with_zero && lo >= 0 ? 0 : lo - pad;
        hi += pad;
    }
    if (max_ticks < 1 || max_ticks > TICKS_MAX)
        max_ticks = max_ticks < 1 ? 1 : TICKS_MAX;
    a->step = nice_step((hi - lo) / max_ticks);
    /* relative slack: 300.0000001 must not open a tick interval of its own */
    a->lo = floor(lo / a->step + 1e-9) * a->step;
    a->hi = ceil(hi / a->step - 1e-9) * a->step;
    a->ticks = (int)lround((a->hi - a->lo) / a->step);
}

const char *moe_svg_num(double v, char *buf, size_t len)
{
    char *end;

    if (!isfinite(v)) {
        /* a number fits the 32 bytes svg_plot.h asks for */
        snprintf(buf, len, "nan");
        return buf;
    }
    /* a number fits the 32 bytes svg_plot.h asks for */
    snprintf(buf, len, "%.2f", v);
    end = buf + strlen(buf);
    while (end > buf && end[-1] == '0')
        *--end = 0;
    if (end > buf && end[-1] == '.')
        *--end = 0;
    if (strcmp(buf, "-0") == 0)
        /* a number fits the 32 bytes svg_plot.h asks for */
        snprintf(buf, len, "0");
    return buf;
}

/* The length of the valid UTF-8 sequence at s, else 0. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;

    if (s[0] >= 0xf8)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    /* overlong three-byte forms and UTF-16 surrogates are not UTF-8 */
    if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
        return 0;
    if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
        return 0;
    /* C1 controls (U+0080..U+009F) are as unwelcome as C0 ones */
    return n == 2 && s[0] == 0xc2 && s[1] < 0xa0 ? 0 : n;
}

void moe_svg_escape(struct moe_strbuf *b, const char *text)
{
    const unsigned char *s = (const unsigned char *)(text ? text : "");

    while (*s) {
        size_t n;

        switch (*s) {
        case '&': moe_strbuf_puts(b, "&amp;"); break;
        case '<': moe_strbuf_puts(b, "&lt;"); break;
        case '>': moe_strbuf_puts(b, "&gt;"); break;
        case '"': moe_strbuf_puts(b, "&quot;"); break;
        case '\'': moe_strbuf_puts(b, "&#39;"); break;
        default:
            if (*s >= 0x20 && *s < 0x7f) {
                moe_strbuf_add(b, (const char *)s, 1);
            } else if (*s >= 0x80 && (n = utf8_len(s)) > 0) {
                moe_strbuf_add(b, (const char *)s, n);
                s += n;
                continue;
            } else {
                moe_strbuf_printf(b, "\\x%02X", *s);
            }
        }
        s++;
    }
}

/* A coordinate or length in the document. */
static void put_num(struct moe_svg *s, const char *before, double v)
{
    char n[40];

    moe_strbuf_puts(&s->b, before);
    moe_strbuf_puts(&s->b, moe_svg_num(v, n, sizeof(n)));
}

void moe_svg_text(struct moe_svg *s, double x, double y, const char *anchor, double size,
                  const char *colour, double rotate, const char *text)
{
    put_num(s, "<text x=\"", x);
    put_num(s, "\" y=\"", y);
    put_num(s, "\" font-size=\"", size);
    moe_strbuf_printf(&s->b, "\" text-anchor=\"%s\" fill=\"%s\"", anchor, colour);
    if (rotate != 0) {
        put_num(s, " transform=\"rotate(", rotate);
        put_num(s, " ", x);
        put_num(s, " ", y);
        moe_strbuf_puts(&s->b, ")\"");
    }
    moe_strbuf_puts(&s->b, ">");
    moe_svg_escape(&s->b, text);
    moe_strbuf_puts(&s->b, "</text>\n");
}

void moe_svg_begin(struct moe_svg *s, double width, double height, double left, double right,
                   double top, double bottom, const char *title, const char *subtitle)
{
    memset(s, 0, sizeof(*s));
    s->width = width;
    s->height = height;
    s->left = left;
    s->right = width - right;
    s->top = top;
    s->bottom = height - bottom;
    s->legend_x = left;
    moe_svg_axis_nice(0, 1, 1, false, &s->x);
    moe_svg_axis_nice(0, 1, 1, false, &s->y);
    put_num(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", width);
    put_num(s, "\" height=\"", height);
    put_num(s, "\" viewBox=\"0 0 ", width);
    put_num(s, " ", height);
    moe_strbuf_puts(&s->b, "\" font-family=\"Helvetica, Arial, sans-serif\">\n"
                           "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    moe_svg_text(s, left, 22, "start", 15, "#111111", 0, title);
    if (subtitle)
        moe_svg_text(s, left, 40, "start", 11.5, "#555555", 0, subtitle);
}

/* A line between two pixel positions. */
static void line_px(struct moe_svg *s, double x1, double y1, double x2, double y2,
                    const char *colour, double width)
{
    put_num(s, "<line x1=\"", x1);
    put_num(s, "\" y1=\"", y1);
    put_num(s, "\" x2=\"", x2);
    put_num(s, "\" y2=\"", y2);
    moe_strbuf_printf(&s->b, "\" stroke=\"%s\"", colour);
    put_num(s, " stroke-width=\"", width);
    moe_strbuf_puts(&s->b, "\"/>\n");
}

static void tick_label(struct moe_svg *s, double x, double y, const char *anchor, double v)
{
    char n[40];

    moe_svg_text(s, x, y, anchor, FONT - 1, "#333333", 0, moe_svg_num(v, n, sizeof(n)));
}

static void y_ticks(struct moe_svg *s)
{
    for (int i = 0; i <= s->y.ticks && i <= TICKS_MAX; i++) {
        double v = s->y.lo + i * s->y.step, py = moe_svg_py(s, v);

        line_px(s, s->left, py, s->right, py, i ? "#e6e6e6" : "#999999", 1);
        tick_label(s, s->left - 6, py + 4, "end", v);
    }
}

static void x_ticks(struct moe_svg *s)
{
    for (int i = 0; i <= s->x.ticks && i <= TICKS_MAX; i++) {
        double v = s->x.lo + i * s->x.step, px = moe_svg_px(s, v);

        line_px(s, px, s->top, px, s->bottom, i ? "#f0f0f0" : "#999999", 1);
        line_px(s, px, s->bottom, px, s->bottom + 4, "#999999", 1);
        tick_label(s, px, s->bottom + 17, "middle", v);
    }
}

/* Where an axis that does not start at 0 starts, said in words: a reader
 * takes a plot's bars and gaps as measured from 0 unless told. */
static void origin_note(struct moe_svg *s, const struct moe_svg_axis *a, const char *which)
{
    char n[40], text[96];

    if (a->lo == 0)
        return;
    /* text shown in the SVG: cut, it still says it */
    snprintf(text, sizeof(text), "%s axis starts at %s, not 0", which,
             moe_svg_num(a->lo, n, sizeof(n)));
    moe_svg_text(s, s->right, s->top - 6, "end", 10.5, "#aa3300", 0, text);
}

void moe_svg_frame(struct moe_svg *s, const struct moe_svg_axis *x, const struct moe_svg_axis *y,
                   const char *xlabel, const char *ylabel)
{
    s->y = *y;
    if (x)
        s->x = *x;
    else
        s->x = (struct moe_svg_axis){ .lo = 0, .hi = 1, .step = 1, .ticks = 0 };
    y_ticks(s);
    if (x)
        x_ticks(s);
    line_px(s, s->left, s->bottom, s->right, s->bottom, "#555555", 1);
    line_px(s, s->left, s->top, s->left, s->bottom, "#555555", 1);
    /* a categorical axis' labels are slanted and long: its title goes lower */
    moe_svg_text(s, (s->left + s->right) / 2, s->bottom + (x ? 36 : 118), "middle", FONT,
                 "#222222", 0, xlabel);
    moe_svg_text(s, 16, (s->top + s->bottom) / 2, "middle", FONT, "#222222", -90, ylabel);
    if (s->y.lo != 0)
        origin_note(s, &s->y, "y");
    else if (x && s->x.lo != 0 && s->x.lo != s->y.lo)
        origin_note(s, &s->x, "x");
}

bool moe_svg_inside(const struct moe_svg_axis *a, double v)
{
    return v >= a->lo && v <= a->hi;
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

double moe_svg_px(const struct moe_svg *s, double x)
{
    double f = (x - s->x.lo) / (s->x.hi - s->x.lo);

    return s->left + clamp(f, 0, 1) * (s->right - s->left);
}

double moe_svg_py(const struct moe_svg *s, double y)
{
    double f = (y - s->y.lo) / (s->y.hi - s->y.lo);

    return s->bottom - clamp(f, 0, 1) * (s->bottom - s->top);
}

static bool finite_point(double x, double y)
{
    return isfinite(x) && isfinite(y);
}

/* Opens a polyline's points attribute, or closes it ("" to nothing). */
static void open_run(struct moe_svg *s, const char *colour, double width, const char *dash)
{
    moe_strbuf_printf(&s->b, "<polyline fill=\"none\" stroke=\"%s\"", colour);
    put_num(s, " stroke-width=\"", width);
    if (dash)
        moe_strbuf_printf(&s->b, "\" stroke-dasharray=\"%s", dash);
    moe_strbuf_puts(&s->b, "\" stroke-linejoin=\"round\" points=\"");
}

void moe_svg_polyline(struct moe_svg *s, const double *xs, const double *ys, size_t n,
                      const char *colour, double width, const char *dash)
{
    bool open = false;

    for (size_t i = 0; i < n; i++) {
        if (!finite_point(xs[i], ys[i])) {
            s->dropped++;
            if (open)
                moe_strbuf_puts(&s->b, "\"/>\n");
            open = false;
            continue;
        }
        if (!open)
            open_run(s, colour, width, dash);
        put_num(s, open ? " " : "", moe_svg_px(s, xs[i]));
        put_num(s, ",", moe_svg_py(s, ys[i]));
        open = true;
    }
    if (open)
        moe_strbuf_puts(&s->b, "\"/>\n");
}

void moe_svg_polygon(struct moe_svg *s, const double *xs, const double *ys, size_t n,
                     const char *fill, double opacity)
{
    bool first = true;

    moe_strbuf_printf(&s->b, "<polygon fill=\"%s\"", fill);
    put_num(s, " fill-opacity=\"", opacity);
    moe_strbuf_puts(&s->b, "\" stroke=\"none\" points=\"");
    for (size_t i = 0; i < n; i++) {
        if (!finite_point(xs[i], ys[i])) {
            s->dropped++;
            continue;
        }
        put_num(s, first ? "" : " ", moe_svg_px(s, xs[i]));
        put_num(s, ",", moe_svg_py(s, ys[i]));
        first = false;
    }
    moe_strbuf_puts(&s->b, "\"/>\n");
}

/* <title> inside a mark: the browser shows it on hover. */
static void tooltip_close(struct moe_svg *s, const char *element, const char *tooltip)
{
    if (!tooltip) {
        moe_strbuf_puts(&s->b, "/>\n");
        return;
    }
    moe_strbuf_puts(&s->b, "><title>");
    moe_svg_escape(&s->b, tooltip);
    moe_strbuf_printf(&s->b, "</title></%s>\n", element);
}

bool moe_svg_point(struct moe_svg *s, double x, double y, double radius, const char *colour,
                   const char *label, const char *tooltip)
{
    double px = moe_svg_px(s, x), py = moe_svg_py(s, y);

    if (!finite_point(x, y)) {
        s->dropped++;
        return false;
    }
    put_num(s, "<circle cx=\"", px);
    put_num(s, "\" cy=\"", py);
    put_num(s, "\" r=\"", radius);
    moe_strbuf_printf(&s->b, "\" fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"1\"", colour);
    tooltip_close(s, "circle", tooltip);
    if (label)
        moe_svg_text(s, px + radius + 3, py - radius - 1, "start", 10.5, "#222222", 0, label);
    return true;
}

bool moe_svg_bar(struct moe_svg *s, size_t i, size_t n, double y, const char *fill,
                 const char *stroke, const char *tooltip)
{
    double slot = (s->right - s->left) / (double)(n ? n : 1);
    double base = moe_svg_py(s, s->y.lo <= 0 && s->y.hi >= 0 ? 0 : s->y.lo), top;

    if (!isfinite(y)) {
        s->dropped++;
        return false;
    }
    top = moe_svg_py(s, y);
    put_num(s, "<rect x=\"", s->left + slot * ((double)i + 0.15));
    put_num(s, "\" y=\"", top < base ? top : base);
    put_num(s, "\" width=\"", slot * 0.7);
    put_num(s, "\" height=\"", fabs(base - top));
    moe_strbuf_printf(&s->b, "\" fill=\"%s\"", fill);
    if (stroke)
        moe_strbuf_printf(&s->b, " stroke=\"%s\" stroke-width=\"2.5\"", stroke);
    tooltip_close(s, "rect", tooltip);
    return true;
}

void moe_svg_xspan(struct moe_svg *s, double x0, double x1, const char *fill,
                   const char *caption)
{
    double a = moe_svg_px(s, x0), b = moe_svg_px(s, x1);

    if (!finite_point(x0, x1)) {
        s->dropped++;
        return;
    }
    put_num(s, "<rect x=\"", a);
    put_num(s, "\" y=\"", s->top);
    put_num(s, "\" width=\"", b - a);
    put_num(s, "\" height=\"", s->bottom - s->top);
    moe_strbuf_printf(&s->b, "\" fill=\"%s\"/>\n", fill);
    if (caption)
        moe_svg_text(s, (a + b) / 2, s->top + 14, "middle", 10.5, "#555555", 0, caption);
}

/* The legend's swatch at pixel (x, y): 18 pixels wide, centred on y. */
static void swatch(struct moe_svg *s, double x, double y, const char *kind, const char *colour)
{
    if (strcmp(kind, "point") == 0) {
        put_num(s, "<circle cx=\"", x + 9);
        put_num(s, "\" cy=\"", y);
        moe_strbuf_printf(&s->b, "\" r=\"4.5\" fill=\"%s\"/>\n", colour);
    } else if (strcmp(kind, "bar") == 0 || strcmp(kind, "band") == 0) {
        put_num(s, "<rect x=\"", x);
        put_num(s, "\" y=\"", y - 6);
        moe_strbuf_printf(&s->b, "\" width=\"18\" height=\"12\" fill=\"%s\"/>\n", colour);
    } else {
        moe_strbuf_printf(&s->b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\"%s",
                          colour, strcmp(kind, "dash") == 0 ? " stroke-dasharray=\"5 3\"" : "");
        put_num(s, " points=\"", x);
        put_num(s, ",", y);
        put_num(s, " ", x + 18);
        put_num(s, ",", y);
        moe_strbuf_puts(&s->b, "\"/>\n");
    }
}

void moe_svg_legend(struct moe_svg *s, const char *kind, const char *colour, const char *name)
{
    double y = s->height - 14;

    swatch(s, s->legend_x, y, kind, colour);
    moe_svg_text(s, s->legend_x + 24, y + 4, "start", FONT - 0.5, "#222222", 0, name);
    s->legend_x += 24 + GLYPH_W * (double)strlen(name ? name : "") + 22;
}

char *moe_svg_end(struct moe_svg *s)
{
    moe_strbuf_puts(&s->b, "</svg>\n");
    return moe_strbuf_take(&s->b);
}
