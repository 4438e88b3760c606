/* The declared side of the contract stage's comparison.  Megatron is
 * declared as a dialect; what a dialect means as a measured version lives
 * here, beside the names the declared contract gives it (study_contract.c). */
#include "config.h"

#include "study/capture.h"
#include "study/capture_internal.h"
#include "study/study_internal.h"

struct dialect_expect {
    const char *version;    /* megatron.core.package_info major.minor */
    const char *commit;     /* a commit prefix, or NULL */
};

/* bridge-pin is the Megatron-LM commit Megatron-Bridge pins; its
 * package_info says 0.20.0, which is all a tree without .git can show. */
static const struct dialect_expect *expect(enum moe_dialect d)
{
    static const struct dialect_expect e[] = {
        [MOE_DIALECT_CORE_0_16] = { "0.16", NULL },
        [MOE_DIALECT_CORE_0_19] = { "0.19", NULL },
        [MOE_DIALECT_BRIDGE_PIN] = { "0.20", "2a75ac12" },
    };
    _Static_assert(sizeof(e) / sizeof(e[0]) == MOE_DIALECT_COUNT, "one expectation per dialect");

    return (unsigned)d < MOE_DIALECT_COUNT ? &e[d] : &e[MOE_DIALECT_CORE_0_19];
}

static void add(json_t *argv, const char *key, const char *value)
{
    json_array_append_new(argv, json_string(key));
    json_array_append_new(argv, json_string(value));
}

json_t *moe_capture_argv(const struct moe_study *s, const struct moe_launcher *l)
{
    const struct moe_software *sw = &s->software;
    const struct dialect_expect *e = expect(sw->dialect);
    json_t *argv = json_array();

    add(argv, "--entry", l->entry ? l->entry : "");
    add(argv, "--megatron", moe_dialect_name(sw->dialect));
    add(argv, "--megatron-version", e->version);
    if (e->commit)
        add(argv, "--megatron-commit", e->commit);
    add(argv, "--transformer-engine", sw->transformer_engine);
    add(argv, "--apex", sw->apex ? "true" : "false");
    add(argv, "--deepep", sw->deepep ? "true" : "false");
    add(argv, "--hybridep", sw->hybridep ? "true" : "false");
    return argv;
}
