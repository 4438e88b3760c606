/* --model-json, the custom model of fit and layouts: the loader
 * (lib/study/model_json.c), from a file as the CLI reads it.  Only the
 * loader: what a model must satisfy is the model's own validation; here
 * nothing may crash, leak or invoke undefined behaviour, and a model that
 * loads has a NUL-terminated name. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "study/model_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct moe_model m;
    struct moe_error err;
    const char *path = fuzz_file(data, size, ".json");

    if (!path)
        return 0;
    moe_error_clear(&err);
    if (moe_model_from_json_file(path, &m, &err) == 0 && !memchr(m.name, '\0', sizeof(m.name)))
        abort();
    return 0;
}
