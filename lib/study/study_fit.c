#include "config.h"

#include <stdio.h>
#include <string.h>

#include "study/study_fit.h"
#include "study/study_fit_internal.h"
#include "study/study_internal.h"

static int recompute_plan(const struct moe_baseline *b, struct moe_recompute_plan *r,
                          struct moe_error *err)
{
    char modules[MOE_STUDY_LIST_MAX * (MOE_NAME_MAX + 1)] = "";

    memset(r, 0, sizeof(*r));
    r->num_layers = 1;
    if (b->recompute == MOE_RECOMPUTE_FULL)
        r->granularity = MOE_RC_FULL;
    if (b->recompute != MOE_RECOMPUTE_SELECTIVE)
        return 0;
    r->granularity = MOE_RC_SELECTIVE;
    for (int i = 0, off = 0; i < b->recompute_modules.n; i++)
        off += snprintf(modules + off, sizeof(modules) - (size_t)off, "%s%s", i ? "," : "",
                        b->recompute_modules.v[i]);
    return moe_recompute_modules_parse(modules, &r->modules, err);
}

/* The GPU type's rates, the study's own where it gives them, and the
 * baseline's precision and overlap switches.  -1 for a GPU type without
 * rates: no other type's stand in. */
static int study_perf(const struct moe_study *s, enum moe_impl impl, struct moe_perf *p,
                      struct moe_error *err)
{
    const struct moe_cluster *k = &s->cluster;
    const struct moe_baseline *b = &s->baseline;

    if (moe_perf_defaults(k->gpu, impl, p) != 0) {
        moe_error_set(err, "%s: cluster.gpu: no rates for GPU type %d (%s)", s->path,
                      (int)k->gpu, moe_gpu_name(k->gpu));
        return -1;
    }
    p->tflops_bf16 = k->tflops_bf16 >= 0 ? k->tflops_bf16 : p->tflops_bf16;
    p->tflops_fp8 = k->tflops_fp8 >= 0 ? k->tflops_fp8 : p->tflops_fp8;
    p->nvlink_gbps = k->nvlink_gbps >= 0 ? k->nvlink_gbps : p->nvlink_gbps;
    p->internode_gbps = k->internode_gbps >= 0 ? k->internode_gbps : p->internode_gbps;
    p->host_us = k->host_us >= 0 ? k->host_us : p->host_us;
    p->host_expert_us = k->host_expert_us >= 0 ? k->host_expert_us : p->host_expert_us;
    p->host_etp_us = k->host_etp_us >= 0 ? k->host_etp_us : p->host_etp_us;
    p->route_ns = k->route_ns >= 0 ? k->route_ns : p->route_ns;
    p->fp8 = b->precision != MOE_PREC_BF16;
    p->overlap_grad_reduce = b->overlap_grad_reduce;
    p->overlap_param_gather = false; /* moeflow does not emit --overlap-param-gather */
    p->tp_comm_overlap = b->tp_comm_overlap;
    p->ep_overlap = b->ep_overlap;
    p->cuda_graphs = b->cuda_graph_modules.n > 0;
    return 0;
}

/* The baseline's CUDA graphs for the memory model (fit/memory_graphs.c). */
static void study_graphs(const struct moe_baseline *b, struct moe_train *t)
{
    t->graphs = MOE_GRAPHS_NONE;
    t->graph_parts = 0;
    if (moe_graphs_full_iteration(b)) {
        t->graphs = MOE_GRAPHS_FULL_ITERATION;
        return;
    }
    for (int i = 0; i < b->cuda_graph_modules.n; i++) {
        const char *g = b->cuda_graph_modules.v[i];
        t->graphs = MOE_GRAPHS_MODULES;
        if (strcmp(g, "attn") == 0)
            t->graph_parts |= MOE_GRAPH_ATTN;
        else if (strcmp(g, "mlp") == 0 || strcmp(g, "moe") == 0)
            t->graph_parts |= MOE_GRAPH_FFN;
    }
}

/* The generated argv never sets --hidden-dropout or --attention-dropout,
 * so Megatron's 0.1 applies (core/transformer/transformer_config.py:181,
 * :184): the local attention keeps an s^2 dropout mask and output
 * (tests/gpu/results.tsv measures it).  TE keeps the recipe defaults (no
 * dropout) until a TE run is measured.  Sequence parallelism comes with TE
 * (megatron_args.c); an explicit pipeline layout splits layers unevenly. */
static void study_train(const struct moe_study *s, struct moe_train *t)
{
    if (moe_software_has_te(&s->software))
        moe_train_defaults(t);
    else
        moe_train_local_defaults(t);
    t->uneven_pp = moe_study_str_set(s->baseline.pipeline_layout);
    t->distributed_optimizer = s->distributed_optimizer;
    t->grads_fp32 = !s->grad_reduce_in_bf16;
    t->fp8_inputs = s->baseline.precision != MOE_PREC_BF16;
    study_graphs(&s->baseline, t);
    t->microbatches = s->workload.mbs > 0 ? s->workload.gbs / s->workload.mbs : 1;
}

int moe_study_fit_inputs(const struct moe_study *s, struct moe_train *t, struct moe_machine *m,
                         struct moe_error *err)
{
    study_train(s, t);
    moe_machine_defaults(m);
    if (recompute_plan(&s->baseline, &t->recompute, err) != 0)
        return -1;
    m->gpus = moe_study_world_size(s);
    m->gpus_per_domain = s->cluster.nvlink_domain;
    m->gpu_mem_gib = s->cluster.gpu_memory_gib;
    m->measured_ratio = s->fit_memory_ratio;
    if (moe_study_str_set(s->baseline.pipeline_layout)) {
        /* an explicit pipeline layout is written for one PP x VPP */
        m->fixed_pp = s->baseline.layout.pp;
        m->fixed_vpp = s->baseline.layout.vpp;
    }
    return study_perf(s, t->impl, &m->perf, err);
}

enum moe_rule moe_study_layout_check(const struct moe_study *s, struct moe_layout *l, int mbs,
                                     char *why, size_t len)
{
    struct moe_train t;
    struct moe_workload w = s->workload;

    study_train(s, &t);
    w.mbs = mbs;
    return moe_layout_check(&s->model, l, &w, &t, moe_study_world_size(s), why, len);
}

int moe_study_run_memory(const struct moe_study *s, const struct moe_run *run, int rank,
                         struct moe_memory *out, struct moe_error *err)
{
    struct moe_train t;
    struct moe_machine m;
    struct moe_layout l = run->cfg.layout;
    struct moe_workload w = s->workload;
    int world = moe_study_world_size(s);

    if (moe_study_fit_inputs(s, &t, &m, err) != 0 ||
        recompute_plan(&run->cfg, &t.recompute, err) != 0)
        return -1;
    l.dp = world / (l.tp * l.cp * l.pp);
    l.edp = world / (l.ep * l.etp * l.pp);
    w.mbs = run->mbs;
    /* Megatron orders ranks tp-cp-ep-dp-pp, the pipeline rank varying
     * slowest (parallel_state.py's RankGenerator). */
    return moe_memory_estimate_stage(&s->model, &l, &w, &t, rank / (world / l.pp), out, err);
}
