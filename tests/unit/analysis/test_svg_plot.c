/* The SVG writer of the evidence pack's plots (analysis/svg_plot.h):
 * strings are data (every XML special, control character and invalid
 * UTF-8 byte escaped), ticks fall on 1, 2 or 5 times a power of ten and
 * cover the data, numbers print the same everywhere, NaN and infinite
 * points are dropped and counted (a line breaks there), and a small chart
 * is byte for byte the golden text below. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/svg_plot.h"
#include "analysis/svg_plot_internal.h"
#include "unit.h"

static char *escaped(const char *text)
{
    struct moe_strbuf b = { 0 };

    moe_svg_escape(&b, text);
    return moe_strbuf_take(&b);
}

static void escape_is_data_never_markup(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        { "<&\"'>", "&lt;&amp;&quot;&#39;&gt;" },
        { "</text><script>alert(1)</script>", "&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt;" },
        { "a\nb\tc\x1b[31m", "a\\x0Ab\\x09c\\x1B[31m" },
        { "\x7f", "\\x7F" },
        { "\xc2\x85", "\\xC2\\x85" },              /* C1 NEL */
        { "\xff\xfe ok", "\\xFF\\xFE ok" },        /* not UTF-8 */
        { "\xed\xa0\x80", "\\xED\\xA0\\x80" },     /* a UTF-16 surrogate */
        { "\xe0\x80\xaf", "\\xE0\\x80\\xAF" },     /* overlong '/' */
        { "\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x93\x88", "\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x93\x88" },
        { "", "" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = escaped(cases[i].in);

        assert_string_equal(got, cases[i].out);
        free(got);
    }
}

static void numbers_print_the_same_everywhere(void **state)
{
    static const struct {
        double v;
        const char *out;
    } cases[] = {
        { 12.5, "12.5" }, { 3.0, "3" }, { -0.001, "0" }, { -0.25, "-0.25" }, { 1e6, "1000000" },
        { 0.105, "0.1" }, { 996.44, "996.44" }, { 100.0, "100" }, { 0, "0" },
    };
    char buf[40];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_string_equal(moe_svg_num(cases[i].v, buf, sizeof(buf)), cases[i].out);
    assert_string_equal(moe_svg_num(NAN, buf, sizeof(buf)), "nan");
    assert_string_equal(moe_svg_num(-INFINITY, buf, sizeof(buf)), "nan");
}

/* Whether x is 1, 2 or 5 times a power of ten. */
static bool is_nice(double x)
{
    double m = x / pow(10.0, floor(log10(x)));

    return fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9;
}

static void axis(double lo, double hi, int max, bool zero, double elo, double ehi, double estep)
{
    struct moe_svg_axis a;

    moe_svg_axis_nice(lo, hi, max, zero, &a);
    print_message("# [%g, %g] max %d%s: %g..%g step %g, %d ticks\n", lo, hi, max,
                  zero ? " with 0" : "", a.lo, a.hi, a.step, a.ticks);
    assert_true(fabs(a.lo - elo) < 1e-9 && fabs(a.hi - ehi) < 1e-9 && fabs(a.step - estep) < 1e-12);
    assert_int_equal(a.ticks, (int)lround((ehi - elo) / estep));
}

