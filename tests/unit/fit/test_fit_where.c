/* Where a configuration that does not fit would (fit/fit_where.h), and a
 * study's baseline judged by the fit ladder (study/baseline_fit.h): the
 * refusal `moeflow gen` and `moeflow run` give (issue 37).  The studies are
 * the bundled tiny one, as it is (it fits) and at sequence 32768 on GPUs of
 * 1 GiB (it fits nowhere on its 2 GPUs), and DeepSeek-V3 on 16 H100. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit/fit_where.h"
#include "study/baseline_fit.h"
#include "study/presets.h"
#include "study/study.h"
#include "study/study_fit.h"
#include "unit.h"

/* The tiny study's text with sed-like replacements (NULL: as it is). */
static char *tiny(const char *from, const char *to, const char *from2, const char *to2)
{
    char path[4096], *text, *out, *at;
    const char *dir = getenv("MOEFLOW_SRCDIR");
    FILE *f;
    long n;

    snprintf(path, sizeof(path), "%s/etc/studies/tiny-moe-2gpu.yaml", dir ? dir : ".");
    assert_non_null(f = fopen(path, "r"));
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    text = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    for (int k = 0; k < 2; k++) {
        const char *a = k ? from2 : from, *b = k ? to2 : to;

        if (!a)
            continue;
        assert_non_null(at = strstr(text, a));
        out = calloc(1, strlen(text) + strlen(b) + 1);
        memcpy(out, text, (size_t)(at - text));
        strcat(out, b);
        strcat(out, at + strlen(a));
        free(text);
        text = out;
    }
    return text;
}

static int baseline_of(const char *text, struct moe_error *err)
{
    struct moe_study s;
    int rc;

    assert_int_equal(moe_study_load_text(&s, "tiny.yaml", text, strlen(text), err), 0);
    rc = moe_study_baseline_fit(&s, err);
    moe_study_free(&s);
    return rc;
}

static void tiny_baseline_fits(void **state)
{
    char *text = tiny(NULL, NULL, NULL, NULL);
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(baseline_of(text, &err), 0);
    free(text);
}

/* Sequence 32768 on 1 GiB GPUs: no recompute or offload saves it on 2
 * GPUs; the refusal names the file, the field, the overshoot and the
 * smallest GPU count tried (2x, 4x) with a layout that fits: 8, 4 nodes. */
static void unfit_baseline_refused_naming_where(void **state)
{
    char *text = tiny("  nodes: 1\n", "  nodes: 1\n  gpu_memory_gib: 1\n", "seq_len: 1024",
                      "seq_len: 32768");
    struct moe_error err;

    (void)state;
    moe_error_clear(&err);
    assert_int_equal(baseline_of(text, &err), 1);
    printf("# %s\n", err.text);
    assert_string_equal(err.source, "tiny.yaml");
    assert_non_null(strstr(err.text, "lists what fits)"));
    assert_non_null(strstr(err.text, "baseline: does not fit in memory under any recompute"));
    assert_non_null(strstr(err.text, "> 0.9 GiB usable"));
    assert_non_null(strstr(err.text, "no layout fits on 2 GPUs; the smallest GPU count tried "
                                     "(2x, 4x, ...) with one that does is 8 (4 nodes)"));
    free(text);
}

/* The search itself: a layout that fits on the machine's own GPUs is
 * named there; DeepSeek-V3 on 16 H100 needs 64 (8 nodes), and its
 * layout's peak is within the usable memory. */
static void where_on_own_gpus_and_beyond(void **state)
{
    struct moe_train t;
    struct moe_machine c;
    struct moe_workload w = { .seq_len = 4096, .mbs = 1, .gbs = 8192 };
    struct moe_fit_where wh;
    struct moe_error err;
    char text[512];

    (void)state;
    moe_train_defaults(&t);
    moe_machine_defaults(&c);
    c.gpus = 16;
    moe_error_clear(&err);
    assert_int_equal(moe_fit_where(moe_preset_find("qwen3-30b-a3b"), &w, &t, &c, 8, &wh, &err),
                     0);
    assert_true(wh.found);
    assert_int_equal(wh.gpus, 16);
    assert_true(wh.peak_gib * MOE_GIB <= moe_machine_usable(&c));
    assert_non_null(strstr(moe_fit_where_text(&wh, &c, 8, text, sizeof(text)),
                            "the smallest layout that fits on these 16 GPUs is"));
    assert_int_equal(moe_fit_where(moe_preset_find("deepseek-v3"), &w, &t, &c, 8, &wh, &err), 0);
    assert_true(wh.found);
    assert_true(wh.gpus > 16 && wh.gpus % 16 == 0);
    printf("# deepseek-v3: %s\n", moe_fit_where_text(&wh, &c, 8, text, sizeof(text)));
    assert_non_null(strstr(text, "no layout fits on 16 GPUs"));
    assert_true(wh.peak_gib * MOE_GIB <= moe_machine_usable(&c));
    /* nothing within the factor: a GPU too small for any layout */
    c.gpu_mem_gib = 1;
    assert_int_equal(moe_fit_where(moe_preset_find("deepseek-v3"), &w, &t, &c, 8, &wh, &err), 0);
    assert_false(wh.found);
    assert_non_null(strstr(moe_fit_where_text(&wh, &c, 8, text, sizeof(text)),
                            "nor on up to 256 times as many"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_baseline_fits),
        cmocka_unit_test(unfit_baseline_refused_naming_where),
        cmocka_unit_test(where_on_own_gpus_and_beyond),
    };

    return MOE_RUN_TESTS(tests);
}
