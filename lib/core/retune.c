/* The retune catalogue (retune.h) as data. */
#include "config.h"

#include <stddef.h>

#include "core/retune.h"

MOE_ENUM_NAMES_DEFINE(MOE_BOTTLENECK_LIST, MOE_BOTTLENECK_COUNT, moe_bottleneck_names);
MOE_ENUM_NAMES_DEFINE(MOE_RETUNE_LIST, MOE_RETUNE_COUNT, moe_retune_axes);

#define MOE_RETUNE_ROW(id, axis, variable, bottleneck, what)                                   \
    [id] = { axis, variable, bottleneck, what },
static const struct moe_retune_entry catalogue[] = { MOE_RETUNE_LIST(MOE_RETUNE_ROW) };
#undef MOE_RETUNE_ROW
_Static_assert(sizeof(catalogue) / sizeof(catalogue[0]) == MOE_RETUNE_COUNT, "one row per axis");

const struct moe_retune_entry *moe_retune_entry(enum moe_retune_axis a)
{
    return (unsigned)a < MOE_RETUNE_COUNT ? &catalogue[a] : NULL;
}

const char *moe_bottleneck_name(enum moe_bottleneck b)
{
    return (unsigned)b < MOE_BOTTLENECK_COUNT ? moe_bottleneck_names[b] : NULL;
}

enum moe_bottleneck moe_bottleneck_parse(const char *s)
{
    int i = moe_enum_parse(moe_bottleneck_names, s);

    return i < 0 ? MOE_BOTTLENECK_COUNT : (enum moe_bottleneck)i;
}
