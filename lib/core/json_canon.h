/* The generator's canonical JSON: study.json, the study digest and the
 * candidates' ids are this text and its hash. */
#ifndef MOEFLOW_JSON_CANON_H
#define MOEFLOW_JSON_CANON_H

#include <jansson.h>

/* Canonical serialisation (sorted keys, compact, 15 digits) and its SHA-256
 * as 64 lower-case hex digits.  buf must hold 65 bytes. */
char *moe_json_canonical(const json_t *json);
int moe_json_sha256(const json_t *json, char hex[65]);

#endif
