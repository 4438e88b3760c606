/* The admin's plugstack.conf arguments, as SPANK hands them to the plugin
 * inside slurmstepd: one argument per input line. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "core/plugin_config.h"
#include "core/plugin_config_internal.h"

#define ARGS_MAX 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct moe_plugin_config cfg;
    struct moe_error err;
    char *text = fuzz_strdup(data, size), *argv[ARGS_MAX + 1], *save = NULL;
    int argc = 0;

    for (char *a = strtok_r(text, "\n", &save); a && argc < ARGS_MAX;
         a = strtok_r(NULL, "\n", &save))
        argv[argc++] = a;
    argv[argc] = NULL;
    moe_plugin_config_defaults(&cfg);
    moe_error_clear(&err);
    moe_plugin_config_parse(&cfg, argc, argv, &err);
    moe_affinity_mode_name(cfg.affinity);
    free(text);
    return 0;
}
