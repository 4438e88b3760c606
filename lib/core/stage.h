/* The six workflow stages, in the order the workflow runs them. */
#ifndef MOEFLOW_STAGE_H
#define MOEFLOW_STAGE_H

enum moe_stage {
    MOE_STAGE_NONE = -1,
    MOE_STAGE_CONTRACT = 0,
    MOE_STAGE_FIT,
    MOE_STAGE_SCALE,
    MOE_STAGE_PROFILE,
    MOE_STAGE_RETUNE,
    MOE_STAGE_VALIDATE,
    MOE_STAGE_COUNT
};

/* Exact, case-sensitive match; MOE_STAGE_NONE for anything else. */
enum moe_stage moe_stage_parse(const char *name);

const char *moe_stage_name(enum moe_stage stage);

/* "contract|fit|scale|profile|retune|validate", for messages and help. */
const char *moe_stage_choices(void);

#endif
