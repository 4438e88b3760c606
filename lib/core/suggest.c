#include "config.h"

#include <string.h>

#include "core/suggest.h"

/* Edit distance, for "did you mean" suggestions.  Optimal string
 * alignment: a swap of two neighbours ("hepl") costs one, as people type. */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int rows[3][65], *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

    if (lb > 64)
        return 1 << 20;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int *t;
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int best = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

const char *moe_suggest(const char *word, const char *const *candidates, int n)
{
    const char *best = NULL;
    int best_d = 0;
    /* A third of the word, at least 2: catches typos, not unrelated words. */
    int limit = (int)strlen(word) / 3 < 2 ? 2 : (int)strlen(word) / 3;

    for (int i = 0; i < n; i++) {
        int d = edit_distance(word, candidates[i]);
        if (d <= limit && (!best || d < best_d)) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}
