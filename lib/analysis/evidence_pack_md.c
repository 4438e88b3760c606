/* README.md of the evidence pack, rendered from pack.json alone.  Strings
 * from the study, its logs and its captures are data: control characters
 * are made visible, and Markdown's punctuation is escaped in text and
 * table cells; commands and the topology go into indented code blocks,
 * which Markdown shows literally and which no line of them can leave. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/evidence_pack.h"
#include "analysis/evidence_pack_internal.h"
#include "core/strbuf.h"
#include "core/text.h"
#include "core/study_dir.h"

static const json_t *get(const json_t *o, const char *key)
{
    return json_object_get(o, key);
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(get(o, key));

    return s ? s : "";
}

/* s as Markdown text: visible, with the punctuation that would start
 * markup escaped. */
static void text(struct moe_strbuf *b, const char *s)
{
    char shown[8192];
    const char *v = moe_text_visible(s ? s : "", shown, sizeof(shown));

    for (; *v; v++) {
        if (strchr("\\`*_|<>[]#", *v))
            moe_strbuf_add(b, "\\", 1);
        moe_strbuf_add(b, v, 1);
    }
}

/* A JSON value as text: a string as it is, a number rounded, null as "-". */
static void value(struct moe_strbuf *b, const json_t *v)
{
    char *dump;

    if (json_is_string(v)) {
        text(b, json_string_value(v));
    } else if (json_is_integer(v)) {
        moe_strbuf_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        moe_strbuf_printf(b, "%.2f", json_real_value(v));
    } else if (!v || json_is_null(v)) {
        moe_strbuf_puts(b, "-");
    } else if ((dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS))) {
        text(b, dump);
        free(dump);
    }
}

/* The first n bytes of line into out, tabs expanded to stops of 8: tools
 * such as nvidia-smi topo align their columns with tabs, which a code
 * block keeps only as spaces (moe_text_visible would show them as \x09). */
static void expand_tabs(const char *line, size_t n, char *out, size_t len)
{
    size_t o = 0;

    for (size_t i = 0; i < n && o + 1 < len; i++) {
        if (line[i] != '\t') {
            out[o++] = line[i];
            continue;
        }
        do
            out[o++] = ' ';
        while (o % 8 && o + 1 < len);
    }
    out[o] = '\0';
}

/* Lines of s, each indented four spaces: a code block. */
static void code(struct moe_strbuf *b, const char *s)
{
    const char *line = s ? s : "";

    while (*line) {
        size_t n = strcspn(line, "\n");
        char one[8192], shown[8192];

        expand_tabs(line, n, one, sizeof(one));
        moe_strbuf_printf(b, "    %s\n", moe_text_visible(one, shown, sizeof(shown)));
        line += n + (line[n] == '\n');
    }
    moe_strbuf_puts(b, "\n");
}

/* A table row: label | value. */
static void row(struct moe_strbuf *b, const char *label, const json_t *v)
{
    moe_strbuf_printf(b, "| %s | ", label);
    value(b, v);
    moe_strbuf_puts(b, " |\n");
}

/* A section whose stage did not run, or whose evidence is missing. */
static bool absent(struct moe_strbuf *b, const json_t *section)
{
    const char *status = str(section, "status");

    if (strcmp(status, "not run") != 0 && strcmp(status, "no evidence") != 0 &&
        strcmp(status, "not requested") != 0)
        return false;
    moe_strbuf_printf(b, "**%s**: ", status);
    text(b, str(section, "why"));
    moe_strbuf_puts(b, "\n\n");
    return true;
}

static void semantics(struct moe_strbuf *b, const json_t *s)
{
    bool bench = strcmp(str(s, "label"), "benchmark-only") == 0;

    moe_strbuf_puts(b, "## Label: routing and data semantics\n\n**");
    text(b, str(s, "text"));
    moe_strbuf_puts(b, bench ? "**: these results are benchmark-only; they do not transfer to "
                               "training and are not training-equivalent.\n\n"
                             : "**\n\n");
    moe_strbuf_puts(b, "| field | value |\n|---|---|\n");
    row(b, "label", get(s, "label"));
    row(b, "reasons", get(s, "reasons"));
    row(b, "routing (contract)", get(s, "routing"));
    row(b, "data (contract)", get(s, "data"));
    row(b, MOE_STUDY_MANIFEST "'s label", get(s, "manifest_label"));
    row(b, "contract semantics.class", get(s, "contract_class"));
    moe_strbuf_puts(b, "\n");
    text(b, str(s, "contract_class_note"));
    moe_strbuf_puts(b, ".\n\n");
}

