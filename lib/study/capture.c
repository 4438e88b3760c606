/* The declared side of the contract stage's comparison.  Megatron is
 * declared as a dialect; what a dialect means as a measured version lives
 * here, beside the names the declared contract gives it (study_contract.c). */
#include "config.h"

#include "core/json_build.h"
#include "study/capture.h"
#include "study/capture_internal.h"
#include "study/study_internal.h"

struct dialect_expect {
    const char *version;    /* megatron.core.package_info major.minor */
    const char *commit;     /* a commit prefix, or NULL */
};

/* bridge-pin is the Megatron-LM commit Megatron-Bridge pins; its
 * package_info says 0.20.0, which is all a tree without .git can show.
 * NULL for a value outside the enum: no dialect stands in for another. */
static const struct dialect_expect *expect(enum moe_dialect d)
{
    static const struct dialect_expect e[] = {
        [MOE_DIALECT_CORE_0_16] = { "0.16", NULL },
        [MOE_DIALECT_CORE_0_19] = { "0.19", NULL },
        [MOE_DIALECT_BRIDGE_PIN] = { "0.20", "2a75ac12" },
    };
    _Static_assert(sizeof(e) / sizeof(e[0]) == MOE_DIALECT_COUNT, "one expectation per dialect");

    return (unsigned)d < MOE_DIALECT_COUNT && e[d].version ? &e[d] : NULL;
}

static void add(struct moe_jb *b, json_t *argv, const char *key, const char *value)
{
    moe_jb_append(b, argv, json_string(key));
    moe_jb_append(b, argv, value ? json_string(value) : NULL);
}

json_t *moe_capture_argv(const struct moe_study *s, const struct moe_launcher *l,
                         struct moe_error *err)
{
    const struct moe_software *sw = &s->software;
    const struct dialect_expect *e = expect(sw->dialect);
    json_t *argv = json_array();
    struct moe_jb b;

    if (!e) {
        json_decref(argv);
        moe_error_set(err, "capture arguments: software.megatron: no expected version for "
                           "dialect %d", (int)sw->dialect);
        return NULL;
    }
    moe_jb_init(&b, err);
    add(&b, argv, "--entry", l->entry ? l->entry : "");
    add(&b, argv, "--megatron", moe_dialect_name(sw->dialect));
    add(&b, argv, "--megatron-version", e->version);
    if (e->commit)
        add(&b, argv, "--megatron-commit", e->commit);
    add(&b, argv, "--transformer-engine", sw->transformer_engine);
    add(&b, argv, "--apex", sw->apex ? "true" : "false");
    add(&b, argv, "--deepep", sw->deepep ? "true" : "false");
    add(&b, argv, "--hybridep", sw->hybridep ? "true" : "false");
    moe_jb_within(&b, "capture_argv");
    return moe_jb_done(&b, argv);
}
