/* The study schema as data: which keys each section accepts and what type
 * each value has.  The reader walks the YAML against it, so an unknown key or
 * a wrong type is caught in one place with its position. */
#ifndef MOEFLOW_STUDY_SCHEMA_H
#define MOEFLOW_STUDY_SCHEMA_H

enum moe_ftype { MOE_F_INT, MOE_F_NUM, MOE_F_STR, MOE_F_BOOL, MOE_F_ENUM, MOE_F_STRLIST,
                 MOE_F_INTLIST, MOE_F_MAP };

struct moe_field {
    const char *key;
    enum moe_ftype type;
    const struct moe_field *sub;        /* MOE_F_MAP: the nested keys, NULL-key ended */
    const char *const *choices;         /* MOE_F_ENUM, MOE_F_STRLIST: NULL-ended */
    long min, max;                      /* MOE_F_INT, MOE_F_INTLIST (max 0 = none) */
};

extern const struct moe_field moe_study_schema[];

#endif
