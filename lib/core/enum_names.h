/* Names of enum values, from one list per enum.  Each enum is written once
 * as an X-macro list, LIST(X) expanding X(IDENTIFIER, "name", ...) per value,
 * next to the enum; the enum and its NULL-ended name table are both expanded from
 * it, so the two cannot drift apart, and MOE_ENUM_NAMES_CHECK fails the build
 * if a table does not hold exactly one name per value.  The study reader, the
 * schema's allowed values, the canonical study JSON and the contract all use
 * these tables. */
#ifndef MOEFLOW_CORE_ENUM_NAMES_H
#define MOEFLOW_CORE_ENUM_NAMES_H

/* A list may carry more columns after the name (fit/gpu.h's does): these
 * read the first two and ignore the rest. */
#define MOE_ENUM_ID(...) MOE_ENUM_ID_(__VA_ARGS__, ~)
#define MOE_ENUM_ID_(id, ...) id,
#define MOE_ENUM_NAME(...) MOE_ENUM_NAME_(__VA_ARGS__, ~)
#define MOE_ENUM_NAME_(id, name, ...) name,
#define MOE_ENUM_PLUS_ONE(...) +1 /* NOLINT(bugprone-macro-parentheses): a term of a sum */

/* Declares enum TYPE from LIST, COUNT (the number of values, kept out of the
 * enum so that switches over it stay exhaustive under -Wswitch without a
 * case for a value that is not one) and the NULL-ended table NAMES, which
 * one source file defines with MOE_ENUM_NAMES_DEFINE. */
#define MOE_ENUM_DECLARE(type, list, count, names)                                             \
    /* list is an X-macro list, called, not a value to parenthesise */                         \
    enum type { list(MOE_ENUM_ID) }; /* NOLINT(bugprone-macro-parentheses) */                  \
    enum { count = 0 list(MOE_ENUM_PLUS_ONE) }; /* NOLINT(bugprone-macro-parentheses) */       \
    extern const char *const names[]

#define MOE_ENUM_NAMES_DEFINE(list, count, names)                                              \
    const char *const names[] = { list(MOE_ENUM_NAME) NULL };                                  \
    MOE_ENUM_NAMES_CHECK(names, count)

/* A table expanded from a list: COUNT names and the NULL that ends it. */
#define MOE_ENUM_NAMES_CHECK(table, count)                                                     \
    _Static_assert(sizeof(table) / sizeof((table)[0]) == (size_t)(count) + 1,                 \
                   #table " must hold one name per value and end in NULL")

/* What a name function returns for a value outside its enum: printable, so a
 * corrupted value shows up in output instead of crashing a printf. */
#define MOE_ENUM_UNKNOWN "?"

/* The index of s in the NULL-ended names, or -1 (also for s == NULL). */
int moe_enum_parse(const char *const *names, const char *s);

/* names[v] for 0 <= v < count, otherwise MOE_ENUM_UNKNOWN. */
const char *moe_enum_name(const char *const *names, int count, int v);

#endif
