#include "config.h"

#include <string.h>

#include "core/stage.h"

static const char *const stage_names[MOE_STAGE_COUNT] = {
    "contract", "fit", "scale", "profile", "retune", "validate",
};

enum moe_stage moe_stage_parse(const char *name)
{
    if (!name)
        return MOE_STAGE_NONE;
    for (int i = 0; i < MOE_STAGE_COUNT; i++)
        if (strcmp(name, stage_names[i]) == 0)
            return (enum moe_stage)i;
    return MOE_STAGE_NONE;
}

const char *moe_stage_name(enum moe_stage stage)
{
    if (stage < 0 || stage >= MOE_STAGE_COUNT)
        return NULL;
    return stage_names[stage];
}

const char *moe_stage_choices(void)
{
    return "contract|fit|scale|profile|retune|validate";
}
