#include "config.h"

#include <stddef.h>
#include <string.h>

#include "core/enum_names.h"
#include "core/model.h"

/* model.h is plain data with no source file of its own: its tables live here. */
MOE_ENUM_NAMES_DEFINE(MOE_ROUTER_SCORE_LIST, MOE_ROUTER_SCORE_COUNT, moe_router_score_names);
MOE_ENUM_NAMES_DEFINE(MOE_ATTENTION_LIST, MOE_ATTENTION_COUNT, moe_attention_names);
MOE_ENUM_NAMES_DEFINE(MOE_ROUTING_LIST, MOE_ROUTING_COUNT, moe_routing_names);

int moe_enum_parse(const char *const *names, const char *s)
{
    for (int i = 0; s && names[i]; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

const char *moe_enum_name(const char *const *names, int count, int v)
{
    return v >= 0 && v < count ? names[v] : MOE_ENUM_UNKNOWN;
}
