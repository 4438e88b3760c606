/* moeflow place: the node order and ranks the plugin would give a job, the
 * count of intra-domain groups against the bound, and a Slurm hostfile. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "cli.h"
#include "options.h"
#include "core/layout_name.h"
#include "core/readfile.h"
#include "core/text.h"
#include "topology/domains.h"
#include "topology/hostlist.h"
#include "topology/placement.h"

struct place_args {
    const char *nodelist, *topology, *hostfile;
    struct moe_layout layout;
    bool have_layout;
    int gpn;
};

static void *hl_create(const char *e) { return slurm_hostlist_create(e); }
static char *hl_shift(void *hl) { return slurm_hostlist_shift(hl); }
static void hl_destroy(void *hl) { slurm_hostlist_destroy(hl); }

static int set_layout(void *args, const struct moe_opt *o, char *value)
{
    struct place_args *a = args;

    a->have_layout = true;
    return moe_cli_layout(o->name, value, &a->layout);
}

static const struct moe_opt place_opts[] = {
    { "nodelist", required_argument, 'w', "HOSTLIST", NULL, .set = moe_opt_string,
      .field = offsetof(struct place_args, nodelist) },
    { "topology", required_argument, 't', "FILE",
      "moeflow-topology.yaml or Slurm topology.conf (BlockName=)\n"
      "(default: every node is its own NVLink domain)",
      .set = moe_opt_string, .field = offsetof(struct place_args, topology) },
    { "layout", required_argument, 'l', "LAYOUT",
      "tp2.cp1.pp2.vpp1.ep8.etp1 (an omitted part: 1)", .set = set_layout },
    { "gpus-per-node", required_argument, 'g', "N",
      "(default: the map's gpus_per_node for these nodes)", .set = moe_opt_int,
      .field = offsetof(struct place_args, gpn), .min = 1, .max = 1024 },
    { "output", required_argument, 'o', "FILE",
      "write one host per rank, for SLURM_HOSTFILE with\nsrun --distribution=arbitrary",
      .set = moe_opt_string, .field = offsetof(struct place_args, hostfile),
      .label = "-o, --output FILE" },
    /* what -o writes, by its name: the one file place writes, so -o keeps
     * the meaning it has had here and has everywhere else */
    { "hostfile", required_argument, 0, "FILE", "the same as -o", .set = moe_opt_string,
      .field = offsetof(struct place_args, hostfile) },
    { .name = NULL },
};

static const struct moe_cli place_cli = {
    .usage = "usage: moeflow place --nodelist HOSTLIST --layout LAYOUT [--gpus-per-node N]\n"
             "                     [--topology FILE] [-o FILE]\n"
             "Orders the job's nodes so that TP/CP and EP groups stay inside NVLink domains.\n",
    .opts = place_opts,
    .column = 19,
    .tail = "example: moeflow place --nodelist 'n[1-8]' --gpus-per-node 4 \\\n"
            "           --topology topology.yaml --layout tp2.cp1.pp2.vpp1.ep8.etp1 -o hosts\n",
};

static const char *domain_name(const struct moe_domains *d, int dom)
{
    return dom >= 0 ? d->domains[dom].name : "(node-local)";
}

static void print_plan(const struct moe_placement *p, const struct moe_layout *l,
                       char **nodes, const int *dom, const struct moe_domains *d)
{
    int slurm = moe_placement_count(p->nnodes, p->gpn, p->block, NULL, dom, NULL);
    char name[MOE_LAYOUT_NAME_MAX];

    printf("layout: %s (dp=%d edp=%d)\n", moe_layout_name(l, name, sizeof(name)), l->dp, l->edp);
    printf("world: %d ranks on %d nodes x %d GPUs; block B=max(tp*cp,etp*ep)=%d ranks\n",
           p->world, p->nnodes, p->gpn, p->block);
    for (int q = 0; q < p->nnodes; q++) {
        int i = p->order[q];
        char node[1024], domain[1024];

        /* names from the map and the command line reach the terminal as
         * data (rule 8): a control character is shown as \xHH */
        printf("node %s domain %s ranks %d-%d\n", moe_text_visible(nodes[i], node, sizeof(node)),
               moe_text_visible(domain_name(d, dom[i]), domain, sizeof(domain)), q * p->gpn,
               (q + 1) * p->gpn - 1);
    }
    printf("intra-domain blocks: %d of %d (bound %d; Slurm's node order: %d)\n", p->intra,
           p->blocks, p->bound, slurm);
    if (p->bound == 0 && p->block > p->gpn)
        printf("note: no NVLink domain of this job holds %d ranks: %s groups cross domains "
               "(node-local NVLink: EP crosses nodes)\n",
               p->block, l->etp * l->ep >= l->tp * l->cp ? "EP" : "TP/CP");
    else if (p->intra < p->blocks)
        printf("note: %d blocks span two domains, the first is ranks %d-%d\n",
               p->blocks - p->intra, p->first_split * p->block,
               (p->first_split + 1) * p->block - 1);
}

