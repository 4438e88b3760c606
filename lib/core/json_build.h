/* The one way to build JSON that goes between modules and into files
 * (report.json, pack.json, manifest.json): a value that could not be made
 * is an error naming its key, never a key silently missing.
 *
 * Jansson's json_pack() returns NULL for a NULL "o", a non-finite "f" or
 * a string that is not UTF-8, and json_object_set_new(o, key, NULL) drops
 * the key without a word; its error text names neither key.  A moe_jb
 * carries the first failure through a whole build: each setter steals its
 * value, records a failure once with the key, and a NULL value coming back
 * from an inner build gets the outer key prefixed, so the error reads
 * "runs[2].measured.step_ms: not UTF-8".
 *
 * The non-finite rule: a number that is inf, -inf or NaN is written as
 * JSON null, and the object that holds it says so under "non_finite":
 * {"largest_rise": null, "non_finite": {"largest_rise": "inf"}}.  An
 * element of an array is named "key[i]" in the object holding the array.
 * Where the code uses NaN for "no value" (a median of no steps, a jump
 * with nothing before it), moe_jb_num_opt writes that NaN as a plain null,
 * as the files always had it; an infinity there is still recorded. */
#ifndef MOEFLOW_JSON_BUILD_H
#define MOEFLOW_JSON_BUILD_H

#include <stdbool.h>

#include <jansson.h>

#include "core/error.h"

/* The sibling key that lists an object's non-finite numbers. */
#define MOE_JSON_NON_FINITE "non_finite"

#define MOE_JB_PATH_MAX 256

struct moe_jb {
    struct moe_error *err;      /* may be NULL: failed still says it */
    bool failed;                /* err holds the first failure */
    char path[MOE_JB_PATH_MAX]; /* its key path, grown as NULL travels out */
    char why[MOE_ERROR_TEXT_MAX / 2];
};

void moe_jb_init(struct moe_jb *b, struct moe_error *err);

/* obj[key] = v, stealing v.  A NULL v or obj, or a set Jansson refuses, is
 * a failure naming key; -1 then, 0 otherwise. */
int moe_jb_set(struct moe_jb *b, json_t *obj, const char *key, json_t *v);

/* obj[key] = v by the non-finite rule. */
int moe_jb_num(struct moe_jb *b, json_t *obj, const char *key, double v);

/* The same, NaN meaning "none": null without a record. */
int moe_jb_num_opt(struct moe_jb *b, json_t *obj, const char *key, double v);

/* obj[key] = s; a NULL s is a failure (moe_jb_str_opt writes null). */
int moe_jb_str(struct moe_jb *b, json_t *obj, const char *key, const char *s);
int moe_jb_str_opt(struct moe_jb *b, json_t *obj, const char *key, const char *s);
int moe_jb_int(struct moe_jb *b, json_t *obj, const char *key, json_int_t v);
int moe_jb_bool(struct moe_jb *b, json_t *obj, const char *key, bool v);

/* obj[key] = a copy of v (a borrowed value, as json_pack's "O"); a NULL v
 * is a failure. */
int moe_jb_copy(struct moe_jb *b, json_t *obj, const char *key, json_t *v);

/* json_pack(fmt, ...) for a value with no number and no value of its own
 * that may be NULL; a failure gives Jansson's reason and the column, and
 * the key it is set at names it. */
json_t *moe_jb_pack(struct moe_jb *b, const char *fmt, ...);

/* arr += v, stealing v; a failure is named "[i]". */
int moe_jb_append(struct moe_jb *b, json_t *arr, json_t *v);

/* arr += v by the non-finite rule; a non-finite element is recorded in
 * owner's "non_finite" as "key[i]". */
int moe_jb_append_num(struct moe_jb *b, json_t *owner, const char *key, json_t *arr, double v);
int moe_jb_append_num_opt(struct moe_jb *b, json_t *owner, const char *key, json_t *arr,
                          double v);

/* After a failure, seg ("key" or "[i]") goes in front of its path: for a
 * build whose outer keys are not set through b. */
void moe_jb_within(struct moe_jb *b, const char *seg);

/* obj when nothing failed; otherwise obj is released and NULL returned. */
json_t *moe_jb_done(struct moe_jb *b, json_t *obj);

#endif
