/* NVLink-domain maps, layout strings and rank placement, on hand-worked cases. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "topology/domains.h"
#include "topology/hostlist.h"
#include "topology/placement.h"
#include "topology/placement_internal.h"
#include "unit.h"

static void *hl_create(const char *e) { return slurm_hostlist_create(e); }
static char *hl_shift(void *hl) { return slurm_hostlist_shift(hl); }
static void hl_destroy(void *hl) { slurm_hostlist_destroy(hl); }

static const char *data(const char *name)
{
    static char path[4096];
    const char *src = getenv("MOEFLOW_SRCDIR");

    snprintf(path, sizeof(path), "%s/tests/data/domains/%s", src ? src : "..", name);
    return path;
}

static struct moe_layout layout(const char *spec, int world)
{
    struct moe_layout l;
    struct moe_error err;

    moe_error_clear(&err);
    assert_int_equal(moe_layout_parse(spec, &l, &err), 0);
    assert_int_equal(moe_layout_fit(&l, world, &err), 0);
    return l;
}

/* The YAML map: hostlists expand, per-domain gpus_per_node overrides the default. */
static void yaml_map(void **state)
{
    struct moe_domains d;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_domains_load(&d, data("two-racks.yaml"), &err), 0);
    assert_int_equal(d.ndomains, 2);
    assert_int_equal(d.nnodes, 4);
    assert_string_equal(d.domains[0].name, "rack-a");
    assert_int_equal(d.domains[0].gpus_per_node, 4);
    assert_int_equal(d.domains[1].gpus_per_node, 8);
    assert_int_equal(moe_domains_find(&d, "n1"), 0);
    assert_int_equal(moe_domains_find(&d, "n2"), 1);
    assert_int_equal(moe_domains_find(&d, "n3"), 0);
    assert_int_equal(moe_domains_find(&d, "n4"), 1);
    assert_int_equal(moe_domains_find(&d, "n5"), -1);
    moe_domains_free(&d);
}

/* Slurm's topology.conf: one domain per BlockName=, keys case-insensitive. */
static void slurm_blocks(void **state)
{
    struct moe_domains d;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_domains_load(&d, data("nvl72.topology.conf"), &err), 0);
    assert_int_equal(d.ndomains, 3);
    assert_int_equal(d.nnodes, 54);
    assert_int_equal(moe_domains_find(&d, "gb001"), 0);
    assert_int_equal(moe_domains_find(&d, "gb018"), 0);
    assert_int_equal(moe_domains_find(&d, "gb019"), 1);
    assert_int_equal(moe_domains_find(&d, "gb054"), 2);
    assert_int_equal(moe_domains_find(&d, "gb055"), -1);
    assert_string_equal(d.domains[2].name, "rack03");
    moe_domains_free(&d);
}

/* Each broken map is refused with file, line and column and the reason. */
static void bad_maps(void **state)
{
    struct moe_domains d;
    struct moe_error err;
    char buf[1024];

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_domains_load(&d, data("bad-key.yaml"), &err), -1);
    assert_int_equal(err.line, 4);
    assert_int_equal(err.column, 5);
    assert_non_null(strstr(err.text, "unknown key 'gpu_per_node'"));
    assert_int_equal(moe_domains_load(&d, data("bad-twice.yaml"), &err), -1);
    assert_non_null(strstr(err.text, "node n4 is in domains 'rack-a' and 'rack-b'"));
    assert_int_equal(moe_domains_load(&d, data("bad-gpus.yaml"), &err), -1);
    moe_error_format(&err, buf, sizeof(buf));
    assert_non_null(strstr(buf, "bad-gpus.yaml:1:16: gpus_per_node: expected a GPU count"));
    assert_int_equal(moe_domains_load(&d, data("tree.topology.conf"), &err), -1);
    assert_non_null(strstr(err.text, "no BlockName= line"));
    assert_int_equal(moe_domains_load(&d, data("missing.yaml"), &err), -1);
}

