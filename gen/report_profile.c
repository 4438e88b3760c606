/* The text form of report.json's "profile_pairs". */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "report_profile.h"
#include "core/text.h"

/* One figure of both sides and their difference; "-" where a side has
 * none (no communication, or no kernel run both ways). */
static void row(const char *what, const json_t *pair, const char *key, bool contention)
{
    const json_t *b = json_object_get(pair, "baseline"), *w = json_object_get(pair, "winner");
    const json_t *bv, *wv;
    char bs[32] = "-", ws[32] = "-", ds[32] = "-";

    if (contention) {
        b = json_object_get(b, "contention");
        w = json_object_get(w, "contention");
    }
    bv = json_object_get(b, key);
    wv = json_object_get(w, key);
    if (json_is_number(bv))
        /* a message: a table cell */
        snprintf(bs, sizeof(bs), "%.3f", json_number_value(bv));
    if (json_is_number(wv))
        /* a message: a table cell */
        snprintf(ws, sizeof(ws), "%.3f", json_number_value(wv));
    if (json_is_number(bv) && json_is_number(wv))
        /* a message: a table cell */
        snprintf(ds, sizeof(ds), "%+.3f", json_number_value(wv) - json_number_value(bv));
    printf("  %-44s %12s %12s %12s\n", what, bs, ws, ds);
}

/* A number with that many decimals, "-" for none. */
static const char *fixed(const json_t *v, int decimals, char *buf, size_t len)
{
    if (!json_is_number(v))
        return "-";
    /* a message: a table cell */
    snprintf(buf, len, "%.*f", decimals, json_number_value(v));
    return buf;
}

/* The winner's top compute kernels: mean per run on each side, and on the
 * winner's side alone against beside communication (the contention). */
static void kernels(const json_t *list)
{
    size_t i;
    const json_t *k;

    if (!json_array_size(list))
        return;
    printf("  %12s %12s %9s %12s %12s  %s\n", "baseline_us", "winner_us", "change%",
           "w_alone_us", "w_beside_us", "compute kernel (mean per run; w_: the winner's runs "
           "alone and beside comm)");
    json_array_foreach(list, i, k) {
        const json_t *c = json_object_get(k, "change_pct");
        char shown[512], change[32] = "-", a[32], b[32];
        /* a trace's names are its writer's: no terminal control of theirs */
        const char *name = moe_text_visible(json_string_value(json_object_get(k, "name")), shown,
                                            sizeof(shown));

        if (json_is_number(c))
            /* a message: a table cell */
            snprintf(change, sizeof(change), "%+.2f", json_number_value(c));
        printf("  %12.3f %12.3f %9s %12s %12s  %.100s\n",
               json_number_value(json_object_get(k, "baseline_mean_us")),
               json_number_value(json_object_get(k, "winner_mean_us")), change,
               fixed(json_object_get(k, "winner_alone_mean_us"), 3, a, sizeof(a)),
               fixed(json_object_get(k, "winner_concurrent_mean_us"), 3, b, sizeof(b)), name);
    }
}

/* The twins' busy time against the timed runs' steps. */
static void reconciled(const json_t *r)
{
    const json_t *steps = json_object_get(r, "timed_steps");
    const char *gap = json_string_value(json_object_get(r, "gap"));
    const json_t *share;
    char a[32], b[32], c[32];

    if (!r)
        return;
    printf("  reconciled with the timed runs' medians over steps %lld..%lld (measured):\n",
           (long long)json_integer_value(json_array_get(steps, 0)),
           (long long)json_integer_value(json_array_get(steps, 1)));
    printf("    step %.1f -> %.1f ms (%+.1f); GPU busy %s%% -> %s%% of the step\n",
           json_number_value(json_object_get(r, "baseline_step_ms")),
           json_number_value(json_object_get(r, "winner_step_ms")),
           json_number_value(json_object_get(r, "step_change_ms")),
           fixed(json_object_get(r, "baseline_gpu_busy_pct"), 1, a, sizeof(a)),
           fixed(json_object_get(r, "winner_gpu_busy_pct"), 1, b, sizeof(b)));
    share = json_object_get(r, "busy_share_of_step_change_pct");
    if (json_is_number(share) && json_number_value(share) >= 0 && json_number_value(share) <= 100)
        printf("    the GPU busy time's change (%+.1f ms) is %s%% of the step's: the rest is "
               "time outside GPU kernels (host launches, synchronisation)\n",
               json_number_value(json_object_get(r, "busy_change_ms")), fixed(share, 1, c, sizeof(c)));
    else if (json_is_number(share))
        printf("    the GPU busy time's change (%+.1f ms) is %s%% of the step's: time outside "
               "GPU kernels moved the other way\n",
               json_number_value(json_object_get(r, "busy_change_ms")), fixed(share, 1, c, sizeof(c)));
    if (gap)
        printf("    GAP: %s\n", gap);
}

static void pair(const json_t *p)
{
    const json_t *steps = json_object_get(p, "steps");
    const char *status = json_string_value(json_object_get(p, "status"));
    char shown[256];
    const char *label = moe_text_visible(json_string_value(json_object_get(p, "label")), shown,
                                         sizeof(shown));
    printf("\n%s against the baseline, profiling twins over steps %lld..%lld", label,
           (long long)json_integer_value(json_array_get(steps, 0)),
           (long long)json_integer_value(json_array_get(steps, 1)));
    if (!status || strcmp(status, "paired") != 0) {
        printf(": %s\n", status ? status : "?");
        return;
    }
    printf(" (measured, per GPU and step):\n  %-44s %12s %12s %12s\n", "", "baseline", "winner",
           "difference");
    row("hidden communication, % of comm", p, "hidden_comm_pct", false);
    row("exposed communication, % of comm", p, "exposed_comm_pct", false);
    row("hidden communication, ms", p, "hidden_comm_ms_per_gpu_step", false);
    row("exposed communication, ms", p, "exposed_comm_ms_per_gpu_step", false);
    row("kernel time, ms (summed kernels)", p, "kernel_ms_per_gpu_step", false);
    row("compute kernel time, ms (summed kernels)", p, "compute_kernel_ms_per_gpu_step", false);
    row("contention: compute beside comm, % slower", p, "slowdown_pct", true);
    row("contention: its extra compute time, ms", p, "extra_ms_per_gpu_step", true);
    kernels(json_object_get(p, "kernels"));
    reconciled(json_object_get(p, "reconciled"));
}

void moe_report_print_profile_pairs(const json_t *pairs)
{
    size_t i;
    const json_t *p;

    if (!json_array_size(pairs))
        return;
    printf("\nmatched A/B profiles (validate's profiling twins, never timed):\n");
    json_array_foreach(pairs, i, p)
        pair(p);
}
