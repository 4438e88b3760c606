#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "analysis/fit_evidence_internal.h"
#include "analysis/graph_evidence_internal.h"
#include "analysis/megatron_log.h"
#include "analysis/megatron_log_internal.h"
#include "core/number.h"
#include "core/readfile.h"
#include "core/strbuf.h"

void moe_log_init(struct moe_log *log)
{
    memset(log, 0, sizeof(*log));
    log->theo_weight_opt_mb = NAN;
    log->theo_activation_mb = NAN;
    log->theo_total_mb = NAN;
}

void moe_log_free(struct moe_log *log)
{
    for (size_t i = 0; i < log->nargs; i++) {
        free(log->args[i].key);
        free(log->args[i].value);
    }
    free(log->args);
    free(log->warnings);
    free(log->iters);
    free(log->mems);
    memset(log, 0, sizeof(*log));
}

static void warn(struct moe_log *log, int lineno, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn(struct moe_log *log, int lineno, const char *fmt, ...)
{
    struct moe_log_warning *w;
    va_list ap;
    int n;

    log->warnings_total++;
    if (log->nwarnings >= MOE_LOG_WARNINGS_MAX)
        return;
    w = moe_grow_array(log->warnings, &log->capwarnings, log->nwarnings + 1, sizeof(*log->warnings));
    if (!w)
        return; /* a warning lost to memory pressure is still counted */
    log->warnings = w;
    w = &log->warnings[log->nwarnings++];
    w->line = lineno;
    n = snprintf(w->text, sizeof(w->text), "%s:%d: ", log->source ? log->source : "<log>", lineno);
    if (n < 0 || (size_t)n >= sizeof(w->text))
        n = 0;
    va_start(ap, fmt);
    /* a warning for people: cut, it still says where and what */
    vsnprintf(w->text + n, sizeof(w->text) - (size_t)n, fmt, ap);
    va_end(ap);
}

/* What field_strict found: iter_field's switch lists each, with no default. */
enum field_state { FIELD_ABSENT, FIELD_OK, FIELD_BAD };

/* key inside [s, end) only: a line of N glued records is searched once per
 * record field, so a search that ran to the line's end (strstr) made the
 * reader quadratic (a 4 MiB log took 47 s).  Records are found with it too:
 * the sanitizers' strstr measures the whole haystack on every call. */
static const char *find(const char *s, const char *end, const char *key)
{
    return s < end ? memmem(s, (size_t)(end - s), key, strlen(key)) : NULL;
}

/* A number ends where a field ends: at a space, '|', ',' or the record's end. */
static int number_ends(const char *tail, const char *end)
{
    return tail >= end || *tail == ' ' || *tail == '|' || *tail == ',' || *tail == '\t' ||
           *tail == '\r';
}

/* The number after "key" inside [s, end).  strtod also reads the "nan" and
 * "inf" Megatron prints for a diverged loss; anything else that is not a
 * whole number ("1e", "abc", "12ms") is FIELD_BAD, with the text in bad. */
static enum field_state field_strict(const char *s, const char *end, const char *key, double *out,
                                     char *bad, size_t badlen)
{
    size_t kl = strlen(key);
    const char *p = s;
    char *tail;

    *out = NAN;
    if ((p = find(p, end, key))) {
        const char *q = p + kl, *e;

        while (q < end && *q == ' ')
            q++;
        *out = strtod(q, &tail);
        if (tail != q && tail <= end && number_ends(tail, end))
            return FIELD_OK;
        *out = NAN;
        for (e = q; e < end && *e != '|' && *e != ' '; e++)
            ;
        /* cut on purpose: the shown text is at most 40 bytes */
        snprintf(bad, badlen, "%.*s", (int)(e - q > 40 ? 40 : e - q), q);
        return FIELD_BAD;
    }
    return FIELD_ABSENT;
}

/* The number after "key" inside [s, end), or NAN, for lines whose numbers
 * carry glued units (Bridge's "2.34s", "45.2MODEL_TFLOP/s/GPU") or are not
 * checked strictly (memory lines). */
static double field(const char *s, const char *end, const char *key)
{
    size_t kl = strlen(key);
    const char *p = s;
    char *tail;
    double v;

    while ((p = find(p, end, key))) {
        const char *q = p + kl;

        while (q < end && *q == ' ')
            q++;
        v = strtod(q, &tail);
        if (tail != q && tail <= end)
            return v;
        p += kl;
    }
    return NAN;
}

/* "iteration" + spaces + digits + "/" + spaces + digits, as Megatron
 * prints it; returns the start of the next one at or after p. */
static const char *next_iteration(const char *p, const char *end, long *iter, long *total)
{
    while ((p = find(p, end, "iteration"))) {
        const char *q = p + 9;
        char *tail;

        while (*q == ' ')
            q++;
        if (isdigit((unsigned char)*q)) {
            *iter = strtol(q, &tail, 10);
            q = tail;
            if (*q == '/') {
                q++;
                while (*q == ' ')
                    q++;
                if (isdigit((unsigned char)*q)) {
                    *total = strtol(q, NULL, 10);
                    return p;
                }
            }
        }
        p += 9;
    }
    return NULL;
}

/* "[Rank R] (after K iterations) memory (MB|GB)" */
static const char *next_memory(const char *p, const char *end, int *rank, long *after,
                               double *unit)
{
    while ((p = find(p, end, "[Rank "))) {
        char *tail;
        const char *q;

        *rank = (int)strtol(p + 6, &tail, 10);
        if (tail != p + 6 && strncmp(tail, "] (after ", 9) == 0) {
            *after = strtol(tail + 9, &tail, 10);
            /* within 20 bytes: not to the line's end, once per glued record */
            q = find(tail, tail + strnlen(tail, 28), "memory (");
            if (q) {
                *unit = strncmp(q + 8, "GB)", 3) == 0 ? 1e9 : 1048576.0;
                return p;
            }
        }
        p += 6;
    }
    return NULL;
}

/* The physical range of a number read from a log, and why: a value outside
 * it is a corrupt or hostile log, never a run, and would make the
 * statistics overflow (1.7e308 ms steps gave a median of inf and an A/B
 * verdict of +inf%) or a ratio of two of them infinite. */
struct range {
    double min, max;
    int integer; /* a count: a whole number, at most the iteration number */
    const char *why;
};

/* A training step launches at least one kernel (a few microseconds), and no
 * job runs 1e9 ms (11.6 days) for one step. */
static const struct range STEP_MS = {
    1e-3, 1e9, 0, "a step takes from 1e-3 ms (one kernel launch) to 1e9 ms (11.6 days)"
};
/* The fastest GPU's dense FP4 peak is about 10,000 TFLOP/s (GB300). */
static const struct range TFLOPS = {
    0, 1e5, 0, "a GPU does 0 to 1e5 TFLOP/s, ten times the fastest GPU's FP4 peak"
};
static const struct range LOSS = { -DBL_MAX, DBL_MAX, 0, "must be finite" };
static const struct range LR = { 0, DBL_MAX, 0, "must be >= 0" };
static const struct range COUNT = {
    0, 0, 1, "must be a whole number >= 0, at most the iteration number"
};
/* Bytes of device memory: 1 PiB is 3,500 times the largest GPU's (288 GB). */
#define MEM_BYTES_MAX 1125899906842624.0

/* One strictly read number of an iteration record, NAN when absent,
 * malformed or outside r (the last two with a warning).  A count's maximum
 * is the iteration number (count_max).  *logged: what the log printed
 * when that was nan, inf or -inf (report.json lists it), else 0. */
static double iter_field(struct moe_log *log, const char *s, const char *end, const char *key,
                         const struct range *r, double max, long iter, int lineno,
                         double *logged)
{
    char bad[48];
    double v;

    *logged = 0;
    switch (field_strict(s, end, key, &v, bad, sizeof(bad))) {
    case FIELD_ABSENT:
        return NAN;
    case FIELD_BAD:
        warn(log, lineno, "iteration %ld: '%s %s' is not a number; value ignored", iter, key,
             bad);
        return NAN;
    case FIELD_OK:
        break;
    }
    if (!isfinite(v))
        *logged = v;
    if (isnan(v))
        return v; /* Megatron's own "nan": a diverged value, reported as such */
    if (!(v >= r->min && v <= max) || (r->integer && v != floor(v))) {
        warn(log, lineno, "iteration %ld: '%s %g' is impossible (%s); value ignored", iter, key, v,
             r->why);
        return NAN;
    }
    return v;
}

/* A count of iterations in one logging interval is at most the iteration
 * number (and far below 2^53, so the double is exact and the long cannot
 * overflow when the counts are summed). */
static double count_max(long iter)
{
    return iter > 0 && iter < (long)1e15 ? (double)iter : 1e15;
}

static int add_iter(struct moe_log *log, const char *s, const char *end, long iter, long total,
                    int lineno)
{
    struct moe_log_iter *it, *grown;
    double v, ignored;

    /* on failure the array so far stays in log, for moe_log_free */
    grown = moe_grow_array(log->iters, &log->capiters, log->niters + 1, sizeof(*log->iters));
    if (!grown)
        return -1;
    log->iters = grown;
    it = &log->iters[log->niters++];
    it->iter = iter;
    it->total = total;
    it->superseded = 0;
    it->step_ms = iter_field(log, s, end, "elapsed time per iteration (ms):", &STEP_MS,
                             STEP_MS.max, iter, lineno, &it->step_ms_logged);
    it->tflops = iter_field(log, s, end, "throughput per GPU (TFLOP/s/GPU):", &TFLOPS,
                            TFLOPS.max, iter, lineno, &it->tflops_logged);
    it->loss = iter_field(log, s, end, "lm loss:", &LOSS, LOSS.max, iter, lineno,
                          &it->loss_logged);
    it->lr = iter_field(log, s, end, "learning rate:", &LR, LR.max, iter, lineno, &ignored);
    it->has_loss = find(s, end, "lm loss:") != NULL;
    v = iter_field(log, s, end, "number of skipped iterations:", &COUNT, count_max(iter), iter,
                   lineno, &ignored);
    it->skipped = isnan(v) ? 0 : (long)v;
    v = iter_field(log, s, end, "number of nan iterations:", &COUNT, count_max(iter), iter,
                   lineno, &ignored);
    it->nan_iters = isnan(v) ? 0 : (long)v;
    it->line = lineno;
    /* Megatron ends every iteration record with the NaN count: a record
     * that has its step time but not that field was cut off. */
    if (!isnan(it->step_ms) && !find(s, end, "number of nan iterations:"))
        warn(log, lineno, "iteration %ld: the line ends early (no 'number of nan "
                 "iterations' field): truncated?", iter);
    return 0;
}

/* A memory figure in bytes inside [0, MEM_BYTES_MAX], else NAN: memory
 * lines are read leniently (their formats vary), but a figure past any GPU's
 * memory must not reach the peak column as 1e308 or inf. */
static double mem_bytes(double v)
{
    return v >= 0 && v <= MEM_BYTES_MAX ? v : NAN;
}

static int add_mem(struct moe_log *log, const char *s, const char *end, int rank, long after,
                   double unit)
{
    struct moe_log_mem *m, *grown;
    int gb = unit > 2e6;

    /* on failure the array so far stays in log, for moe_log_free */
    if (!(grown = moe_grow_array(log->mems, &log->capmems, log->nmems + 1, sizeof(*log->mems))))
        return -1;
    log->mems = grown;
    m = &log->mems[log->nmems++];
    m->rank = rank;
    m->after = after;
    /* Megatron: "allocated: X | max allocated: Y" in MiB; Bridge:
     * "mem-max-allocated-gigabytes: Y" in decimal GB. */
    m->allocated = mem_bytes(unit * field(s, end,
        gb ? "mem-allocated-gigabytes:" : "| allocated:"));
    m->max_allocated = mem_bytes(unit * field(s, end,
        gb ? "mem-max-allocated-gigabytes:" : "max allocated:"));
    m->reserved = mem_bytes(unit * field(s, end,
        gb ? "mem-reserved-gigabytes:" : "| reserved:"));
    m->max_reserved = mem_bytes(unit * field(s, end,
        gb ? "mem-max-reserved-gigabytes:" : "max reserved:"));
    return 0;
}

/* "  key ....... value": Megatron pads with dots to column 48, so the dots
 * may be absent ("key  value"). */
static int add_arg(struct moe_log *log, const char *line)
{
    const char *p = line, *k, *v, *e;
    struct moe_log_arg *a, *grown;

    while (*p == ' ')
        p++;
    k = p;
    while (*p && *p != ' ')
        p++;
    if (p == k || *p != ' ')
        return 0;
    e = p++;
    while (*p == '.')
        p++;
    if (*p == ' ')
        p++;
    v = p;
    p = v + strlen(v);
    while (p > v && isspace((unsigned char)p[-1]))
        p--;
    /* on failure the array so far stays in log, for moe_log_free */
    if (!(grown = moe_grow_array(log->args, &log->capargs, log->nargs + 1, sizeof(*log->args))))
        return -1;
    log->args = grown;
    a = &log->args[log->nargs];
    a->key = strndup(k, (size_t)(e - k));
    a->value = strndup(v, (size_t)(p - v));
    if (!a->key || !a->value) {
        free(a->key);
        free(a->value);
        return -1;
    }
    log->nargs++;
    return 0;
}

/* The srun -l prefix "12: " in front of a dump line. */
static const char *skip_rank_prefix(const char *line)
{
    const char *p = line;

    while (*p == ' ')
        p++;
    if (!isdigit((unsigned char)*p))
        return line;
    while (isdigit((unsigned char)*p))
        p++;
    return (p[0] == ':' && p[1] == ' ') ? p + 2 : line;
}

/* srun forwards each rank's lines as they come, so another rank's iteration
 * or memory record can land inside rank 0's argument dump (Megatron's
 * barrier makes that rare; a busy node or a rank that does not wait makes
 * it happen).  Such a record is the run's, not an argument: no dump line
 * reads "iteration N/ M |" or "[Rank R] (after K iterations) memory". */
static bool other_rank_record(const char *line, const char *end)
{
    long iter, total, after;
    int rank;
    double unit;
    const char *p = next_iteration(line, end, &iter, &total);

    if (p && strchr(p, '|'))
        return true;
    return next_memory(line, end, &rank, &after, &unit) != NULL;
}

static int in_args_state(struct moe_log *log, const char *line)
{
    if (strstr(line, "-- arguments --")) {
        log->in_args = 1;
        log->dump_lines = log->dump_bytes = 0;
        return 1;
    }
    if (log->in_args && strstr(line, "end of arguments")) {
        log->in_args = 0;
        return 1;
    }
    return 0;
}

/* A dump whose end never comes must not swallow the rest of the log (nor
 * keep all of it in memory): past the bound it is over. */
static int dump_ended(struct moe_log *log, const char *line, int lineno)
{
    log->dump_lines++;
    log->dump_bytes += strlen(line);
    if (log->dump_lines <= MOE_LOG_DUMP_LINES_MAX && log->dump_bytes <= MOE_LOG_DUMP_BYTES_MAX)
        return 0;
    warn(log, lineno, "the argument dump has no 'end of arguments' line within %d lines or "
         "%ld MiB; the lines from here on are read as log lines", MOE_LOG_DUMP_LINES_MAX,
         MOE_LOG_DUMP_BYTES_MAX >> 20);
    log->in_args = 0;
    return 1;
}

static int theoretical(struct moe_log *log, const char *line)
{
    const double MB = 1048576.0;
    const char *p = strstr(line, "Theoretical memory footprints:");
    double total;

    if (!p)
        return 0;
    log->theo_weight_opt_mb = mem_bytes(field(p, p + strlen(p), "weight and optimizer=") * MB) / MB;
    log->theo_activation_mb = mem_bytes(field(p, p + strlen(p), "activation=") * MB) / MB;
    total = field(p, p + strlen(p), "total=");
    log->theo_total_mb = mem_bytes(total * MB) / MB;
    log->theo_total_logged = isfinite(total) ? 0 : total;
    return 1;
}

/* Bridge prints "Step Time : 2.34s GPU utilization: 45.2MODEL_TFLOP/s/GPU"
 * after the iteration line; it fills what that line lacked, with the same
 * checks as the iteration line's own numbers (a step takes time, a rate is
 * not negative). */
static void step_time(struct moe_log *log, const char *line, int lineno)
{
    const char *p = strstr(line, "Step Time :");
    struct moe_log_iter *it;
    double s, u;

    if (!p || !log->niters)
        return;
    it = &log->iters[log->niters - 1];
    s = field(p, p + strlen(p), "Step Time :");
    u = field(p, p + strlen(p), "GPU utilization:");
    if (!isnan(s) && !(s * 1000.0 >= STEP_MS.min && s * 1000.0 <= STEP_MS.max)) {
        warn(log, lineno, "iteration %ld: 'Step Time : %gs' is impossible (%s); value ignored",
             it->iter, s, STEP_MS.why);
        s = NAN;
    }
    if (!isnan(u) && !(u >= TFLOPS.min && u <= TFLOPS.max)) {
        warn(log, lineno, "iteration %ld: 'GPU utilization: %g' is impossible (%s); value "
             "ignored", it->iter, u, TFLOPS.why);
        u = NAN;
    }
    /* a usable figure here replaces a non-finite one of the record */
    if (isnan(it->step_ms) && !isnan(s)) {
        it->step_ms = s * 1000.0;
        it->step_ms_logged = 0;
    }
    if (isnan(it->tflops) && !isnan(u)) {
        it->tflops = u;
        it->tflops_logged = 0;
    }
}

/* A Python exception's last traceback line ("[rank0]: torch.OutOfMemoryError:
 * CUDA out of memory ..."): the last one is what stopped the run. */
static void python_error(struct moe_log *log, const char *line)
{
    const char *p = line, *q;

    while (*p == ' ')
        p++;
    if (strncmp(p, "[rank", 5) == 0 && (q = strstr(p, "]: ")) && q - p < 16)
        p = q + 3;
    p = skip_rank_prefix(p);
    q = p;
    while (isalnum((unsigned char)*q) || *q == '_' || *q == '.')
        q++;
    if (q - p >= 5 && (strncmp(q - 5, "Error: ", 7) == 0 || (q - p >= 9 &&
                                                           strncmp(q - 9, "Exception: ", 11) == 0)))
        /* the exception's line for people: cut, it still says it */
        snprintf(log->last_error, sizeof(log->last_error), "%s", p);
}

static int feed(struct moe_log *log, const char *line, int lineno)
{
    const char *end = line + strlen(line), *p, *next;
    long iter, total, after;
    int rank;
    double unit;

    log->lines++;
    if (in_args_state(log, line))
        return 0;
    if (log->in_args && !other_rank_record(line, end) && !dump_ended(log, line, lineno))
        return add_arg(log, skip_rank_prefix(line));
    theoretical(log, line);
    step_time(log, line, lineno);
    moe_fit_evidence_parse(line, &log->fit_evidence);
    python_error(log, line);
    moe_graph_evidence_parse(line, &log->graphs);
    /* Records glued on one line: each runs to where the next one starts. */
    for (p = next_iteration(line, end, &iter, &total); p; p = next) {
        long ni = 0, nt = 0;

        next = next_iteration(p + 9, end, &ni, &nt);
        if (add_iter(log, p, next ? next : end, iter, total, lineno) < 0)
            return -1;
        iter = ni;
        total = nt;
    }
    for (p = next_memory(line, end, &rank, &after, &unit); p; p = next) {
        int nr = 0;
        long na = 0;
        double nu = 0;

        next = next_memory(p + 6, end, &nr, &na, &nu);
        if (add_mem(log, p, next ? next : end, rank, after, unit) < 0)
            return -1;
        rank = nr;
        after = na;
        unit = nu;
    }
    return 0;
}

int moe_log_feed_line(struct moe_log *log, const char *line, int lineno)
{
    return feed(log, line, lineno);
}

struct repeat {
    long iter;
    size_t record;
};

static int by_iter_record(const void *pa, const void *pb)
{
    const struct repeat *a = pa, *b = pb;

    if (a->iter != b->iter)
        return (a->iter > b->iter) - (a->iter < b->iter);
    return (a->record > b->record) - (a->record < b->record);
}

/* The last attempt wins: a job requeued after a failure resumes from its
 * checkpoint and appends to the same log (sbatch --open-mode=append), so
 * the later record of an iteration is the run that went on; keeping the
 * first made the resumed run invisible.  Sorting keeps this O(n log n). */
static void supersede_repeats(struct moe_log *log, size_t from)
{
    size_t n = log->niters - from, count = 0;
    struct repeat *r = n > 1 ? malloc(n * sizeof(*r)) : NULL;
    long lo = 0, hi = 0;
    int line = 0;

    if (!r)
        return; /* nothing to compare, or no memory: records stay as read */
    for (size_t i = 0; i < n; i++)
        r[i] = (struct repeat){ log->iters[from + i].iter, from + i };
    qsort(r, n, sizeof(*r), by_iter_record);
    for (size_t i = 0; i + 1 < n; i++) {
        const struct moe_log_iter *later = &log->iters[r[i + 1].record];

        if (r[i].iter != r[i + 1].iter)
            continue;
        log->iters[r[i].record].superseded = 1;
        if (!count)
            lo = r[i].iter; /* sorted: the first is the lowest */
        hi = r[i].iter;
        if (!count || later->line < line)
            line = later->line;
        count++;
    }
    free(r);
    if (count)
        warn(log, line, "iterations %ld-%ld are logged more than once (%zu earlier records: a "
             "requeued job that appended to its log, or several ranks' lines); the last record "
             "of each iteration is used", lo, hi, count);
}

void moe_log_finish(struct moe_log *log)
{
    supersede_repeats(log, log->checked);
    for (; log->checked < log->niters; log->checked++) {
        const struct moe_log_iter *it = &log->iters[log->checked];

        if (isnan(it->step_ms) && !it->superseded)
            warn(log, it->line, "iteration %ld has no usable step time (truncated or malformed "
                 "line); it is left out of the statistics", it->iter);
    }
}

/* Lines of at most MOE_LOG_LINE_MAX bytes from a file read in chunks: not
 * getline(), which holds a line whole however long (a file with no newline,
 * or /dev/zero behind a regular name, would be read into memory). */
struct lines {
    FILE *f;
    char chunk[1 << 16];
    size_t pos, len;
    char *line; /* MOE_LOG_LINE_MAX + 1 bytes */
};

/* The next line in l->line, without its newline or trailing CRs; -1 at end
 * of file.  *cut: the line was longer and its rest was skipped. */
static long next_line(struct lines *l, int *cut)
{
    size_t n = 0, max = (size_t)MOE_LOG_LINE_MAX;
    int any = 0;

    *cut = 0;
    for (;;) {
        const char *nl;
        size_t take, keep;

        if (l->pos == l->len) {
            l->pos = 0;
            l->len = fread(l->chunk, 1, sizeof(l->chunk), l->f);
            if (l->len == 0)
                break;
        }
        any = 1;
        nl = memchr(l->chunk + l->pos, '\n', l->len - l->pos);
        take = nl ? (size_t)(nl - (l->chunk + l->pos)) : l->len - l->pos;
        keep = take < max - n ? take : max - n;
        if (keep < take)
            *cut = 1;
        memcpy(l->line + n, l->chunk + l->pos, keep);
        n += keep;
        l->pos += take + (nl != NULL);
        if (nl)
            break;
    }
    if (!any)
        return -1;
    while (n > 0 && l->line[n - 1] == '\r')
        n--;
    l->line[n] = '\0';
    return (long)n;
}

static int read_lines(struct moe_log *log, FILE *f, const char *path, struct moe_error *err)
{
    struct lines *l = calloc(1, sizeof(*l));
    int lineno = 0, cut, rc = 0;

    if (!l || !(l->line = malloc((size_t)MOE_LOG_LINE_MAX + 1))) {
        free(l);
        moe_error_at(err, path, 0, 0, "out of memory");
        return -1;
    }
    l->f = f;
    while (next_line(l, &cut) >= 0) {
        lineno++;
        if (cut)
            warn(log, lineno, "the line is longer than " MOE_LOG_LINE_MAX_TEXT
                 "; only its first " MOE_LOG_LINE_MAX_TEXT " is read");
        if (feed(log, l->line, lineno) < 0) {
            moe_error_at(err, path, lineno, 0, "out of memory");
            rc = -1;
            break;
        }
    }
    free(l->line);
    free(l);
    return rc;
}

/* Streams, line by line, instead of moe_read_file(): a long run's log has
 * no useful size limit, and only the parsed figures are kept.  Opened as a
 * regular file only: a FIFO would wait for a writer, a device never end. */
int moe_log_read_file(struct moe_log *log, const char *path, struct moe_error *err)
{
    int fd = moe_open_regular(path, "log", err), rc;
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

    if (!f) {
        if (fd >= 0) {
            moe_error_at(err, path, 0, 0, "log: %s", strerror(errno));
            close(fd);
        }
        return -1;
    }
    log->source = path;
    rc = read_lines(log, f, path, err);
    log->in_args = 0; /* a dump cut short ends with its file */
    moe_log_finish(log);
    log->source = NULL;
    if (rc == 0 && ferror(f)) {
        moe_error_at(err, path, 0, 0, "log: %s", strerror(errno));
        rc = -1;
    }
    fclose(f);
    return rc;
}

const char *moe_log_arg(const struct moe_log *log, const char *key)
{
    for (size_t i = 0; i < log->nargs; i++)
        if (strcmp(log->args[i].key, key) == 0)
            return log->args[i].value;
    return NULL;
}

bool moe_log_out_of_memory(const char *last_error)
{
    return strstr(last_error, "OutOfMemoryError") || strstr(last_error, "CUDA out of memory");
}