static const char *write_tmp(const char *name, const char *text)
{
    static char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/moeflow-test-placement-%ld-%s",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid(), name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Issue 21: each hostlist may name 65,536 hosts, and so may the map as a
 * whole.  A YAML alias repeating one wide expression (7 kB for 200 copies:
 * 1 GB and 7 s), or topology.conf repeating one line, stops at the bound. */
static void map_nodes_bounded_in_all(void **state)
{
    char *text = malloc(1 << 16), *p = text;
    const char *path;
    struct moe_domains d;
    struct moe_error err;
    char buf[1024];

    (void)state;
    p += sprintf(p, "domains:\n  - {name: x0, nodes: &n \"n[00000-65535]\"}\n");
    for (int i = 1; i <= 200; i++)
        p += sprintf(p, "  - {name: x%d, nodes: *n}\n", i);
    path = write_tmp("alias.yaml", text);
    moe_error_clear(&err);
    assert_int_equal(moe_domains_load(&d, path, &err), -1);
    assert_non_null(strstr(moe_error_format(&err, buf, sizeof(buf)),
                           "alias.yaml:3:5: domain 'x1': the map names more than 65536 nodes"));
    unlink(path);
    path = write_tmp("repeat.conf", "BlockName=b1 Nodes=n[00000-65535]\n"
                                    "BlockName=b2 Nodes=n[00000-65535]\n");
    assert_int_equal(moe_domains_load(&d, path, &err), -1);
    assert_non_null(strstr(moe_error_format(&err, buf, sizeof(buf)),
                           "repeat.conf:2: domain 'b2': the map names more than 65536 nodes"));
    unlink(path);
    free(text);
}

/* 65,536 one-node domains (every node its own NVLink domain) load, and a
 * name given twice is still found, at the first repeat in file order, with
 * its line and column (the check once compared every domain with all
 * before it: 9 s here). */
static void many_domains_and_repeated_names(void **state)
{
    char *text = malloc(64 << 20), *p = text;
    const char *path;
    struct moe_domains d;
    struct moe_error err;
    char buf[1024];

    (void)state;
    p += sprintf(p, "domains:\n");
    for (int i = 0; i < 65536; i++)
        p += sprintf(p, "  - {name: d%d, nodes: n%d}\n", i, i);
    path = write_tmp("many.yaml", text);
    moe_error_clear(&err);
    assert_int_equal(moe_domains_load(&d, path, &err), 0);
    assert_int_equal(d.ndomains, 65536);
    assert_int_equal(moe_domains_find(&d, "n65535"), 65535);
    moe_domains_free(&d);
    path = write_tmp("twice.yaml", "domains:\n  - {name: a, nodes: n1}\n  - {name: b, nodes: n2}\n"
                                   "  - {name: b, nodes: n3}\n  - {name: a, nodes: n4}\n");
    assert_int_equal(moe_domains_load(&d, path, &err), -1);
    assert_non_null(strstr(moe_error_format(&err, buf, sizeof(buf)),
                           "twice.yaml:4:5: domain 'b' is declared twice (first at line 3)"));
    unlink(path);
    free(text);
}

/* The map's arrays grow by doubling, not by one domain at a time: 1000
 * domains of one node and 1000 of three leave capacities that are powers
 * of two (one-at-a-time growth leaves exactly 1000 and 4000), so a
 * 65,536-domain map costs 14 copies, not 65,536 (12 CPU-minutes under the
 * sanitizers once). */
static void map_grows_geometrically(void **state)
{
    char *text = malloc(1 << 20), *p = text;
    const char *path;
    struct moe_domains d;
    struct moe_error err;

    (void)state;
    p += sprintf(p, "domains:\n");
    for (int i = 0; i < 1000; i++)
        p += sprintf(p, "  - {name: d%d, nodes: n%d}\n", i, i);
    for (int i = 0; i < 1000; i++)
        p += sprintf(p, "  - {name: t%d, nodes: 't%d-[1-3]'}\n", i, i);
    path = write_tmp("grow.yaml", text);
    moe_error_clear(&err);
    assert_int_equal(moe_domains_load(&d, path, &err), 0);
    assert_int_equal(d.ndomains, 2000);
    assert_int_equal(d.nnodes, 4000);
    assert_int_equal(d.domains_cap, 2048);
    assert_int_equal(d.nodes_cap, 4096);
    assert_int_equal(moe_domains_find(&d, "t999-3"), 1999);
    moe_domains_free(&d);
    unlink(path);
    free(text);
}

/* The shipped example map loads and says what its comments say. */
static void example_map(void **state)
{
    char path[4096];
    const char *src = getenv("MOEFLOW_SRCDIR");
    struct moe_domains d;
    struct moe_error err;
    int hgx;

    (void)state;
    moe_error_clear(&err);
    snprintf(path, sizeof(path), "%s/etc/moeflow-topology.yaml", src ? src : "..");
    assert_int_equal(moe_domains_load(&d, path, &err), 0);
    assert_int_equal(d.nnodes, 18 + 18 + 2);
    assert_string_equal(d.domains[moe_domains_find(&d, "gb018")].name, "rack01");
    assert_string_equal(d.domains[moe_domains_find(&d, "gb019")].name, "rack02");
    hgx = moe_domains_find(&d, "hgx02");
    assert_int_equal(d.domains[hgx].gpus_per_node, 8);
    assert_int_equal(d.domains[0].gpus_per_node, 4);
    moe_domains_free(&d);
}

/* --moe-placement values are exact words. */
static void placement_modes(void **state)
{
    enum moe_placement_mode m;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_placement_mode_parse("nvlink-strict", &m, &err), 0);
    assert_int_equal(m, MOE_PLACEMENT_STRICT);
    assert_int_equal(moe_placement_mode_parse("none", &m, &err), 0);
    assert_int_equal(m, MOE_PLACEMENT_NONE);
    assert_int_equal(moe_placement_mode_parse("strict", &m, &err), -1);
    assert_non_null(strstr(err.text, "nvlink, nvlink-strict, none"));
}

