/* Static shapes from the fit stage's routing evidence (issue 41).
 *
 * Megatron pads each expert's input to its capacity under drop-and-pad
 * (--moe-pad-expert-input-to-capacity; core 0.19 token_dispatcher.py:511-534
 * knows every split from the capacity and returns before the host syncs of
 * 546-599), so every all-to-all dispatch of a run receives the same number
 * of rows.  fit-python/ counts them (rows_min, rows_max): a run whose count
 * moved did not route with static shapes, and a full-iteration CUDA graph
 * of it would replay one captured shape for all of them. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "analysis/fit_report.h"
#include "analysis/fit_report_internal.h"

/* What a run's evidence can say about shapes: only a sound, filled
 * drop-and-pad run that made an all-to-all dispatch. */
static bool speaks_for_shapes(const struct moe_fit_row *row)
{
    const unsigned unsound = MOE_FIT_NOT_RUN | MOE_FIT_FAILED | MOE_FIT_NO_EVIDENCE |
                             MOE_FIT_UNFILLED | MOE_FIT_STALE_RC;

    return strcmp(row->routing, "drop-and-pad") == 0 && !(row->flags & unsound) &&
           row->ev.seen && row->ev.dispatch_calls > 0;
}

bool moe_fit_row_shapes_vary(const struct moe_fit_row *row)
{
    return speaks_for_shapes(row) && row->ev.rows_min != row->ev.rows_max;
}

enum moe_fit_shapes moe_fit_report_shapes(const struct moe_fit_report *r,
                                          const struct moe_fit_row **from)
{
    enum moe_fit_shapes s = MOE_FIT_SHAPES_UNKNOWN;

    if (from)
        *from = NULL;
    for (size_t i = 0; i < r->n; i++) {
        const struct moe_fit_row *row = &r->rows[i];

        if (!speaks_for_shapes(row))
            continue;
        if (moe_fit_row_shapes_vary(row)) {
            if (from)
                *from = row;
            return MOE_FIT_SHAPES_VARY;
        }
        if (s == MOE_FIT_SHAPES_UNKNOWN && from)
            *from = row;
        s = MOE_FIT_SHAPES_STATIC;
    }
    return s;
}

const char *moe_fit_shapes_text(enum moe_fit_shapes s, const struct moe_fit_row *from, char *buf,
                                size_t len)
{
    if (s == MOE_FIT_SHAPES_VARY && from)
        /* a message for people (buf: the caller's): cut, it still says it */
        snprintf(buf, len, "not static: fit candidate %s (rank %d), drop-and-pad, received "
                 "%ld to %ld rows per all-to-all dispatch in %ld dispatches",
                 from->label, from->rank, from->ev.rows_min, from->ev.rows_max,
                 from->ev.dispatch_calls);
    else if (s == MOE_FIT_SHAPES_STATIC && from)
        /* a message for people (buf: the caller's): cut, it still says it */
        snprintf(buf, len, "static: every drop-and-pad run received the same rows on each "
                 "all-to-all dispatch (%ld rows, %ld dispatches of fit candidate %s)",
                 from->ev.rows_max, from->ev.dispatch_calls, from->label);
    else
        /* a message for people (buf: the caller's) */
        snprintf(buf, len, "unknown: no sound drop-and-pad run with an all-to-all dispatch "
                 "(EP 1, dropless routing, or none run yet)");
    return buf;
}
