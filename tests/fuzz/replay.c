/* The plain replay driver: feeds every file of the harness's committed
 * corpus (tests/fuzz/corpus/NAME) and crash reproducers
 * (tests/fuzz/regressions/NAME) to LLVMFuzzerTestOneInput, or the files and
 * directories named on the command line.  A crash, a sanitizer report or a
 * leak ends the process, so the single TAP test point never prints "ok". */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef FUZZ_NAME
#error "FUZZ_NAME must name the harness"
#endif

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (!f) {
        printf("# %s: %s\n", path, strerror(errno));
        return -1;
    }
    do {
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap = cap ? cap * 2 : 4096);

            if (!nb)
                abort();
            buf = nb;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    /* Copy to an exact-size block so ASan sees reads past the end. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact)
        abort();
    if (len)
        memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Returns how many files were replayed, -1 on an unreadable path; a
 * missing directory counts as empty (no reproducers yet). */
static long replay_path(const char *path, int missing_ok)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    long count = 0;

    if (stat(path, &st) != 0) {
        if (missing_ok && errno == ENOENT)
            return 0;
        printf("# %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path) == 0 ? 1 : -1;
    if (!(d = opendir(path))) {
        printf("# %s: %s\n", path, strerror(errno));
        return -1;
    }
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));

            if (!nn)
                abort();
            names = nn;
        }
        if (!(names[n++] = strdup(e->d_name)))
            abort();
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp); /* same order every run */
    for (size_t i = 0; i < n; i++) {
        char full[4096];
        long k;

        snprintf(full, sizeof(full), "%s/%s", path, names[i]);
        k = replay_path(full, 0);
        if (k < 0 || count < 0)
            count = -1;
        else
            count += k;
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    const char *src = getenv("MOEFLOW_SRCDIR");
    char corpus[4096], regress[4096];
    long nc = 0, nr = 0;

    printf("1..1\n");
    if (argc > 1) {
        for (int i = 1; i < argc && nc >= 0; i++) {
            long k = replay_path(argv[i], 0);

            nc = k < 0 ? -1 : nc + k;
        }
        printf("%s 1 - %s: replayed %ld inputs\n", nc >= 0 ? "ok" : "not ok", FUZZ_NAME, nc);
        return nc >= 0 ? 0 : 1;
    }
    if (!src)
        src = ".";
    snprintf(corpus, sizeof(corpus), "%s/tests/fuzz/corpus/%s", src, FUZZ_NAME);
    snprintf(regress, sizeof(regress), "%s/tests/fuzz/regressions/%s", src, FUZZ_NAME);
    nc = replay_path(corpus, 0);
    nr = replay_path(regress, 1);
    if (nc <= 0 || nr < 0) {
        printf("not ok 1 - %s: corpus %ld, regressions %ld (an empty corpus is a failure)\n",
               FUZZ_NAME, nc, nr);
        return 1;
    }
    printf("ok 1 - %s: replayed %ld corpus inputs and %ld crash reproducers\n", FUZZ_NAME, nc,
           nr);
    return 0;
}
