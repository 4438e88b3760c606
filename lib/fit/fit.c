/* The fit ladder.  Cheap recompute comes first because it costs a few
 * percent of step time; full recompute costs about a third; offload costs
 * host bandwidth and is the last resort. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "fit/fit_internal.h"
#include "fit/memory_internal.h"

void moe_machine_defaults(struct moe_machine *c)
{
    const struct moe_gpu_type *h100 = moe_gpu_type(MOE_GPU_H100);

    *c = (struct moe_machine){ .gpus_per_domain = h100->nvlink_domain,
                               .gpu_mem_gib = h100->memory_gib, .headroom = 0.10 };
    moe_perf_defaults(MOE_GPU_H100, MOE_IMPL_TE, &c->perf);
}

double moe_machine_usable(const struct moe_machine *c)
{
    double usable = c->gpu_mem_gib * MOE_GIB * (1 - c->headroom);

    return c->measured_ratio > 0 ? usable / c->measured_ratio : usable;
}

/* Selective modules in the order the workflow adds them: the MoE
 * activation and the norms are nearly free to recompute. */
static const enum moe_recompute_module selective_order[] = {
    MOE_RC_MOE_ACT, MOE_RC_LAYERNORM, MOE_RC_CORE_ATTN, MOE_RC_MLA_UP_PROJ,
    MOE_RC_SHARED_EXPERTS, MOE_RC_MLP, MOE_RC_MOE,
};
#define N_SELECTIVE (sizeof(selective_order) / sizeof(selective_order[0]))

/* Whether a module changes anything for this model and implementation:
 * 1 or 0, and -1 for a module this switch does not list.  No default: a
 * new MOE_RC_* gets its rule here (-Wswitch names it), never another
 * module's. */
static int module_applies(const struct moe_model *m, const struct moe_train *t,
                          enum moe_recompute_module mod)
{
    switch (mod) {
    case MOE_RC_MLA_UP_PROJ:
        return m->attention == MOE_ATTN_MLA;
    case MOE_RC_SHARED_EXPERTS:
        return m->shared_expert_ffn > 0;
    case MOE_RC_MLP:
        return m->first_dense_layers > 0 || m->num_experts == 0;
    case MOE_RC_CORE_ATTN:
        return t->impl == MOE_IMPL_LOCAL;
    case MOE_RC_MOE_ACT:
        return 1;
    case MOE_RC_LAYERNORM:
        return 1;
    case MOE_RC_MOE:
        return 1;
    }
    return -1;
}

/* Step i of the ladder applied to base: 1, 0 past the last step, -1 with
 * err for a module module_applies does not know. */
static int ladder_step(const struct moe_model *m, const struct moe_train *base, int i,
                       struct moe_train *t, struct moe_error *err)
{
    *t = *base;
    if (i == 0)
        return true;
    int k = 0;
    unsigned mods = base->recompute.granularity == MOE_RC_SELECTIVE ? base->recompute.modules : 0;
    for (size_t j = 0; j < N_SELECTIVE; j++) {
        int applies = module_applies(m, base, selective_order[j]);

        if (applies < 0) {
            moe_error_set(err, "recompute module 0x%x has no rule in the fit ladder "
                          "(lib/fit/fit.c: module_applies)", (unsigned)selective_order[j]);
            return -1;
        }
        if (!applies || (mods & selective_order[j]))
            continue;
        mods |= selective_order[j];
        if (++k == i) {
            t->recompute.granularity = MOE_RC_SELECTIVE;
            t->recompute.modules = mods;
            return true;
        }
    }
    t->recompute.granularity = MOE_RC_FULL;
    t->recompute.method = MOE_RC_UNIFORM;
    t->recompute.num_layers = 1;
    t->recompute.modules = 0;
    if (++k == i)
        return true;
    t->optimizer_offload = 1.0;
    if (++k == i)
        return true;
    t->offload_layers = m->num_layers;
    return ++k == i;
}

const char *moe_fit_step_kind(const struct moe_fit *f)
{
    if (f->train.optimizer_offload > 0 || f->train.offload_layers > 0)
        return "offload";
    switch (f->train.recompute.granularity) {
    case MOE_RC_NONE:
        return "none";
    case MOE_RC_SELECTIVE:
        return "selective";
    case MOE_RC_FULL:
        return "full";
    }
    /* No default: a new granularity gets its name above (-Wswitch names
     * it); a value outside the enum is named as such, never as a step. */
    return "unknown";
}

const char *moe_fit_describe(const struct moe_fit *f, const struct moe_machine *c, char *buf,
                             size_t len)
{
    double usable = moe_machine_usable(c);
    char mods[128];
    const char *kind = moe_fit_step_kind(f);
    char what[140];

    if (strcmp(kind, "selective") == 0)
        /* a message: cut, it still reads and names no file */
        snprintf(what, sizeof(what), "selective recompute %s",
                 moe_recompute_modules_format(f->train.recompute.modules, mods, sizeof(mods)));
    else if (strcmp(kind, "full") == 0)
        /* a message: cut, it still reads and names no file */
        snprintf(what, sizeof(what), "full recompute (uniform, %d layer)",
                 f->train.recompute.num_layers);
    else if (strcmp(kind, "offload") == 0)
        /* a message: cut, it still reads and names no file */
        snprintf(what, sizeof(what), "full recompute + %s offload",
                 f->train.offload_layers > 0 ? "optimizer and activation" : "optimizer");
    else
        /* a message: cut, it still reads and names no file */
        snprintf(what, sizeof(what), "no recompute");
    if (c->measured_ratio > 0)
        /* a message: cut, it still reads and names no file */
        snprintf(buf, len, "%s: %.1f GiB %s %.1f GiB usable (divided by the fit stage's "
                 "measured/predicted %.3f)", what, f->mem.total / MOE_GIB, f->fits ? "<=" : ">",
                 usable / MOE_GIB, c->measured_ratio);
    else
        /* a message: cut, it still reads and names no file */
        snprintf(buf, len, "%s: %.1f GiB %s %.1f GiB usable", what, f->mem.total / MOE_GIB,
                 f->fits ? "<=" : ">", usable / MOE_GIB);
    return buf;
}

int moe_fit_ladder(const struct moe_model *m, const struct moe_train *base,
                   struct moe_train *steps, int max, struct moe_error *err)
{
    int n = 0, rc = 1;

    if (base->recompute_fixed && max > 0) {
        steps[0] = *base;
        return 1;
    }
    while (n < max && (rc = ladder_step(m, base, n, &steps[n], err)) > 0)
        n++;
    return rc < 0 ? -1 : n;
}

int moe_fit_layout(const struct moe_model *m, const struct moe_layout *l,
                   const struct moe_workload *w, const struct moe_train *base,
                   const struct moe_machine *c, struct moe_fit *out, struct moe_error *err)
{
    double usable = moe_machine_usable(c);
    struct moe_train steps[MOE_FIT_MAX_STEPS];
    int n = moe_fit_ladder(m, base, steps, MOE_FIT_MAX_STEPS, err);

    memset(out, 0, sizeof(*out));
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        struct moe_memory mem;
        if (moe_memory_estimate(m, l, w, &steps[i], &mem, err) < 0)
            return -1;
        out->step = i, out->train = steps[i], out->mem = mem;
        out->fits = mem.total <= usable;
        if (out->fits)
            break;
    }
    return 0;
}
