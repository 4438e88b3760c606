/* The sanitizer build stops at undefined behaviour (issue 21): a signed
 * overflow and a double out of int's range converted to int, each in a
 * child process, must end it before the next statement.  With
 * -fno-sanitize-recover=undefined GCC's UBSan did not check the conversion
 * at all (float-cast-overflow is not part of -fsanitize=undefined), and
 * only abort_on_error makes the end a SIGABRT rather than exit 1, which a
 * test can read as moeflow's usage error.  Built only with
 * --enable-sanitizers. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int big = 0x7fffffff;
static volatile double huge = 1e30;
static volatile int sink;

static void overflow(void) { sink = big + 1; }
static void cast(void) { sink = (int)huge; }

/* 0 when the child ended by SIGABRT before printing past the UB. */
static int stops(void (*ub)(void))
{
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        ub();
        _exit(0); /* UBSan went on */
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT)
        return 0;
    printf("# the child %s %d\n", WIFSIGNALED(status) ? "died by signal" : "exited",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    return -1;
}

int main(void)
{
    const char *opts = getenv("UBSAN_OPTIONS");
    int a, b;

    printf("1..2\n");
    if (!opts || !strstr(opts, "abort_on_error=1"))
        printf("# UBSAN_OPTIONS lacks abort_on_error=1 (run through make check)\n");
    a = stops(overflow);
    b = stops(cast);
    printf("%s 1 - a signed overflow stops the process with SIGABRT\n", a ? "not ok" : "ok");
    printf("%s 2 - a double out of int's range converted to int stops it too\n",
           b ? "not ok" : "ok");
    return a || b;
}
