/* Megatron-Bridge log lines ("Step Time : 2.34s GPU utilization:
 * 45.2MODEL_TFLOP/s/GPU", "memory (GB) | mem-max-allocated-gigabytes: Y")
 * fed line by line as `moeflow report` reads them.  A Step Time line only
 * counts after an iteration line, which a byte-level fuzzer rarely writes,
 * so the harness puts one in front of each input line: input line k becomes
 * "iteration k/ N |" (without a step time, which the Bridge line fills),
 * then the line itself behind the prefix its first byte picks.  Then the
 * window's statistics, as report computes them.  Nothing may crash, leak
 * or invoke undefined behaviour, and no count may come out negative; what
 * other values are plausible is the log's own validation. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "analysis/megatron_log.h"
#include "analysis/megatron_log_internal.h"
#include "analysis/report.h"
#include "analysis/report_internal.h"

static const char *const prefixes[] = {
    "",
    "Step Time : ",
    "Step Time :",
    " [2025-01-01 00:00:00] Step Time : ",
    "0: Step Time : ",
    "GPU utilization: ",
    "[Rank 0] (after 10 iterations) memory (GB) | mem-allocated-gigabytes: ",
    "[Rank 3] (after 20 iterations) memory (GB) | mem-max-allocated-gigabytes: ",
    "Theoretical memory footprints: weight and optimizer=",
    "-------------------- end of arguments ---------------------",
};

#define NPREFIX (sizeof(prefixes) / sizeof(prefixes[0]))
#define LINES_MAX 256

static void feed(struct moe_log *log, const char *text, size_t len, int k)
{
    char head[96], *line;
    size_t plen;
    unsigned pick = len ? (unsigned char)text[0] : 0;

    snprintf(head, sizeof(head), " [2025-01-01 00:00:00] iteration %8d/     %d | consumed "
             "samples: %d |", k + 1, LINES_MAX, (k + 1) * 8);
    moe_log_feed_line(log, head, 2 * k + 1);
    plen = strlen(prefixes[pick % NPREFIX]);
    line = malloc(plen + len + 1);
    if (!line)
        abort();
    memcpy(line, prefixes[pick % NPREFIX], plen);
    if (len > 1)
        memcpy(line + plen, text + 1, len - 1);
    line[plen + (len ? len - 1 : 0)] = '\0';
    moe_log_feed_line(log, line, 2 * k + 2);
    free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    struct moe_log log;
    struct moe_error err;
    int k = 0;

    moe_log_init(&log);
    log.source = "fuzz.log";
    while (p < end && k < LINES_MAX) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

        feed(&log, p, len, k++);
        p += len + (nl != NULL);
    }
    moe_log_finish(&log);
    log.source = NULL;
    /* counts are read as whole numbers >= 0: a negative one came from an
     * undefined conversion (nan-iterations-5e93-overflows-long) */
    for (size_t i = 0; i < log.niters; i++)
        if (log.iters[i].skipped < 0 || log.iters[i].nan_iters < 0)
            abort();
    if (log.niters > 0) {
        struct moe_report_run run;

        memset(&run, 0, sizeof(run));
        moe_error_clear(&err);
        if (moe_report_run_init(&run, "fuzz", &log, 1, LINES_MAX, NULL, 0, &err) == 0)
            json_decref(moe_report_to_json(&run, 1, NULL, NULL));
        moe_report_run_free(&run);
    }
    moe_log_free(&log);
    return 0;
}
