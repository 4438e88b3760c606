/* Every subcommand's command line comes from one table: each option's
 * names, argument, help text and setter.  Parsing, --help, the usage on a
 * mistake and the "did you mean" hint all read that table, so the option
 * list a command prints cannot drift from the options it accepts. */
#ifndef MOEFLOW_OPTIONS_H
#define MOEFLOW_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "core/error.h"
#include "core/model.h"

/* From the parser and the setters: parsing goes on and the command runs.
 * Any other value is the exit code to return at once. */
#define MOE_CLI_RUN (-1)

struct moe_opt;

/* Stores VALUE (NULL for an option without argument) into ARGS; returns
 * MOE_CLI_RUN or an exit code, having said why on stderr. */
typedef int moe_opt_setter(void *args, const struct moe_opt *o, char *value);

struct moe_opt {
    const char *name;   /* long name, without "--" */
    int has_arg;        /* no_argument or required_argument */
    int key;            /* short option letter; 0: long only */
    const char *meta;   /* the argument's name in the option list */
    const char *help;   /* its text in the list, a printf format (see moe_cli.values);
                           NULL: not listed (the usage text covers it) */
    moe_opt_setter *set;
    size_t field;       /* moe_opt_flag, moe_opt_string: offsetof the member they set */
    const char *label;  /* the list's "-o DIR" instead of the one made from the names */
    long min, max;      /* moe_opt_int: the range of the value */
};

struct moe_cli {
    const char *usage;          /* synopsis and text above the option list */
    const struct moe_opt *opts; /* ended by a NULL name; --help (-h) comes with it */
    int column;                 /* where the option texts start in the list */
    bool shorts;                /* list options as "-o, --output DIR" */
    const char *tail;           /* text below the list: the example */
    /* The texts are printf formats when the help shows values that live
     * elsewhere (defaults, choices): this prints FORMAT with them through
     * moe_cli_printf.  NULL: the texts have none. */
    void (*values)(FILE *out, const char *format);
};

/* Parses argv (argv[0] is "moeflow CMD", for getopt's messages) into ARGS
 * through the setters.  Returns MOE_CLI_RUN with *first set to the index of
 * the first operand, else the exit code: 0 after --help, MOE_EXIT_USAGE
 * after an unknown option (with the closest option's name and the usage on
 * stderr), or what a setter returned. */
int moe_cli_parse(const struct moe_cli *cli, int argc, char **argv, void *args, int *first);

/* The first operand, found without running any setter; NULL when there is
 * none or an option is wrong, which moe_cli_parse then reports. */
const char *moe_cli_first_operand(const struct moe_cli *cli, int argc, char **argv);

/* The usage, option list and example. */
void moe_cli_help(const struct moe_cli *cli, FILE *out);

/* The help on stderr, for a wrong command line; returns MOE_EXIT_USAGE. */
int moe_cli_misuse(const struct moe_cli *cli);

/* What is missing from a command line, said first, with the first usage
 * line and where the rest is: "moeflow gen: missing -o DIR ...". */
int moe_cli_missing(const struct moe_cli *cli, const char *cmd, const char *what);

/* Setters for a bool member (set to true) and a const char * member. */
int moe_opt_flag(void *args, const struct moe_opt *o, char *value);
int moe_opt_string(void *args, const struct moe_opt *o, char *value);

/* The one parser of a numeric option's value, through core/number.h: a
 * whole number, or a finite number, in [min, max] (above min when
 * min_open).  A bad value gets "moeflow: --NAME 'VALUE': why" on stderr
 * and MOE_EXIT_USAGE; else MOE_CLI_RUN with *out set.  NAME is given
 * without its dashes. */
int moe_cli_long(const char *name, const char *value, long min, long max, long *out);
int moe_cli_double(const char *name, const char *value, double min, bool min_open, double max,
                   double *out);

/* Setter for an int member whose range is the option's min and max. */
int moe_opt_int(void *args, const struct moe_opt *o, char *value);

/* The layout given as --NAME VALUE (NAME without its dashes), in the one
 * notation of core/layout_name.h.  The older key=value form is read with
 * a note on stderr, once a run, giving its dotted spelling; a bad layout
 * gets the parser's message and MOE_EXIT_INVALID_INPUT (as
 * moeflow place always answered one).  Else MOE_CLI_RUN. */
int moe_cli_layout(const char *name, const char *value, struct moe_layout *l);

/* An option's older name or spelling, still read: "moeflow: note: --OLD
 * is read as --NOW; write --NOW" on stderr, once a run for each OLD. */
void moe_cli_note_alias(const char *old, const char *now);

/* --window's value with an older "steps=" before the steps taken off
 * (with a note): every command writes a window of steps as A-B. */
const char *moe_cli_window_steps(const char *value);

/* fprintf for moe_cli.values: the format comes from the option table. */
int moe_cli_printf(FILE *out, const char *format, ...);

/* Prints "moeflow: <formatted error>" to stderr. */
void moe_cli_report(const struct moe_error *err);

/* moe_cli_report(err), then returns CODE. */
int moe_cli_fail(const struct moe_error *err, int code);

/* The message to stderr as given, then returns CODE. */
int moe_cli_error(int code, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* J on stdout with FLAGS and a newline; drops the reference.  -1 when J
 * is NULL (the builder failed: the caller says why) or cannot be written. */
int moe_cli_json(json_t *j, size_t flags);

#endif
