/* Orthogonal rank groups: a group varies the named dimensions and holds
 * the others fixed.  Members and groups both count the first dimension
 * fastest, which is Megatron's order. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "fit/rankgroups.h"

static int in_tokens(const char *tokens, const char *dim)
{
    size_t n = strlen(dim);

    for (const char *p = tokens; (p = strstr(p, dim)) != NULL; p += n)
        if ((p == tokens || p[-1] == '-') && (p[n] == '\0' || p[n] == '-'))
            return 1;
    return 0;
}

/* The groups of one kind: tokens is e.g. "tp-pp"; dims/sizes describe the
 * rank order.  groups receives world ranks, grouped; returns group size. */
static int rank_groups(const char *const *dims, const int *sizes, int ndims, const char *tokens,
                       int *groups, int world)
{
    int stride[8], masked[8], gsize = 1, k = 0;

    if (ndims > 8)
        return -1;
    for (int d = 0, s = 1; d < ndims; d++) {
        stride[d] = s;
        s *= sizes[d];
        masked[d] = in_tokens(tokens, dims[d]);
        if (masked[d])
            gsize *= sizes[d];
    }
    for (int g = 0; g < world / gsize; g++) {
        for (int i = 0; i < gsize; i++) {
            int rank = 0, gi = g, mi = i;
            for (int d = 0; d < ndims; d++) {
                int *ix = masked[d] ? &mi : &gi;
                rank += (*ix % sizes[d]) * stride[d];
                *ix /= sizes[d];
            }
            groups[k++] = rank;
        }
    }
    return gsize;
}

static int append_groups(char *buf, size_t len, size_t *used, const char *label,
                         const char *const *dims, const int *sizes, int ndims,
                         const char *tokens, int world)
{
    int groups[4096];
    int gs;

    if (world > 4096)
        return -1;
    gs = rank_groups(dims, sizes, ndims, tokens, groups, world);
    if (gs < 1)
        return -1;
    int n = snprintf(buf + *used, len - *used, "%s %s [", label, tokens);
    for (int i = 0; i < world && n >= 0 && (size_t)n < len - *used; i++) {
        int w = snprintf(buf + *used + n, len - *used - n, "%s%s%d%s",
                         i % gs == 0 ? (i ? ", [" : "[") : "", i % gs ? ", " : "", groups[i],
                         i % gs == gs - 1 ? "]" : "");
        if (w < 0)
            return -1;
        n += w;
    }
    if (n < 0 || (size_t)n + 2 >= len - *used)
        return -1;
    n += snprintf(buf + *used + n, len - *used - n, "]\n");
    *used += (size_t)n;
    return 0;
}

int moe_rank_groups_format(const struct moe_layout *l, int world, char *buf, size_t len)
{
    static const char *const ddims[] = { "tp", "cp", "dp", "pp" };
    static const char *const edims[] = { "tp", "ep", "dp", "pp" };
    static const char *const dense[] = { "tp", "cp", "dp", "pp", "dp-cp", "tp-pp" };
    static const char *const expert[] = { "tp", "ep", "dp", "pp", "tp-ep" };
    int dsz[] = { l->tp, l->cp, l->dp, l->pp }, esz[] = { l->etp, l->ep, l->edp, l->pp };
    size_t used = 0;

    if ((long)l->tp * l->cp * l->dp * l->pp != world ||
        (long)l->etp * l->ep * l->edp * l->pp != world)
        return -1;
    int n = snprintf(buf, len, "world=%d TP=%d CP=%d PP=%d DP=%d | ETP=%d EP=%d EDP=%d\n",
                     world, l->tp, l->cp, l->pp, l->dp, l->etp, l->ep, l->edp);
    if (n < 0 || (size_t)n >= len)
        return -1;
    used = (size_t)n;
    for (size_t i = 0; i < sizeof(dense) / sizeof(dense[0]); i++)
        if (append_groups(buf, len, &used, "dense", ddims, dsz, 4, dense[i], world) < 0)
            return -1;
    for (size_t i = 0; i < sizeof(expert) / sizeof(expert[0]); i++)
        if (append_groups(buf, len, &used, "expert", edims, esz, 4, expert[i], world) < 0)
            return -1;
    return (int)used;
}
