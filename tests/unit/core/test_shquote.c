/* Shell quoting (lib/core/shquote.c) checked by the shell itself: hostile
 * strings quoted by moe_shquote pass `bash -n`, come back byte for byte
 * from bash (as words and through eval), and from moe_shsplit, which in
 * turn splits launcher commands as bash does; moe_sbatch_quote's values
 * come back from sbatch's own reading of an #SBATCH line (src/sbatch/opt.c
 * _get_argument, re-implemented below from shquote.h's description). */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/shquote.h"
#include "core/strv.h"
#include "unit.h"

static const char *const hostile[] = {
    "", " ", "plain", "two words", "it's", "''", "'", "\"", "\"quoted\"", "a\\b", "\\",
    "end\\", "$HOME", "${PATH}", "$(id)", "`id`", "*", "?", "[ab]", "~", "~root", "a;b", "a&b",
    "a|b", "a>b", "a<b", "{a,b}", "!", "!!", "#comment", "a#b", "tab\there", "x=1", "--flag=v",
    "-n", "'$HOME'", "\"$HOME\"", "a'b\"c\\d$e`f", "\\'", "'\\''", "ünïcödé", "%s%n", "a\nb", NULL,
};

/* Writes text to a temporary file; its name in path (PATH_MAX enough). */
static void write_tmp(char *path, const char *text)
{
    int fd;

    snprintf(path, 64, "/tmp/moeflow-shquote-XXXXXX");
    assert_true((fd = mkstemp(path)) >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* The output of `bash FILE` (or `bash -n FILE`), NUL bytes and all. */
static size_t run_bash(const char *opt, const char *file, char *out, size_t size, int *status)
{
    char cmd[256];
    FILE *p;
    size_t n;

    snprintf(cmd, sizeof(cmd), "bash %s %s 2>&1", opt, file);
    assert_non_null(p = popen(cmd, "r"));
    n = fread(out, 1, size, p);
    *status = pclose(p);
    return n;
}

/* printf '%s\0' over words in bash (directly, or re-parsed by eval): the
 * words bash sees, NUL-separated, against want[]. */
static void bash_words_are(const char *words, const char *const *want, size_t nwant, bool eval)
{
    char file[64], qfile[64], *script, out[65536];
    size_t n, at = 0;
    int status;

    if (eval) {
        write_tmp(qfile, words);
        assert_non_null(script = malloc(strlen(qfile) + 128));
        sprintf(script, "eval \"printf '%%s\\0' $(cat %s)\"\n", qfile);
    } else {
        assert_non_null(script = malloc(strlen(words) + 64));
        sprintf(script, "printf '%%s\\0' %s\n", words);
    }
    write_tmp(file, script);
    n = run_bash("-n", file, out, sizeof(out), &status);
    if (status != 0)
        fail_msg("bash -n refuses %s: %.*s", script, (int)n, out);
    n = run_bash("", file, out, sizeof(out), &status);
    assert_int_equal(status, 0);
    for (size_t i = 0; i < nwant; i++) {
        size_t len = strlen(want[i]);

        if (at + len + 1 > n || memcmp(out + at, want[i], len) != 0 || out[at + len] != '\0')
            fail_msg("%s: word %zu should be '%s'; bash printed '%.*s'", eval ? "eval" : "bash", i,
                     want[i], (int)(n - at), out + at);
        at += len + 1;
    }
    if (at != n)
        fail_msg("bash printed %zu bytes more than the %zu words", n - at, nwant);
    unlink(file);
    if (eval)
        unlink(qfile);
    free(script);
}

static size_t count(const char *const *v)
{
    size_t n = 0;

    while (v[n])
        n++;
    return n;
}

/* Each string alone, then all as one argument list. */
static void bash_reads_back_every_string(void **state)
{
    json_t *argv = json_array();
    char *q;

    (void)state;
    for (size_t i = 0; hostile[i]; i++) {
        assert_non_null(q = moe_shquote(hostile[i]));
        bash_words_are(q, &hostile[i], 1, false);
        free(q);
        json_array_append_new(argv, json_string(hostile[i]));
    }
    assert_non_null(q = moe_shquote_argv(argv));
    bash_words_are(q, hostile, count(hostile), false);
    free(q);
    json_decref(argv);
}

static void eval_reads_back_every_string(void **state)
{
    json_t *argv = json_array();
    char *q;

    (void)state;
    for (size_t i = 0; hostile[i]; i++)
        json_array_append_new(argv, json_string(hostile[i]));
    assert_non_null(q = moe_shquote_argv(argv));
    bash_words_are(q, hostile, count(hostile), true);
    free(q);
    json_decref(argv);
}

/* KEY=value pairs, keys sorted, values whatever they hold. */
static void environment_reads_back(void **state)
{
    const char *const given[] = { "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                                  "B_QUOTE=it's \"x\"", "A_DOLLAR=$HOME `id`", "C_EMPTY=" };
    struct moe_strv env = {0};
    const char *const want[] = { "A_DOLLAR=$HOME `id`", "B_QUOTE=it's \"x\"", "C_EMPTY=",
                                 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" };
    char *q;

    (void)state;
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(moe_strv_push(&env, given[i]), 0);
    assert_non_null(q = moe_shquote_env(&env));
    bash_words_are(q, want, 4, false);
    free(q);
    moe_strv_free(&env);
}

/* Safe strings stay as they are (the scripts stay readable); the empty
 * string is '' (an argument, not nothing). */
/* An environment's entries are found and set by NAME: A=x is not AB=2. */
static void environment_entries_by_name(void **state)
{
    struct moe_strv env = { 0 };

    (void)state;
    moe_strv_push(&env, "AB=2");
    moe_strv_push(&env, "A=1");
    assert_int_equal(moe_strv_env_find(&env, "A=x"), 1);
    assert_int_equal(moe_strv_env_find(&env, "AB"), 0);
    assert_int_equal(moe_strv_env_find(&env, "B=1"), -1);
    assert_int_equal(moe_strv_env_set(&env, "A=3"), 0);
    assert_int_equal(moe_strv_env_set(&env, "C=4"), 0);
    assert_int_equal(env.n, 3);
    assert_string_equal(env.v[0], "AB=2");
    assert_string_equal(env.v[1], "A=3");
    assert_string_equal(env.v[2], "C=4");
    moe_strv_free(&env);
}

static void only_what_needs_quotes_is_quoted(void **state)
{
    const char *const safe[] = { "plain", "--flag=v", "/a/b.c", "x@y:1,2+3%4_5", NULL };
    char *q;

    (void)state;
    for (size_t i = 0; safe[i]; i++) {
        assert_non_null(q = moe_shquote(safe[i]));
        assert_string_equal(q, safe[i]);
        free(q);
    }
    assert_non_null(q = moe_shquote(""));
    assert_string_equal(q, "''");
    free(q);
    assert_non_null(q = moe_shquote("it's"));
    assert_string_equal(q, "'it'\\''s'");
    free(q);
}

/* moe_shsplit undoes moe_shquote_argv, and splits a command line as bash
 * does (without expansions: every test string below expands to itself). */
static void shsplit_agrees_with_bash(void **state)
{
    const char *const lines[] = {
        "python pretrain_gpt.py", "  torchrun  --nproc-per-node 8   train.py ",
        "a 'b c' \"d e\" f\\ g", "\"a\\\"b\" 'c\\d' \"e\\\\f\" \"g\\`h\" \"i\\$j\" \"k\\l\"",
        "a''b \"\"c d\"\"", "'it'\\''s'", NULL,
    };
    json_t *argv = json_array(), *back;
    struct moe_error e;
    char *q;

    (void)state;
    for (size_t i = 0; hostile[i]; i++)
        json_array_append_new(argv, json_string(hostile[i]));
    assert_non_null(q = moe_shquote_argv(argv));
    assert_non_null(back = moe_shsplit(q, &e));
    assert_true(json_equal(back, argv));
    free(q);
    json_decref(back);
    json_decref(argv);
    for (size_t i = 0; lines[i]; i++) {
        const char *want[32];
        size_t n;

        assert_non_null(back = moe_shsplit(lines[i], &e));
        n = json_array_size(back);
        assert_true(n < 32);
        for (size_t k = 0; k < n; k++)
            want[k] = json_string_value(json_array_get(back, k));
        bash_words_are(lines[i], want, n, false);
        json_decref(back);
    }
}

/* sbatch's reading of one #SBATCH argument (shquote.h): quotes group and
 * are dropped, a backslash keeps the next character even inside quotes,
 * an unquoted blank or '#' ends the argument. */
static void sbatch_argument(const char *s, char *out)
{
    char quote = 0;

    for (; *s; s++) {
        if (*s == '\\' && s[1]) {
            *out++ = *++s;
        } else if (quote ? *s == quote : (*s == '"' || *s == '\'')) {
            quote = quote ? 0 : *s;
        } else if (!quote && (*s == ' ' || *s == '\t' || *s == '#')) {
            break;
        } else {
            *out++ = *s;
        }
    }
    *out = '\0';
}

static void sbatch_reads_back_every_value(void **state)
{
    struct moe_error e;
    char *q, back[1024];

    (void)state;
    for (size_t i = 0; hostile[i]; i++) {
        if (strchr(hostile[i], '\n') || strchr(hostile[i], '\t'))
            continue; /* control characters are refused, below */
        assert_non_null(q = moe_sbatch_quote(hostile[i], &e));
        sbatch_argument(q, back);
        if (strcmp(back, hostile[i]) != 0)
            fail_msg("'%s' quoted as %s reads back as '%s'", hostile[i], q, back);
        free(q);
    }
    assert_null(moe_sbatch_quote("a\nb", &e));
    assert_null(moe_sbatch_quote("my-PackJob", &e));
}

/* A word under the study's folder reads back as an absolute path under the
 * folder the script sets, hostile bytes and all; any other word as itself. */
static void rooted_words_read_back_under_the_root(void **state)
{
    const char *words[] = { "--tensorboard-dir", "results/validate/profile-$(id) x", "results",
                            "xresults/a", "--save", "results/it's" };
    const char *want[] = { "--tensorboard-dir", "/st dy/results/validate/profile-$(id) x",
                           "results", "xresults/a", "--save", "/st dy/results/it's" };
    char file[64], out[4096], *q, *text;
    size_t n, at = 0;
    int status;

    (void)state;
    assert_non_null(q = moe_shquote_words_rooted(words, 6, "results/", "\"$study\"/"));
    assert_non_null(text = malloc(strlen(q) + 64));
    sprintf(text, "study='/st dy'\nprintf '%%s\\0' %s\n", q);
    write_tmp(file, text);
    n = run_bash("", file, out, sizeof(out), &status);
    assert_int_equal(status, 0);
    for (size_t i = 0; i < 6; i++) {
        size_t len = strlen(want[i]);

        if (at + len + 1 > n || memcmp(out + at, want[i], len) != 0 || out[at + len] != '\0')
            fail_msg("word %zu should be '%s'; bash printed '%.*s'", i, want[i], (int)(n - at),
                     out + at);
        at += len + 1;
    }
    assert_int_equal(at, n);
    unlink(file);
    free(text);
    free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bash_reads_back_every_string),
        cmocka_unit_test(eval_reads_back_every_string),
        cmocka_unit_test(environment_reads_back),
        cmocka_unit_test(environment_entries_by_name),
        cmocka_unit_test(only_what_needs_quotes_is_quoted),
        cmocka_unit_test(shsplit_agrees_with_bash),
        cmocka_unit_test(sbatch_reads_back_every_value),
        cmocka_unit_test(rooted_words_read_back_under_the_root),
    };

    return MOE_RUN_TESTS(tests);
}
