#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/shquote.h"
#include "core/strbuf.h"
#include "study/container.h"
#include "study/container_internal.h"

/* Whether path is dir or inside it (dir of length dlen, not terminated). */
static bool under(const char *path, const char *dir, size_t dlen)
{
    while (dlen > 1 && dir[dlen - 1] == '/')
        dlen--;
    return strncmp(path, dir, dlen) == 0 && (path[dlen] == '\0' || path[dlen] == '/' ||
                                             (dlen == 1 && dir[0] == '/'));
}

bool moe_container_mounts_cover(const char *mounts, const char *dir)
{
    const char *m = mounts ? mounts : "";

    while (*m) {
        size_t len = strcspn(m, ","), src = strcspn(m, ":,");
        const char *dst = m[src] == ':' ? m + src + 1 : NULL;
        size_t dlen = dst ? strcspn(dst, ":,") : 0;

        if (src && under(dir, m, src) && (!dst || (dlen == src && !strncmp(dst, m, src))))
            return true;
        m += len + (m[len] == ',');
    }
    return false;
}

static char *mounts_with(const char *mounts, const char *dir)
{
    if (moe_container_mounts_cover(mounts, dir))
        return strdup(mounts);
    return moe_strdup_printf("%s%s%s:%s", mounts, mounts[0] ? "," : "", dir, dir);
}

char *moe_container_srun_options(const struct moe_study *s, const char *study_dir,
                                 struct moe_error *err)
{
    const struct moe_cluster *k = &s->cluster;
    const char *workdir = moe_study_str_set(k->container_workdir) ? k->container_workdir
                                                                   : study_dir;
    char *mounts, *qimage, *qmounts, *qworkdir, *out = NULL;

    if (!moe_study_str_set(k->container_image))
        return strdup("");
    mounts = mounts_with(k->container_mounts ? k->container_mounts : "", study_dir);
    qimage = moe_shquote(k->container_image);
    qmounts = mounts ? moe_shquote(mounts) : NULL;
    qworkdir = moe_shquote(workdir);
    if (qimage && qmounts && qworkdir)
        out = moe_strdup_printf(" --container-image=%s --container-mounts=%s "
                                "--container-workdir=%s", qimage, qmounts, qworkdir);
    if (!out)
        moe_error_set(err, "cluster.container: out of memory");
    free(mounts);
    free(qimage);
    free(qmounts);
    free(qworkdir);
    return out;
}
