/* The shared command line of the subcommands: getopt_long over a command's
 * option table, --help printed from the same table, usage errors. */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "core/layout_name.h"
#include "core/number.h"
#include "core/suggest.h"
#include "core/text.h"

#define MAX_OPTS 64

static const struct moe_opt help_opt = { "help", no_argument, 'h', NULL, NULL, .set = NULL };

/* getopt_long's view of the table: a short option's value is its letter,
 * a long-only option's is 256 + its index. */
struct getopt_view {
    struct option longopts[MAX_OPTS + 2];
    char shortopts[2 * MAX_OPTS + 4];
};

static void getopt_view(const struct moe_cli *cli, struct getopt_view *v)
{
    size_t i, s = 0;

    for (i = 0; cli->opts[i].name && i < MAX_OPTS; i++) {
        const struct moe_opt *o = &cli->opts[i];

        v->longopts[i] = (struct option){ o->name, o->has_arg, NULL, o->key ? o->key : 256 + (int)i };
        if (o->key) {
            v->shortopts[s++] = (char)o->key;
            if (o->has_arg == required_argument)
                v->shortopts[s++] = ':';
        }
    }
    v->longopts[i++] = (struct option){ help_opt.name, help_opt.has_arg, NULL, help_opt.key };
    v->longopts[i] = (struct option){ NULL, 0, NULL, 0 };
    v->shortopts[s++] = (char)help_opt.key;
    v->shortopts[s] = '\0';
}

static const struct moe_opt *find_opt(const struct moe_cli *cli, int c)
{
    if (c >= 256)
        return &cli->opts[c - 256];
    for (const struct moe_opt *o = cli->opts; o->name && c != '?'; o++)
        if (o->key == c)
            return o;
    return NULL;
}

/* After getopt_long refused an option: names the closest long option to
 * the one just refused ("did you mean --json?"), so a typo costs one retry. */
static void suggest_option(int argc, char **argv, const struct option *longopts)
{
    const char *names[MAX_OPTS + 2], *near;
    char word[128];
    int n = 0;

    if (optind < 1 || optind > argc || strncmp(argv[optind - 1], "--", 2) != 0)
        return;
    /* a message: only for a suggestion; a cut word is longer than any
     * option name, so it matches none */
    snprintf(word, sizeof(word), "%s", argv[optind - 1] + 2);
    word[strcspn(word, "=")] = '\0';
    for (; longopts->name && n < MAX_OPTS + 2; longopts++) {
        /* the option exists: getopt refused its argument, and said so */
        if (strcmp(longopts->name, word) == 0)
            return;
        names[n++] = longopts->name;
    }
    near = moe_suggest(word, names, n);
    if (near)
        fprintf(stderr, "%s: did you mean --%s?\n", argv[0], near);
}

/* An option's value lands in messages, scripts and files: the one rule for
 * text (core/text.h) holds for it, the option named as it was typed. */
static int control_in_value(int argc, char **argv, const struct moe_opt *o, const char *value)
{
    const char *typed = optind >= 2 && optind <= argc && argv[optind - 1] == value
                            ? argv[optind - 2] : argv[optind - 1];
    struct moe_error err;
    char name[80];

    if (strncmp(typed, "--", 2) == 0 || !o->key)
        /* fits: option names are short constants of the command tables */
        snprintf(name, sizeof(name), "--%s", o->name);
    else
        /* fits: "-" and one character */
        snprintf(name, sizeof(name), "-%c", o->key);
    moe_error_clear(&err);
    if (moe_text_check(name, value, &err) == 0)
        return 0;
    moe_cli_report(&err);
    return -1;
}