/* Built in memory and put in place whole, only over a regular file of the
 * user's own (rule 2, core/atomic_file.h): /dev/null, /dev/stdout or a
 * planted symlink is refused, exit 4. */
static int write_hostfile(const char *path, const struct moe_placement *p, char **nodes,
                          struct moe_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = -1;

    if (!f) {
        moe_error_at(err, path, 0, 0, "%s", strerror(errno));
        return -1;
    }
    for (int q = 0; q < p->nnodes; q++)
        for (int g = 0; g < p->gpn; g++)
            fprintf(f, "%s\n", nodes[p->order[q]]);
    if (fclose(f) != 0)
        moe_error_at(err, path, 0, 0, "out of memory");
    else
        rc = moe_replace_file(path, buf, len, -1, err);
    free(buf);
    return rc;
}

/* Without --gpus-per-node: the one count the map gives every job node. */
static int map_gpn(const struct moe_domains *d, char **nodes, int n, const int *dom,
                   struct moe_error *err)
{
    int gpn = 0;

    for (int i = 0; i < n; i++) {
        int g = dom[i] >= 0 ? d->domains[dom[i]].gpus_per_node : 0;
        if (g == 0 || (gpn && g != gpn)) {
            moe_error_set(err, "node %s: %s; pass --gpus-per-node", nodes[i],
                          g == 0 ? "the map gives no gpus_per_node" : "GPU counts differ");
            return -1;
        }
        gpn = g;
    }
    return gpn;
}

static int place(const struct place_args *a, struct moe_domains *d, char **nodes, int n)
{
    struct moe_layout l = a->layout;
    struct moe_placement p;
    struct moe_error err;
    int *dom = calloc((size_t)n, sizeof(int)), rc = MOE_EXIT_INVALID_INPUT, gpn;

    moe_error_clear(&err);
    if (!dom)
        return MOE_EXIT_SYSTEM;
    for (int i = 0; i < n; i++)
        dom[i] = moe_domains_find(d, nodes[i]);
    gpn = a->gpn ? a->gpn : map_gpn(d, nodes, n, dom, &err);
    if (gpn < 0 || moe_layout_fit(&l, n * gpn, &err) != 0 ||
        moe_placement_plan(&l, n, gpn, dom, &p, &err) != 0) {
        moe_cli_report(&err);
        free(dom);
        return rc;
    }
    print_plan(&p, &l, nodes, dom, d);
    rc = MOE_EXIT_OK;
    if (a->hostfile && write_hostfile(a->hostfile, &p, nodes, &err) != 0) {
        moe_cli_report(&err);
        rc = MOE_EXIT_SYSTEM;
    }
    moe_placement_free(&p);
    free(dom);
    return rc;
}

int cmd_place(int argc, char **argv)
{
    const struct moe_hostlist_api api = { hl_create, hl_shift, hl_destroy };
    struct place_args a = { 0 };
    struct moe_domains d;
    struct moe_error err;
    char **nodes = NULL;
    int n = 0, first, rc = moe_cli_parse(&place_cli, argc, argv, &a, &first);

    if (rc != MOE_CLI_RUN)
        return rc;
    if (first < argc || !a.nodelist || !a.have_layout || (!a.gpn && !a.topology))
        return moe_cli_misuse(&place_cli);
    if (a.hostfile && !a.hostfile[0])
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow: -o/--hostfile: an empty path names no file\n");
    moe_hostlist_bind(&api);
    moe_error_clear(&err);
    memset(&d, 0, sizeof(d));
    if (a.topology && moe_domains_load(&d, a.topology, &err) != 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    if (moe_hostlist_expand(a.nodelist, &nodes, &n, &err) != 0) {
        moe_domains_free(&d);
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    }
    rc = place(&a, &d, nodes, n);
    moe_hostlist_free(nodes, n);
    moe_domains_free(&d);
    return rc;
}
