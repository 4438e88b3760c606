/* Megatron / Megatron-Bridge training logs: every line the reader
 * recognises, read from a file as `moeflow report` does, then summarised
 * over the window the log reaches. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "analysis/megatron_log.h"
#include "analysis/megatron_log_internal.h"
#include "analysis/report.h"
#include "analysis/report_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct moe_log log;
    struct moe_error err;
    const char *path = fuzz_file(data, size, ".log");

    if (!path)
        return 0;
    moe_log_init(&log);
    if (moe_log_read_file(&log, path, &err) == 0) {
        moe_log_arg(&log, "moe_token_dispatcher_type");
        if (log.niters > 0) {
            struct moe_report_run run;
            struct moe_report_expect want[] = { { "moe_token_dispatcher_type", "flex", false },
                                                { "fp8", "e4m3", false } };
            long first = log.iters[0].iter, last = log.iters[log.niters - 1].iter;

            memset(&run, 0, sizeof(run));
            if (moe_report_run_init(&run, "fuzz", &log, first, last, want, 2, &err) == 0) {
                json_t *j = moe_report_to_json(&run, 1, NULL, NULL);

                json_decref(j);
            }
            moe_report_run_free(&run);
        }
    }
    moe_log_free(&log);
    return 0;
}
