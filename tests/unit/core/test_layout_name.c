/* The layout notation (lib/core/layout_name.c): what is printed reads back
 * as the same layout, the dotted form's omitted components are 1, the
 * older key=value form still reads (etp following tp), and each error
 * names the bad component and the form to write. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/layout_name.h"
#include "unit.h"

static struct moe_layout parsed(const char *text, enum moe_layout_form want)
{
    struct moe_layout l;
    struct moe_error err;
    enum moe_layout_form form = (enum moe_layout_form)-1;

    moe_error_clear(&err);
    assert_int_equal(moe_layout_name_parse(text, &l, &form, &err), 0);
    assert_int_equal(form, want);
    return l;
}

/* The error text of a refused TEXT. */
static const char *refused(const char *text, struct moe_error *err)
{
    struct moe_layout l;

    moe_error_clear(err);
    assert_int_equal(moe_layout_name_parse(text, &l, NULL, err), -1);
    return err->text;
}

static void printed_names_read_back(void **state)
{
    struct moe_layout l = { .tp = 2, .cp = 1, .pp = 8, .vpp = 4, .ep = 32, .etp = 1 }, r;
    char name[MOE_LAYOUT_NAME_MAX], again[MOE_LAYOUT_NAME_MAX];

    (void)state;
    assert_string_equal(moe_layout_name(&l, name, sizeof(name)), "tp2.cp1.pp8.vpp4.ep32.etp1");
    r = parsed(name, MOE_LAYOUT_DOTTED);
    assert_string_equal(moe_layout_name(&r, again, sizeof(again)), name);
    l = (struct moe_layout){ 65536, 65536, 65536, 65536, 65536, 65536, 0, 0 };
    moe_layout_name(&l, name, sizeof(name));
    assert_string_equal(name, "tp65536.cp65536.pp65536.vpp65536.ep65536.etp65536");
    r = parsed(name, MOE_LAYOUT_DOTTED);
    assert_int_equal(r.etp, 65536);
}

static void omitted_components_are_one(void **state)
{
    struct moe_layout l;

    (void)state;
    l = parsed("tp2.ep8", MOE_LAYOUT_DOTTED);
    assert_int_equal(l.tp, 2);
    assert_int_equal(l.cp, 1);
    assert_int_equal(l.pp, 1);
    assert_int_equal(l.vpp, 1);
    assert_int_equal(l.ep, 8);
    assert_int_equal(l.etp, 1);
    assert_int_equal(l.dp, 0);
    l = parsed("pp4", MOE_LAYOUT_DOTTED);
    assert_int_equal(l.pp, 4);
    assert_int_equal(l.tp, 1);
}

static void the_older_form_reads_with_its_etp(void **state)
{
    struct moe_layout l;

    (void)state;
    l = parsed("ep=8,tp=2", MOE_LAYOUT_KEYVALUE);
    assert_int_equal(l.tp, 2);
    assert_int_equal(l.ep, 8);
    assert_int_equal(l.etp, 2); /* Megatron's default: etp is tp */
    l = parsed("tp=2,cp=1,ep=8,etp=1,pp=4,vpp=3", MOE_LAYOUT_KEYVALUE);
    assert_int_equal(l.etp, 1);
    assert_int_equal(l.vpp, 3);
    assert_int_equal(l.pp, 4);
}

static void errors_name_the_component_and_the_form(void **state)
{
    struct moe_error e;

    (void)state;
    assert_non_null(strstr(refused("tp2.xp4", &e), "'xp4' is not a layout component"));
    assert_non_null(strstr(e.text, "expected e.g. tp1.cp1.pp2.vpp3.ep8.etp1"));
    assert_non_null(strstr(refused("tp2.ep8.pp2", &e), "pp is out of order"));
    assert_non_null(strstr(refused("tp2.tp4", &e), "tp is given twice"));
    assert_non_null(strstr(refused("tp0", &e), "tp: expected a whole number 1..65536, not '0'"));
    assert_non_null(strstr(refused("ep65537", &e), "ep: expected a whole number"));
    assert_non_null(strstr(refused("tp", &e), "tp: expected a whole number"));
    assert_non_null(strstr(refused("tp 2", &e), "tp: expected a whole number 1..65536, not ' 2'"));
    assert_non_null(strstr(refused("tp2.", &e), "'' is not a layout component"));
    assert_non_null(strstr(refused("TP2", &e), "'TP2' is not a layout component"));
    assert_non_null(strstr(refused("tp2.ep+8", &e), "ep: expected a whole number"));
    assert_non_null(strstr(refused("", &e), "empty layout"));
    assert_non_null(strstr(refused("tp2\n", &e), "newline"));
    /* the older form keeps its messages, and points at the dotted one */
    assert_non_null(strstr(refused("tp=2,ep=x", &e), "ep: expected an integer 1..65536, not 'x'"));
    assert_non_null(strstr(refused("tp=2,tp=4", &e), "tp is given twice"));
    assert_non_null(strstr(refused("dp=2", &e), "'dp=2' is not key=value"));
    assert_non_null(strstr(e.text, "tp1.cp1.pp2.vpp3.ep8.etp1"));
    assert_non_null(strstr(refused("tp=2,", &e), "'' is not key=value"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(printed_names_read_back),
        cmocka_unit_test(omitted_components_are_one),
        cmocka_unit_test(the_older_form_reads_with_its_etp),
        cmocka_unit_test(errors_name_the_component_and_the_form),
    };

    return MOE_RUN_TESTS(tests);
}
