/* cmocka with TAP output, so automake's TAP driver counts every case.
 *
 * A case that cannot run where it is built says so with MOE_SKIP("why"):
 * its line reads "ok N - name # SKIP why", which automake counts as SKIP
 * and tests/summary.sh lists by name.  cmocka's own skip() prints "not ok
 * N # SKIP" with no reason (a failure to automake's driver); the runner
 * below turns such a line into an honest skip that says it had none. */
#ifndef MOEFLOW_UNIT_H
#define MOEFLOW_UNIT_H

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define MOE_SKIP_MARK "# moe-skip: "

/* A scratch folder for a group of cases that read and write files: made
 * by moe_unit_make_dir, removed by moe_unit_remove_dir (the group's setup
 * and teardown), and paths in it from moe_unit_path, four kept at a time. */
static char moe_unit_dir[64] __attribute__((unused));

static inline int moe_unit_make_dir(void **state)
{
    (void)state;
    snprintf(moe_unit_dir, sizeof(moe_unit_dir), "/tmp/mfunit.XXXXXX");
    return mkdtemp(moe_unit_dir) ? 0 : -1;
}

static inline int moe_unit_remove_dir(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", moe_unit_dir);
    return system(cmd);
}

static inline const char *moe_unit_path(const char *name)
{
    static char paths[4][128];
    static int next;
    char *path = paths[next++ % 4];

    snprintf(path, sizeof(paths[0]), "%s/%s", moe_unit_dir, name);
    return path;
}

static inline void moe_unit_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline void moe_unit_skip(const char *fmt, ...)
{
    va_list ap;

    printf("%s", MOE_SKIP_MARK);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* Ends the current case as skipped, with the reason (printf format). */
#define MOE_SKIP(...)                                                                          \
    do {                                                                                       \
        moe_unit_skip(__VA_ARGS__);                                                            \
        return;                                                                                \
    } while (0)

/* Copies one TAP line, adding the skip directive to a result line that
 * follows a MOE_SKIP mark (reason) or that cmocka's skip() wrote. */
static inline void moe_unit_tap_line(char *line, char *reason, size_t size)
{
    size_t n = strlen(line);
    unsigned num;
    int at = 0;

    if (n && line[n - 1] == '\n')
        line[--n] = '\0';
    if (strncmp(line, MOE_SKIP_MARK, strlen(MOE_SKIP_MARK)) == 0) {
        snprintf(reason, size, "%.*s", (int)(size - 1), line + strlen(MOE_SKIP_MARK));
        return;
    }
    /* cmocka 1.1: "not ok N # SKIP name" */
    if (sscanf(line, "not ok %u # SKIP %n", &num, &at) == 1 && at) {
        printf("ok %u - %s # SKIP cmocka's skip() gave no reason (use MOE_SKIP)\n", num,
               line + at);
        reason[0] = '\0';
        return;
    }
    if (reason[0] && sscanf(line, "ok %u%n", &num, &at) == 1 && at) {
        printf("%s # SKIP %s\n", line, reason);
        reason[0] = '\0';
        return;
    }
    printf("%s\n", line);
}

/* Runs the group in a child whose TAP output passes through
 * moe_unit_tap_line line by line: a crash loses nothing printed before it. */
static inline int moe_unit_run(const char *name, const struct CMUnitTest *tests, size_t n,
                               CMFixtureFunction setup, CMFixtureFunction teardown)
{
    char line[4096], reason[1024] = "";
    int fd[2], status;
    pid_t pid;
    FILE *in;

    cmocka_set_message_output(CM_OUTPUT_TAP);
    fflush(stdout);
    if (pipe(fd) < 0 || (pid = fork()) < 0)
        return _cmocka_run_group_tests(name, tests, n, setup, teardown);
    if (pid == 0) {
        int rc;

        close(fd[0]);
        dup2(fd[1], STDOUT_FILENO);
        close(fd[1]);
        rc = _cmocka_run_group_tests(name, tests, n, setup, teardown);
        fflush(stdout);
        _exit(rc ? 1 : 0);
    }
    close(fd[1]);
    if (!(in = fdopen(fd[0], "r")))
        return 1;
    while (fgets(line, sizeof(line), in))
        moe_unit_tap_line(line, reason, sizeof(reason));
    fclose(in);
    fflush(stdout);
    if (waitpid(pid, &status, 0) < 0)
        return 1;
    if (WIFSIGNALED(status)) {
        printf("# the tests died of signal %d (%s)\n", WTERMSIG(status), strsignal(WTERMSIG(status)));
        fflush(stdout);
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}

#define MOE_RUN_GROUP(tests, setup, teardown)                                                  \
    moe_unit_run(#tests, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)
#define MOE_RUN_TESTS(tests) MOE_RUN_GROUP(tests, NULL, NULL)

#endif