static void declared(struct moe_strbuf *b, const json_t *d)
{
    const json_t *hw = get(d, "hardware");

    moe_strbuf_puts(b, "### Declared (" MOE_STUDY_BASELINE ")\n\n");
    if (absent(b, d))
        return;
    moe_strbuf_puts(b, "| field | declared |\n|---|---|\n");
    row(b, "container image", get(d, "container_image"));
    row(b, "Megatron", get(d, "megatron"));
    row(b, "Transformer Engine", get(d, "transformer_engine"));
    row(b, "GPU model", get(hw, "gpu_model"));
    row(b, "GPUs", get(hw, "gpus"));
    row(b, "GPUs per node", get(hw, "gpus_per_node"));
    row(b, "NVLink domain", get(hw, "nvlink_domain"));
    row(b, "parallel layout", get(d, "parallel"));
    moe_strbuf_puts(b, "\n");
}

static void measured_env(struct moe_strbuf *b, const json_t *m)
{
    moe_strbuf_puts(b, "### Measured by the contract stage (" MOE_STUDY_MEASURED ")\n\n");
    if (absent(b, m))
        return;
    moe_strbuf_puts(b, "| field | measured |\n|---|---|\n");
    row(b, "host", get(m, "host"));
    row(b, "captured at", get(m, "captured_at"));
    row(b, "Megatron version", get(m, "megatron_version"));
    row(b, "Megatron commit", get(m, "megatron_commit"));
    if (!json_is_string(get(m, "megatron_commit")))
        row(b, "why no commit", get(m, "megatron_commit_reason"));
    row(b, "GPU model", get(m, "gpu_model"));
    row(b, "GPU count", get(m, "gpu_count"));
    row(b, "GPU memory (MiB)", get(m, "gpu_memory_mib"));
    row(b, "driver", get(m, "driver"));
    moe_strbuf_puts(b, "\nTopology (nvidia-smi topo -m, measured):\n\n");
    code(b, json_is_string(get(m, "topology")) ? str(m, "topology") : "(not captured)");
}

static void run_heading(struct moe_strbuf *b, const json_t *r)
{
    moe_strbuf_printf(b, "#### %s: ", str(r, "role"));
    text(b, str(r, "name"));
    moe_strbuf_printf(b, " (candidate %.12s)\n\n", str(r, "id"));
}

static void commands(struct moe_strbuf *b, const json_t *runs)
{
    const json_t *r, *d;
    size_t i, j;

    moe_strbuf_puts(b, "### Commands and config diffs\n\n");
    json_array_foreach(runs, i, r) {
        const json_t *diff = get(r, "config_diff");

        run_heading(b, r);
        moe_strbuf_puts(b, "Command (");
        text(b, str(get(r, "command"), "where"));
        moe_strbuf_puts(b, "):\n\n");
        code(b, str(get(r, "command"), "shell"));
        if (!json_array_size(diff)) {
            moe_strbuf_puts(b, "Config diff against the baseline: none.\n\n");
            continue;
        }
        moe_strbuf_puts(b, "Config diff against the baseline (contract keys):\n\n"
                           "| key | baseline | this run |\n|---|---|---|\n");
        json_array_foreach(diff, j, d) {
            moe_strbuf_puts(b, "| ");
            text(b, str(d, "key"));
            moe_strbuf_puts(b, " | ");
            value(b, get(d, "baseline"));
            moe_strbuf_puts(b, " | ");
            value(b, get(d, "candidate"));
            moe_strbuf_puts(b, " |\n");
        }
        moe_strbuf_puts(b, "\n");
    }
}

static void proof(struct moe_strbuf *b, const json_t *runs)
{
    const json_t *r;
    size_t i;

    moe_strbuf_puts(b, "### What ran (the argument dump and logs against the request)\n\n"
                       "| run | verdict | in effect (from the log) | mismatches |\n"
                       "|---|---|---|---|\n");
    json_array_foreach(runs, i, r) {
        const json_t *p = get(r, "proof");

        moe_strbuf_puts(b, "| ");
        text(b, str(r, "name"));
        moe_strbuf_puts(b, " | ");
        text(b, p ? str(p, "verdict") : "no evidence: no log read");
        moe_strbuf_puts(b, " | ");
        value(b, get(p, "in_effect"));
        moe_strbuf_puts(b, " | ");
        value(b, get(p, "mismatches"));
        moe_strbuf_puts(b, " |\n");
    }
    moe_strbuf_puts(b, "\n");
}

/* A number of the table with its two decimals, "-" when absent. */
static void cell(struct moe_strbuf *b, const json_t *v)
{
    moe_strbuf_puts(b, " | ");
    value(b, v);
}

