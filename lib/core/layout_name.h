/* The one notation of a parallel layout, read and written by every command
 * and by the plugin: "tp1.cp1.pp2.vpp3.ep8.etp1", the name candidates.tsv
 * gives a scale candidate.  One parser and one printer, so that a layout a
 * command prints can be pasted into any other. */
#ifndef MOEFLOW_LAYOUT_NAME_H
#define MOEFLOW_LAYOUT_NAME_H

#include <stddef.h>

#include "core/error.h"
#include "core/model.h"

/* Room for six components at their largest: "tp65536.cp65536...". */
#define MOE_LAYOUT_NAME_MAX 64

/* The largest value of one component. */
#define MOE_LAYOUT_COMPONENT_MAX 65536

/* The form a layout was written in: the dotted one, or the older
 * "tp=2,ep=8" that moeflow place and --moe-layout took first. */
enum moe_layout_form {
    MOE_LAYOUT_DOTTED = 0,
    MOE_LAYOUT_KEYVALUE,
};

/* All six components, always in the order tp, cp, pp, vpp, ep, etp: a
 * printed name has one spelling, so names compare as strings and match
 * candidates.tsv.  Returns buf. */
const char *moe_layout_name(const struct moe_layout *l, char *buf, size_t len);

/* Reads the dotted form, components in the order above, each at most once
 * and 1..MOE_LAYOUT_COMPONENT_MAX, an omitted one 1 ("tp2.ep8"); or the
 * older key=value form, keys in any order, an omitted one 1 except etp,
 * which is tp as Megatron's --expert-tensor-parallel-size defaults.  dp
 * and edp are 0.  *form (when not NULL) says which form it was, so a front
 * end can point at the dotted one.  -1 with err naming the bad component
 * and the expected form. */
int moe_layout_name_parse(const char *text, struct moe_layout *l, enum moe_layout_form *form,
                          struct moe_error *err);

#endif
