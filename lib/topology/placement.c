#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/placement.h"
#include "topology/placement_internal.h"
#include "core/layout_name.h"
#include "core/text.h"

/* One notation for every reader (core/layout_name.h): the plugin's
 * --moe-layout and moeflow place read what every command prints. */
int moe_layout_parse(const char *spec, struct moe_layout *l, struct moe_error *err)
{
    return moe_layout_name_parse(spec, l, NULL, err);
}

int moe_layout_fit(struct moe_layout *l, int world, struct moe_error *err)
{
    long dense = (long)l->tp * l->cp * l->pp, moe = (long)l->etp * l->ep * l->pp;

    if (world < 1 || world % dense != 0) {
        moe_error_set(err, "tp*cp*pp = %ld does not divide the world size %d", dense, world);
        return -1;
    }
    if (world % moe != 0) {
        moe_error_set(err, "etp*ep*pp = %ld does not divide the world size %d", moe, world);
        return -1;
    }
    l->dp = (int)(world / dense);
    l->edp = (int)(world / moe);
    return 0;
}

int moe_layout_block(const struct moe_layout *l)
{
    int dense = l->tp * l->cp, moe = l->etp * l->ep;

    return dense > moe ? dense : moe;
}

int moe_placement_mode_parse(const char *s, enum moe_placement_mode *mode, struct moe_error *err)
{
    static const char *const names[] = {
        [MOE_PLACEMENT_NVLINK] = "nvlink", [MOE_PLACEMENT_STRICT] = "nvlink-strict",
        [MOE_PLACEMENT_NONE] = "none",
    };
    _Static_assert(sizeof(names) / sizeof(names[0]) == MOE_PLACEMENT_NONE + 1,
                   "one name per placement mode");

    if (moe_text_check("--moe-placement", s, err) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(s, names[i]) == 0) {
            *mode = (enum moe_placement_mode)i;
            return 0;
        }
    moe_error_set(err, "--moe-placement=%s: valid values are nvlink, nvlink-strict, none", s);
    return -1;
}

static int same_domain(const int *domain, int a, int b)
{
    /* -1 is a domain of its own: only a node with itself */
    return a == b || (domain[a] >= 0 && domain[a] == domain[b]);
}

int moe_placement_count(int nnodes, int gpn, int block, const int *order, const int *domain,
                        int *first_split)
{
    int blocks = nnodes * gpn / block, intra = 0;

    if (first_split)
        *first_split = -1;
    for (int b = 0; b < blocks; b++) {
        int lo = b * block / gpn, hi = ((b + 1) * block - 1) / gpn, ok = 1;
        int first = order ? order[lo] : lo;

        for (int q = lo + 1; q <= hi && ok; q++)
            ok = same_domain(domain, first, order ? order[q] : q);
        intra += ok;
        if (!ok && first_split && *first_split < 0)
            *first_split = b;
    }
    return intra;
}

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* A domain's nodes as a run of the sorted index: members[start .. start+n). */
struct group { int start, n, first, left; };

struct node_key { int key, node; };

static int key_cmp(const void *a, const void *b)
{
    const struct node_key *x = a, *y = b;

    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->node - y->node;
}

static int first_cmp(const void *a, const void *b)
{
    return ((const struct group *)a)->first - ((const struct group *)b)->first;
}

/* Larger leftovers first, then first appearance: deterministic. */
static int left_cmp(const void *a, const void *b)
{
    const struct group *x = a, *y = b;

    if (x->left != y->left)
        return y->left - x->left;
    return x->first - y->first;
}

/* Groups nodes by domain (a node without one is its own group), members in
 * job order, groups in order of first appearance in the job's node list.
 * O(n log n): this runs in every slurmstepd of the job. */
static int group_nodes(int nnodes, const int *domain, struct node_key *nk, int *members,
                       struct group *g)
{
    int ng = 0;

