/* moeflow gen end to end, in memory (issue 21): a study (YAML, with an
 * optional first line "# -o PATH" for the study directory), loaded,
 * planned, then every file rendered from the real templates.  Whatever
 * the study's strings hold, the scripts keep their structure:
 *   - no control character but newlines; every #SBATCH line before the
 *     first command;
 *   - sbatch reads one argument per #SBATCH line; --moe-study is the study
 *     directory and --job-name moeflow-NAME-STAGE, exactly;
 *   - every line has the shell skeleton (gen_check.h) of the same study
 *     rendered with plain stand-ins for its free strings: no value adds a
 *     line, a word, an operator or a comment.
 * A study directory holding a control character must be refused.  A
 * broken invariant aborts (a finding). */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "fuzz.h"
#include "gen_check.h"
#include "study/launcher.h"
#include "study/stagegen.h"
#include "study/study.h"
#include "study/launcher_internal.h"
#include "study/study_internal.h"

#define DIE(...) (fprintf(stderr, "fuzz_gen: " __VA_ARGS__), fputc('\n', stderr), abort())

/* The launcher is split as the shell splits a simple command (quotes and
 * all, study/launcher.h): as many plain words, where the Python and the
 * entry script stay what they are, as the contract stage reads them. */
static char *plain_launcher(const struct moe_study *s)
{
    struct moe_launcher l;
    struct moe_error err;
    char *plain;
    size_t used = 0, i, len;
    json_t *w;

    moe_error_clear(&err);
    if (moe_launcher_parse(s->cluster.launcher, &l, &err) < 0)
        DIE("a loaded study's launcher does not split: %s", err.text);
    /* each word becomes at most "python" and a blank */
    len = json_array_size(l.words) * 7 + 1;
    if (!(plain = calloc(1, len)))
        DIE("out of memory");
    json_array_foreach(l.words, i, w) {
        const char *word = json_string_value(w);
        const char *stand = word == l.python ? "python" : word == l.entry ? "p.py" : "p";
        used += (size_t)snprintf(plain + used, len - used, "%s%s", i ? " " : "", stand);
        if (used >= len)
            DIE("the plain launcher does not fit");
    }
    moe_launcher_free(&l);
    return plain;
}

/* Plain stand-ins that keep emptiness (a non-empty data path adds
 * --data-path; an empty image drops --container-image). */
/* s is a shallow copy of a loaded study: its strings are pointed
 * elsewhere, never freed; the launcher's stand-in is the caller's to free. */
static char *plain_strings(struct moe_study *s)
{
    static char plain[] = "plain", ten[] = "10";
    char **strs[] = { &s->cluster.partition, &s->cluster.account, &s->cluster.container_image,
                      &s->cluster.container_mounts, &s->data_path };

    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        if ((*strs[i])[0])
            *strs[i] = plain;
    s->name = plain;
    s->cluster.time_limit = ten;
    return s->cluster.launcher = plain_launcher(s);
}

static const struct moe_gen_file *find(const struct moe_gen_output *o, const char *name)
{
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->files[i].name, name) == 0)
            return &o->files[i];
    return NULL;
}

static bool is_script(const char *name)
{
    size_t n = strlen(name);

    return (n > 3 && strcmp(name + n - 3, ".sh") == 0) ||
           (n > 7 && strcmp(name + n - 7, ".sbatch") == 0);
}

/* --moe-study and --job-name as sbatch reads them. */
static void check_sbatch_line(const char *line, const struct moe_study *s, const char *stage,
                              const char *dir)
{
    char arg[8192], want[8192];

    if (gen_check_sbatch_args(line, arg, sizeof(arg)) != 1)
        DIE("sbatch reads other than one argument from: %s", line);
    if (strncmp(arg, "--moe-study=", 12) == 0 && strcmp(arg + 12, dir) != 0)
        DIE("--moe-study reads back as '%s', not '%s'", arg + 12, dir);
    snprintf(want, sizeof(want), "--job-name=moeflow-%s-%s", s->name, stage);
    if (strncmp(arg, "--job-name=", 11) == 0 && strcmp(arg, want) != 0)
        DIE("'%s' is not '%s'", arg, want);
}

