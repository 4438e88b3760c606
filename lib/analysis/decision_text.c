#include "config.h"

#include <string.h>

#include "analysis/decision_text.h"

static const char *field(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));

    return s ? s : "?";
}

json_t *moe_decision_said(const json_t *d)
{
    const json_t *c = json_object_get(d, "chose");
    const char *stage = json_string_value(json_object_get(d, "stage"));

    if (stage && strcmp(stage, "retune") == 0)
        return json_sprintf("%zu winner%s", json_array_size(c),
                            json_array_size(c) == 1 ? "" : "s");
    if (json_object_get(c, "layout"))
        return json_sprintf("layout %s", field(c, "layout"));
    if (json_object_get(c, "recompute"))
        return json_sprintf("recompute %s", field(c, "recompute"));
    if (json_object_get(c, "bottleneck"))
        return json_sprintf("retune for %s", field(c, "bottleneck"));
    return json_sprintf("nothing: %s", field(c, "why"));
}
