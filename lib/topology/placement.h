/* Rank placement inside NVLink domains.  Megatron orders ranks tp-cp-ep-dp-pp
 * (first varies fastest), so an aligned block of B = max(TP*CP, ETP*EP)
 * consecutive ranks holds whole TP/CP and EP groups.  Ordering the job's nodes
 * so that as many blocks as possible lie inside one domain keeps the
 * high-frequency collectives on NVLink. */
#ifndef MOEFLOW_PLACEMENT_H
#define MOEFLOW_PLACEMENT_H

#include "core/error.h"
#include "core/model.h"

/* A layout in the one notation, moe_layout_name_parse() of
 * core/layout_name.h: "tp2.cp1.pp4.vpp1.ep8.etp1", or the older
 * "tp=2,cp=1,ep=8,etp=1,pp=4".  dp and edp are 0 until moe_layout_fit()
 * derives them from a world size. */
int moe_layout_parse(const char *spec, struct moe_layout *l, struct moe_error *err);

/* Checks that the layout divides world and fills dp/edp. */
int moe_layout_fit(struct moe_layout *l, int world, struct moe_error *err);

/* --moe-placement: nvlink is the default once a topology is configured;
 * nvlink-strict fails a step whose TP/EP group must cross domains. */
enum moe_placement_mode {
    MOE_PLACEMENT_NVLINK = 0,
    MOE_PLACEMENT_STRICT,
    MOE_PLACEMENT_NONE,
};

int moe_placement_mode_parse(const char *s, enum moe_placement_mode *mode, struct moe_error *err);

struct moe_placement {
    int nnodes, gpn, world, block;
    int *order;       /* order[pos] = index in the job's node list */
    int *pos;         /* pos[node] = its place in the new order */
    int blocks;       /* world / block */
    int intra;        /* blocks whose ranks all lie in one domain */
    int bound;        /* sum over domains of floor(n_d * gpn / B) */
    int first_split;  /* first block spanning two domains, -1 if none */
};

/* domain[i]: NVLink domain id of job node i; -1 = a domain of its own (a
 * node-local NVLink, e.g. HGX).  Deterministic: the same inputs give the
 * same order on every node.  l must have been through moe_layout_fit(). */
int moe_placement_plan(const struct moe_layout *l, int nnodes, int gpn, const int *domain,
                       struct moe_placement *p, struct moe_error *err);
void moe_placement_free(struct moe_placement *p);

/* Blocks inside one domain when nodes run in the given order (NULL = the
 * job's own order, which is what Slurm does without moeflow). */
int moe_placement_count(int nnodes, int gpn, int block, const int *order, const int *domain,
                        int *first_split);

#endif
