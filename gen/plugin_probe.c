/* Whether the Slurm this machine submits to loads moeflow's SPANK plugin:
 * sbatch loads plugstack.conf's plugins and lists their options in its
 * --help ("Options provided by plugins"), so --moe-stage there is the
 * plugin, as sbatch itself will see it at submission. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "plugin_probe.h"
#include "run_exec.h"

/* sbatch --help reads slurm.conf and plugstack.conf only: a second or
 * two, unless a DNS SRV lookup for the configuration hangs. */
#define PROBE_SECONDS 15

/* The first line of what sbatch said, for the note. */
static void first_line(const char *text, char *why, size_t len)
{
    int n = (int)strcspn(text, "\n");

    /* a message: cut on purpose */
    snprintf(why, len, "%.*s", n, text);
}

enum plugin_probe plugin_probe(char *why, size_t len)
{
    char *argv[] = { "sbatch", "--help", NULL };
    struct run_limits lim = { .deadline = time(NULL) + PROBE_SECONDS, .stop = NULL,
                              .grace = 0 };
    struct run_result r;

    if (run_program(NULL, argv, 1, &lim, &r) < 0) {
        /* a message: cut on purpose */
        snprintf(why, len, "sbatch: %s", strerror(errno));
        return PLUGIN_UNKNOWN;
    }
    if (r.stopped) {
        /* a message: fits */
        snprintf(why, len, "sbatch --help did not answer within %d s", PROBE_SECONDS);
        return PLUGIN_UNKNOWN;
    }
    if (r.status != 0) {
        first_line(r.err[0] ? r.err : r.out, why, len);
        return PLUGIN_UNKNOWN;
    }
    if (strstr(r.out, "--moe-stage")) {
        /* a message: fits */
        snprintf(why, len, "sbatch --help lists --moe-stage");
        return PLUGIN_PRESENT;
    }
    /* only sbatch's own help says the plugin is absent: a wrapper or a
     * stand-in that prints something else tells nothing */
    if (!strstr(r.out, "Usage: sbatch")) {
        /* a message: fits */
        snprintf(why, len, "sbatch --help printed no sbatch usage");
        return PLUGIN_UNKNOWN;
    }
    /* a message: fits */
    snprintf(why, len, "sbatch --help lists no --moe-stage");
    return PLUGIN_ABSENT;
}
