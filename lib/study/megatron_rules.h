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

/* Where Megatron enforces the layout enumerator's rule r (fit/layouts.h)
 * in dialect d.  With *cited true, a "path:line" in megatron-lm-<tag>, the
 * line of the raise or assert, as in moe_megatron_rule.where; with *cited
 * false, Megatron has no explicit check there and the string says why
 * moeflow refuses such a layout anyway.  NULL for MOE_RULE_OK and out of
 * range. */
const char *moe_layout_rule_source(enum moe_rule r, enum moe_dialect d, bool *cited);

#endif
