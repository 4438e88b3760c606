/* The template renderer: values, dotted names, sections, inverted sections,
 * standalone tag lines, and errors that name the template and line. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "study/template.h"
#include "study/template_internal.h"
#include "unit.h"

static char *render(const char *text, const char *json, struct moe_error *e)
{
    json_t *data = json_loads(json, 0, NULL);
    char *out;

    assert_non_null(data);
    moe_error_clear(e);
    out = moe_template_render("t.in", text, data, e);
    json_decref(data);
    return out;
}

/* Strings, integers, reals and booleans print as themselves; nothing is escaped. */
static void values(void **state)
{
    struct moe_error e;
    char *out = render("a={{a}} n={{n}} r={{r}} b={{b}} q={{q}}",
                       "{\"a\":\"x y\",\"n\":42,\"r\":0.5,\"b\":true,\"q\":\"'$HOME'\"}", &e);

    (void)state;
    assert_string_equal(out, "a=x y n=42 r=0.5 b=true q='$HOME'");
    free(out);
}

/* Dotted names descend; the first part is searched from the innermost context. */
static void dotted_and_scoped(void **state)
{
    struct moe_error e;
    char *out = render("{{#items}}{{name}}@{{m.w}}/{{top}};{{/items}}",
                       "{\"top\":\"T\",\"m\":{\"w\":3},"
                       "\"items\":[{\"name\":\"a\"},{\"name\":\"b\",\"top\":\"U\"}]}", &e);

    (void)state;
    assert_string_equal(out, "a@3/T;b@3/U;");
    free(out);
}

/* A section over [] or false renders nothing; its inverse renders once. */
static void sections_and_inverse(void **state)
{
    struct moe_error e;
    char *out = render("[{{#e}}E{{/e}}{{^e}}none{{/e}}|{{#f}}F{{/f}}{{^f}}nf{{/f}}|"
                       "{{#t}}T{{/t}}|{{#o}}{{k}}{{/o}}|{{#l}}{{.}},{{/l}}]",
                       "{\"e\":[],\"f\":false,\"t\":true,\"o\":{\"k\":\"K\"},\"l\":[1,2,3]}", &e);

    (void)state;
    assert_string_equal(out, "[none|nf|T|K|1,2,3,]");
    free(out);
}

/* What is false: 0 and the empty string too, not only false and []; 1, a
 * non-empty string and an object are true. */
static void falsy_values(void **state)
{
    struct moe_error e;
    char *out = render("{{#z}}Z{{/z}}{{^z}}z{{/z}}|{{#s}}S{{/s}}{{^s}}s{{/s}}|"
                       "{{#one}}1{{/one}}{{^one}}0{{/one}}|{{#x}}X{{/x}}{{^x}}x{{/x}}",
                       "{\"z\":0,\"s\":\"\",\"one\":1,\"x\":\"x\"}", &e);

    (void)state;
    assert_string_equal(out, "z|s|1|X");
    free(out);
}

/* A section tag alone on its line leaves no blank line behind. */
static void standalone_lines(void **state)
{
    struct moe_error e;
    char *out = render("head\n{{#l}}\n  - {{.}}\n{{/l}}\ntail\n", "{\"l\":[\"a\",\"b\"]}", &e);

    (void)state;
    assert_string_equal(out, "head\n  - a\n  - b\ntail\n");
    free(out);
}

/* An undefined variable names the template and its line. */
static void undefined_variable(void **state)
{
    struct moe_error e;
    char buf[600];
    char *out = render("one\ntwo {{ok}}\nthree {{missing}}\n", "{\"ok\":1}", &e);

    (void)state;
    assert_null(out);
    assert_string_equal(moe_error_format(&e, buf, sizeof(buf)),
                        "t.in:3: undefined template variable 'missing'");
}

/* Undefined sections and unbalanced tags are errors too. */
static void structural_errors(void **state)
{
    struct moe_error e;
    char buf[600];

    (void)state;
    assert_null(render("{{#nope}}x{{/nope}}", "{}", &e));
    assert_string_equal(moe_error_format(&e, buf, sizeof(buf)),
                        "t.in:1: undefined template variable 'nope'");
    assert_null(render("a\n{{#s}}\nb\n", "{\"s\":true}", &e));
    assert_string_equal(moe_error_format(&e, buf, sizeof(buf)),
                        "t.in:2: section 's' is never closed");
    assert_null(render("{{#a}}{{/b}}", "{\"a\":1}", &e));
    assert_string_equal(e.text, "'{{/b}}' closes no open section");
    assert_null(render("x {{a", "{\"a\":1}", &e));
    assert_string_equal(e.text, "unclosed '{{'");
    assert_null(render("{{l}}", "{\"l\":[1]}", &e));
    assert_string_equal(e.text, "'l' is a list or mapping, not a value");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values),
        cmocka_unit_test(dotted_and_scoped),
        cmocka_unit_test(sections_and_inverse),
        cmocka_unit_test(falsy_values),
        cmocka_unit_test(standalone_lines),
        cmocka_unit_test(undefined_variable),
        cmocka_unit_test(structural_errors),
    };

    return MOE_RUN_TESTS(tests);
}
