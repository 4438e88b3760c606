/* The evidence pack's plots and index.html, rendered from pack.json alone
 * (its "plots" and "validate" values) through the SVG writer, so that the
 * pictures and the document never disagree.  Colours are fixed: blue is a
 * measurement (the baseline's steps, a candidate's point, a layout's bar),
 * orange the winner and the measured best; grey is the model's line. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/evidence_pack.h"
#include "analysis/evidence_pack_internal.h"
#include "analysis/svg_plot.h"
#include "analysis/svg_plot_internal.h"
#include "core/strbuf.h"

#define BLUE "#1f77b4"
#define ORANGE "#ff7f0e"
#define GREEN "#2ca02c"
#define GREY "#666666"
#define WINDOW_FILL "#fdf3d8"
#define BAND_FILL "#9ecae1"
/* A step past this many times its run's median is warm-up or a stall:
 * drawn at the top edge so that the steady steps fill the plot. */
#define SPIKE_FACTOR 2.0

static const json_t *get(const json_t *o, const char *k)
{
    return json_object_get(o, k);
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(get(o, k));

    return s ? s : "";
}

static double dbl(const json_t *o, const char *k)
{
    const json_t *v = get(o, k);

    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The files rendered so far. */
struct files {
    struct moe_pack_file *v;
    size_t n, cap;
    bool oom;
};

static void add_file(struct files *f, const char *name, char *text)
{
    struct moe_pack_file *g;

    if (!text || !moe_evidence_pack_file_name(name) ||
        !(g = moe_grow_array(f->v, &f->cap, f->n + 1, sizeof(*f->v)))) {
        f->oom |= text == NULL;
        free(text);
        return;
    }
    f->v = g;
    /* the pack's own file names, short and fixed, fit name[64] */
    snprintf(f->v[f->n].name, sizeof(f->v[f->n].name), "%s", name);
    f->v[f->n++].text = text;
}

/* The writer's note of points it could not draw, bottom right. */
static char *finish(struct moe_svg *s)
{
    char text[96];

    if (s->dropped) {
        /* text shown in the SVG: cut, it still says it */
        snprintf(text, sizeof(text), "%zu point%s not drawn: NaN or infinite", s->dropped,
                 s->dropped == 1 ? "" : "s");
        moe_svg_text(s, s->width - 10, s->height - 14, "end", 10.5, "#aa3300", 0, text);
    }
    return moe_svg_end(s);
}

/* ---- step time per iteration ---- */

static const json_t *run_named(const json_t *pack, const char *name)
{
    const json_t *r;
    size_t i;

    json_array_foreach(get(get(pack, "validate"), "runs"), i, r)
        if (name && strcmp(str(r, "name"), name) == 0)
            return r;
    return NULL;
}

/* The y range of a run's steady steps (first logged iteration and spikes
 * past SPIKE_FACTOR x its median left out); counts the spikes. */
static void steady_range(const json_t *run, double *lo, double *hi, size_t *spikes)
{
    const json_t *steps = get(get(run, "measured"), "steps"), *p;
    double median = dbl(get(run, "measured"), "step_ms_median");
    size_t i;

    json_array_foreach(steps, i, p) {
        double v = json_is_number(json_array_get(p, 1)) ? json_number_value(json_array_get(p, 1))
                                                         : NAN;

        if (i == 0 || !isfinite(v))
            continue;
        if (isfinite(median) && v > SPIKE_FACTOR * median) {
            (*spikes)++;
            continue;
        }
        *lo = fmin(*lo, v);
        *hi = fmax(*hi, v);
    }
}

static void x_range(const json_t *run, double *lo, double *hi)
{
    const json_t *steps = get(get(run, "measured"), "steps"), *p;
    size_t i;

    json_array_foreach(steps, i, p) {
        const json_t *it = json_array_get(p, 0);

        if (json_is_integer(it)) {
            *lo = fmin(*lo, (double)json_integer_value(it));
            *hi = fmax(*hi, (double)json_integer_value(it));
        }
    }
}

static void draw_steps(struct moe_svg *s, const json_t *run, const char *colour)
{
    const json_t *steps = get(get(run, "measured"), "steps");
    size_t n = json_array_size(steps);
    double *xs = calloc(n + 1, sizeof(double)), *ys = calloc(n + 1, sizeof(double));

    for (size_t i = 0; xs && ys && i < n; i++) {
        const json_t *p = json_array_get(steps, i);

        xs[i] = json_is_integer(json_array_get(p, 0))
                    ? (double)json_integer_value(json_array_get(p, 0))
                    : NAN;
        ys[i] = json_is_number(json_array_get(p, 1)) ? json_number_value(json_array_get(p, 1))
                                                      : NAN;
    }
    if (xs && ys)
        moe_svg_polyline(s, xs, ys, n, colour, 2, NULL);
    free(xs);
    free(ys);
}

/* A dashed line at the run's window median, across the window. */
static void median_line(struct moe_svg *s, const json_t *run, const json_t *window,
                        const char *colour)
{
    double m = dbl(get(run, "measured"), "step_ms_median");
    double xs[2] = { (double)json_integer_value(json_array_get(window, 0)),
                     (double)json_integer_value(json_array_get(window, 1)) };
    double ys[2] = { m, m };

    if (isfinite(m) && moe_svg_inside(&s->y, m))
        moe_svg_polyline(s, xs, ys, 2, colour, 1.5, "6 3");
}

static void step_subtitle(const json_t *plot, const json_t *win, size_t spikes, char *buf,
                          size_t len)
{
    const json_t *w = get(plot, "window");
    char delta[80] = "", warm[96] = "";
    double d = dbl(get(win, "versus_baseline"), "step_ms_delta_pct");

    if (isfinite(d))
        /* text shown in the SVG: cut, it still says it */
        snprintf(delta, sizeof(delta), "; median %+.1f%% against the baseline", d);
    if (spikes)
        /* text shown in the SVG: cut, it still says it */
        snprintf(warm, sizeof(warm), "; %zu warm-up step%s off the scale, drawn at the top edge",
                 spikes, spikes == 1 ? "" : "s");
    /* text shown in the SVG: cut, it still says it */
    snprintf(buf, len, "measured: Megatron's elapsed time per iteration; shaded: the report "
             "window %lld-%lld, dashed: its medians%s%s",
             (long long)json_integer_value(json_array_get(w, 0)),
             (long long)json_integer_value(json_array_get(w, 1)), delta, warm);
}

static char *step_time_svg(const json_t *pack, const json_t *plot)
{
    const json_t *base = run_named(pack, json_string_value(get(plot, "baseline")));
    const json_t *win = run_named(pack, json_string_value(get(plot, "winner")));
    const json_t *w = get(plot, "window");
    double ylo = INFINITY, yhi = -INFINITY, xlo = INFINITY, xhi = -INFINITY;
    struct moe_svg_axis xa, ya;
    struct moe_svg s;
    size_t spikes = 0;
    char title[400], sub[400];

    steady_range(base, &ylo, &yhi, &spikes);
    x_range(base, &xlo, &xhi);
    if (win) {
        steady_range(win, &ylo, &yhi, &spikes);
        x_range(win, &xlo, &xhi);
        /* text shown in the SVG: cut, it still says it */
        snprintf(title, sizeof(title), "Step time per iteration: %s against the baseline",
                 str(win, "name"));
    } else {
        /* text shown in the SVG: cut, it still says it */
        snprintf(title, sizeof(title), "Step time per iteration: the baseline alone (no winner "
                 "was measured)");
    }
    step_subtitle(plot, win, spikes, sub, sizeof(sub));
    moe_svg_axis_nice(xlo, xhi, 10, false, &xa);
    moe_svg_axis_nice(ylo, yhi, 6, false, &ya);
    moe_svg_begin(&s, 1100, 440, 72, 24, 64, 72, title, sub);
    moe_svg_frame(&s, &xa, &ya, "iteration", "step time (ms)");
    moe_svg_xspan(&s, (double)json_integer_value(json_array_get(w, 0)),
                  (double)json_integer_value(json_array_get(w, 1)), WINDOW_FILL, "report window");
    draw_steps(&s, base, BLUE);
    median_line(&s, base, w, BLUE);
    moe_svg_legend(&s, "line", BLUE, "baseline (measured)");
    if (win) {
        draw_steps(&s, win, ORANGE);
        median_line(&s, win, w, ORANGE);
        moe_svg_legend(&s, "line", ORANGE, str(win, "name"));
    }
    moe_svg_legend(&s, "band", WINDOW_FILL, "report window");
    moe_svg_legend(&s, "dash", GREY, "window median");
    return finish(&s);
}

/* ---- modeled against measured ---- */

static void pair_range(const json_t *points, double band, double *lo, double *hi)
{
    const json_t *p;
    size_t i;

    json_array_foreach(points, i, p) {
        double a = dbl(p, "modeled"), b = dbl(p, "measured");

        if (!isfinite(a) || !isfinite(b))
            continue;
        *lo = fmin(*lo, fmin(a, b) * (1 - band));
        *hi = fmax(*hi, fmax(a * (1 + band), b));
    }
}

/* The band y within +-band of y = x, clipped to the square plot. */
static void draw_band(struct moe_svg *s, double band)
{
    double lo = s->x.lo, hi = s->x.hi;
    double xs[6] = { lo, lo / (1 - band), hi, hi, hi / (1 + band), lo };
    double ys[6] = { lo, lo, hi * (1 - band), hi, hi, lo * (1 + band) };
    double lx[2] = { lo, hi };

    if (lo < 0) /* a band in percent means nothing below 0 */
        return;
    moe_svg_polygon(s, xs, ys, 6, BAND_FILL, 0.45);
    moe_svg_polyline(s, lx, lx, 2, GREY, 1.5, "6 4");
}

/* The label shown beside a point: a layout's value alone, else the
 * candidate's name. */
static const char *short_name(const char *candidate)
{
    return strncmp(candidate, "layout=", 7) == 0 ? candidate + 7 : candidate;
}

/* Labels already placed, so the next one does not cover them. */
struct labels {
    double x0[64], x1[64], y[64];
    size_t n;
};

static bool overlaps(const struct labels *l, double x0, double x1, double y)
{
    for (size_t i = 0; i < l->n; i++)
        if (x0 < l->x1[i] && x1 > l->x0[i] && fabs(y - l->y[i]) < 12)
            return true;
    return false;
}

/* A point's label beside it, moved down a line at a time past the labels
 * already placed (with a thin leader once moved), on the side with room. */
static void place_label(struct moe_svg *s, struct labels *l, double px, double py,
                        const char *text)
{
    double w = 6.0 * (double)strlen(text), y = py - 7, x0, x1;
    bool left = px + 8 + w > s->width - 4 && px - 8 - w >= 4;
    const char *anchor = left ? "end" : "start";
    double x = left ? px - 8 : px + 8;

    x0 = left ? x - w : x;
    x1 = left ? x : x + w;
    for (int k = 0; k < 24 && overlaps(l, x0, x1, y); k++)
        y += 12;
    if (fabs(y - (py - 7)) > 1) {
        double xs[2] = { px, x }, ys[2] = { py, y - 4 };

        /* the writer takes data coordinates: invert the leader's pixels */
        for (int k = 0; k < 2; k++) {
            xs[k] = s->x.lo + (xs[k] - s->left) / (s->right - s->left) * (s->x.hi - s->x.lo);
            ys[k] = s->y.lo + (s->bottom - ys[k]) / (s->bottom - s->top) * (s->y.hi - s->y.lo);
        }
        moe_svg_polyline(s, xs, ys, 2, "#aaaaaa", 0.8, NULL);
    }
    moe_svg_text(s, x, y, anchor, 10.5, "#222222", 0, text);
    if (l->n < 64) {
        l->x0[l->n] = x0;
        l->x1[l->n] = x1;
        l->y[l->n++] = y;
    }
}

static void draw_pairs(struct moe_svg *s, const json_t *points, double band, size_t *inside,
                       size_t *untrusted)
{
    struct labels l = { .n = 0 };
    const json_t *p;
    size_t i;

    json_array_foreach(points, i, p) {
        double a = dbl(p, "modeled"), b = dbl(p, "measured");
        bool trusted = !json_is_false(get(p, "trusted"));
        char tip[600], na[40], nb[40];

        /* text shown in the SVG: cut, it still says it */
        snprintf(tip, sizeof(tip), "%s: modeled %s, measured %s%s%s", str(p, "candidate"),
                 moe_svg_num(a, na, sizeof(na)), moe_svg_num(b, nb, sizeof(nb)),
                 get(p, "verdict") ? "; " : "", str(p, "verdict"));
        if (!moe_svg_point(s, a, b, 5, BLUE, NULL, tip))
            continue;
        if (!trusted)
            moe_svg_point(s, a, b, 3.5, "#ffffff", NULL, NULL);
        *untrusted += !trusted;
        place_label(s, &l, moe_svg_px(s, a), moe_svg_py(s, b), short_name(str(p, "candidate")));
        *inside += fabs(b - a) <= band * fabs(a);
    }
}

static char *pair_svg(const json_t *plot, const char *what, const char *title)
{
    const char *unit = str(plot, "unit");
    double band = dbl(plot, "band_pct") / 100, lo = INFINITY, hi = -INFINITY;
    const json_t *points = get(plot, "points");
    struct moe_svg_axis a;
    struct moe_svg s;
    size_t inside = 0, untrusted = 0;
    char sub[300], xl[160], yl[160], bl[64];

    pair_range(points, band, &lo, &hi);
    /* room above the highest point for its label */
    moe_svg_axis_nice(lo, hi + (hi - lo) * 0.06, 6, false, &a);
    /* text shown in the SVG: cut, it still says it */
    snprintf(xl, sizeof(xl), "modeled %s (%s): moeflow's model", what, unit);
    /* text shown in the SVG: cut, it still says it */
    snprintf(yl, sizeof(yl), "measured %s (%s)", what, unit);
    /* text shown in the SVG: cut, it still says it */
    snprintf(bl, sizeof(bl), "\xc2\xb1%.0f%%", band * 100);
    moe_svg_begin(&s, 560, 540, 72, 24, 64, 80, title, NULL);
    moe_svg_frame(&s, &a, &a, xl, yl);
    draw_band(&s, band);
    draw_pairs(&s, points, band, &inside, &untrusted);
    /* text shown in the SVG: cut, it still says it */
    snprintf(sub, sizeof(sub), "%zu candidate%s plotted, %zu within the band; %zu skipped "
             "(README.md)", json_array_size(points), json_array_size(points) == 1 ? "" : "s",
             inside, json_array_size(get(plot, "skipped")));
    moe_svg_text(&s, s.left, 40, "start", 11.5, "#555555", 0, sub);
    moe_svg_legend(&s, "point", BLUE, "measured");
    if (untrusted)
        moe_svg_legend(&s, "point", "#9ecae1", "hollow: flagged");
    moe_svg_legend(&s, "dash", GREY, "y = x");
    moe_svg_legend(&s, "band", BAND_FILL, bl);
    return finish(&s);
}

/* ---- each scale round's ranking ---- */

/* A row's place in the predicted order: its rank, else its modeled step;
 * rows with neither come last, in their own order. */
static double order_key(const json_t *row)
{
    const json_t *r = get(row, "predicted_rank");

    return json_is_integer(r) ? (double)json_integer_value(r) : dbl(row, "predicted_ms");
}

/* A row and its place in the file, which breaks ties: qsort is not stable. */
struct ranked {
    const json_t *row;
    size_t at;
};

static int by_key(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    double kx = order_key(x->row), ky = order_key(y->row);

    if (isfinite(kx) != isfinite(ky))
        return isfinite(kx) ? -1 : 1;
    if (isfinite(kx) && kx != ky)
        return kx < ky ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* The rows in predicted order; NULL when out of memory. */
static const json_t **ordered(const json_t *rows, size_t *n)
{
    size_t count = json_array_size(rows);
    struct ranked *r = calloc(count + 1, sizeof(*r));
    const json_t **v = calloc(count + 1, sizeof(*v));

    *n = count;
    if (!r || !v) {
        free(r);
        free(v);
        return NULL;
    }
    for (size_t i = 0; i < count; i++)
        r[i] = (struct ranked){ json_array_get(rows, i), i };
    qsort(r, count, sizeof(*r), by_key);
    for (size_t i = 0; i < count; i++)
        v[i] = r[i].row;
    free(r);
    return v;
}

/* The index of the smallest value of key among the rows, or n. */
static size_t best_by(const json_t **v, size_t n, double (*key)(const json_t *))
{
    size_t best = n;

    for (size_t i = 0; i < n; i++)
        if (isfinite(key(v[i])) && (best == n || key(v[i]) < key(v[best])))
            best = i;
    return best;
}

static double measured_of(const json_t *row)
{
    return dbl(row, "measured_ms");
}

static void bar_label(struct moe_svg *s, size_t i, size_t n, const json_t *row,
                      const char *mark)
{
    double slot = (s->right - s->left) / (double)n, x = s->left + slot * ((double)i + 0.5);
    const json_t *rank = get(row, "predicted_rank");
    bool base = strcmp(str(row, "candidate"), "baseline") == 0;
    char text[300], v[40];

    if (json_is_integer(rank))
        /* text shown in the SVG: cut, it still says it */
        snprintf(text, sizeof(text), "#%lld %s", (long long)json_integer_value(rank),
                 str(row, "layout"));
    else
        /* text shown in the SVG: cut, it still says it */
        snprintf(text, sizeof(text), "%s%s%s", base ? "baseline " : "", str(row, "layout"),
                 isfinite(order_key(row)) ? "" : ", not ranked");
    moe_svg_text(s, x + 4, s->bottom + 14, "end", 10.5, "#222222", -30, text);
    if (!isfinite(measured_of(row))) {
        if (mark) /* above the "not measured" of its slot */
            moe_svg_text(s, x, s->bottom - 22, "middle", 11, "#111111", 0, mark);
        return;
    }
    moe_svg_text(s, x, moe_svg_py(s, measured_of(row)) - 5, "middle", 10.5, "#222222", 0,
                 moe_svg_num(round(measured_of(row)), v, sizeof(v)));
    if (mark)
        moe_svg_text(s, x, moe_svg_py(s, measured_of(row)) - 19, "middle", 11, "#111111", 0,
                     mark);
}

/* The modeled step of a row: a short dark line across its slot (the
 * categorical x axis runs 0..1). */
static void model_tick(struct moe_svg *s, size_t i, size_t n, const json_t *row)
{
    double m = dbl(row, "predicted_ms");
    double xs[2] = { ((double)i + 0.08) / (double)n, ((double)i + 0.92) / (double)n };
    double ys[2] = { m, m };

    if (isfinite(m))
        moe_svg_polyline(s, xs, ys, 2, "#222222", 2.5, NULL);
}

static void draw_bars(struct moe_svg *s, const json_t **v, size_t n, size_t pbest,
                      size_t mbest)
{
    for (size_t i = 0; i < n; i++) {
        char tip[600], a[40], b[40];

        /* text shown in the SVG: cut, it still says it */
        snprintf(tip, sizeof(tip), "%s (%s): measured %s ms, modeled %s ms", str(v[i], "layout"),
                 str(v[i], "candidate"), moe_svg_num(measured_of(v[i]), a, sizeof(a)),
                 moe_svg_num(dbl(v[i], "predicted_ms"), b, sizeof(b)));
        /* a layout decided to run in a next round has no bar yet: said, not dropped */
        if (isfinite(measured_of(v[i])) || !json_is_null(get(v[i], "measured_ms")))
            moe_svg_bar(s, i, n, measured_of(v[i]), i == mbest ? ORANGE : BLUE,
                        i == pbest ? GREEN : NULL, tip);
        else
            moe_svg_text(s, s->left + (s->right - s->left) * ((double)i + 0.5) / (double)n,
                         s->bottom - 8, "middle", 10.5, "#555555", 0, "not measured");
        model_tick(s, i, n, v[i]);
        bar_label(s, i, n, v[i],
                  i == pbest && i == mbest ? "predicted and measured best"
                  : i == pbest             ? "predicted best"
                  : i == mbest             ? "measured best"
                                           : NULL);
    }
}

static char *ranking_svg(const json_t *round)
{
    size_t n, pbest, mbest;
    const json_t **v = ordered(get(round, "rows"), &n);
    double hi = 0;
    struct moe_svg_axis ya;
    struct moe_svg s;
    char title[200], sub[500];

    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        hi = fmax(hi, fmax(isfinite(measured_of(v[i])) ? measured_of(v[i]) : 0,
                           isfinite(dbl(v[i], "predicted_ms")) ? dbl(v[i], "predicted_ms") : 0));
    pbest = best_by(v, n, order_key);
    mbest = best_by(v, n, measured_of);
    /* room above the tallest bar for its value and mark */
    moe_svg_axis_nice(0, hi * 1.12, 6, true, &ya);
    /* text shown in the SVG: cut, it still says it */
    snprintf(title, sizeof(title), "Scale round %lld: measured step per layout, in predicted "
             "order", (long long)json_integer_value(get(round, "round")));
    /* text shown in the SVG: cut, it still says it */
    snprintf(sub, sizeof(sub), "source: %s%s", str(round, "source"),
             get(round, "rows_cut") ? " (rows past 64 not drawn)" : "");
    moe_svg_begin(&s, 1100, 500, 72, 24, 64, 150, title, sub);
    moe_svg_frame(&s, NULL, &ya, "layout, in predicted order (#: the model's rank)",
                  "step time (ms)");
    draw_bars(&s, v, n, pbest, mbest);
    free(v);
    moe_svg_legend(&s, "bar", BLUE, "measured median step");
    moe_svg_legend(&s, "bar", ORANGE, "measured best");
    moe_svg_legend(&s, "band", GREEN, "outlined: predicted best");
    moe_svg_legend(&s, "line", "#222222", "modeled step");
    return finish(&s);
}

/* ---- index.html ---- */

static void html_escape(struct moe_strbuf *b, const char *text)
{
    moe_svg_escape(b, text);
}

static void figure(struct moe_strbuf *b, const json_t *plot, const char *alt, const char *cls)
{
    const char *status = str(plot, "status");

    if (plot && strcmp(status, "not drawn") == 0) {
        moe_strbuf_printf(b, "<p class=\"nd\"><b>%s: not drawn</b>: ", alt);
        html_escape(b, str(plot, "why"));
        moe_strbuf_puts(b, "</p>\n");
        return;
    }
    if (!plot || !moe_evidence_pack_file_name(str(plot, "file")))
        return;
    moe_strbuf_printf(b, "<figure class=\"%s\"><a href=\"%s\"><img src=\"%s\" alt=\"%s\"></a>"
                      "</figure>\n", cls, str(plot, "file"), str(plot, "file"), alt);
}

static void skipped_list(struct moe_strbuf *b, const json_t *plot, const char *what)
{
    const json_t *k;
    size_t i;

    json_array_foreach(get(plot, "skipped"), i, k) {
        moe_strbuf_printf(b, "<li>%s: ", what);
        html_escape(b, str(k, "candidate"));
        moe_strbuf_puts(b, ": ");
        html_escape(b, str(k, "why"));
        moe_strbuf_puts(b, "</li>\n");
    }
}

static void not_plotted(struct moe_strbuf *b, const json_t *plots)
{
    const json_t *k;
    size_t i;

    moe_strbuf_puts(b, "<h2>Not plotted</h2>\n<ul>\n");
    skipped_list(b, get(plots, "memory"), "memory");
    skipped_list(b, get(plots, "step"), "step");
    json_array_foreach(get(plots, "refused_decisions"), i, k) {
        moe_strbuf_puts(b, "<li>refused ");
        html_escape(b, str(k, "file"));
        moe_strbuf_puts(b, ": ");
        html_escape(b, str(k, "why"));
        moe_strbuf_puts(b, "</li>\n");
    }
    moe_strbuf_puts(b, "</ul>\n");
}

static const char STYLE[] =
    "body{font-family:Helvetica,Arial,sans-serif;margin:20px auto;max-width:1130px;"
    "color:#222}h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:18px 0 8px}"
    "p{margin:4px 0 10px}figure{margin:0 0 14px}img{display:block;max-width:100%;"
    "border:1px solid #ddd}.row{display:flex;gap:10px}.half{flex:1}.nd{color:#a30}"
    "li{font-size:13px}\n";

static char *index_html(const json_t *pack)
{
    const json_t *plots = get(pack, "plots"), *r;
    struct moe_strbuf b = { 0 };
    size_t i;

    moe_strbuf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<title>Evidence pack: ");
    html_escape(&b, str(pack, "study"));
    moe_strbuf_printf(&b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>Evidence pack: ",
                      STYLE);
    html_escape(&b, str(pack, "study"));
    moe_strbuf_puts(&b, "</h1>\n<p>");
    html_escape(&b, str(get(pack, "semantics"), "text"));
    moe_strbuf_puts(&b, ". The numbers and their sources: <a href=\"README.md\">README.md</a>, "
                        "<a href=\"pack.json\">pack.json</a>.</p>\n");
    figure(&b, get(plots, "step_time"), "step time per iteration", "full");
    moe_strbuf_puts(&b, "<div class=\"row\">\n");
    figure(&b, get(plots, "memory"), "memory, modeled against measured", "half");
    figure(&b, get(plots, "step"), "step time, modeled against measured", "half");
    moe_strbuf_puts(&b, "</div>\n");
    json_array_foreach(get(plots, "scale_rounds"), i, r)
        figure(&b, r, "scale round ranking", "full");
    if (json_is_string(get(plots, "scale_rounds_why"))) {
        moe_strbuf_puts(&b, "<p class=\"nd\"><b>scale rounds: not drawn</b>: ");
        html_escape(&b, str(plots, "scale_rounds_why"));
        moe_strbuf_puts(&b, "</p>\n");
    }
    not_plotted(&b, plots);
    moe_strbuf_puts(&b, "</body>\n</html>\n");
    return moe_strbuf_take(&b);
}

/* ---- the files ---- */

static bool drawn(const json_t *plot)
{
    return strcmp(str(plot, "status"), "drawn") == 0;
}

int moe_evidence_pack_render(const json_t *pack, struct moe_pack_file **files, size_t *n)
{
    const json_t *plots = get(pack, "plots"), *r;
    struct files f = { 0 };
    size_t i;

    if (drawn(get(plots, "step_time")))
        add_file(&f, str(get(plots, "step_time"), "file"),
                 step_time_svg(pack, get(plots, "step_time")));
    if (drawn(get(plots, "memory")))
        add_file(&f, str(get(plots, "memory"), "file"),
                 pair_svg(get(plots, "memory"), "peak memory",
                          "Peak memory per candidate: measured against modeled"));
    if (drawn(get(plots, "step")))
        add_file(&f, str(get(plots, "step"), "file"),
                 pair_svg(get(plots, "step"), "step time",
                          "Step time per layout: measured against modeled"));
    json_array_foreach(get(plots, "scale_rounds"), i, r)
        add_file(&f, str(r, "file"), ranking_svg(r));
    add_file(&f, "index.html", index_html(pack));
    *files = f.v;
    *n = f.n;
    if (f.oom) {
        moe_pack_files_free(f.v, f.n);
        *files = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}

void moe_pack_files_free(struct moe_pack_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(files[i].text);
    free(files);
}

bool moe_evidence_pack_file_name(const char *name)
{
    size_t n = strlen(name);

    if (strcmp(name, "README.md") == 0 || strcmp(name, "pack.json") == 0 ||
        strcmp(name, "index.html") == 0)
        return true;
    if (n < 5 || n > 60 || strcmp(name + n - 4, ".svg") != 0)
        return false;
    return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") == n - 4;
}
