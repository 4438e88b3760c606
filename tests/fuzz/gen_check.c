/* Oracles, written from how the readers behave, not from moeflow's code:
 * a bug in moeflow's quoting must not be copied into its check. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gen_check.h"

static void blank_separators(char *s)
{
    static const char *const words[] = { "hetjob", "packjob" };
    char *p;

    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        while ((p = strcasestr(s, words[i])))
            memset(p, ' ', strlen(words[i]));
}

/* One argument from *pp; false at the end of the line or at a comment. */
static bool next_arg(const char **pp, char *out, size_t len)
{
    const char *p = *pp;
    char q = 0;
    bool esc = false;
    size_t i = 0;

    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p || *p == '#')
        return false;
    while (*p && (q || (*p != ' ' && *p != '\t'))) {
        char c = *p++;

        if (esc)
            esc = false;
        else if (c == '\\') {
            esc = true;
            continue;
        } else if (q && c == q) {
            q = 0;
            continue;
        } else if (!q && (c == '"' || c == '\'')) {
            q = c;
            continue;
        } else if (!q && c == '#') {
            p = "";
            break;
        }
        if (i + 1 < len)
            out[i++] = c;
    }
    out[i] = '\0';
    *pp = p;
    return true;
}

int gen_check_sbatch_args(const char *line, char *first, size_t len)
{
    char *buf = strdup(line + strlen("#SBATCH")), *arg = malloc(strlen(line) + 1);
    const char *p = buf;
    int n = 0;

    if (!buf || !arg)
        abort();
    blank_separators(buf);
    while (next_arg(&p, arg, strlen(line) + 1)) {
        if (n++ == 0 && len) {
            size_t k = strlen(arg) < len ? strlen(arg) : len - 1;

            memcpy(first, arg, k);
            first[k] = '\0';
        }
    }
    free(arg);
    free(buf);
    return n;
}

static bool is_operator(char c)
{
    return strchr(";&|<>()`$", c) != NULL;
}

char *gen_check_skeleton(const char *line, size_t n, char *out, size_t len)
{
    size_t o = 0;
    bool in_word = false, blank = false;
    char q = 0;

    for (size_t i = 0; i < n && o + 3 < len; i++) {
        char c = line[i];

        if (q) { /* inside quotes: part of the word */
            if (c == '\\' && q == '"' && i + 1 < n)
                i++;
            else if (c == q)
                q = 0;
            continue;
        }
        if (c == ' ' || c == '\t') {
            in_word = false, blank = true;
            continue;
        }
        if (blank && o)
            out[o++] = ' ';
        blank = false;
        if (c == '#' && !in_word) {
            out[o++] = '#';
            break;
        }
        if (is_operator(c)) {
            out[o++] = c;
            in_word = false;
            continue;
        }
        if (!in_word)
            out[o++] = 'w';
        in_word = true;
        if (c == '\\' && i + 1 < n)
            i++;
        else if (c == '"' || c == '\'')
            q = c;
    }
    out[o] = '\0';
    return out;
}

const char *gen_check_script(const char *data, size_t len)
{
    bool command = false;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)data[i];

        if ((c < 0x20 && c != '\n') || c == 0x7f)
            return "a control character in a script";
    }
    for (const char *p = data; p < data + len;) {
        const char *e = memchr(p, '\n', (size_t)(data + len - p)), *s = p;

        e = e ? e : data + len;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        if ((size_t)(e - p) >= 7 && memcmp(p, "#SBATCH", 7) == 0 && command)
            return "an #SBATCH line after the first command";
        if (s < e && *s != '#')
            command = true;
        p = e + 1;
    }
    return NULL;
}
