#include "config.h"

#include "fit_evidence.h"

const struct moe_fit_row *moe_gen_take_fit_evidence(struct moe_study *s,
                                                    const struct moe_fit_report *r)
{
    const struct moe_fit_row *from, *shaped;
    double ratio = moe_fit_report_ratio(r, &from);
    enum moe_fit_shapes shapes = moe_fit_report_shapes(r, &shaped);

    if (ratio > 0)
        s->fit_memory_ratio = ratio;
    s->fit_static_shapes = shapes == MOE_FIT_SHAPES_STATIC ? 1
                           : shapes == MOE_FIT_SHAPES_VARY ? -1 : 0;
    moe_fit_shapes_text(shapes, shaped, s->fit_shapes_why, sizeof(s->fit_shapes_why));
    return ratio > 0 ? from : NULL;
}