/* Layout strings: defaults, etp follows tp, dp/edp derived from the world. */
static void layout_strings(void **state)
{
    struct moe_layout l;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    l = layout("tp=2,cp=1,ep=8,etp=1,pp=4", 32);
    assert_int_equal(l.tp, 2);
    assert_int_equal(l.ep, 8);
    assert_int_equal(l.etp, 1);
    assert_int_equal(l.pp, 4);
    assert_int_equal(l.vpp, 1);
    assert_int_equal(l.dp, 4);   /* 32 / (2*1*4) */
    assert_int_equal(l.edp, 1);  /* 32 / (1*8*4) */
    assert_int_equal(moe_layout_block(&l), 8);
    l = layout("ep=4,tp=2", 16);
    assert_int_equal(l.etp, 2);  /* Megatron: ETP defaults to TP */
    assert_int_equal(moe_layout_block(&l), 8);
    assert_int_equal(moe_layout_parse("tp=2,ep=x", &l, &err), -1);
    assert_int_equal(err.column, 6);
    assert_non_null(strstr(err.text, "ep: expected an integer 1..65536, not 'x'"));
    assert_int_equal(moe_layout_parse("tp=2,tp=4", &l, &err), -1);
    assert_non_null(strstr(err.text, "tp is given twice"));
    assert_int_equal(moe_layout_parse("dp=2", &l, &err), -1);
    assert_int_equal(moe_layout_parse("tp=0", &l, &err), -1);
    assert_int_equal(moe_layout_parse("tp=2,", &l, &err), -1);
    assert_int_equal(moe_layout_parse("tp=2 ", &l, &err), -1);
    assert_int_equal(moe_layout_parse("", &l, &err), -1);
    assert_int_equal(moe_layout_parse("tp=2,cp=1,ep=8,etp=1,pp=4", &l, &err), 0);
    assert_int_equal(moe_layout_fit(&l, 24, &err), -1);
    assert_non_null(strstr(err.text, "etp*ep*pp = 32 does not divide the world size 24"));
}

