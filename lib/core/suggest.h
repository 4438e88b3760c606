/* "Did you mean": the nearest of a list of names to a misspelt one, for
 * every place that rejects a name (study keys and values, subcommands). */
#ifndef MOEFLOW_SUGGEST_H
#define MOEFLOW_SUGGEST_H

/* The closest of the candidates within a small distance, or NULL. */
const char *moe_suggest(const char *word, const char *const *candidates, int n);

#endif
