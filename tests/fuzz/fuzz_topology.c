/* The NVLink-domain map the plugin reads in slurmstepd, with Slurm
 * hostlist expressions for the nodes.  Built twice: FUZZ_LOADER is
 * moe_domains_load_yaml (moeflow-topology(5)) or moe_domains_load_slurm
 * (BlockName= lines of Slurm's topology.conf).  A map that loads is queried
 * the way placement does. */
#include "config.h"

#include <slurm/slurm.h>

#include "topology/domains.h"
#include "topology/domains_internal.h"
#include "fuzz.h"
#include "topology/hostlist.h"

static void *hl_create(const char *e) { return slurm_hostlist_create(e); }
static char *hl_shift(void *hl) { return slurm_hostlist_shift(hl); }
static void hl_destroy(void *hl) { slurm_hostlist_destroy(hl); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct moe_hostlist_api api = { hl_create, hl_shift, hl_destroy };
    struct moe_domains d = { 0 };
    struct moe_error err;
    const char *path = fuzz_file(data, size, ".topology");

    if (!path)
        return 0;
    moe_hostlist_bind(&api);
    if (FUZZ_LOADER(&d, path, &err) == 0) {
        for (int i = 0; i < d.nnodes && i < 64; i++)
            moe_domains_find(&d, d.nodes[i]);
        moe_domains_find(&d, "n1");
    }
    moe_domains_free(&d);
    return 0;
}