/* The integration case: n1,n3 in A, n2,n4 in B, 8 GPUs, B = 16: ranks go
 * n1 n3 | n2 n4, both blocks inside a domain; Slurm's order has none. */
static void interleaved_racks(void **state)
{
    int dom[4] = { 0, 1, 0, 1 };
    struct moe_layout l = layout("tp=2,ep=16,etp=1", 32);
    struct moe_placement p;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_placement_plan(&l, 4, 8, dom, &p, &err), 0);
    assert_int_equal(p.block, 16);
    assert_int_equal(p.order[0], 0);
    assert_int_equal(p.order[1], 2);
    assert_int_equal(p.order[2], 1);
    assert_int_equal(p.order[3], 3);
    assert_int_equal(p.pos[2], 1);
    assert_int_equal(p.intra, 2);
    assert_int_equal(p.bound, 2);
    assert_int_equal(p.first_split, -1);
    assert_int_equal(moe_placement_count(4, 8, 16, NULL, dom, NULL), 0);
    moe_placement_free(&p);
}

/* gpn 4, B 16 (4 nodes), two domains of 6 interleaved nodes: 4+4 whole,
 * leftovers x5 x6 y5 y6 last; bound floor(24/16)*2 = 2 is reached. */
static void leftovers_go_last(void **state)
{
    int dom[12] = { 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1 };
    int want[12] = { 0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 9, 11 };
    struct moe_layout l = layout("ep=16", 48);
    struct moe_placement p;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_placement_plan(&l, 12, 4, dom, &p, &err), 0);
    for (int i = 0; i < 12; i++)
        assert_int_equal(p.order[i], want[i]);
    assert_int_equal(p.blocks, 3);
    assert_int_equal(p.intra, 2);
    assert_int_equal(p.bound, 2);
    assert_int_equal(p.first_split, 2);
    moe_placement_free(&p);
}

/* Blocks smaller than a node: every order keeps them whole (bound 2/node). */
static void small_blocks(void **state)
{
    int dom[3] = { -1, -1, -1 };
    struct moe_layout l = layout("tp=4,ep=2", 24);
    struct moe_placement p;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_placement_plan(&l, 3, 8, dom, &p, &err), 0);
    assert_int_equal(p.block, 8); /* etp = tp = 4, 4*2 = 8 */
    assert_int_equal(p.intra, 3);
    assert_int_equal(p.bound, 3);
    moe_placement_free(&p);
}

/* HGX nodes (node-local NVLink), B = 16 > 8: no group fits; bound 0. */
static void node_local_ep_crosses(void **state)
{
    int dom[4] = { -1, -1, -1, -1 };
    struct moe_layout l = layout("tp=1,ep=16", 32);
    struct moe_placement p;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_placement_plan(&l, 4, 8, dom, &p, &err), 0);
    assert_int_equal(p.bound, 0);
    assert_int_equal(p.intra, 0);
    assert_int_equal(p.first_split, 0);
    assert_int_equal(p.order[0], 0); /* nothing to gain: job order kept */
    assert_int_equal(p.order[3], 3);
    moe_placement_free(&p);
}

/* gpn 8, B 12 (no divisibility): A={a1,a2}, B={b1}: a1 a2 b1 holds one
 * block (ranks 0-11 on a1,a2); bound floor(16/12)+floor(8/12) = 1. */
