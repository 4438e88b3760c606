/* Megatron's cross-flag prerequisites for what moeflow emits: each rule
 * names the condition in a study's terms and the file and line, in each
 * dialect's source, where Megatron refuses it (validate_args, the
 * TransformerConfig checks, a layer spec, or the first forward pass).  A
 * candidate that breaks one is skipped at generation with the rule named;
 * a study whose baseline breaks one cannot run at all. */
#ifndef MOEFLOW_MEGATRON_RULES_H
#define MOEFLOW_MEGATRON_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "fit/layouts.h"
#include "study/megatron_args.h"
#include "study/study.h"

struct moe_megatron_rule {
    const char *id;
    const char *text;                        /* what Megatron requires */
    /* "path:line" in megatron-lm-<tag>, by enum moe_dialect; NULL only
     * where moe_megatron_rule_absent says why that dialect has no such rule */
    const char *where[MOE_DIALECT_COUNT];
    bool (*broken)(const struct moe_study *s, const struct moe_run *r);
};

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

/* Where Megatron enforces the layout enumerator's rule r (fit/layouts.h)
 * in dialect d.  With *cited true, a "path:line" in megatron-lm-<tag>, the
 * line of the raise or assert, as in moe_megatron_rule.where; with *cited
 * false, Megatron has no explicit check there and the string says why
 * moeflow refuses such a layout anyway.  NULL for MOE_RULE_OK and out of
 * range. */
const char *moe_layout_rule_source(enum moe_rule r, enum moe_dialect d, bool *cited);

/* Compares dotted versions numerically: <0, 0, >0.  "" sorts first. */
int moe_version_cmp(const char *a, const char *b);

#endif
