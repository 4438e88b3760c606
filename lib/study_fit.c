#include "config.h"

#include <stdio.h>
#include <string.h>

#include "study_fit.h"

static int recompute_plan(const struct moe_study *s, struct moe_recompute_plan *r,
                          struct moe_error *err)
{
    char modules[MOE_STUDY_LIST_MAX * (MOE_NAME_MAX + 1)] = "";

    memset(r, 0, sizeof(*r));
    r->num_layers = 1;
    if (s->baseline.recompute == MOE_RECOMPUTE_FULL)
        r->granularity = MOE_RC_FULL;
    if (s->baseline.recompute != MOE_RECOMPUTE_SELECTIVE)
        return 0;
    r->granularity = MOE_RC_SELECTIVE;
    for (int i = 0, off = 0; i < s->baseline.recompute_modules.n; i++)
        off += snprintf(modules + off, sizeof(modules) - (size_t)off, "%s%s", i ? "," : "",
                        s->baseline.recompute_modules.v[i]);
    return moe_recompute_modules_parse(modules, &r->modules, err);
}

int moe_study_fit_inputs(const struct moe_study *s, struct moe_train *t, struct moe_machine *m,
                         struct moe_error *err)
{
    moe_train_defaults(t);
    moe_machine_defaults(m);
    if (recompute_plan(s, &t->recompute, err) != 0)
        return -1;
    t->impl = s->software.transformer_engine[0] ? MOE_IMPL_TE : MOE_IMPL_LOCAL;
    t->uneven_pp = s->baseline.pipeline_layout[0] != '\0';
    m->gpus = moe_study_world_size(s);
    m->gpus_per_domain = s->cluster.nvlink_domain;
    m->gpu_mem_gib = s->cluster.gpu_memory_gib;
    return 0;
}
