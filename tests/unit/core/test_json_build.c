/* The checked JSON builder: a value that cannot be made fails the whole
 * build with its key path, and a non-finite number is null plus a record,
 * never a missing key. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_build.h"
#include "core/json_build_internal.h"
#include "unit.h"

static char *dump(const json_t *j)
{
    return json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
}

/* Each non-finite kind is null, named in the holder's "non_finite"; a
 * finite number next to it is untouched. */
static void non_finite_is_null_and_recorded(void **state)
{
    struct moe_error err;
    struct moe_jb b;
    json_t *o = json_object();
    char *s;

    (void)state;
    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    assert_int_equal(moe_jb_num(&b, o, "rise", INFINITY), 0);
    assert_int_equal(moe_jb_num(&b, o, "fall", -INFINITY), 0);
    assert_int_equal(moe_jb_num(&b, o, "loss", NAN), 0);
    assert_int_equal(moe_jb_num(&b, o, "lr", 0.5), 0);
    assert_non_null(o = moe_jb_done(&b, o));
    s = dump(o);
    assert_string_equal(s, "{\"fall\":null,\"loss\":null,\"lr\":0.5,\"non_finite\":"
                           "{\"fall\":\"-inf\",\"loss\":\"nan\",\"rise\":\"inf\"},\"rise\":null}");
    free(s);
    json_decref(o);
}

/* A finite build has no "non_finite" key at all: files written before
 * the rule stay byte for byte. */
static void finite_build_has_no_record(void **state)
{
    struct moe_jb b;
    json_t *o = json_object(), *a = json_array();
    char *s;

    (void)state;
    moe_jb_init(&b, NULL);
    moe_jb_append_num(&b, o, "samples", a, 1.25);
    moe_jb_set(&b, o, "samples", a);
    moe_jb_int(&b, o, "n", 1);
    assert_non_null(o = moe_jb_done(&b, o));
    assert_string_equal(s = dump(o), "{\"n\":1,\"samples\":[1.25]}");
    free(s);
    json_decref(o);
}

/* An array element is recorded as key[i] in the object holding the array. */
static void array_element_is_named_by_index(void **state)
{
    struct moe_jb b;
    json_t *o = json_object(), *a = json_array();
    char *s;

    (void)state;
    moe_jb_init(&b, NULL);
    moe_jb_append_num(&b, o, "samples", a, 2.0);
    moe_jb_append_num(&b, o, "samples", a, NAN);
    moe_jb_set(&b, o, "samples", a);
    assert_non_null(o = moe_jb_done(&b, o));
    assert_string_equal(s = dump(o), "{\"non_finite\":{\"samples[1]\":\"nan\"},"
                                     "\"samples\":[2.0,null]}");
    free(s);
    json_decref(o);
}

/* A failure deep inside names the whole path on the way out, keeps the
 * first reason, and the build returns NULL. */
static void inner_failure_names_its_path(void **state)
{
    struct moe_error err;
    struct moe_jb b;
    json_t *o = json_object(), *runs = json_array(), *run = json_object(), *m = json_object();

    (void)state;
    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    moe_jb_append(&b, runs, json_object());
    moe_jb_append(&b, runs, json_object());
    assert_int_equal(moe_jb_str(&b, m, "label", "bad\xff"), -1);
    assert_int_equal(moe_jb_set(&b, run, "measured", moe_jb_done(&b, m)), -1);
    assert_int_equal(moe_jb_append(&b, runs, moe_jb_done(&b, run)), -1);
    assert_int_equal(moe_jb_set(&b, o, "runs", runs), 0);
    assert_null(moe_jb_done(&b, o));
    assert_string_equal(err.text, "[2].measured.label: not UTF-8 (or out of memory)");
}

/* A NULL from a function that knows no builder is still named, and so is
 * a NULL string and a json_pack that Jansson refused. */
static void null_values_are_named(void **state)
{
    struct moe_error err;
    struct moe_jb b;
    json_t *o = json_object();

    (void)state;
    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    assert_int_equal(moe_jb_set(&b, o, "checkpoint", NULL), -1);
    assert_string_equal(err.text, "checkpoint: no value (out of memory, or a value that could "
                                  "not be made)");
    moe_jb_init(&b, &err);
    assert_int_equal(moe_jb_str(&b, o, "reason", NULL), -1);
    assert_string_equal(err.text, "reason: no string");
    moe_jb_init(&b, &err);
    assert_int_equal(moe_jb_set(&b, o, "window", moe_jb_pack(&b, "[s,o]", "x", NULL)), -1);
    assert_string_equal(err.text, "window: NULL object (column 4 of \"[s,o]\")");
    assert_null(moe_jb_done(&b, o));
}

/* moe_jb_str_opt writes null for a NULL string; copy takes a borrowed
 * value and refuses none. */
static void optional_and_copied_values(void **state)
{
    struct moe_error err;
    struct moe_jb b;
    json_t *o = json_object(), *v = json_string("kept");
    char *s;

    (void)state;
    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    moe_jb_str_opt(&b, o, "none", NULL);
    moe_jb_copy(&b, o, "copy", v);
    moe_jb_bool(&b, o, "ok", true);
    assert_non_null(o = moe_jb_done(&b, o));
    assert_string_equal(s = dump(o), "{\"copy\":\"kept\",\"none\":null,\"ok\":true}");
    free(s);
    assert_int_equal(v->refcount, 2);
    json_decref(o);
    json_decref(v);
    o = json_object();
    assert_int_equal(moe_jb_copy(&b, o, "gone", NULL), -1);
    assert_string_equal(err.text, "gone: no value to copy");
    json_decref(o);
}

/* NaN as "none" is a plain null; an infinity is still recorded. */
static void none_is_null_without_record(void **state)
{
    struct moe_jb b;
    json_t *o = json_object();
    char *s;

    (void)state;
    moe_jb_init(&b, NULL);
    moe_jb_num_opt(&b, o, "p_value", NAN);
    moe_jb_num_opt(&b, o, "delta", INFINITY);
    moe_jb_num_opt(&b, o, "ms", 3.5);
    assert_non_null(o = moe_jb_done(&b, o));
    assert_string_equal(s = dump(o), "{\"delta\":null,\"ms\":3.5,\"non_finite\":"
                                     "{\"delta\":\"inf\"},\"p_value\":null}");
    free(s);
    json_decref(o);
}

/* The name of each kind, and none for a finite number. */
static void non_finite_names(void **state)
{
    (void)state;
    assert_string_equal(moe_json_non_finite_name(INFINITY), "inf");
    assert_string_equal(moe_json_non_finite_name(-INFINITY), "-inf");
    assert_string_equal(moe_json_non_finite_name(NAN), "nan");
    assert_null(moe_json_non_finite_name(1e308));
    assert_true(json_is_null(moe_json_number(NAN)));
    assert_true(json_is_real(moe_json_number(-0.0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(non_finite_is_null_and_recorded),
        cmocka_unit_test(finite_build_has_no_record),
        cmocka_unit_test(array_element_is_named_by_index),
        cmocka_unit_test(inner_failure_names_its_path),
        cmocka_unit_test(null_values_are_named),
        cmocka_unit_test(optional_and_copied_values),
        cmocka_unit_test(none_is_null_without_record),
        cmocka_unit_test(non_finite_names),
    };

    return MOE_RUN_TESTS(tests);
}
