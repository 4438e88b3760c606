/* A test double of pyxis, the SPANK plugin that runs Slurm tasks in
 * containers (github.com/NVIDIA/pyxis), for what moeflow's scripts depend
 * on: the options --container-image, --container-mounts and
 * --container-workdir, and where a task starts.  pyxis starts a task in
 * the image's WORKDIR unless --container-workdir names a folder
 * (NVIDIA/pyxis#119); NGC images' WORKDIR is not the job's folder, so this
 * double starts every task with an image in "/" unless told otherwise.
 * It checks each mount's source exists, as pyxis fails a task whose mount
 * source is missing, and tells the task its image (MOEFLOW_STANDIN_IMAGE)
 * and mounts (MOEFLOW_STANDIN_MOUNTS) so that tests can see them.  It
 * runs no container: the task sees the whole host, mounted or not. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(container_standin, 1);

static char image[PATH_MAX], mounts[4 * PATH_MAX], workdir[PATH_MAX];

static int keep(char *dst, size_t len, const char *opt, const char *val)
{
    if (!val || strlen(val) >= len) {
        slurm_error("container-standin: --%s: missing or too long", opt);
        return -1;
    }
    memcpy(dst, val, strlen(val) + 1);
    return 0;
}

static int opt_image(int v, const char *a, int r)
{
    (void)v, (void)r;
    return keep(image, sizeof(image), "container-image", a);
}

static int opt_mounts(int v, const char *a, int r)
{
    (void)v, (void)r;
    return keep(mounts, sizeof(mounts), "container-mounts", a);
}

static int opt_workdir(int v, const char *a, int r)
{
    (void)v, (void)r;
    return keep(workdir, sizeof(workdir), "container-workdir", a);
}

static struct spank_option options[] = {
    { "container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH", "the image (stand-in)", 1, 0,
      opt_image },
    { "container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]", "bind mounts (stand-in)", 1, 0,
      opt_mounts },
    { "container-workdir", "PATH", "working directory inside the container (stand-in)", 1, 0,
      opt_workdir },
    SPANK_OPTIONS_TABLE_END
};

/* Registered here, as pyxis does: sbatch (the allocator context) takes a
 * plugin's options only from spank_option_register. */
int slurm_spank_init(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    for (struct spank_option *o = options; o->name; o++)
        if (spank_option_register(sp, o) != ESPANK_SUCCESS)
            return -1;
    return 0;
}

/* Every mount's source must exist, as with pyxis. */
static int check_mounts(void)
{
    char buf[sizeof(mounts)], *save = NULL;
    struct stat st;

    memcpy(buf, mounts, sizeof(buf));
    for (char *m = strtok_r(buf, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
        m[strcspn(m, ":")] = '\0';
        if (stat(m, &st) != 0) {
            slurm_error("container-standin: mount source %s: %s", m, strerror(errno));
            return -1;
        }
    }
    return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    const char *dir = workdir[0] ? workdir : "/";

    (void)ac, (void)av;
    if (!spank_remote(sp) || !image[0])
        return 0;
    if (check_mounts() != 0)
        return -1;
    if (chdir(dir) != 0) {
        slurm_error("container-standin: --container-workdir %s: %s", dir, strerror(errno));
        return -1;
    }
    spank_setenv(sp, "MOEFLOW_STANDIN_IMAGE", image, 1);
    spank_setenv(sp, "MOEFLOW_STANDIN_MOUNTS", mounts, 1);
    /* the task's PWD is the batch step's until now */
    spank_setenv(sp, "PWD", dir, 1);
    return 0;
}
