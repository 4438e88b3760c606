/* Whether the Slurm this machine submits to loads moeflow's SPANK plugin:
 * sbatch loads plugstack.conf's plugins and lists their options in its
 * --help ("Options provided by plugins"), so --moe-stage there is the
 * plugin, as sbatch itself will see it at submission. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Slurm retries a SLURM_CONF it cannot stat for 60 s (to ride out a slow
 * NFS mount) before sbatch prints anything: without this, every gen on a
 * machine whose SLURM_CONF names no file would wait out the probe. */
static int slurm_conf_missing(char *why, size_t len)
{
    const char *conf = getenv("SLURM_CONF");
    struct stat st;

    if (!conf || !*conf || stat(conf, &st) == 0)
        return 0;
    /* a message: cut on purpose */
    snprintf(why, len, "SLURM_CONF names %s: %s", conf, strerror(errno));
    return 1;
}

enum plugin_probe plugin_probe(char *why, size_t len)
{
    char *argv[] = { "sbatch", "--help", NULL };
    struct run_limits lim = { .deadline = time(NULL) + PROBE_SECONDS, .stop = NULL,
                              .grace = 0 };
    struct run_result r;

    if (slurm_conf_missing(why, len))
        return PLUGIN_UNKNOWN;
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
