/* A growable list of strings: a run's argument words, its environment as
 * NAME=value entries, the candidate ids of a stage. */
#ifndef MOEFLOW_STRV_H
#define MOEFLOW_STRV_H

#include <stdbool.h>
#include <stddef.h>

struct moe_strv {
    char **v;
    size_t n, cap;
    bool oom;       /* an append failed: the list is short (a builder checks once) */
};

/* Appends a copy of s; -1 when out of memory (the list is unchanged but
 * for oom). */
int moe_strv_push(struct moe_strv *l, const char *s);

/* Appends the formatted string; -1 when out of memory. */
int moe_strv_pushf(struct moe_strv *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Replaces entry i with a copy of s; -1 when out of memory. */
int moe_strv_set(struct moe_strv *l, size_t i, const char *s);

/* Inserts a copy of s before entry i (i == n appends); -1 when out of memory. */
int moe_strv_insert(struct moe_strv *l, size_t i, const char *s);

void moe_strv_remove(struct moe_strv *l, size_t i);

/* dst becomes a copy of src (dst is overwritten, not freed); -1 when out of memory. */
int moe_strv_copy(struct moe_strv *dst, const struct moe_strv *src);

bool moe_strv_equal(const struct moe_strv *a, const struct moe_strv *b);

/* Index of the first entry equal to s, or -1. */
long moe_strv_find(const struct moe_strv *l, const char *s);

/* A command line's flags: how many values follow entry i, up to the next
 * flag (an entry that starts with "--") or the end.  0 for a switch. */
size_t moe_strv_flag_values(const struct moe_strv *l, size_t i);

/* The first value of flag (the entry after its first occurrence, unless
 * that is another flag), or NULL when flag is absent or a switch. */
const char *moe_strv_flag_value(const struct moe_strv *l, const char *flag);

/* An environment (NAME=value entries): the index of the entry naming the
 * same variable as entry (its NAME), or -1. */
long moe_strv_env_find(const struct moe_strv *env, const char *entry);

/* Sets entry's NAME to its value: replaces that variable's entry, else
 * appends; -1 when out of memory. */
int moe_strv_env_set(struct moe_strv *env, const char *entry);

void moe_strv_free(struct moe_strv *l);

#endif