/* [lo, hi] as "lo .. hi", two decimals each. */
static void interval_cell(struct moe_strbuf *b, const json_t *ci)
{
    if (!json_is_number(json_array_get(ci, 0)) || !json_is_number(json_array_get(ci, 1))) {
        cell(b, NULL);
        return;
    }
    moe_strbuf_printf(b, " | %+.2f .. %+.2f", json_number_value(json_array_get(ci, 0)),
                      json_number_value(json_array_get(ci, 1)));
}

/* A p-value to three significant digits: a small one stays readable. */
static void p_cell(struct moe_strbuf *b, const json_t *p)
{
    if (json_is_number(p))
        moe_strbuf_printf(b, " | %.3g", json_number_value(p));
    else
        cell(b, NULL);
}

static void speed(struct moe_strbuf *b, const json_t *runs, const json_t *validate)
{
    const json_t *r;
    size_t i;

    moe_strbuf_printf(b, "### Step time and throughput (measured, unprofiled window %lld-%lld)"
                      "\n\n| run | role | median step ms (measured) | TFLOP/s/GPU (measured) | "
                      "step time vs baseline %% (measured) | 95%% interval | p | TFLOP/s/GPU vs "
                      "baseline %% (measured) | verdict |\n|---|---|---|---|---|---|---|---|---|\n",
                      (long long)json_integer_value(json_array_get(get(validate, "window"), 0)),
                      (long long)json_integer_value(json_array_get(get(validate, "window"), 1)));
    json_array_foreach(runs, i, r) {
        const json_t *m = get(r, "measured"), *vs = get(r, "versus_baseline");
        const json_t *ci = get(vs, "step_ms_delta_interval_95_pct");

        moe_strbuf_puts(b, "| ");
        text(b, str(r, "name"));
        moe_strbuf_printf(b, " | %s", str(r, "role"));
        cell(b, get(m, "step_ms_median"));
        cell(b, get(m, "tflops_per_gpu_median"));
        cell(b, get(vs, "step_ms_delta_pct"));
        interval_cell(b, ci);
        p_cell(b, get(vs, "p_value"));
        cell(b, get(vs, "tflops_delta_pct"));
        moe_strbuf_puts(b, " | ");
        text(b, vs ? str(vs, "verdict") : strcmp(str(m, "status"), "measured") == 0
                                              ? "reference" : str(m, "why"));
        moe_strbuf_puts(b, " |\n");
    }
    moe_strbuf_puts(b, "\n");
}

static void health(struct moe_strbuf *b, const json_t *runs)
{
    const json_t *r;
    size_t i;

    moe_strbuf_puts(b, "### Loss, skipped and NaN iterations, peak memory (measured)\n\n"
                       "| run | loss finite | skipped iterations | NaN iterations | "
                       "peak max allocated MiB |\n|---|---|---|---|---|\n");
    json_array_foreach(runs, i, r) {
        const json_t *m = get(r, "measured");

        moe_strbuf_puts(b, "| ");
        text(b, str(r, "name"));
        moe_strbuf_printf(b, " | %s", !get(m, "loss_finite") ? "-"
                                      : json_is_true(get(m, "loss_finite")) ? "yes" : "NO");
        cell(b, get(m, "skipped_iterations"));
        cell(b, get(m, "nan_iterations"));
        cell(b, get(m, "peak_max_allocated_mib"));
        moe_strbuf_puts(b, " |\n");
    }
    moe_strbuf_puts(b, "\n");
}

static void validate(struct moe_strbuf *b, const json_t *v, const char *gains)
{
    const json_t *runs = get(v, "runs");

    moe_strbuf_puts(b, "## The validate stage: baseline, each winner alone, the combination\n\n");
    if (absent(b, v))
        return;
    text(b, gains);
    moe_strbuf_puts(b, ".\n\n");
    commands(b, runs);
    proof(b, runs);
    speed(b, runs, v);
    health(b, runs);
}

/* The checkpoint verdict or the matched profiles, as the validate report
 * gives them. */
