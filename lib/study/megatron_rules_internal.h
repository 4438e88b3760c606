/* megatron_rules.h's functions that only lib/study (and its unit tests) use. */
#ifndef MOEFLOW_STUDY_MEGATRON_RULES_INTERNAL_H
#define MOEFLOW_STUDY_MEGATRON_RULES_INTERNAL_H

#include "study/megatron_rules.h"

/* The whole table, in checking order. */
const struct moe_megatron_rule *moe_megatron_rules(size_t *n);

/* Why dialect d has no rule like rule (Megatron there does not refuse
 * it), or NULL when it has: then rule->where[d] must cite its check, and a
 * rule with neither (a dialect added without its citations) is checked
 * all the same, never skipped; test_megatron_rules refuses it.  Covers
 * validate_checkpoint.h's citations too. */
const char *moe_megatron_rule_absent(const struct moe_megatron_rule *rule, enum moe_dialect d);

/* The first rule of the table, in the study's dialect, that run breaks,
 * or NULL; a rule absent from that dialect is not asked.  The table holds
 * the prerequisite rules only: the layout rules are fit/layouts.h's
 * (moe_megatron_refusal checks both). */
const struct moe_megatron_rule *moe_megatron_rule_broken(const struct moe_study *s,
                                                         const struct moe_run *r);

/* "rule ID (FILE:LINE in DIALECT): TEXT" into buf; "uncited" for FILE:LINE
 * where rule->where[d] is NULL. */
void moe_megatron_rule_describe(const struct moe_megatron_rule *rule, enum moe_dialect d,
                                char *buf, size_t size);

/* Whether Megatron refuses run: first the layout rules, by the one layout
 * checker (fit/layouts.h) with their citations below, then the table's
 * prerequisite rules.  Returns the broken rule's id, with "Megatron rule
 * ID (FILE:LINE in DIALECT): WHY" in buf; NULL when run breaks none. */
const char *moe_megatron_refusal(const struct moe_study *s, const struct moe_run *r, char *buf,
                                 size_t size);

/* -1 with the rule named when the study's baseline breaks a rule: then no
 * stage of it can run. */
int moe_megatron_study_check(const struct moe_study *s, struct moe_error *err);

/* Compares dotted versions numerically: <0, 0, >0.  "" sorts first. */
int moe_version_cmp(const char *a, const char *b);

#endif
