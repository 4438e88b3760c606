/* Our reading of a Slurm time limit, checked against Slurm's own where
 * libslurm has it (configure's HAVE_SLURM_TIME_STR2MINS). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "study/time_limit.h"
#include "study/time_limit_internal.h"

#ifdef HAVE_SLURM_TIME_STR2MINS
/* libslurm exports it (src/common/parse_time.c) without declaring it in
 * <slurm/slurm.h>. */
extern int slurm_time_str2mins(const char *string);
#endif

/* The numbers of text and what follows each ('-', ':' or the end), at most
 * four.  A number past MOE_TIME_LIMIT_MAX_S stops growing: it is too
 * large either way, and no sum below overflows a long. */
static int numbers(const char *text, long v[4], char sep[4], int *n)
{
    const char *p = text;

    for (*n = 0; *n < 4;) {
        if (*p < '0' || *p > '9')
            return -1;
        for (v[*n] = 0; *p >= '0' && *p <= '9'; p++)
            if (v[*n] <= MOE_TIME_LIMIT_MAX_S)
                v[*n] = v[*n] * 10 + (*p - '0');
        sep[(*n)++] = *p;
        if (!*p)
            return 0;
        if (*p != '-' && *p != ':')
            return -1;
        p++;
    }
    return -1;
}

int moe_time_limit_parse(const char *text, long *minutes, struct moe_error *err)
{
    /* sbatch(1): without a day, one number is minutes, two are M:S and
     * three H:M:S; with one, D-H, D-H:M, D-H:M:S. */
    static const long unit[2][4][4] = {
        { { 60 }, { 60, 1 }, { 3600, 60, 1 }, { 0 } },
        { { 0 }, { 86400, 3600 }, { 86400, 3600, 60 }, { 86400, 3600, 60, 1 } },
    };
    long v[4], secs = 0;
    char sep[4];
    int n, days;

    if (strcasecmp(text, "unlimited") == 0 || strcasecmp(text, "infinite") == 0) {
        *minutes = -1;
        return 0;
    }
    if (numbers(text, v, sep, &n) < 0)
        goto bad;
    days = sep[0] == '-';
    for (int i = 1; i < n - 1; i++)
        if (sep[i] != ':')
            goto bad;
    if (!unit[days][n - 1][0])
        goto bad;
    for (int i = 0; i < n; i++)
        secs += v[i] * unit[days][n - 1][i];
    if (secs > MOE_TIME_LIMIT_MAX_S) {
        moe_error_set(err, "'%.40s' is more than Slurm can read: it counts a time limit's "
                      "seconds in an int (at most %ld s, about 68 years) and would wrap it "
                      "to another limit", text, MOE_TIME_LIMIT_MAX_S);
        return -1;
    }
    *minutes = (secs + 59) / 60;
    return 0;
bad:
    moe_error_set(err, "'%.40s' is not a Slurm time limit (M, M:S, H:M:S, D-H, D-H:M, "
                  "D-H:M:S or unlimited)", text);
    return -1;
}

int moe_time_limit_minutes(const char *text, long *minutes, struct moe_error *err)
{
    if (moe_time_limit_parse(text, minutes, err) < 0)
        return -1;
#ifdef HAVE_SLURM_TIME_STR2MINS
    {
        long slurm = slurm_time_str2mins(text);

        if (slurm != *minutes) {
            moe_error_set(err, "'%.40s': Slurm reads it as %ld minutes, not %ld", text, slurm,
                          *minutes);
            return -1;
        }
    }
#endif
    return 0;
}
