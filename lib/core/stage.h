/* The six workflow stages, in the order the workflow runs them. */
#ifndef MOEFLOW_STAGE_H
#define MOEFLOW_STAGE_H

#include "core/enum_names.h"

#define MOE_STAGE_LIST(X)                                                                      \
    X(MOE_STAGE_CONTRACT, "contract") X(MOE_STAGE_FIT, "fit") X(MOE_STAGE_SCALE, "scale")      \
    X(MOE_STAGE_PROFILE, "profile") X(MOE_STAGE_RETUNE, "retune")                              \
    X(MOE_STAGE_VALIDATE, "validate")
enum moe_stage { MOE_STAGE_NONE = -1, MOE_STAGE_LIST(MOE_ENUM_ID) MOE_STAGE_COUNT };

/* Exact, case-sensitive match; MOE_STAGE_NONE for anything else. */
enum moe_stage moe_stage_parse(const char *name);

/* NULL for MOE_STAGE_NONE or anything outside the enum. */
const char *moe_stage_name(enum moe_stage stage);

/* "contract|fit|scale|profile|retune|validate", for messages and help. */
const char *moe_stage_choices(void);

#endif
