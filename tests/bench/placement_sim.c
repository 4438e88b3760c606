/* Placement simulator: 18 NVL72 racks x 18 nodes x 4 GPUs, random
 * fragmented allocations of 8-128 nodes, several layouts.  Reports the
 * fraction of TP/EP blocks inside one rack for Slurm's node order, for
 * moeflow, and for the upper bound; moeflow must equal the bound in every
 * trial.  Then times planning for 1024 nodes (limit: 1 ms). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topology/placement.h"
#include "topology/placement_internal.h"
#include "bench.h"

enum { RACKS = 18, PER_RACK = 18, GPN = 4, NODES = RACKS * PER_RACK, TRIALS = 1000 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* splitmix64: a fixed seed, so every run draws the same allocations */
static uint64_t next(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* n distinct nodes out of the cluster, in Slurm's (index) order. */
static void draw(int n, int *domain)
{
    static int pick[NODES];
    int k = 0;

    for (int i = 0; i < NODES; i++)
        pick[i] = i;
    for (int i = 0; i < n; i++) { /* partial Fisher-Yates */
        int j = i + (int)(next() % (uint64_t)(NODES - i)), t = pick[i];
        pick[i] = pick[j];
        pick[j] = t;
    }
    for (int i = 0; i < NODES; i++)
        pick[i] = i < n ? pick[i] : NODES;
    /* sort the chosen ids (counting: they are < NODES) */
    static char chosen[NODES];
    memset(chosen, 0, sizeof(chosen));
    for (int i = 0; i < n; i++)
        chosen[pick[i]] = 1;
    for (int i = 0; i < NODES; i++)
        if (chosen[i])
            domain[k++] = i / PER_RACK;
}

static int gcd(int a, int b)
{
    return b ? gcd(b, a % b) : a;
}

static int lcm(int a, int b)
{
    return a / gcd(a, b) * b;
}


/* informational: neither B nor gpn divides the other, so the bound is not
 * always reachable (see the unit test bound_unreachable) */
static int run_layout(const char *spec, int must_reach)
{
    struct moe_layout l;
    struct moe_error err;
    long slurm = 0, ours = 0, bound = 0, total = 0;
    int misses = 0, dom[NODES];

    moe_error_clear(&err);
    if (moe_layout_parse(spec, &l, &err) != 0)
        return fprintf(stderr, "%s: %s\n", spec, err.text), 1;
    for (int t = 0; t < TRIALS; t++) {
        /* the smallest node count whose world size the layout divides */
        int unit = lcm(l.tp * l.cp * l.pp, l.etp * l.ep * l.pp), step = unit / gcd(unit, GPN);
        int n = 8 + (int)(next() % 121); /* 8..128 nodes */
        struct moe_placement p;

        n = n / step * step;
        if (n < step)
            n = step;
        draw(n, dom);
        if (moe_layout_fit(&l, n * GPN, &err) != 0 || moe_placement_plan(&l, n, GPN, dom, &p, &err))
            return fprintf(stderr, "%s, %d nodes: %s\n", spec, n, err.text), 1;
        slurm += moe_placement_count(n, GPN, p.block, NULL, dom, NULL);
        ours += p.intra;
        bound += p.bound;
        total += p.blocks;
        misses += p.intra != p.bound;
        moe_placement_free(&p);
    }
    printf("%-22s B=%-3d %8.1f%% %8.1f%% %8.1f%%   %d\n", spec, moe_layout_block(&l),
           100.0 * (double)slurm / (double)total, 100.0 * (double)ours / (double)total,
           100.0 * (double)bound / (double)total, misses);
    return must_reach && misses != 0;
}

/* 1024 nodes out of 57 racks of 18, layout B = 32. */
static double time_1024(void)
{
    enum { N = 1024, REPS = 101 };
    static int dom[N];
    double ms[REPS];
    struct moe_layout l;
    struct moe_error err;

    moe_layout_parse("tp=4,ep=32,etp=1", &l, &err);
    moe_layout_fit(&l, N * GPN, &err);
    for (int i = 0; i < N; i++)
        dom[i] = (int)((i * 7919) % (57 * 18)) / 18;
    for (int r = 0; r < REPS; r++) {
        struct moe_placement p;
        double t0 = bench_now_ms(CLOCK_MONOTONIC);
        moe_placement_plan(&l, N, GPN, dom, &p, &err);
        ms[r] = bench_now_ms(CLOCK_MONOTONIC) - t0;
        moe_placement_free(&p);
    }
    return bench_median(ms, REPS);
}

int main(void)
{
    static const char *const layouts[] = {
        "tp=4,ep=8,etp=1", "tp=2,ep=16,etp=1", "tp=8,cp=2", "tp=4,ep=32,etp=1",
        "ep=64,etp=1",     "tp=2,ep=8,pp=4",  "tp=4,cp=3,ep=8,etp=1",
    };
    int bad = 0;
    double ms;

    printf("placement: %d racks x %d nodes x %d GPUs, %d random allocations of 8-128 nodes\n",
           RACKS, PER_RACK, GPN, TRIALS);
    printf("%-22s %-5s %9s %9s %9s   %s\n", "layout", "block", "slurm", "moeflow", "bound",
           "trials below bound");
    for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
        bad |= run_layout(layouts[i], 1);
    printf("B and gpn not dividing each other (the bound is not always reachable):\n");
    run_layout("tp=2,cp=3,etp=1", 0);
    ms = time_1024();
    printf("planning 1024 nodes: median %.3f ms (limit 1 ms)\n", ms);
    return bad || ms >= 1.0;
}
