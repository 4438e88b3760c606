#include "config.h"

#include <stdio.h>
#include <string.h>

#include "fit/fit_where.h"

/* The smallest fitting layout on gpus GPUs: 1 found, 0 none, -1 err. */
static int fits_on(const struct moe_model *m, const struct moe_workload *w,
                   const struct moe_train *t, const struct moe_machine *c, int gpus,
                   struct moe_fit_where *out, struct moe_error *err)
{
    struct moe_machine here = *c;
    struct moe_layout_set s;
    const struct moe_layout_entry *e;
    struct moe_fit f;

    here.gpus = gpus;
    here.fixed_pp = here.fixed_vpp = 0;
    if (moe_layouts_enumerate(m, w, t, &here, 0, false, &s, err) < 0)
        return -1;
    if ((e = moe_layouts_smallest_fit(&s))) {
        moe_layout_entry_fit(&s, e, &f);
        *out = (struct moe_fit_where){ .found = true, .gpus = gpus, .layout = e->layout,
                                       .peak_gib = e->mem.total / MOE_GIB,
                                       .settings = moe_fit_step_kind(&f) };
    }
    moe_layout_set_free(&s);
    return e != NULL;
}

int moe_fit_where(const struct moe_model *m, const struct moe_workload *w,
                  const struct moe_train *t, const struct moe_machine *c, int gpus_per_node,
                  struct moe_fit_where *out, struct moe_error *err)
{
    int step = gpus_per_node > 0 && c->gpus % gpus_per_node == 0 ? gpus_per_node : 1;

    memset(out, 0, sizeof(*out));
    for (long factor = 1; factor <= MOE_FIT_WHERE_MAX_FACTOR; factor *= 2) {
        long gpus = (long)c->gpus * factor;
        int rc;

        if (gpus % step != 0 || gpus > 1L << 20)
            break;
        if ((rc = fits_on(m, w, t, c, (int)gpus, out, err)) != 0)
            return rc < 0 ? -1 : 0;
    }
    return 0;
}

const char *moe_fit_where_text(const struct moe_fit_where *wh, const struct moe_machine *c,
                               int gpus_per_node, char *buf, size_t len)
{
    char a[96], b[96], nodes[48] = "";

    if (!wh->found) {
        /* a message: cut, it still reads and names no file */
        snprintf(buf, len, "no layout fits on %d GPUs, nor on up to %d times as many: add "
                 "GPUs with more memory", c->gpus, MOE_FIT_WHERE_MAX_FACTOR);
        return buf;
    }
    if (gpus_per_node > 0 && wh->gpus % gpus_per_node == 0)
        /* a message: cut, it still reads and names no file */
        snprintf(nodes, sizeof(nodes), " (%d node%s)", wh->gpus / gpus_per_node,
                 wh->gpus == gpus_per_node ? "" : "s");
    moe_layout_format_attention(&wh->layout, a, sizeof(a));
    moe_layout_format_moe(&wh->layout, b, sizeof(b));
    if (wh->gpus == c->gpus)
        /* a message: cut, it still reads and names no file */
        snprintf(buf, len, "the smallest layout that fits on these %d GPUs is %s %s VPP %d "
                 "(%.1f GiB per GPU, fit step: %s)", c->gpus, a, b, wh->layout.vpp,
                 wh->peak_gib, wh->settings);
    else
        /* a message: cut, it still reads and names no file */
        snprintf(buf, len, "no layout fits on %d GPUs; the smallest GPU count tried (2x, 4x, "
                 "...) with one that does is %d%s: %s %s VPP %d (%.1f GiB per GPU, fit step: "
                 "%s)", c->gpus, wh->gpus, nodes, a, b, wh->layout.vpp, wh->peak_gib,
                 wh->settings);
    return buf;
}
