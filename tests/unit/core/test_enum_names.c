/* Every enum's names come from one table: each value's name parses back to
 * the value, the schema offers exactly those names, and a value outside the
 * enum gets "?" (or NULL where documented) instead of a read past the table. */
#include "config.h"

#include <string.h>

#include "core/enum_names.h"
#include "core/stage.h"
#include "study/study.h"
#include "study/study_internal.h"
#include "study/study_schema.h"
#include "unit.h"

struct table {
    const char *what;
    const char *const *names;
    int count;
    const char *(*name)(int);
};

/* The name functions take their own enum type; these adapters let one loop
 * run over all of them. */
#define ADAPT(fn, type)                                                                        \
    static const char *fn##_int(int v) { return fn((type)v); }
ADAPT(moe_gpu_name, enum moe_gpu)
ADAPT(moe_dialect_name, enum moe_dialect)
ADAPT(moe_dispatcher_name, enum moe_dispatcher)
ADAPT(moe_precision_name, enum moe_precision)
ADAPT(moe_profiler_name, enum moe_profiler)
ADAPT(moe_recompute_name, enum moe_recompute)
ADAPT(moe_routing_name, enum moe_routing)
ADAPT(moe_router_score_name, enum moe_router_score)
ADAPT(moe_attention_name, enum moe_attention_kind)

static const struct table tables[] = {
    { "gpu", moe_gpu_names, MOE_GPU_COUNT, moe_gpu_name_int },
    { "megatron", moe_dialect_names, MOE_DIALECT_COUNT, moe_dialect_name_int },
    { "dispatcher", moe_dispatcher_names, MOE_DISPATCHER_COUNT, moe_dispatcher_name_int },
    { "precision", moe_precision_names, MOE_PRECISION_COUNT, moe_precision_name_int },
    { "profiler", moe_profiler_names, MOE_PROFILER_COUNT, moe_profiler_name_int },
    { "recompute", moe_recompute_names, MOE_RECOMPUTE_COUNT, moe_recompute_name_int },
    { "routing", moe_routing_names, MOE_ROUTING_COUNT, moe_routing_name_int },
    { "router_score", moe_router_score_names, MOE_ROUTER_SCORE_COUNT,
      moe_router_score_name_int },
    { "attention", moe_attention_names, MOE_ATTENTION_COUNT, moe_attention_name_int },
};
#define N_TABLES (sizeof(tables) / sizeof(tables[0]))

/* name -> enum -> name for every value of every enum; the table ends right
 * after the last value. */
static void every_name_round_trips(void **state)
{
    (void)state;
    for (size_t t = 0; t < N_TABLES; t++) {
        const struct table *tb = &tables[t];
        assert_true(tb->count > 0);
        for (int v = 0; v < tb->count; v++) {
            const char *name = tb->name(v);
            assert_non_null(name);
            assert_string_not_equal(name, MOE_ENUM_UNKNOWN);
            assert_int_equal(moe_enum_parse(tb->names, name), v);
            assert_string_equal(tb->name(moe_enum_parse(tb->names, name)), name);
        }
        assert_null(tb->names[tb->count]);
    }
}

/* Pinned values: the names are part of the study format and the contract. */
static void names_are_the_documented_ones(void **state)
{
    (void)state;
    assert_string_equal(moe_gpu_name(MOE_GPU_H100), "h100");
    assert_string_equal(moe_gpu_name(MOE_GPU_GB300), "gb300");
    assert_string_equal(moe_dialect_name(MOE_DIALECT_BRIDGE_PIN), "bridge-pin");
    assert_string_equal(moe_dispatcher_name(MOE_DISPATCH_FLEX_HYBRIDEP), "flex-hybridep");
    assert_string_equal(moe_precision_name(MOE_PREC_NVFP4), "nvfp4");
    assert_string_equal(moe_recompute_name(MOE_RECOMPUTE_SELECTIVE), "selective");
    assert_string_equal(moe_routing_name(MOE_ROUTING_DROP_AND_PAD), "drop-and-pad");
    assert_string_equal(moe_profiler_name(MOE_PROFILER_PYTORCH), "pytorch");
    assert_string_equal(moe_attention_name(MOE_ATTN_MLA), "mla");
    assert_string_equal(moe_router_score_name(MOE_ROUTER_SIGMOID), "sigmoid");
}

/* Out of range, either side: "?" and no read outside the table. */
static void out_of_range_is_unknown(void **state)
{
    (void)state;
    for (size_t t = 0; t < N_TABLES; t++) {
        assert_string_equal(tables[t].name(tables[t].count), MOE_ENUM_UNKNOWN);
        assert_string_equal(tables[t].name(-1), MOE_ENUM_UNKNOWN);
        assert_string_equal(tables[t].name(1 << 20), MOE_ENUM_UNKNOWN);
    }
    assert_int_equal(moe_enum_parse(moe_gpu_names, "H100"), -1);
    assert_int_equal(moe_enum_parse(moe_gpu_names, ""), -1);
    assert_int_equal(moe_enum_parse(moe_gpu_names, NULL), -1);
    assert_null(moe_stage_name(MOE_STAGE_COUNT));
    assert_null(moe_stage_name(MOE_STAGE_NONE));
}

static const struct moe_field *field(const struct moe_field *keys, const char *key)
{
    for (; keys->key; keys++)
        if (strcmp(keys->key, key) == 0)
            return keys;
    fail_msg("no schema key %s", key);
    return NULL;
}

/* The schema's allowed values are the enum's own table, not a copy. */
static void schema_uses_the_tables(void **state)
{
    static const struct { const char *section, *key; const char *const *names; } uses[] = {
        { "model", "router_score", moe_router_score_names },
        { "model", "attention", moe_attention_names },
        { "cluster", "gpu", moe_gpu_names },
        { "workload", "precision", moe_precision_names },
        { "workload", "routing", moe_routing_names },
        { "software", "megatron", moe_dialect_names },
        { "baseline", "dispatcher", moe_dispatcher_names },
        { "baseline", "recompute", moe_recompute_names },
        { "measure", "profiler", moe_profiler_names },
        { "retune", "axes", moe_retune_axes },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(uses) / sizeof(uses[0]); i++) {
        const struct moe_field *sec = field(moe_study_schema, uses[i].section);
        assert_ptr_equal(field(sec->sub, uses[i].key)->choices, uses[i].names);
    }
}

/* The stage choices string is the stage table joined with "|". */
static void stage_choices_follow_the_table(void **state)
{
    char joined[128] = "";

    (void)state;
    for (int s = 0; s < MOE_STAGE_COUNT; s++) {
        if (s)
            strcat(joined, "|");
        strcat(joined, moe_stage_name((enum moe_stage)s));
    }
    assert_string_equal(moe_stage_choices(), joined);
    assert_string_equal(joined, "contract|fit|scale|profile|retune|validate");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_name_round_trips),
        cmocka_unit_test(names_are_the_documented_ones),
        cmocka_unit_test(out_of_range_is_unknown),
        cmocka_unit_test(schema_uses_the_tables),
        cmocka_unit_test(stage_choices_follow_the_table),
    };
    return MOE_RUN_TESTS(tests);
}