static void ticks_at_nice_numbers(void **state)
{
    (void)state;
    axis(0.3, 9.7, 5, false, 0, 10, 2);
    axis(996.4, 1034.2, 6, false, 990, 1040, 10);
    axis(1, 50, 10, false, 0, 50, 5);
    axis(41, 50, 10, false, 41, 50, 1);
    axis(1100.7, 1593, 6, false, 1100, 1600, 100);
    axis(50, 80, 6, true, 0, 80, 20);
    axis(-3, 7, 5, false, -4, 8, 2);
    axis(0, 0.3, 3, false, 0, 0.3, 0.1);
    axis(300.0000001, 600, 3, false, 300, 600, 100);
    axis(5, 5, 5, false, 4.4, 5.6, 0.2);         /* an empty span is widened */
    axis(NAN, 5, 5, false, 0, 1, 0.2);           /* non-finite: 0..1 */
    axis(2, INFINITY, 5, true, 0, 1, 0.2);
    /* every span from 1e-3 to 1e6 with 3..10 ticks: nice, covering, few enough */
    for (double lo = 1e-3; lo < 1e6; lo *= 3.7)
        for (int max = 3; max <= 10; max++) {
            struct moe_svg_axis a;
            double hi = lo * 1.9 + 0.001;

            moe_svg_axis_nice(lo, hi, max, false, &a);
            assert_true(is_nice(a.step));
            assert_true(a.lo <= lo && a.hi >= hi && a.ticks <= max + 1 && a.ticks >= 1);
        }
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;

    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static void nan_points_dropped_and_counted(void **state)
{
    double xs[] = { 1, 2, 3, 4, 5, NAN };
    double ys[] = { 10, NAN, 30, INFINITY, 50, 60 };
    struct moe_svg_axis a;
    struct moe_svg s;
    char *svg;

    (void)state;
    moe_svg_axis_nice(0, 60, 6, true, &a);
    moe_svg_begin(&s, 300, 200, 40, 10, 40, 40, "t", NULL);
    moe_svg_frame(&s, &a, &a, "x", "y");
    moe_svg_polyline(&s, xs, ys, 6, "#1f77b4", 2, NULL);
    assert_int_equal(s.dropped, 3);
    assert_false(moe_svg_point(&s, NAN, 1, 3, "#000", "nan point", NULL));
    assert_false(moe_svg_bar(&s, 0, 2, INFINITY, "#000", NULL, NULL));
    assert_true(moe_svg_point(&s, 1, 1, 3, "#000", NULL, NULL));
    assert_int_equal(s.dropped, 5);
    assert_non_null(svg = moe_svg_end(&s));
    /* the line breaks at each dropped point: 10 | 30 | 50 */
    assert_int_equal(count(svg, "<polyline"), 3);
    assert_null(strstr(svg, "nan"));
    assert_null(strstr(svg, "inf"));
    free(svg);
}

/* A small chart, byte for byte: the writer's output is a golden file's
 * worth of stable text (no locale, no %g, fixed decimals). */
static void golden_chart(void **state)
{
    static const char golden[] =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"120\" viewBox=\"0 0 200 120\" font-family=\"Helvetica, Arial, sans-serif\">\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
        "<text x=\"40\" y=\"22\" font-size=\"15\" text-anchor=\"start\" fill=\"#111111\">a &lt;b&gt; &amp; &quot;c&quot;</text>\n"
        "<line x1=\"40\" y1=\"90\" x2=\"190\" y2=\"90\" stroke=\"#999999\" stroke-width=\"1\"/>\n"
        "<text x=\"34\" y=\"94\" font-size=\"11\" text-anchor=\"end\" fill=\"#333333\">0</text>\n"
        "<line x1=\"40\" y1=\"40\" x2=\"190\" y2=\"40\" stroke=\"#e6e6e6\" stroke-width=\"1\"/>\n"
        "<text x=\"34\" y=\"44\" font-size=\"11\" text-anchor=\"end\" fill=\"#333333\">5</text>\n"
        "<line x1=\"40\" y1=\"40\" x2=\"40\" y2=\"90\" stroke=\"#999999\" stroke-width=\"1\"/>\n"
        "<line x1=\"40\" y1=\"90\" x2=\"40\" y2=\"94\" stroke=\"#999999\" stroke-width=\"1\"/>\n"
        "<text x=\"40\" y=\"107\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333333\">0</text>\n"
        "<line x1=\"190\" y1=\"40\" x2=\"190\" y2=\"90\" stroke=\"#f0f0f0\" stroke-width=\"1\"/>\n"
        "<line x1=\"190\" y1=\"90\" x2=\"190\" y2=\"94\" stroke=\"#999999\" stroke-width=\"1\"/>\n"
        "<text x=\"190\" y=\"107\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333333\">5</text>\n"
        "<line x1=\"40\" y1=\"90\" x2=\"190\" y2=\"90\" stroke=\"#555555\" stroke-width=\"1\"/>\n"
        "<line x1=\"40\" y1=\"40\" x2=\"40\" y2=\"90\" stroke=\"#555555\" stroke-width=\"1\"/>\n"
        "<text x=\"115\" y=\"126\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222222\">x (ms)</text>\n"
        "<text x=\"16\" y=\"65\" font-size=\"12\" text-anchor=\"middle\" fill=\"#222222\" transform=\"rotate(-90 16 65)\">y (MiB)</text>\n"
        "<circle cx=\"115\" cy=\"52.5\" r=\"3\" fill=\"#1f77b4\" stroke=\"#ffffff\" stroke-width=\"1\"><title>&#39;p&#39;</title></circle>\n"
        "<text x=\"121\" y=\"48.5\" font-size=\"10.5\" text-anchor=\"start\" fill=\"#222222\">p&amp;q</text>\n"
        "</svg>\n";
    struct moe_svg_axis a;
    struct moe_svg s;
    char *svg;

    (void)state;
    moe_svg_axis_nice(0, 4.5, 1, true, &a);
    moe_svg_begin(&s, 200, 120, 40, 10, 40, 30, "a <b> & \"c\"", NULL);
    moe_svg_frame(&s, &a, &a, "x (ms)", "y (MiB)");
    moe_svg_point(&s, 2.5, 3.75, 3, "#1f77b4", "p&q", "'p'");
    assert_non_null(svg = moe_svg_end(&s));
    if (strcmp(svg, golden) != 0) {
        print_message("# the chart differs from the golden text:\n%s", svg);
        fail();
    }
    free(svg);
}

/* An axis that does not start at 0 says where it starts. */
static void origin_said_when_not_zero(void **state)
{
    struct moe_svg_axis x, y;
    struct moe_svg s;
    char *svg;

    (void)state;
    moe_svg_axis_nice(41, 50, 9, false, &x);
    moe_svg_axis_nice(990, 1040, 5, false, &y);
    moe_svg_begin(&s, 400, 300, 60, 10, 50, 50, "steps", "sub");
    moe_svg_frame(&s, &x, &y, "iteration", "step time (ms)");
    moe_svg_legend(&s, "line", "#1f77b4", "baseline <b>");
    moe_svg_legend(&s, "band", "#eee", "window");
    assert_non_null(svg = moe_svg_end(&s));
    assert_non_null(strstr(svg, ">y axis starts at 990, not 0<"));
    assert_non_null(strstr(svg, ">baseline &lt;b&gt;<"));
    free(svg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escape_is_data_never_markup),
        cmocka_unit_test(numbers_print_the_same_everywhere),
        cmocka_unit_test(ticks_at_nice_numbers),
        cmocka_unit_test(nan_points_dropped_and_counted),
        cmocka_unit_test(golden_chart),
        cmocka_unit_test(origin_said_when_not_zero),
    };

    return MOE_RUN_TESTS(tests);
}
