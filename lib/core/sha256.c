#include "config.h"

#include <openssl/evp.h>

#include "core/sha256.h"

int moe_sha256_hex(const void *data, size_t len, char hex[MOE_SHA256_HEX_LEN + 1],
                   struct moe_error *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
        moe_error_set(err, "SHA-256 failed in libcrypto");
        return -1;
    }
    for (unsigned int i = 0; i < mdlen; i++) {
        static const char digits[] = "0123456789abcdef";
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[MOE_SHA256_HEX_LEN] = '\0';
    return 0;
}
