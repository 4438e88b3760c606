/* The GPU table (gpu.h) as data. */
#include "config.h"

#include <stddef.h>

#include "fit/gpu.h"

MOE_ENUM_NAMES_DEFINE(MOE_GPU_LIST, MOE_GPU_COUNT, moe_gpu_names);

#define MOE_GPU_ROW(id, name, gib, per_node, domain, arch, bf16, fp8, nvlink, nic, hbm, within,  \
                    rows)                                                                   \
    [id] = { name, gib, per_node, domain, arch, bf16, fp8, nvlink, nic, hbm, within, rows },
static const struct moe_gpu_type types[] = { MOE_GPU_LIST(MOE_GPU_ROW) };
#undef MOE_GPU_ROW
_Static_assert(sizeof(types) / sizeof(types[0]) == MOE_GPU_COUNT, "one row per GPU type");

const struct moe_gpu_type *moe_gpu_type(enum moe_gpu g)
{
    return (unsigned)g < MOE_GPU_COUNT ? &types[g] : NULL;
}

const char *moe_gpu_name(enum moe_gpu g)
{
    return moe_enum_name(moe_gpu_names, MOE_GPU_COUNT, (int)g);
}

bool moe_gpu_is_hopper(enum moe_gpu g)
{
    const struct moe_gpu_type *t = moe_gpu_type(g);

    return t && t->arch == MOE_ARCH_HOPPER;
}

bool moe_gpu_is_blackwell(enum moe_gpu g)
{
    const struct moe_gpu_type *t = moe_gpu_type(g);

    return t && t->arch == MOE_ARCH_BLACKWELL;
}
