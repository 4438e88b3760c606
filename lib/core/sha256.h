/* SHA-256, the identity of contracts, studies and node facts. */
#ifndef MOEFLOW_SHA256_H
#define MOEFLOW_SHA256_H

#include <stddef.h>

#include "core/error.h"

#define MOE_SHA256_HEX_LEN 64

/* SHA-256 of any byte string, lower-case hex (libcrypto EVP, opened on the
 * first call: -1 with a message when it cannot be). */
int moe_sha256_hex(const void *data, size_t len, char hex[MOE_SHA256_HEX_LEN + 1],
                   struct moe_error *err);

#endif