    for (int i = 0; i < nnodes; i++)
        nk[i] = (struct node_key){ domain[i] >= 0 ? domain[i] : -1 - i, i };
    qsort(nk, (size_t)nnodes, sizeof(*nk), key_cmp);
    for (int i = 0; i < nnodes; i++) {
        members[i] = nk[i].node;
        if (i == 0 || nk[i].key != nk[i - 1].key)
            g[ng++] = (struct group){ i, 0, nk[i].node, 0 };
        g[ng - 1].n++;
    }
    qsort(g, (size_t)ng, sizeof(*g), first_cmp);
    return ng;
}

/* Each domain's largest prefix that is a whole number of periods (P nodes =
 * lcm(gpn, B) ranks) goes first, so every such part starts block-aligned and
 * holds all its blocks; the leftovers follow, largest first.  When B divides
 * gpn (P = 1) or gpn divides B (a leftover holds no whole block) this reaches
 * the bound; otherwise moe_placement_count says how close it came. */
static void order_nodes(int nnodes, int gpn, int block, const int *domain, struct node_key *nk,
                        int *members, struct group *g, int *order)
{
    int period = block / gcd(gpn, block), ng = group_nodes(nnodes, domain, nk, members, g);
    int at = 0;

    for (int j = 0; j < ng; j++) {
        int whole = g[j].n / period * period;
        memcpy(order + at, members + g[j].start, (size_t)whole * sizeof(int));
        at += whole;
        g[j].left = g[j].n - whole;
    }
    qsort(g, (size_t)ng, sizeof(*g), left_cmp);
    for (int j = 0; j < ng && g[j].left; j++) {
        memcpy(order + at, members + g[j].start + g[j].n - g[j].left,
               (size_t)g[j].left * sizeof(int));
        at += g[j].left;
    }
}

static int bound(int nnodes, int gpn, int block, const struct group *g)
{
    int sum = 0;

    for (int j = 0; j < nnodes && g[j].n; j++)
        sum += g[j].n * gpn / block;
    return sum;
}

int moe_placement_plan(const struct moe_layout *l, int nnodes, int gpn, const int *domain,
                       struct moe_placement *p, struct moe_error *err)
{
    int *members = NULL, rv = -1;
    struct node_key *nk = NULL;
    struct group *g = NULL;

    memset(p, 0, sizeof(*p));
    if (nnodes < 1 || gpn < 1) {
        moe_error_set(err, "need at least one node and one GPU per node");
        return -1;
    }
    p->nnodes = nnodes;
    p->gpn = gpn;
    p->world = nnodes * gpn;
    p->block = moe_layout_block(l);
    if (p->world % p->block != 0) {
        moe_error_set(err, "block of %d ranks does not divide the world size %d", p->block,
                      p->world);
        return -1;
    }
    p->blocks = p->world / p->block;
    p->order = calloc((size_t)nnodes, sizeof(int));
    p->pos = calloc((size_t)nnodes, sizeof(int));
    members = calloc((size_t)nnodes, sizeof(int));
    nk = calloc((size_t)nnodes, sizeof(*nk));
    g = calloc((size_t)nnodes + 1, sizeof(*g));
    if (!p->order || !p->pos || !members || !nk || !g) {
        moe_placement_free(p);
        moe_error_set(err, "out of memory");
        goto out;
    }
    order_nodes(nnodes, gpn, p->block, domain, nk, members, g, p->order);
    p->bound = bound(nnodes, gpn, p->block, g);
    for (int q = 0; q < nnodes; q++)
        p->pos[p->order[q]] = q;
    p->intra = moe_placement_count(nnodes, gpn, p->block, p->order, domain, &p->first_split);
    rv = 0;
out:
    free(members);
    free(nk);
    free(g);
    return rv;
}

void moe_placement_free(struct moe_placement *p)
{
    free(p->order);
    free(p->pos);
    memset(p, 0, sizeof(*p));
}
