/* The user's job options (--moe-stage, --moe-study, --moe-candidate,
 * --moe-enforce), as sbatch and slurmstepd hand them to the plugin.  Each
 * input line is one option: its first character picks which (t: stage,
 * s: study, c: candidate, e: enforce), the rest is the value. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "contract/jobopts.h"
#include "contract/jobopts_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct moe_jobopts opts;
    struct moe_error err;
    char *text = fuzz_strdup(data, size), *save = NULL;

    moe_jobopts_init(&opts);
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *v = line + 1;

        moe_error_clear(&err);
        switch (line[0]) {
        case 't': moe_jobopts_set_stage(&opts, v, &err); break;
        case 's': moe_jobopts_set_study(&opts, v, &err); break;
        case 'c': moe_jobopts_set_candidate(&opts, v, &err); break;
        case 'e': moe_jobopts_set_enforce(&opts, v, &err); break;
        default: moe_candidate_id_valid(v); break;
        }
    }
    free(text);
    return 0;
}
