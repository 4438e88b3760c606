#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

char *fuzz_strdup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* One scratch file per process and suffix, in /dev/shm when it exists so
 * that a million executions do not wear a disk. */
const char *fuzz_file(const void *data, size_t size, const char *suffix)
{
    static char path[256];
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    const char *tmp = getenv("TMPDIR");
    int fd;

    if (tmp && *tmp)
        dir = tmp;
    snprintf(path, sizeof(path), "%s/moeflow-fuzz-%ld%s", dir, (long)getpid(), suffix);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return NULL;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return NULL;
    }
    close(fd);
    return path;
}

/* libslurm 22.05's hostlist parser leaks a few bytes when it rejects a
 * range ("n[0O4]": strdup in _parse_single_range's caller, never freed).
 * That is Slurm's code, reached through lib/topology/hostlist.c; in the plugin it
 * runs once per step in a short-lived slurmstepd.  Not ours to fix: tell
 * LeakSanitizer (libFuzzer targets and the sanitizer build's replays). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libslurm.so\n";
}