static void finding(struct moe_strbuf *b, const char *title, const json_t *f)
{
    char *dump;

    moe_strbuf_printf(b, "## %s\n\n", title);
    if (absent(b, f))
        return;
    moe_strbuf_puts(b, "From ");
    text(b, str(f, "source"));
    moe_strbuf_puts(b, ":\n\n");
    dump = json_dumps(get(f, "value"), JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    code(b, dump);
    free(dump);
}

/* A file of the pack as a relative link; only names the pack may hold
 * (letters, digits, dashes) are linked, anything else is text. */
static void link(struct moe_strbuf *b, const char *file)
{
    if (moe_evidence_pack_file_name(file))
        moe_strbuf_printf(b, "[%s](%s)", file, file);
    else
        text(b, file);
}

/* One plot: its file and sources, or why it is not drawn; the candidates
 * it leaves out, each with why. */
static void plot_entry(struct moe_strbuf *b, const char *what, const json_t *p)
{
    const json_t *k;
    size_t i;

    moe_strbuf_printf(b, "- %s: ", what);
    if (strcmp(str(p, "status"), "drawn") != 0) {
        moe_strbuf_puts(b, "**not drawn**: ");
        text(b, p ? str(p, "why") : "pack.json has no such plot");
        moe_strbuf_puts(b, "\n");
        return;
    }
    link(b, str(p, "file"));
    if (get(p, "modeled")) {
        moe_strbuf_puts(b, "; modeled: ");
        text(b, str(p, "modeled"));
        moe_strbuf_puts(b, "; measured: ");
        text(b, str(p, "measured"));
    } else {
        moe_strbuf_puts(b, "; ");
        text(b, str(p, "source"));
    }
    moe_strbuf_puts(b, "\n");
    json_array_foreach(get(p, "skipped"), i, k) {
        moe_strbuf_puts(b, "  - not plotted: ");
        text(b, str(k, "candidate"));
        moe_strbuf_puts(b, ": ");
        text(b, str(k, "why"));
        moe_strbuf_puts(b, "\n");
    }
}

static void plots(struct moe_strbuf *b, const json_t *p)
{
    const json_t *r;
    size_t i;

    moe_strbuf_puts(b, "## Plots\n\nOpen [index.html](index.html) in a browser (no network needed). Blue is "
                       "measured, orange the winner or the measured best; a modeled number is "
                       "moeflow's own and is called modeled.\n\n");
    plot_entry(b, "Step time per iteration, the validate winner beside the baseline",
               get(p, "step_time"));
    plot_entry(b, "Peak memory, measured against modeled (fit stage)", get(p, "memory"));
    plot_entry(b, "Step time, measured against modeled (scale stage)", get(p, "step"));
    json_array_foreach(get(p, "scale_rounds"), i, r) {
        moe_strbuf_printf(b, "- Scale round %lld ranking: ",
                          (long long)json_integer_value(get(r, "round")));
        link(b, str(r, "file"));
        moe_strbuf_puts(b, "; ");
        text(b, str(r, "source"));
        moe_strbuf_puts(b, "\n");
    }
    if (get(p, "scale_rounds_why") && !json_is_null(get(p, "scale_rounds_why"))) {
        moe_strbuf_puts(b, "- Scale rankings: **not drawn**: ");
        text(b, str(p, "scale_rounds_why"));
        moe_strbuf_puts(b, "\n");
    }
    if (json_array_size(get(p, "trail")))
        moe_strbuf_puts(b, "\n### Decisions (moeflow run's trail, each sealed)\n\n");
    json_array_foreach(get(p, "trail"), i, r) {
        moe_strbuf_puts(b, "- ");
        text(b, str(r, "file"));
        moe_strbuf_printf(b, ": %s round %lld: ", str(r, "stage"),
                          (long long)json_integer_value(get(r, "round")));
        text(b, str(r, "chose"));
        moe_strbuf_puts(b, " (rule ");
        text(b, str(r, "rule"));
        moe_strbuf_puts(b, ")\n");
    }
    json_array_foreach(get(p, "refused_decisions"), i, r) {
        moe_strbuf_puts(b, "- **warning**: refused ");
        text(b, str(r, "file"));
        moe_strbuf_puts(b, ": ");
        text(b, str(r, "why"));
        moe_strbuf_puts(b, "\n");
    }
    moe_strbuf_puts(b, "\n");
}

char *moe_evidence_pack_markdown(const json_t *pack)
{
    struct moe_strbuf b = { 0 };
    const json_t *env = get(pack, "environment");

    moe_strbuf_puts(&b, "# Evidence pack: ");
    text(&b, str(pack, "study"));
    moe_strbuf_puts(&b, "\n\nWritten by moeflow ");
    text(&b, str(pack, "moeflow_version"));
    moe_strbuf_puts(&b, " from the study directory alone (pack.json holds the same). Every "
                        "number is measured: from the runs' logs over the study's window, or "
                        "from the contract stage's capture; the only modeled numbers are the "
                        "plots' (under Plots), each called modeled and named by its source."
                        "\n\n");
    semantics(&b, get(pack, "semantics"));
    moe_strbuf_puts(&b, "## Environment: commit, container, hardware, topology\n\n");
    declared(&b, get(env, "declared"));
    measured_env(&b, get(env, "measured"));
    validate(&b, get(pack, "validate"), str(pack, "gains"));
    finding(&b, "Checkpoint verdict", get(pack, "checkpoint"));
    finding(&b, "Matched A/B profiles", get(pack, "profile_pairs"));
    if (get(pack, "plots"))
        plots(&b, get(pack, "plots"));
    return moe_strbuf_take(&b);
}
