#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "run_ctx.h"
#include "run_exec.h"
#include "core/text.h"

extern char **environ;

/* Appends what fits of buf to dst (NUL-terminated, size cap). */
static void keep(char *dst, size_t cap, size_t *used, const char *buf, size_t n)
{
    size_t room = cap - 1 - *used;

    if (n > room)
        n = room;
    memcpy(dst + *used, buf, n);
    *used += n;
    dst[*used] = '\0';
}

/* A limited child: why and since when it is being stopped, and the last
 * signal its process group was sent. */
struct watch {
    const struct run_limits *lim;
    pid_t pid;
    enum run_stopped why;
    time_t since;
    int sent;
};

/* Called while waiting: stops the child when its limits say so, SIGTERM
 * after the grace and SIGKILL after that.  true once a killed child has
 * had a second to go: whatever it still holds (a pipe a grandchild kept,
 * an exit it cannot make in uninterruptible sleep) is no longer waited for. */
static bool watch_tick(struct watch *w)
{
    time_t now = time(NULL);

    if (!w->lim)
        return false;
    if (w->why == RUN_RAN_OUT) {
        if (w->lim->stop && *w->lim->stop)
            w->why = RUN_STOPPED_SIGNAL;
        else if (w->lim->deadline && now >= w->lim->deadline)
            w->why = RUN_STOPPED_DEADLINE;
        else
            return false;
        w->since = now;
    }
    if (!w->sent && now - w->since >= w->lim->grace) {
        kill(-w->pid, SIGTERM);
        w->sent = SIGTERM;
        w->since = now;
    } else if (w->sent == SIGTERM && now - w->since >= RUN_KILL_AFTER) {
        kill(-w->pid, SIGKILL);
        w->sent = SIGKILL;
        w->since = now;
    }
    return w->sent == SIGKILL && now - w->since >= 1;
}

/* Reads both pipes to their end, keeping the first bytes of each; a
 * stopped child's pipes are read until it is gone. */
static void drain(int fo, int fe, struct run_result *r, struct watch *w)
{
    struct pollfd p[2] = { { .fd = fo, .events = POLLIN }, { .fd = fe, .events = POLLIN } };
    size_t no = 0, ne = 0;
    char buf[4096];

    while (p[0].fd >= 0 || p[1].fd >= 0) {
        int n_ready = poll(p, 2, 200);

        if (watch_tick(w))
            break;
        if (n_ready <= 0)
            continue;
        for (int i = 0; i < 2; i++) {
            ssize_t n;

            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            n = read(p[i].fd, buf, sizeof(buf));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
            } else if (i == 0) {
                keep(r->out, sizeof(r->out), &no, buf, (size_t)n);
            } else {
                keep(r->err, sizeof(r->err), &ne, buf, (size_t)n);
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
}

static int wait_child(struct watch *w)
{
    int st;
    pid_t got;

    while ((got = waitpid(w->pid, &st, WNOHANG)) == 0 || (got < 0 && errno == EINTR)) {
        struct timespec t = { 0, 50000000 };

        if (watch_tick(w))
            return 128 + SIGKILL;
        nanosleep(&t, NULL);
    }
    if (got < 0)
        return 255;
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}

static int setup(posix_spawnattr_t *at, posix_spawn_file_actions_t *fa, const char *dir,
                 const int po[2], const int pe[2])
{
    sigset_t def, none;

    sigemptyset(&none);
    sigemptyset(&def);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGPIPE);
    if (posix_spawnattr_init(at) || posix_spawn_file_actions_init(fa))
        return -1;
    /* its own process group; moeflow run's handlers are not the child's */
    if (posix_spawnattr_setflags(at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                         POSIX_SPAWN_SETSIGMASK) ||
        posix_spawnattr_setpgroup(at, 0) || posix_spawnattr_setsigdefault(at, &def) ||
        posix_spawnattr_setsigmask(at, &none))
        return -1;
    if (dir && posix_spawn_file_actions_addchdir_np(fa, dir))
        return -1;
    /* a captured child is asked, never told: it reads nothing (an sbatch
     * wrapper that reads its input would wait for moeflow's forever) */
    if (po && (posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0) ||
               posix_spawn_file_actions_adddup2(fa, po[1], STDOUT_FILENO) ||
               posix_spawn_file_actions_adddup2(fa, pe[1], STDERR_FILENO) ||
               posix_spawn_file_actions_addclose(fa, po[0]) ||
               posix_spawn_file_actions_addclose(fa, pe[0])))
        return -1;
    return 0;
}

int run_program(const char *dir, char *const argv[], int capture, const struct run_limits *lim,
                struct run_result *r)
{
    posix_spawnattr_t at;
    posix_spawn_file_actions_t fa;
    int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, rc = -1, e = 0;
    pid_t pid;

    memset(r, 0, sizeof(*r));
    fflush(NULL); /* our buffered lines before the child's */
    if (capture && (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)) {
        e = errno;
        goto out;
    }
    if (setup(&at, &fa, dir, capture ? po : NULL, capture ? pe : NULL) < 0) {
        e = errno ? errno : ENOMEM;
        goto done;
    }
    e = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    if (e == 0) {
        struct watch w = { .lim = lim, .pid = pid };

        if (capture) {
            close(po[1]);
            close(pe[1]);
            po[1] = pe[1] = -1;
            drain(po[0], pe[0], r, &w);
            po[0] = pe[0] = -1;
        }
        r->status = wait_child(&w);
        r->stopped = w.why;
        rc = 0;
    }
done:
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
out:
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0)
            close(po[i]);
        if (pe[i] >= 0)
            close(pe[i]);
    }
    errno = e;
    return rc;
}

const char *run_self_path(void)
{
    /* kept for the process: every moeflow this run starts is this one */
    static char *self;

    if (!self)
        self = realpath("/proc/self/exe", NULL);
    return self ? self : "";
}

int run_self(const char *what, char *argv[])
{
    struct run_limits lim = { .stop = &run_interrupted };
    struct run_result r;

    argv[0] = (char *)run_self_path();
    printf("--- moeflow");
    for (int i = 1; argv[i]; i++) {
        char shown[4096];

        printf(" %s", moe_text_visible(argv[i], shown, sizeof(shown)));
    }
    putchar('\n');
    if (!argv[0][0] || run_program(NULL, argv, 0, &lim, &r) < 0) {
        fprintf(stderr, "moeflow run: cannot run moeflow %s: %s\n", what, strerror(errno));
        return -1;
    }
    return r.status;
}
