/* The study schema as data: which keys each section accepts and what type
 * each value has.  The reader walks the YAML against it, so an unknown key or
 * a wrong type is caught in one place with its position. */
#ifndef MOEFLOW_STUDY_SCHEMA_H
#define MOEFLOW_STUDY_SCHEMA_H

#include <stdbool.h>

enum moe_ftype { MOE_F_INT, MOE_F_NUM, MOE_F_STR, MOE_F_BOOL, MOE_F_ENUM, MOE_F_STRLIST,
                 MOE_F_INTLIST, MOE_F_MAP };

struct moe_field {
    const char *key;
    const struct moe_field *sub;        /* MOE_F_MAP: the nested keys, NULL-key ended */
    const char *const *choices;         /* MOE_F_ENUM, MOE_F_STRLIST: NULL-ended */
    /* MOE_F_STR whose value lands in an #SBATCH line: a POSIX extended
     * regular expression (matched without case) the whole value must
     * match, what it allows in words, and sbatch's own rule on top
     * (core/shquote.h moe_sbatch_quote). */
    const char *pattern;
    const char *allows;
    long min, max;                      /* MOE_F_INT, MOE_F_INTLIST (max 0 = none) */
    enum moe_ftype type;
    bool range;                         /* MOE_F_INTLIST: [first, last], not a set */
};

/* Every string of a study, key or value, is free of control characters
 * (core/text.h); every list but a [first, last] range holds each value
 * once. */

extern const struct moe_field moe_study_schema[];

/* The field at a dotted path ("cluster.container.image"), a map's too;
 * NULL when the schema has no such key. */
const struct moe_field *moe_study_field(const char *path);

#endif