static void uneven_block(void **state)
{
    int dom[3] = { 0, 1, 0 };
    struct moe_layout l = layout("tp=4,cp=3,etp=1", 24);
    struct moe_placement p;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(moe_placement_plan(&l, 3, 8, dom, &p, &err), 0);
    assert_int_equal(p.block, 12);
    assert_int_equal(p.order[0], 0);
    assert_int_equal(p.order[1], 2);
    assert_int_equal(p.order[2], 1);
    assert_int_equal(p.intra, 1);
    assert_int_equal(p.bound, 1);
    moe_placement_free(&p);
}

/* Heap's algorithm: the best count over every order of n nodes. */
static int best_order(int *a, int n, int k, int gpn, int block, const int *dom)
{
    int best = 0;

    if (k == 1)
        return moe_placement_count(n, gpn, block, a, dom, NULL);
    for (int i = 0; i < k; i++) {
        int c = best_order(a, n, k - 1, gpn, block, dom), j = k % 2 ? 0 : i, t;
        best = c > best ? c : best;
        t = a[j];
        a[j] = a[k - 1];
        a[k - 1] = t;
    }
    return best;
}

/* The bound is not always reachable when neither B nor gpn divides the
 * other: 3 domains x 2 nodes, gpn 4, B 6 has bound 3*floor(8/6) = 3, but
 * blocks 0-3 sit on nodes {0,1} {1,2} {3,4} {4,5}, so at most two are
 * disjoint; all 720 orders confirm 2, and the plan reaches it. */
static void bound_unreachable(void **state)
{
    int dom[6] = { 0, 1, 2, 0, 1, 2 }, a[6] = { 0, 1, 2, 3, 4, 5 };
    struct moe_layout l = layout("tp=2,cp=3,etp=1", 24);
    struct moe_placement p;
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(best_order(a, 6, 6, 4, 6, dom), 2);
    assert_int_equal(moe_placement_plan(&l, 6, 4, dom, &p, &err), 0);
    assert_int_equal(p.bound, 3);
    assert_int_equal(p.intra, 2);
    moe_placement_free(&p);
}

/* Same inputs, same order, and 1024 nodes plan in well under a millisecond. */
static void deterministic_and_fast(void **state)
{
    enum { N = 1024 };
    static int dom[N];
    struct moe_layout l = layout("tp=4,ep=32,etp=1", N * 4);
    struct moe_placement a, b;
    struct moe_error err;
    struct timespec t0, t1;

    (void)state;
    moe_error_clear(&err);
    for (int i = 0; i < N; i++)
        dom[i] = (i * 7919) % 57; /* 57 racks, scattered */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(moe_placement_plan(&l, N, 4, dom, &a, &err), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(moe_placement_plan(&l, N, 4, dom, &b, &err), 0);
    assert_memory_equal(a.order, b.order, N * sizeof(int));
    assert_int_equal(a.intra, a.bound);
    printf("# 1024 nodes planned in %.3f ms\n",
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    moe_placement_free(&a);
    moe_placement_free(&b);
}

int main(void)
{
    const struct moe_hostlist_api api = { hl_create, hl_shift, hl_destroy };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(yaml_map),
        cmocka_unit_test(slurm_blocks),
        cmocka_unit_test(bad_maps),
        cmocka_unit_test(map_nodes_bounded_in_all),
        cmocka_unit_test(many_domains_and_repeated_names),
        cmocka_unit_test(map_grows_geometrically),
        cmocka_unit_test(example_map),
        cmocka_unit_test(placement_modes),
        cmocka_unit_test(layout_strings),
        cmocka_unit_test(interleaved_racks),
        cmocka_unit_test(leftovers_go_last),
        cmocka_unit_test(small_blocks),
        cmocka_unit_test(node_local_ep_crosses),
        cmocka_unit_test(uneven_block),
        cmocka_unit_test(bound_unreachable),
        cmocka_unit_test(deterministic_and_fast),
    };

    moe_hostlist_bind(&api);
    return MOE_RUN_TESTS(tests);
}
