#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/sha256.h"

/* libcrypto is opened on the first digest, not linked: the plugin lives in
 * every srun and slurmstepd, and mapping, relocating and initialising
 * libcrypto cost each of them about 1 ms (tests/bench/launch-overhead.sh)
 * although a plain job step never hashes anything.  The headers still
 * type the three functions, so a changed prototype fails the build. */
static struct {
    __typeof__(&OPENSSL_init_crypto) init;
    __typeof__(&EVP_Digest) digest;
    __typeof__(&EVP_sha256) sha256;
    char why[256]; /* when a function is missing */
} crypto;

static void *symbol(void *lib, const char *name)
{
    void *f = dlsym(lib, name);

    if (!f && !crypto.why[0])
        /* a message: cut, it still reads and names no file */
        snprintf(crypto.why, sizeof(crypto.why), "%s has no %s", MOE_LIBCRYPTO_SONAME, name);
    return f;
}

static void open_crypto(void)
{
    void *lib = dlopen(MOE_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);

    if (!lib) {
        /* a message: cut, it still reads and names no file */
        snprintf(crypto.why, sizeof(crypto.why), "%s", dlerror());
        return;
    }
    *(void **)&crypto.init = symbol(lib, "OPENSSL_init_crypto");
    *(void **)&crypto.digest = symbol(lib, "EVP_Digest");
    *(void **)&crypto.sha256 = symbol(lib, "EVP_sha256");
    if (crypto.why[0])
        return;
    /* OpenSSL 3 would read openssl.cnf first: 0.6 ms, and no provider
     * setting changes a digest. */
    crypto.init(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
}

int moe_sha256_hex(const void *data, size_t len, char hex[MOE_SHA256_HEX_LEN + 1],
                   struct moe_error *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    pthread_once(&once, open_crypto);
    if (crypto.why[0]) {
        moe_error_set(err, "SHA-256 needs libcrypto: %s", crypto.why);
        return -1;
    }
    if (crypto.digest(data, len, md, &mdlen, crypto.sha256(), NULL) != 1 || mdlen != 32) {
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
