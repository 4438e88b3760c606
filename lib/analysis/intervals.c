#include "config.h"

#include <stdlib.h>

#include "analysis/intervals.h"
#include "analysis/intervals_internal.h"

static int by_start(const void *pa, const void *pb)
{
    const struct moe_interval *a = pa, *b = pb;

    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

void moe_intervals_sort(struct moe_interval *iv, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (iv[i].start < iv[i - 1].start) {
            qsort(iv, n, sizeof(*iv), by_start);
            return;
        }
    }
}

size_t moe_intervals_union(struct moe_interval *iv, size_t n)
{
    size_t k = 0;

    moe_intervals_sort(iv, n);
    for (size_t i = 0; i < n; i++) {
        if (iv[i].end <= iv[i].start)
            continue;
        /* Touching intervals merge: [0,5) and [5,9) leave no gap. */
        if (k > 0 && iv[i].start <= iv[k - 1].end) {
            if (iv[i].end > iv[k - 1].end)
                iv[k - 1].end = iv[i].end;
        } else {
            iv[k++] = iv[i];
        }
    }
    return k;
}

size_t moe_intervals_clip(struct moe_interval *iv, size_t n, int64_t lo, int64_t hi)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        int64_t s = iv[i].start < lo ? lo : iv[i].start;
        int64_t e = iv[i].end > hi ? hi : iv[i].end;

        if (e > s) {
            iv[k].start = s;
            iv[k].end = e;
            k++;
        }
    }
    return k;
}

int64_t moe_intervals_length(const struct moe_interval *u, size_t n)
{
    int64_t total = 0;

    for (size_t i = 0; i < n; i++)
        total += u[i].end - u[i].start;
    return total;
}

int64_t moe_intervals_overlap(const struct moe_interval *a, size_t na,
                              const struct moe_interval *b, size_t nb)
{
    int64_t total = 0;
    size_t i = 0, j = 0;

    while (i < na && j < nb) {
        int64_t s = a[i].start > b[j].start ? a[i].start : b[j].start;
        int64_t e = a[i].end < b[j].end ? a[i].end : b[j].end;

        if (e > s)
            total += e - s;
        /* Advance whichever ends first; it cannot meet anything later. */
        if (a[i].end < b[j].end)
            i++;
        else
            j++;
    }
    return total;
}

size_t moe_intervals_subtract(const struct moe_interval *a, size_t na,
                              const struct moe_interval *b, size_t nb,
                              struct moe_interval *out)
{
    size_t k = 0, j = 0;

    for (size_t i = 0; i < na; i++) {
        int64_t cur = a[i].start;

        while (j < nb && b[j].end <= cur)
            j++;
        /* b[j..] may cut a[i]; do not advance j past a b that outlives a[i]. */
        for (size_t t = j; t < nb && b[t].start < a[i].end; t++) {
            if (b[t].start > cur) {
                out[k].start = cur;
                out[k].end = b[t].start;
                k++;
            }
            if (b[t].end > cur)
                cur = b[t].end;
            if (cur >= a[i].end)
                break;
        }
        if (cur < a[i].end) {
            out[k].start = cur;
            out[k].end = a[i].end;
            k++;
        }
    }
    return k;
}

size_t moe_intervals_merge(const struct moe_interval *a, size_t na,
                           const struct moe_interval *b, size_t nb,
                           struct moe_interval *out)
{
    size_t i = 0, j = 0, k = 0;

    while (i < na || j < nb) {
        struct moe_interval next;

        if (j >= nb || (i < na && a[i].start <= b[j].start))
            next = a[i++];
        else
            next = b[j++];
        if (k > 0 && next.start <= out[k - 1].end) {
            if (next.end > out[k - 1].end)
                out[k - 1].end = next.end;
        } else {
            out[k++] = next;
        }
    }
    return k;
}

int64_t moe_intervals_cover(const struct moe_interval *u, size_t n, int64_t s, int64_t e)
{
    size_t lo = 0, hi = n;
    int64_t total = 0;

    /* First piece whose end is after s. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (u[mid].end <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < n && u[i].start < e; i++) {
        int64_t a = u[i].start > s ? u[i].start : s;
        int64_t b = u[i].end < e ? u[i].end : e;

        if (b > a)
            total += b - a;
    }
    return total;
}