static void check_lines(const struct moe_gen_file *f, const struct moe_gen_file *plain,
                        const struct moe_study *s, const char *dir)
{
    const char *p = f->data, *q = plain->data, *pe = p + f->len, *qe = q + plain->len;
    char stage[64], a[8192], b[8192];
    int line = 1;

    snprintf(stage, sizeof(stage), "%.*s", (int)strcspn(f->name, "."), f->name);
    for (; p < pe && q < qe; line++) {
        const char *e = memchr(p, '\n', (size_t)(pe - p)), *g = memchr(q, '\n', (size_t)(qe - q));

        e = e ? e : pe;
        g = g ? g : qe;
        if (e - p >= 7 && memcmp(p, "#SBATCH", 7) == 0) {
            snprintf(a, sizeof(a), "%.*s", (int)(e - p), p);
            check_sbatch_line(a, s, stage, dir);
        }
        gen_check_skeleton(p, (size_t)(e - p), a, sizeof(a));
        gen_check_skeleton(q, (size_t)(g - q), b, sizeof(b));
        if (strcmp(a, b) != 0)
            DIE("%s:%d: skeleton '%s', plain '%s'", f->name, line, a, b);
        p = e + 1;
        q = g + 1;
    }
    if ((p < pe) != (q < qe))
        DIE("%s: not as many lines as with plain strings", f->name);
}

static void check_output(const struct moe_gen_output *out, const struct moe_gen_output *plain,
                         const struct moe_study *s, const char *dir)
{
    for (int i = 0; i < out->n; i++) {
        const struct moe_gen_file *f = &out->files[i], *g;
        const char *why;

        if (!is_script(f->name))
            continue;
        if ((why = gen_check_script(f->data, f->len)))
            DIE("%s: %s", f->name, why);
        if (!(g = find(plain, f->name)))
            DIE("%s: no such script with plain strings", f->name);
        check_lines(f, g, s, dir);
    }
}

/* "# -o PATH\n" first: the study directory (absolute, as gen makes it),
 * taken off the study so that YAML never sees its bytes.  Returns the
 * study text. */
static const char *study_dir(const char *text, char *dir, size_t len)
{
    size_t n;

    snprintf(dir, len, "/tmp/study");
    if (strncmp(text, "# -o ", 5) != 0)
        return text;
    n = strcspn(text + 5, "\n");
    snprintf(dir, len, "/%.*s", (int)n, text + 5);
    return text[5 + n] ? text + 5 + n + 1 : text + 5 + n;
}

/* What moeflow gen makes of a study: the plan, then the files. */
static int gen_files(struct moe_study *s, struct moe_gen_opts *o, struct moe_gen_output *out,
                     struct moe_error *err)
{
    struct moe_gen_plan plan;
    int rc;

    if (moe_gen_plan(s, o, &plan, err) < 0)
        return -1;
    rc = moe_gen_render(s, o, &plan, out, err);
    moe_gen_plan_free(&plan);
    return rc;
}

static void gen_both(struct moe_study *s, struct moe_gen_opts *o, const char *dir)
{
    struct moe_gen_output out, plain;
    struct moe_error err;
    struct moe_study p = *s;
    char *launcher;
    bool control = moe_text_control_at(dir, strlen(dir)) >= 0;

    moe_error_clear(&err);
    if (gen_files(s, o, &out, &err) < 0) {
        if (!err.text[0])
            DIE("gen failed without a message");
        return;
    }
    if (control)
        DIE("a study directory holding a control character was accepted");
    launcher = plain_strings(&p);
    if (gen_files(&p, o, &plain, &err) < 0)
        DIE("the plain stand-ins fail where the study passed: %s", err.text);
    check_output(&out, &plain, s, dir);
    free(launcher);
    moe_gen_output_free(&out);
    moe_gen_output_free(&plain);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strdup(data, size), dir[4096];
    const char *yaml = study_dir(text, dir, sizeof(dir));
    struct moe_study study;
    struct moe_error err;
    struct moe_gen_opts o = { .templates_dir = MOEFLOW_ABS_SRCDIR "/templates",
                              .only = MOE_STAGE_NONE, .version = "fuzz", .study_text = yaml,
                              .study_dir = dir };

    moe_error_clear(&err);
    if (moe_study_load_string(&study, "fuzz.yaml", yaml, &err) == 0)
        gen_both(&study, &o, dir);
    moe_study_free(&study);
    free(text);
    return 0;
}
