/* The launcher split (study/launcher.h) that every stage runs and the
 * contract stage's capture reads: words, the Python that runs the trainer,
 * the entry script whose folder Megatron is imported from; and the
 * declared software the capture is told (study/capture.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/shquote.h"
#include "study/capture.h"
#include "study/capture_internal.h"
#include "study/launcher.h"
#include "study/launcher_internal.h"
#include "unit.h"

struct split_case {
    const char *why, *command;
    const char *words;      /* the words joined by '|' */
    const char *python, *entry;
};

static const struct split_case cases[] = {
    { "the default launcher: python, a relative entry script",
      "python pretrain_gpt.py", "python|pretrain_gpt.py", "python", "pretrain_gpt.py" },
    { "a container path", "python /opt/megatron-lm/pretrain_gpt.py",
      "python|/opt/megatron-lm/pretrain_gpt.py", "python", "/opt/megatron-lm/pretrain_gpt.py" },
    { "an interpreter by path, with its own option and trainer arguments after the script",
      "/usr/bin/python3.11 -u /opt/m/pretrain_gpt.py --foo", "/usr/bin/python3.11|-u|"
      "/opt/m/pretrain_gpt.py|--foo", "/usr/bin/python3.11", "/opt/m/pretrain_gpt.py" },
    { "torchrun is not an interpreter: python3",
      "torchrun --nproc-per-node 8 pretrain_gpt.py", "torchrun|--nproc-per-node|8|pretrain_gpt.py",
      "python3", "pretrain_gpt.py" },
    { "torchrun with a container path",
      "torchrun --nproc-per-node=8 /workspace/Megatron-LM/pretrain_gpt.py",
      "torchrun|--nproc-per-node=8|/workspace/Megatron-LM/pretrain_gpt.py", "python3",
      "/workspace/Megatron-LM/pretrain_gpt.py" },
    { "a wrapper before the interpreter: the interpreter word is found",
      "numactl --interleave=all python3 pretrain_gpt.py", "numactl|--interleave=all|python3|"
      "pretrain_gpt.py", "python3", "pretrain_gpt.py" },
    { "a path with spaces, single-quoted", "python '/opt/my megatron/pretrain_gpt.py'",
      "python|/opt/my megatron/pretrain_gpt.py", "python", "/opt/my megatron/pretrain_gpt.py" },
    { "a path with spaces, double-quoted", "python \"/opt/my megatron/pretrain_gpt.py\"",
      "python|/opt/my megatron/pretrain_gpt.py", "python", "/opt/my megatron/pretrain_gpt.py" },
    { "a path with spaces, backslash-escaped", "python /opt/my\\ megatron/pretrain_gpt.py",
      "python|/opt/my megatron/pretrain_gpt.py", "python", "/opt/my megatron/pretrain_gpt.py" },
    { "a path with spaces, unquoted: blanks split it, as the shell would",
      "python /opt/my megatron/pretrain_gpt.py", "python|/opt/my|megatron/pretrain_gpt.py",
      "python", "megatron/pretrain_gpt.py" },
    { "no .py word (a test double): python3, no entry script",
      "/src/tests/doubles/fake-megatron /src/argparse.txt",
      "/src/tests/doubles/fake-megatron|/src/argparse.txt", "python3", NULL },
    { "python -m: the interpreter without an entry script", "python -m megatron.training",
      "python|-m|megatron.training", "python", NULL },
    { "no expansion: $HOME and * stay as written",
      "python $HOME/m/*.py", "python|$HOME/m/*.py", "python", "$HOME/m/*.py" },
    { "not interpreters: mypython, python-config; .py alone is no script",
      "mypython python-config .py", "mypython|python-config|.py", "python3", NULL },
    { "blanks and tabs around words, an empty quoted word kept",
      "  python\t''  x.py ", "python||x.py", "python", "x.py" },
};

static char *joined(const json_t *words)
{
    size_t i, len = 1;
    json_t *w;
    char *out;

    json_array_foreach(words, i, w) len += strlen(json_string_value(w)) + 1;
    out = calloc(1, len);
    json_array_foreach(words, i, w) {
        if (i)
            strcat(out, "|");
        strcat(out, json_string_value(w));
    }
    return out;
}

static void launcher_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct split_case *c = &cases[i];
        struct moe_launcher l;
        struct moe_error e;
        char *w;

        moe_error_clear(&e);
        if (moe_launcher_parse(c->command, &l, &e) != 0)
            fail_msg("%s: %s", c->why, e.text);
        w = joined(l.words);
        if (strcmp(w, c->words) || strcmp(l.python, c->python) ||
            (c->entry ? !l.entry || strcmp(l.entry, c->entry) : l.entry != NULL))
            fail_msg("%s: [%s]\n  want %s / %s / %s\n  got  %s / %s / %s", c->why, c->command,
                     c->words, c->python, c->entry ? c->entry : "(none)", w, l.python,
                     l.entry ? l.entry : "(none)");
        free(w);
        moe_launcher_free(&l);
    }
}

