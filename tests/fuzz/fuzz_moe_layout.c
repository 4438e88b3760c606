/* --moe-layout strings ("tp=2,cp=1,ep=8,etp=1,pp=4"), as sbatch and
 * slurmstepd receive them, then fitted to a world size and placed on
 * nodes the way the plugin does.  Input: "SPEC\nWORLD NODES GPN DOMAINS". */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "topology/placement.h"
#include "topology/placement_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strdup(data, size), *nl = strchr(text, '\n');
    struct moe_layout l;
    struct moe_error err;
    int nnodes = 2, gpn = 8, ndom = 1;

    if (nl) {
        *nl = '\0';
        if (sscanf(nl + 1, "%d %d %d", &nnodes, &gpn, &ndom) < 1)
            nnodes = 2;
    }
    memset(&l, 0, sizeof(l));
    moe_error_clear(&err);
    /* Bounds the harness, not the parser: the plugin gets these from Slurm. */
    if (nnodes < 1 || nnodes > 4096 || gpn < 1 || gpn > 72 || ndom < 1 || ndom > nnodes)
        nnodes = 2, gpn = 8, ndom = 1;
    if (moe_layout_parse(text, &l, &err) == 0 && moe_layout_fit(&l, nnodes * gpn, &err) == 0) {
        int *domain = malloc((size_t)nnodes * sizeof(int));
        struct moe_placement p;

        if (!domain)
            abort();
        for (int i = 0; i < nnodes; i++)
            domain[i] = ndom == 1 ? -1 : (i * 7) % ndom;
        memset(&p, 0, sizeof(p));
        moe_layout_block(&l);
        if (moe_placement_plan(&l, nnodes, gpn, domain, &p, &err) == 0)
            moe_placement_count(nnodes, gpn, p.block, p.order, domain, NULL);
        moe_placement_free(&p);
        free(domain);
    }
    free(text);
    return 0;
}
