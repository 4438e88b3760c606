#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/megatron_log.h"
#include "loop/fit_rule.h"
#include "loop/fit_rule_internal.h"

static bool ran_out_of_memory(const struct moe_fit_row *row)
{
    return moe_log_out_of_memory(row->error);
}

/* One row's say on its rung: 1 fits, 0 does not, -1 cannot say. */
static int judge_row(const struct moe_fit_row *row, double usable, char *why, size_t len)
{
    char verdict[200];

    if (ran_out_of_memory(row)) {
        /* a message: people read it, and a cut one still reads */
        snprintf(why, len, "rank %d ran out of memory", row->rank);
        return 0;
    }
    if ((row->flags & (MOE_FIT_NOT_RUN | MOE_FIT_FAILED)) || isnan(row->measured_mib)) {
        /* a message: people read it, and a cut one still reads */
        snprintf(why, len, "rank %d has no measured peak (%s)", row->rank,
                 moe_fit_row_verdict(row, verdict, sizeof(verdict)));
        return -1;
    }
    if (row->flags & (MOE_FIT_UNFILLED | MOE_FIT_COLLAPSED | MOE_FIT_NO_EVIDENCE)) {
        /* a message: people read it, and a cut one still reads */
        snprintf(why, len, "rank %d's peak cannot be trusted (%s)", row->rank,
                 moe_fit_row_verdict(row, verdict, sizeof(verdict)));
        return -1;
    }
    if (row->measured_mib > usable) {
        /* a message: people read it, and a cut one still reads */
        snprintf(why, len, "rank %d measured %.0f MiB > %.0f MiB usable", row->rank,
                 row->measured_mib, usable);
        return 0;
    }
    /* a message: people read it, and a cut one still reads */
    snprintf(why, len, "rank %d measured %.0f MiB <= %.0f MiB usable", row->rank,
             row->measured_mib, usable);
    return 1;
}

/* A rung fits when every row does; a row that does not decides it, one
 * that cannot say leaves it undecided. */
static void judge_rung(const struct moe_fit_report *r, struct moe_loop_rung *g, double usable)
{
    g->fits = 1;
    g->peak_mib = NAN;
    g->why[0] = '\0';
    for (size_t k = 0; k < g->n_rows; k++) {
        const struct moe_fit_row *row = &r->rows[g->rows[k]];
        char why[200];
        int f = judge_row(row, usable, why, sizeof(why));

        if (!isnan(row->measured_mib) && (isnan(g->peak_mib) || row->measured_mib > g->peak_mib))
            g->peak_mib = row->measured_mib;
        if (f < g->fits || !g->why[0] || (f == g->fits && f == 1))
            /* a message: people read it, and a cut one still reads */
            snprintf(g->why, sizeof(g->why), "%s", why);
        if (f < g->fits)
            g->fits = f;
    }
}

static struct moe_loop_rung *rung_of(struct moe_loop_fit *out, const char *recompute)
{
    for (size_t i = 0; i < out->n; i++)
        if (strcmp(out->rungs[i].recompute, recompute) == 0)
            return &out->rungs[i];
    if (out->n == MOE_LOOP_FIT_RUNGS_MAX)
        return NULL;
    /* fits: the fit report's recompute[160], the same size */
    snprintf(out->rungs[out->n].recompute, sizeof(out->rungs[0].recompute), "%s", recompute);
    return &out->rungs[out->n++];
}

int moe_loop_fit_decide(const struct moe_fit_report *r, double usable_mib,
                        struct moe_loop_fit *out, struct moe_error *err)
{
    memset(out, 0, sizeof(*out));
    out->chosen = -1;
    out->usable_mib = usable_mib;
    if (!r->n) {
        moe_error_set(err, "the fit stage has no run to decide on");
        return -1;
    }
    for (size_t i = 0; i < r->n; i++) {
        struct moe_loop_rung *g = rung_of(out, r->rows[i].recompute);

        if (!g || g->n_rows == sizeof(g->rows) / sizeof(g->rows[0])) {
            moe_error_set(err, "the fit stage has more rungs or ranks than its ladder (%d, 4)",
                          MOE_LOOP_FIT_RUNGS_MAX);
            return -1;
        }
        g->rows[g->n_rows++] = i;
    }
    out->none_fits = true;
    for (size_t i = 0; i < out->n; i++) {
        judge_rung(r, &out->rungs[i], usable_mib);
        if (out->chosen < 0 && out->rungs[i].fits == 1)
            out->chosen = (int)i;
        out->none_fits &= out->rungs[i].fits == 0;
    }
    return 0;
}
