/* The growable string and the array growth rule: texts of any length come
 * out whole, and a failed growth keeps what the caller had. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/strbuf_internal.h"
#include "unit.h"

/* A path longer than any fixed buffer the code used to have (4096) comes
 * out whole: the bug fixed was a cut path naming another file. */
static void long_paths_are_whole(void **state)
{
    char *dir = malloc(10001), *path;

    (void)state;
    memset(dir, 'd', 10000);
    dir[10000] = '\0';
    assert_non_null(path = moe_path_join(dir, "manifest.json"));
    assert_int_equal(strlen(path), 10000 + 1 + strlen("manifest.json"));
    assert_string_equal(path + 10001, "manifest.json");
    free(path);
    free(dir);
}

static void appends_and_formats(void **state)
{
    struct moe_strbuf b = { 0 };
    char *s;

    (void)state;
    assert_int_equal(moe_strbuf_puts(&b, "tp="), 0);
    assert_int_equal(moe_strbuf_printf(&b, "%d,ep=%s", 8, "16"), 0);
    assert_int_equal(moe_strbuf_add(&b, "xyz", 1), 0);
    assert_int_equal(b.len, strlen("tp=8,ep=16x"));
    assert_string_equal(s = moe_strbuf_take(&b), "tp=8,ep=16x");
    assert_null(b.buf);
    free(s);
}

/* An empty buffer still gives a string a caller can print and free. */
static void empty_take_is_an_empty_string(void **state)
{
    struct moe_strbuf b = { 0 };
    char *s;

    (void)state;
    assert_non_null(s = moe_strbuf_take(&b));
    assert_string_equal(s, "");
    free(s);
}

/* After a failed growth the builder reports it once, at take. */
static void a_failed_growth_fails_the_take(void **state)
{
    struct moe_strbuf b = { 0 };

    (void)state;
    assert_int_equal(moe_strbuf_puts(&b, "kept"), 0);
    assert_int_equal(moe_strbuf_grow(&b, SIZE_MAX - 2), -1);
    assert_true(b.oom);
    assert_string_equal(b.buf, "kept");
    assert_int_equal(moe_strbuf_puts(&b, "more"), -1);
    assert_null(moe_strbuf_take(&b));
    assert_null(b.buf);
}

static void arrays_double(void **state)
{
    size_t cap = 0;
    int *a = NULL, *g;

    (void)state;
    for (int i = 0; i < 100; i++) {
        assert_non_null(g = moe_grow_array(a, &cap, (size_t)i + 1, sizeof(*a)));
        a = g;
        a[i] = i;
    }
    assert_true(cap >= 100 && cap < 200);
    assert_int_equal(a[99], 99);
    free(a);
}

/* The old array survives an impossible request (the megatron_log.c bug:
 * a failed realloc lost it). */
static void overflow_keeps_the_array(void **state)
{
    size_t cap = 0;
    int *a = moe_grow_array(NULL, &cap, 4, sizeof(int));

    (void)state;
    assert_non_null(a);
    a[3] = 7;
    assert_null(moe_grow_array(a, &cap, SIZE_MAX / 2, sizeof(*a)));
    assert_int_equal(cap, 8);
    assert_int_equal(a[3], 7);
    free(a);
}

/* A fixed buffer kept on purpose refuses a text that does not fit. */
static void fixed_buffers_refuse_a_cut(void **state)
{
    struct moe_error e;
    char buf[8];

    (void)state;
    assert_int_equal(moe_fmt_fixed(buf, sizeof(buf), &e, "%s/%s", "ab", "cd"), 0);
    assert_string_equal(buf, "ab/cd");
    assert_int_equal(moe_fmt_fixed(buf, sizeof(buf), &e, "%s/%s", "abcd", "efgh"), -1);
    assert_non_null(strstr(e.text, "too long (at most 7 bytes)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_paths_are_whole),
        cmocka_unit_test(appends_and_formats),
        cmocka_unit_test(empty_take_is_an_empty_string),
        cmocka_unit_test(a_failed_growth_fails_the_take),
        cmocka_unit_test(arrays_double),
        cmocka_unit_test(overflow_keeps_the_array),
        cmocka_unit_test(fixed_buffers_refuse_a_cut),
    };
    return MOE_RUN_TESTS(tests);
}
