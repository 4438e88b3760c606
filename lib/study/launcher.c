/* The launcher is split once, here, so that the contract stage captures
 * the environment of exactly the command the training stages run. */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "core/shquote.h"
#include "study/launcher.h"
#include "study/launcher_internal.h"

/* python, python3, python3.11, with or without a folder: the names CPython
 * installs.  Anything else (torchrun, a wrapper, env) is not assumed to be
 * the interpreter the trainer's code runs under. */
static bool is_python(const char *word)
{
    const char *base = strrchr(word, '/'), *v;

    base = base ? base + 1 : word;
    if (strncmp(base, "python", 6) != 0)
        return false;
    v = base + 6;
    return strspn(v, "0123456789.") == strlen(v) && v[0] != '.';
}

static bool is_entry(const char *word)
{
    size_t n = strlen(word);
    return n > 3 && strcmp(word + n - 3, ".py") == 0 && word[n - 4] != '/';
}

int moe_launcher_parse(const char *command, struct moe_launcher *l, struct moe_error *err)
{
    size_t i, entry;

    memset(l, 0, sizeof(*l));
    if (!(l->words = moe_shsplit(command, err)))
        return -1;
    if (json_array_size(l->words) == 0) {
        moe_error_set(err, "has no command");
        moe_launcher_free(l);
        return -1;
    }
    for (entry = 0; entry < json_array_size(l->words); entry++)
        if (is_entry(json_string_value(json_array_get(l->words, entry))))
            break;
    if (entry < json_array_size(l->words))
        l->entry = json_string_value(json_array_get(l->words, entry));
    l->python = "python3";
    for (i = 0; i < entry && i < json_array_size(l->words); i++)
        if (is_python(json_string_value(json_array_get(l->words, i)))) {
            l->python = json_string_value(json_array_get(l->words, i));
            break;
        }
    return 0;
}

void moe_launcher_free(struct moe_launcher *l)
{
    json_decref(l->words);
    l->words = NULL;
    l->python = l->entry = NULL;
}