int moe_cli_parse(const struct moe_cli *cli, int argc, char **argv, void *args, int *first)
{
    struct getopt_view v;
    int c, rc;

    getopt_view(cli, &v);
    optind = 0;
    while ((c = getopt_long(argc, argv, v.shortopts, v.longopts, NULL)) != -1) {
        const struct moe_opt *o = find_opt(cli, c);

        if (c == help_opt.key) {
            moe_cli_help(cli, stdout);
            return MOE_EXIT_OK;
        }
        if (!o) {
            suggest_option(argc, argv, v.longopts);
            return moe_cli_misuse(cli);
        }
        if (optarg && control_in_value(argc, argv, o, optarg) != 0)
            return MOE_EXIT_USAGE;
        if ((rc = o->set(args, o, optarg)) != MOE_CLI_RUN)
            return rc;
    }
    *first = optind;
    return MOE_CLI_RUN;
}

const char *moe_cli_first_operand(const struct moe_cli *cli, int argc, char **argv)
{
    const char *operand = NULL;
    struct getopt_view v;
    bool bad = false;
    int c;

    getopt_view(cli, &v);
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, v.shortopts, v.longopts, NULL)) != -1)
        bad |= c == '?';
    if (optind < argc && !bad)
        operand = argv[optind];
    optind = 0;
    opterr = 1;
    return operand;
}

/* One entry of the list: the label padded to the column (two spaces after
 * a label that fills it), the text's further lines indented to it. */
static void list_option(FILE *m, const struct moe_cli *cli, const struct moe_opt *o)
{
    char label[128];
    int width = cli->column - 2;

    if (o->label)
        /* a message: a --help label; the tables' labels are short */
        snprintf(label, sizeof(label), "%s", o->label);
    else if (cli->shorts && o->key)
        /* a message: as above */
        snprintf(label, sizeof(label), "-%c, --%s%s%s", o->key, o->name, o->meta ? " " : "",
                 o->meta ? o->meta : "");
    else
        /* a message: as above */
        snprintf(label, sizeof(label), "--%s%s%s", o->name, o->meta ? " " : "",
                 o->meta ? o->meta : "");
    fprintf(m, "  %-*s%s", width, label, (int)strlen(label) >= width ? "  " : "");
    for (const char *p = o->help; *p; p++) {
        fputc(*p, m);
        if (*p == '\n')
            fprintf(m, "%*s", cli->column, "");
    }
    fputc('\n', m);
}

void moe_cli_help(const struct moe_cli *cli, FILE *out)
{
    char *format = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&format, &len);

    if (!m)
        return;
    fputs(cli->usage, m);
    for (const struct moe_opt *o = cli->opts; o->name; o++)
        if (o->help)
            list_option(m, cli, o);
    fputs(cli->tail ? cli->tail : "", m);
    if (fclose(m) == 0) {
        if (cli->values)
            cli->values(out, format);
        else
            moe_cli_printf(out, format);
    }
    free(format);
}

int moe_cli_misuse(const struct moe_cli *cli)
{
    moe_cli_help(cli, stderr);
    return MOE_EXIT_USAGE;
}

int moe_cli_missing(const struct moe_cli *cli, const char *cmd, const char *what)
{
    const char *nl = strchr(cli->usage, '\n');

    fprintf(stderr, "moeflow %s: %s\n%.*s\n(moeflow %s --help for every option)\n", cmd, what,
            nl ? (int)(nl - cli->usage) : (int)strlen(cli->usage), cli->usage, cmd);
    return MOE_EXIT_USAGE;
}

int moe_opt_flag(void *args, const struct moe_opt *o, char *value)
{
    (void)value;
    *(bool *)((char *)args + o->field) = true;
    return MOE_CLI_RUN;
}

int moe_opt_string(void *args, const struct moe_opt *o, char *value)
{
    *(const char **)((char *)args + o->field) = value;
    return MOE_CLI_RUN;
}

static int bad_number(const char *name, const char *value, const struct moe_error *e)
{
    struct moe_error out;

    moe_error_clear(&out);
    moe_error_set(&out, "--%s '%.40s': %s", name, value, e->text);
    moe_cli_report(&out);
    return MOE_EXIT_USAGE;
}

int moe_cli_long(const char *name, const char *value, long min, long max, long *out)
{
    struct moe_error e;

    moe_error_clear(&e);
    if (moe_number_parse_long(value, min, max, out, &e) < 0)
        return bad_number(name, value, &e);
    return MOE_CLI_RUN;
}

