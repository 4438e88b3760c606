#include "config.h"

#include <stddef.h>

#include "core/contract_keys.h"
#include "core/json_build.h"

/* The layout's keys in the parallel section, each with its field. */
static const struct {
    const char *key;
    size_t field;
} layout_keys[] = {
    { "tp", offsetof(struct moe_layout, tp) },   { "cp", offsetof(struct moe_layout, cp) },
    { "pp", offsetof(struct moe_layout, pp) },   { "vpp", offsetof(struct moe_layout, vpp) },
    { "ep", offsetof(struct moe_layout, ep) },   { "etp", offsetof(struct moe_layout, etp) },
    { "dp", offsetof(struct moe_layout, dp) },   { "edp", offsetof(struct moe_layout, edp) },
};
#define DECLARED_KEYS 6 /* tp .. etp: dp and edp follow from them and the world size */

static int get(const struct moe_layout *l, size_t i)
{
    return *(const int *)((const char *)l + layout_keys[i].field);
}

static void set(struct moe_layout *l, size_t i, int v)
{
    *(int *)((char *)l + layout_keys[i].field) = v;
}

json_t *moe_contract_parallel(const struct moe_layout *l, const char *pipeline_layout)
{
    json_t *p = json_object();
    struct moe_jb b;

    moe_jb_init(&b, NULL);
    moe_jb_str(&b, p, "pipeline_layout", pipeline_layout);
    for (size_t i = 0; i < sizeof(layout_keys) / sizeof(layout_keys[0]); i++)
        moe_jb_int(&b, p, layout_keys[i].key, get(l, i));
    return moe_jb_done(&b, p);
}

void moe_contract_layout(const json_t *doc, struct moe_layout *l)
{
    const json_t *parallel = json_object_get(doc, MOE_CONTRACT_PARALLEL);

    *l = (struct moe_layout){ 0 };
    for (size_t i = 0; i < DECLARED_KEYS; i++) {
        const json_t *v = json_object_get(parallel, layout_keys[i].key);

        set(l, i, json_is_integer(v) ? (int)json_integer_value(v) : 1);
    }
}
