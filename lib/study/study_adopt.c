#include "config.h"

#include <string.h>

#include "core/contract_keys.h"
#include "fit/memory.h"
#include "study/study_adopt.h"
#include "study/study_fit.h"
#include "study/study_fit_internal.h"
#include "study/study_internal.h"

/* The schema's own name for a module: a study's lists point at static
 * names (study.h), never at a copy of what a file said. */
static const char *module_name(const char *m)
{
    for (int i = 0; moe_recompute_module_names[i]; i++)
        if (strcmp(moe_recompute_module_names[i], m) == 0)
            return moe_recompute_module_names[i];
    return NULL;
}

static int adopt_recompute(struct moe_baseline *b, const json_t *rc, struct moe_error *err)
{
    const char *g = json_string_value(json_object_get(rc, MOE_CONTRACT_GRANULARITY));
    const json_t *mods = json_object_get(rc, MOE_CONTRACT_MODULES), *m;
    struct moe_strlist list = { 0 };
    size_t i;
    int kind = -1;

    for (int k = 0; g && k < MOE_RECOMPUTE_COUNT; k++)
        if (strcmp(g, moe_recompute_name((enum moe_recompute)k)) == 0)
            kind = k;
    if (kind < 0 || !json_is_array(mods) || json_array_size(mods) > MOE_STUDY_LIST_MAX) {
        moe_error_set(err, "tuning.recompute: not a recompute moeflow writes");
        return -1;
    }
    json_array_foreach(mods, i, m) {
        const char *name = module_name(json_string_value(m) ? json_string_value(m) : "");

        if (!name) {
            moe_error_set(err, "tuning.recompute.modules[%zu]: not a module Megatron recomputes", i);
            return -1;
        }
        list.v[list.n++] = name;
    }
    b->recompute = (enum moe_recompute)kind;
    b->recompute_modules = list;
    return 0;
}

int moe_study_adopt(struct moe_study *s, const json_t *contract, struct moe_error *err)
{
    struct moe_baseline b = s->baseline;
    char why[256];

    moe_contract_layout(contract, &b.layout);
    if (adopt_recompute(&b, json_object_get(json_object_get(contract, MOE_CONTRACT_TUNING),
                                            MOE_CONTRACT_RECOMPUTE), err) < 0)
        return -1;
    if (moe_study_layout_check(s, &b.layout, s->workload.mbs, why, sizeof(why)) != MOE_RULE_OK) {
        moe_error_set(err, "parallel: the adopted layout breaks a layout rule: %s", why);
        return -1;
    }
    s->baseline = b;
    return 0;
}