int moe_cli_double(const char *name, const char *value, double min, bool min_open, double max,
                   double *out)
{
    struct moe_error e;
    double v;

    moe_error_clear(&e);
    if (moe_number_parse_double(value, min, max, &v, &e) < 0 ||
        moe_number_check(v, min, min_open, max, &e) < 0)
        return bad_number(name, value, &e);
    *out = v;
    return MOE_CLI_RUN;
}

int moe_opt_int(void *args, const struct moe_opt *o, char *value)
{
    long v;
    int rc = moe_cli_long(o->name, value, o->min, o->max, &v);

    if (rc == MOE_CLI_RUN)
        *(int *)((char *)args + o->field) = (int)v;
    return rc;
}

int moe_cli_layout(const char *name, const char *value, struct moe_layout *l)
{
    static bool noted;
    enum moe_layout_form form;
    char dotted[MOE_LAYOUT_NAME_MAX];
    struct moe_error err;

    moe_error_clear(&err);
    /* the error's source is the value: "tp2.xp4:1:5: 'xp4' is not ..." */
    if (moe_layout_name_parse(value, l, &form, &err) != 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    /* said once: a script that gives several layouts needs one hint */
    if (form == MOE_LAYOUT_KEYVALUE && !noted) {
        noted = true;
        fprintf(stderr, "moeflow: note: --%s %s is the older form; write %s, the notation "
                "every command prints and reads\n", name, value,
                moe_layout_name(l, dotted, sizeof(dotted)));
    }
    return MOE_CLI_RUN;
}

void moe_cli_note_alias(const char *old, const char *now)
{
    static const char *noted[8];
    size_t i;

    /* once for each older name: an option repeated is one habit */
    for (i = 0; i < sizeof(noted) / sizeof(noted[0]) && noted[i]; i++)
        if (strcmp(noted[i], old) == 0)
            return;
    if (i < sizeof(noted) / sizeof(noted[0]))
        noted[i] = old;
    fprintf(stderr, "moeflow: note: %s is read as %s; write %s\n", old, now, now);
}

const char *moe_cli_window_steps(const char *value)
{
    if (strncmp(value, "steps=", 6) != 0)
        return value;
    moe_cli_note_alias("--window steps=A-B", "--window A-B");
    return value + 6;
}

int moe_cli_printf(FILE *out, const char *format, ...)
{
    va_list ap;
    int n;

    va_start(ap, format);
    n = vfprintf(out, format, ap);
    va_end(ap);
    return n;
}

/* A message may quote a file's bytes (Jansson's "near '...'") or a path:
 * no control character of theirs reaches the terminal. */
void moe_cli_report(const struct moe_error *err)
{
    char buf[sizeof(err->text) + MOE_ERROR_SOURCE_MAX + 32], shown[4 * MOE_ERROR_TEXT_MAX];
    char *line = buf, *next;

    moe_error_format(err, buf, sizeof(buf));
    /* an error standing for several puts each on a line of its own: the
     * newlines are the list's, each line's bytes are shown visible */
    for (const char *prefix = "moeflow: "; line; line = next, prefix = "") {
        if ((next = err->count > 1 ? strchr(line, '\n') : NULL))
            *next++ = '\0';
        fprintf(stderr, "%s%s\n", prefix, moe_text_visible(line, shown, sizeof(shown)));
    }
}

int moe_cli_fail(const struct moe_error *err, int code)
{
    moe_cli_report(err);
    return code;
}

int moe_cli_error(int code, const char *format, ...)
{
    va_list ap;

    va_start(ap, format);
    vfprintf(stderr, format, ap);
    va_end(ap);
    return code;
}

int moe_cli_json(json_t *j, size_t flags)
{
    int rc = j ? json_dumpf(j, stdout, flags) : -1;

    if (rc == 0)
        putchar('\n');
    json_decref(j);
    return rc;
}
