/* Study YAML: the text a user writes, read with libyaml, checked against
 * the schema and the layout rules; a study that loads is then turned into
 * every stage's candidates, as `moeflow gen` does. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "study/candidates.h"
#include "fuzz.h"
#include "core/json_canon.h"
#include "study/study.h"
#include "study/study_internal.h"
#include "study/candidates_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct moe_study study;
    struct moe_error err;
    char *text = fuzz_strdup(data, size);

    memset(&study, 0, sizeof(study));
    moe_error_clear(&err);
    if (moe_study_load_string(&study, "fuzz.yaml", text, &err) == 0) {
        char hex[65];

        moe_json_sha256(study.json, hex);
        moe_study_world_size(&study);
        for (int s = MOE_STAGE_CONTRACT; s < MOE_STAGE_COUNT; s++) {
            struct moe_stage_plan plan;

            memset(&plan, 0, sizeof(plan));
            if (moe_candidates_build(&study, (enum moe_stage)s, &plan, &err) == 0)
                moe_candidates_render(&study, &plan, &err);
            moe_stage_plan_free(&plan);
        }
    }
    moe_study_free(&study);
    free(text);
    return 0;
}
