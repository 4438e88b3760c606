/* report.md and a self-contained SVG chart of per-iteration step time per
 * run, with the report window shaded.  Written directly: no plotting
 * runtime. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "analysis/report_internal.h"
#include "core/readfile.h"

/* A file's text is built in memory; the caller puts it in place whole
 * (cmd_report.c with the other files of -o, core/atomic_set.h). */
struct out {
    FILE *f;
    char *buf;
    size_t len;
};

static FILE *open_out(struct out *o)
{
    o->buf = NULL;
    o->f = open_memstream(&o->buf, &o->len);
    return o->f;
}

/* The text, or NULL when out of memory. */
static char *close_out(struct out *o)
{
    int bad = ferror(o->f);

    if (fclose(o->f) != 0 || bad) {
        free(o->buf);
        return NULL;
    }
    return o->buf;
}

static int write_text(const char *path, char *text, struct moe_error *err)
{
    int rc = -1;

    if (!text)
        moe_error_at(err, path, 0, 0, "cannot write: out of memory");
    else
        rc = moe_replace_file(path, text, strlen(text), -1, err);
    free(text);
    return rc;
}

int moe_report_write_md(const struct moe_report_run *runs, size_t n,
                        const struct moe_report_opts *opts, const char *path,
                        struct moe_error *err)
{
    return write_text(path, moe_report_md(runs, n, opts), err);
}

int moe_report_write_svg(const struct moe_report_run *runs, size_t n, const char *path,
                         struct moe_error *err)
{
    return write_text(path, moe_report_svg(runs, n), err);
}

static void cell(FILE *f, double v, int decimals)
{
    if (isfinite(v))
        fprintf(f, "%.*f", decimals, v);
    else
        fputs("n/a", f);
    fputs(" | ", f);
}

char *moe_report_md(const struct moe_report_run *runs, size_t n,
                    const struct moe_report_opts *opts)
{
    struct out o;
    FILE *f = open_out(&o);

    if (!f)
        return NULL;
    fprintf(f, "# moeflow report\n\nWindow: iterations %ld-%ld (the first logged interval is "
               "discarded). Baseline: %s.\n\n",
            n ? runs[0].first : 0, n ? runs[0].last : 0,
            moe_report_first_is_reference(runs, n) ? runs[0].name : "-");
    fputs("| run | steps | median ms | mean ms | stdev ms | CV % | TFLOP/s/GPU | loss finite | "
          "skipped | NaN | peak MiB | vs baseline (95% interval) | p | verdict |\n"
          "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|\n", f);
    for (size_t i = 0; i < n; i++) {
        const struct moe_report_run *r = &runs[i];

        fprintf(f, "| %s | %zu | ", r->name, r->n);
        cell(f, r->step_median, 1);
        cell(f, r->step_mean, 2);
        cell(f, r->step_stdev, 2);
        cell(f, 100.0 * r->step_cv, 2);
        cell(f, r->tflops_median, 1);
        fprintf(f, "%s | %ld | %ld | ", r->loss_finite ? "yes" : "**no**", r->skipped,
                r->nan_iters);
        cell(f, r->peak_bytes / 1048576.0, 0);
        if (i == 0) {
            fputs(moe_report_first_is_reference(runs, n) ? "baseline | - | - |\n"
                                                         : "- (one run) | - | - |\n", f);
        } else {
            struct moe_report_ab ab;

            moe_report_compare(&runs[0], r, opts, &ab);
            fprintf(f, "%+.2f%% [%+.2f%%, %+.2f%%] | %.3g | %s: %s |\n", ab.delta_pct,
                    ab.ci_lo_pct, ab.ci_hi_pct, ab.p_value, moe_verdict_name(ab.verdict),
                    ab.why);
        }
    }
    fputs("\nEach A/B compares one candidate's window with the baseline's: the effect is the "
          "difference of the median step times, with a 95% bootstrap interval, and p is the "
          "two-sided Mann-Whitney U test's. ", f);
    fprintf(f, "A win or a loss needs p < %.3g, an interval that excludes 0 and an effect of at "
               "least %.2f%%. ", opts ? opts->alpha : MOE_REPORT_ALPHA,
            opts ? opts->min_effect_pct : MOE_REPORT_MIN_EFFECT);
    fputs("Gains of separate A/Bs do not add up: measure a combination as its own run.\n", f);
    for (size_t i = 0; i < n; i++) {
        const struct moe_report_run *r = &runs[i];
        const char *k;
        json_t *v;
        size_t j;

        fprintf(f, "\n## %s\n\nIn effect (argument dump):", r->name);
        if (!json_object_size(r->in_effect))
            fputs(" no argument dump in the log.", f);
        json_object_foreach(r->in_effect, k, v) {
            if (json_is_string(v))
                fprintf(f, " `%s=%s`", k, json_string_value(v));
            else if (json_is_integer(v))
                fprintf(f, " `%s=%lld`", k, (long long)json_integer_value(v));
        }
        fputs("\n", f);
        if (json_array_size(r->mismatches) == 0)
            fputs("\nNo mismatch between what was requested and what ran.\n", f);
        else
            fputs("\nMismatches:\n", f);
        json_array_foreach(r->mismatches, j, v)
            fprintf(f, "- **%s**\n", json_string_value(v));
    }
    fputs("\n![step time](step-time.svg)\n", f);
    return close_out(&o);
}

