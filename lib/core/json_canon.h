/* The one canonical JSON: study.json, the study digest, the candidates' ids
 * and every contract and its digest are this text and its hash. */
#ifndef MOEFLOW_JSON_CANON_H
#define MOEFLOW_JSON_CANON_H

#include <jansson.h>

/* The canonical serialisation of any JSON value (sorted keys, compact,
 * integral reals as integers, 15 significant digits; json_canon.c says why)
 * and its SHA-256 as 64 lower-case hex digits.  hex must hold 65 bytes. */
char *moe_json_canonical(const json_t *json);
int moe_json_sha256(const json_t *json, char hex[65]);

#endif
