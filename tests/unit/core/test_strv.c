/* A command line's flags (lib/core/strv.c): the values of a flag run up
 * to the next "--" entry, a switch has none, and a flag's value is never
 * the next flag. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strv.h"
#include "unit.h"

static void argv_of(struct moe_strv *l, const char *const *words)
{
    *l = (struct moe_strv){ 0 };
    for (size_t i = 0; words[i]; i++)
        assert_int_equal(moe_strv_push(l, words[i]), 0);
}

static void values_run_to_the_next_flag(void **state)
{
    static const char *const w[] = { "--recompute-modules", "core_attn", "mlp", "--fp8",
                                     "--lr", "-1e-4", "--last", "x", "y", NULL };
    struct moe_strv l;

    (void)state;
    argv_of(&l, w);
    assert_int_equal(moe_strv_flag_values(&l, 0), 2);
    assert_int_equal(moe_strv_flag_values(&l, 3), 0); /* a switch */
    assert_int_equal(moe_strv_flag_values(&l, 4), 1); /* "-1e-4" is a value */
    assert_int_equal(moe_strv_flag_values(&l, 6), 2); /* up to the end */
    assert_int_equal(moe_strv_flag_values(&l, 8), 0); /* the last entry */
    moe_strv_free(&l);
}

static void a_flag_value_is_never_a_flag(void **state)
{
    static const char *const w[] = { "--save", "ckpt/a", "--fp8", "--save-interval",
                                     "--train-iters", "10", "--save", "ckpt/b", "--end", NULL };
    struct moe_strv l;

    (void)state;
    argv_of(&l, w);
    assert_string_equal(moe_strv_flag_value(&l, "--save"), "ckpt/a"); /* the first */
    assert_string_equal(moe_strv_flag_value(&l, "--train-iters"), "10");
    assert_null(moe_strv_flag_value(&l, "--fp8"));           /* a switch */
    assert_null(moe_strv_flag_value(&l, "--save-interval")); /* followed by a flag */
    assert_null(moe_strv_flag_value(&l, "--end"));           /* nothing after it */
    assert_null(moe_strv_flag_value(&l, "--absent"));
    moe_strv_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_run_to_the_next_flag),
        cmocka_unit_test(a_flag_value_is_never_a_flag),
    };

    return MOE_RUN_TESTS(tests);
}