/* A command that does not split is refused with the reason. */
static void launcher_errors(void **state)
{
    static const char *const bad[][2] = {
        { "python '/opt/x.py", "has a quote that is never closed" },
        { "python \"/opt/x.py", "has a quote that is never closed" },
        { "python x.py \\", "ends in a backslash" },
        { " \t ", "has no command" },
    };
    struct moe_launcher l;
    struct moe_error e;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        moe_error_clear(&e);
        assert_int_equal(moe_launcher_parse(bad[i][0], &l, &e), -1);
        assert_string_equal(e.text, bad[i][1]);
        assert_null(l.words);
    }
}

/* Quoting the split words again gives a command that splits back the same. */
static void split_round_trip(void **state)
{
    const char *cmd = "python '/opt/a b/it'\\''s.py' \"x\\\"y\" $Z";
    struct moe_error e;
    json_t *a, *b;
    char *q;

    (void)state;
    moe_error_clear(&e);
    assert_non_null(a = moe_shsplit(cmd, &e));
    assert_string_equal(json_string_value(json_array_get(a, 1)), "/opt/a b/it's.py");
    assert_string_equal(json_string_value(json_array_get(a, 2)), "x\"y");
    assert_non_null(q = moe_shquote_argv(a));
    assert_non_null(b = moe_shsplit(q, &e));
    assert_true(json_equal(a, b));
    free(q);
    json_decref(a);
    json_decref(b);
}

static const char *arg_after(const json_t *argv, const char *key)
{
    for (size_t i = 0; i + 1 < json_array_size(argv); i++)
        if (strcmp(json_string_value(json_array_get(argv, i)), key) == 0)
            return json_string_value(json_array_get(argv, i + 1));
    return NULL;
}

/* The capture is told each declared field; a dialect's version, and for
 * bridge-pin its commit; no entry script is passed as "". */
static void capture_arguments(void **state)
{
    struct moe_study s;
    struct moe_launcher l;
    struct moe_error e;
    json_t *argv;

    (void)state;
    memset(&s, 0, sizeof(s));
    moe_error_clear(&e);
    s.software.dialect = MOE_DIALECT_BRIDGE_PIN;
    s.software.transformer_engine = "2.9";   /* a study not loaded: nothing is freed */
    s.software.apex = true;
    s.software.hybridep = true;
    assert_int_equal(moe_launcher_parse("torchrun /opt/m/pretrain_gpt.py", &l, &e), 0);
    argv = moe_capture_argv(&s, &l, &e);
    assert_string_equal(arg_after(argv, "--entry"), "/opt/m/pretrain_gpt.py");
    assert_string_equal(arg_after(argv, "--megatron"), "bridge-pin");
    assert_string_equal(arg_after(argv, "--megatron-version"), "0.20");
    assert_string_equal(arg_after(argv, "--megatron-commit"), "2a75ac12");
    assert_string_equal(arg_after(argv, "--transformer-engine"), "2.9");
    assert_string_equal(arg_after(argv, "--apex"), "true");
    assert_string_equal(arg_after(argv, "--deepep"), "false");
    assert_string_equal(arg_after(argv, "--hybridep"), "true");
    json_decref(argv);
    moe_launcher_free(&l);

    s.software.dialect = MOE_DIALECT_CORE_0_19;
    s.software.transformer_engine = "";
    assert_int_equal(moe_launcher_parse("fake-megatron dump.txt", &l, &e), 0);
    argv = moe_capture_argv(&s, &l, &e);
    assert_string_equal(arg_after(argv, "--entry"), "");
    assert_string_equal(arg_after(argv, "--megatron-version"), "0.19");
    assert_null(arg_after(argv, "--megatron-commit"));
    assert_string_equal(arg_after(argv, "--transformer-engine"), "");
    json_decref(argv);

    /* a dialect the table does not know is refused, not read as another */
    s.software.dialect = (enum moe_dialect)MOE_DIALECT_COUNT;
    assert_null(moe_capture_argv(&s, &l, &e));
    assert_non_null(strstr(e.text, "no expected version for dialect"));
    /* a value that cannot be made is named, not dropped */
    s.software.dialect = MOE_DIALECT_CORE_0_19;
    s.software.transformer_engine = NULL;
    assert_null(moe_capture_argv(&s, &l, &e));
    assert_non_null(strstr(e.text, "capture_argv[7]"));
    moe_launcher_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launcher_cases),
        cmocka_unit_test(launcher_errors),
        cmocka_unit_test(split_round_trip),
        cmocka_unit_test(capture_arguments),
    };
    return MOE_RUN_TESTS(tests);
}
