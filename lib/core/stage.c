#include "config.h"

#include <string.h>

#include "core/stage.h"

static const char *const stage_names[] = { MOE_STAGE_LIST(MOE_ENUM_NAME) NULL };
MOE_ENUM_NAMES_CHECK(stage_names, MOE_STAGE_COUNT);

enum moe_stage moe_stage_parse(const char *name)
{
    int i = moe_enum_parse(stage_names, name);

    return i < 0 ? MOE_STAGE_NONE : (enum moe_stage)i;
}

const char *moe_stage_name(enum moe_stage stage)
{
    if (stage < 0 || stage >= MOE_STAGE_COUNT)
        return NULL;
    return stage_names[stage];
}

const char *moe_stage_choices(void)
{
#define PIPE_NAME(id, name) "|" name
    /* The list joined at compile time; + 1 skips the leading "|". */
    return MOE_STAGE_LIST(PIPE_NAME) + 1;
#undef PIPE_NAME
}
