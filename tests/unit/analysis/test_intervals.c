/* Interval algebra: unions, overlap, subtraction, merge, clip, cover. */
#include "config.h"

#include "analysis/intervals.h"
#include "analysis/intervals_internal.h"
#include "unit.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Unsorted, nested, touching and empty intervals collapse to a disjoint union. */
static void union_nesting_touching(void **state)
{
    struct moe_interval iv[] = {
        { 30, 40 }, { 0, 10 }, { 32, 35 }, { 10, 20 }, { 50, 50 }, { 45, 46 }, { 44, 45 },
    };
    size_t n;

    (void)state;
    n = moe_intervals_union(iv, N(iv));
    /* [0,10)+[10,20) touch -> [0,20); [32,35) nests in [30,40); [50,50) is empty;
     * [44,45)+[45,46) touch -> [44,46). */
    assert_int_equal(n, 3);
    assert_int_equal(iv[0].start, 0);
    assert_int_equal(iv[0].end, 20);
    assert_int_equal(iv[1].start, 30);
    assert_int_equal(iv[1].end, 40);
    assert_int_equal(iv[2].start, 44);
    assert_int_equal(iv[2].end, 46);
    assert_int_equal(moe_intervals_length(iv, n), 20 + 10 + 2);
}

/* Intersection length counts only real overlap; touching ends count zero. */
static void overlap_lengths(void **state)
{
    const struct moe_interval comm[] = { { 5, 15 }, { 18, 32 }, { 45, 50 } };
    const struct moe_interval comp[] = { { 0, 20 }, { 30, 40 }, { 50, 60 } };

    (void)state;
    /* [5,15) inside [0,20): 10; [18,32): [18,20)=2 and [30,32)=2; [45,50) touches [50,60): 0. */
    assert_int_equal(moe_intervals_overlap(comm, N(comm), comp, N(comp)), 14);
    assert_int_equal(moe_intervals_overlap(comp, N(comp), comm, N(comm)), 14);
    assert_int_equal(moe_intervals_overlap(comm, N(comm), comp, 0), 0);
}

/* a \ b splits, trims and drops pieces, including a b spanning several a. */
static void subtract_pieces(void **state)
{
    const struct moe_interval a[] = { { 5, 15 }, { 18, 32 }, { 45, 50 }, { 60, 70 }, { 72, 74 } };
    const struct moe_interval b[] = { { 0, 20 }, { 22, 24 }, { 30, 40 }, { 65, 80 } };
    struct moe_interval out[N(a) + N(b)];
    size_t n;

    (void)state;
    n = moe_intervals_subtract(a, N(a), b, N(b), out);
    /* [5,15) gone; [18,32) -> [20,22) [24,30); [45,50) stays; [60,70) -> [60,65); [72,74) gone. */
    assert_int_equal(n, 4);
    assert_int_equal(out[0].start, 20);
    assert_int_equal(out[0].end, 22);
    assert_int_equal(out[1].start, 24);
    assert_int_equal(out[1].end, 30);
    assert_int_equal(out[2].start, 45);
    assert_int_equal(out[2].end, 50);
    assert_int_equal(out[3].start, 60);
    assert_int_equal(out[3].end, 65);
}

/* Merging two unions joins overlapping and touching pieces. */
static void merge_unions(void **state)
{
    const struct moe_interval a[] = { { 0, 20 }, { 30, 40 } };
    const struct moe_interval b[] = { { 18, 30 }, { 45, 50 } };
    struct moe_interval out[4];
    size_t n;

    (void)state;
    n = moe_intervals_merge(a, N(a), b, N(b), out);
    assert_int_equal(n, 2);
    assert_int_equal(out[0].start, 0);
    assert_int_equal(out[0].end, 40);
    assert_int_equal(out[1].start, 45);
    assert_int_equal(out[1].end, 50);
}

/* Clipping keeps what is inside [lo,hi) and drops what only touches the edges. */
static void clip_window_edges(void **state)
{
    struct moe_interval iv[] = { { 0, 25 }, { 20, 25 }, { 25, 30 }, { 55, 70 }, { 60, 61 } };
    size_t n;

    (void)state;
    n = moe_intervals_clip(iv, N(iv), 25, 60);
    assert_int_equal(n, 2);
    assert_int_equal(iv[0].start, 25);
    assert_int_equal(iv[0].end, 30);
    assert_int_equal(iv[1].start, 55);
    assert_int_equal(iv[1].end, 60);
}

/* Cover: the part of one interval that a union covers, found by binary search. */
static void cover_lengths(void **state)
{
    const struct moe_interval u[] = { { 20, 30 }, { 45, 50 } };

    (void)state;
    assert_int_equal(moe_intervals_cover(u, N(u), 18, 32), 10);
    assert_int_equal(moe_intervals_cover(u, N(u), 22, 26), 4);
    assert_int_equal(moe_intervals_cover(u, N(u), 25, 48), 5 + 3);
    assert_int_equal(moe_intervals_cover(u, N(u), 30, 45), 0);
    assert_int_equal(moe_intervals_cover(u, N(u), 0, 100), 15);
    assert_int_equal(moe_intervals_cover(u, 0, 0, 100), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(union_nesting_touching), cmocka_unit_test(overlap_lengths),
        cmocka_unit_test(subtract_pieces),        cmocka_unit_test(merge_unions),
        cmocka_unit_test(clip_window_edges),      cmocka_unit_test(cover_lengths),
    };

    return MOE_RUN_TESTS(tests);
}
