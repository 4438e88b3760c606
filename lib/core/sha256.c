#include "config.h"

#include <pthread.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/sha256.h"

/* OpenSSL 3 reads openssl.cnf on first use: about 0.6 ms in every
 * slurmstepd that checks its topology cache, for a digest that no provider
 * setting changes. */
static void init_crypto(void)
{
    OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
}

int moe_sha256_hex(const void *data, size_t len, char hex[MOE_SHA256_HEX_LEN + 1],
                   struct moe_error *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    pthread_once(&once, init_crypto);
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