static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf" };

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

/* A "nice" tick step: 1, 2 or 5 times a power of ten. */
#define TICKS_MAX 50

static double tick_step(double range, int want)
{
    double raw = range / want, p = pow(10, floor(log10(raw))), m = raw / p;

    return p * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
}

char *moe_report_svg(const struct moe_report_run *runs, size_t n)
{
    const double W = 800, H = 420, L = 70, R = 170, T = 30, B = 50;
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0, mmax = 0, ys, xs;
    struct out o;
    FILE *f;

    /* Warm-up iterations can take 30x a steady step and would flatten the
     * rest: the y axis starts at 0 and stops at twice the largest window
     * median; slower points are drawn clamped to the top. */
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < runs[i].nseries; k++) {
            const struct moe_report_point *p = &runs[i].series[k];

            if (p->iter < xmin)
                xmin = (double)p->iter;
            if (p->iter > xmax)
                xmax = (double)p->iter;
            if (k > 0 && isfinite(p->step_ms) && p->step_ms > ymax)
                ymax = p->step_ms;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (isfinite(runs[i].step_median) && runs[i].step_median > mmax)
            mmax = runs[i].step_median;
    if (mmax > 0 && ymax > 2 * mmax)
        ymax = 2 * mmax;
    if (!isfinite(xmin) || xmax <= xmin)
        xmax = xmin + 1;
    if (!isfinite(xmin))
        xmin = 0, xmax = 1;
    if (ymax <= 0)
        ymax = 1;
    f = open_out(&o);
    if (!f)
        return NULL;
#define X(v) (L + ((v) - xmin) / (xmax - xmin) * (W - L - R))
#define Y(v) (H - B - (v) / ymax * (H - T - B))
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H, W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    if (n) {
        double a = runs[0].first < xmin ? xmin : (double)runs[0].first;
        double b = runs[0].last > xmax ? xmax : (double)runs[0].last;

        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#eeeeee\"/>\n",
                X(a), (double)T, X(b) - X(a), H - T - B);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#666\">window "
                   "%ld-%ld</text>\n", (X(a) + X(b)) / 2, T - 8, runs[0].first, runs[0].last);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L,
            H - B, W - R, H - B);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, T,
            L, H - B);
    ys = tick_step(ymax, 5);
    /* Ticks are counted, not stepped by a double: a zero or NaN step (all
     * step times 0) would otherwise loop for ever writing the file. */
    for (int i = 0; ys > 0 && i <= TICKS_MAX && i * ys <= ymax; i++) {
        double y = i * ys;

        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n"
                   "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                L - 6, Y(y) + 4, y, L, Y(y), W - R, Y(y));
    }
    xs = tick_step(xmax - xmin, 8);
    if (!(xs >= 1))
        xs = 1;
    for (int i = 0; i <= TICKS_MAX && ceil(xmin / xs) * xs + i * xs <= xmax; i++) {
        double x = ceil(xmin / xs) * xs + i * xs;

        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", X(x),
                H - B + 16, x);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">iteration</text>\n",
            (L + W - R) / 2, H - 12);
    fprintf(f, "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">step "
               "time (ms)</text>\n", (T + H - B) / 2);
    for (size_t i = 0; i < n; i++) {
        const char *c = colors[i % (sizeof(colors) / sizeof(colors[0]))];

        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", c);
        for (size_t k = 0; k < runs[i].nseries; k++) {
            double v = runs[i].series[k].step_ms;

            /* Off-scale points (the first interval) are clamped to the top. */
            if (isfinite(v))
                fprintf(f, "%.1f,%.1f ", X((double)runs[i].series[k].iter),
                        Y(v > ymax ? ymax : v));
        }
        fputs("\"/>\n", f);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"3\" fill=\"%s\"/>\n",
                W - R + 12, T + 10 + 18.0 * (double)i, c);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", W - R + 30, T + 15 + 18.0 * (double)i);
        xml_text(f, runs[i].name);
        fputs("</text>\n", f);
    }
#undef X
#undef Y
    fputs("</svg>\n", f);
    return close_out(&o);
}
