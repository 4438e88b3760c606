/* Each term says what it counts, so that a user can check it by hand
 * against moeflow-fit(1), which documents the formulas. */
#include "config.h"

#include "steptime_text.h"

/* Megatron's partial CUDA graphs end before each MoE layer's token-count
 * sync: under capture the router and the preprocessing return early (core
 * 0.19 moe_utils.py:1598-1611, moe_layer.py:650-666), and the dispatch
 * after them still reads the counts on the host.  So the stalls stay; what
 * the graphs save is host launches, which shorten the step only where the
 * host stream is not hidden.  (Without syncs, as with drop-and-pad, there
 * is no stall to keep.) */
static void graphs_line(FILE *out, const struct moe_step *st)
{
    const char *syncs = st->sync_ms > 0 ? "; the token-count syncs stay" : "";

    if (st->host_ms > 0)
        fprintf(out, "  CUDA graphs  not modeled: they save host launches, and %.1f ms of the "
                     "host stream is not hidden here, so the step can be shorter than "
                     "predicted%s\n", st->host_ms, syncs);
    else
        fprintf(out, "  CUDA graphs  not modeled: they save host launches, which the GPU's "
                     "work hides here (stream %.1f ms against %.1f ms)%s\n",
                st->host_stream_ms, st->gpu_stream_ms, syncs);
}

void steptime_print(FILE *out, const struct moe_perf *p, const struct moe_layout *l,
                    const struct moe_step *st)
{
    fprintf(out, "predicted step %.1f ms, %.1f model TFLOP/s per GPU (%.1f TFLOP per step, "
                 "%d microbatches per pipeline)\n", st->step_ms, st->tflops_per_gpu,
            st->model_tflop, st->microbatches);
    fprintf(out, "  compute      %10.1f ms  model FLOPs (+ recompute) of the busiest stage at "
                 "%.0f TFLOP/s (%s", st->compute_ms, p->fp8 ? p->tflops_fp8 : p->tflops_bf16,
            p->fp8 ? "FP8" : "BF16");
    if (p->fp8) /* Megatron keeps the core attention in BF16 */
        fprintf(out, "; core attention at %.0f TFLOP/s BF16", p->tflops_bf16);
    fputs(")\n", out);
    fprintf(out, "  MoE routing  %10.1f ms  router, top-k and token permutation, %.0f ns per "
                 "routed token copy\n", st->route_ms, p->route_ns);
    if (p->score_ps > 0) /* the local implementation's unfused attention */
        fprintf(out, "  attn scores  %10.1f ms  batch x heads x s x s attention scores through "
                     "unfused kernels, %.1f ps each\n", st->scores_ms, p->score_ps);
    fprintf(out, "  TP comm      %10.1f ms  all-gather/reduce-scatter of TP%d around attention "
                 "and dense MLPs%s\n", st->tp_ms, l->tp, p->tp_comm_overlap ? " (overlapped)" : "");
    fprintf(out, "  CP comm      %10.1f ms  ring K/V exchange of CP%d, mostly hidden by "
                 "attention\n", st->cp_ms, l->cp);
    fprintf(out, "  EP all-to-all%10.1f ms  dispatch + combine of top-k tokens in EP%d%s\n",
            st->ep_ms, l->ep, st->ep_overlapped ? " (overlapped)" : "");
    fprintf(out, "  ETP comm     %10.1f ms  all-gather/reduce-scatter of routed tokens in "
                 "ETP%d\n", st->etp_ms, l->etp);
    fprintf(out, "  PP send/recv %10.1f ms  activations and gradients between stages\n",
            st->pp_ms);
    fprintf(out, "  host         %10.1f ms  launch stream not hidden by the GPU's work (stream "
                 "%.1f ms against GPU %.1f ms): %.0f us per layer and microbatch",
            st->host_ms, st->host_stream_ms, st->gpu_stream_ms, p->host_us);
    if (p->host_expert_us > 0)
        fprintf(out, ", + %.0f us per local expert", p->host_expert_us);
    if (p->host_etp_us > 0 && l->etp > 1)
        fprintf(out, ", + %.0f us for the ETP%d token gather", p->host_etp_us, l->etp);
    if (st->dropless_host_skipped)
        fprintf(out, ", - %.0f us per MoE layer (drop-and-pad: no token counts to read)",
                p->host_dropless_us);
    fputc('\n', out);
    if (p->sync_from_streams)
        fprintf(out, "  sync stalls  %10.1f ms  host waits for token counts once per MoE layer "
                     "forward, then the GPU waits for the experts' launches (from the two "
                     "streams)\n", st->sync_ms);
    else
        fprintf(out, "  sync stalls  %10.1f ms  host waits for token counts once per MoE layer "
                     "forward: %.0f us + %.0f us per local expert\n", st->sync_ms, p->sync_us,
                p->sync_expert_us);
    if (p->cuda_graphs)
        graphs_line(out, st);
    if (st->step_host_ms > 0)
        fprintf(out, "  step host    %10.1f ms  optimizer and bookkeeping, %.0f us per layer "
                     "and step\n", st->step_host_ms, p->step_host_us);
    fprintf(out, "  bubble       %10.1f ms  (PP-1)/VPP = %d/%d microbatch slots idle\n",
            st->bubble_ms, l->pp - 1, l->vpp);
    fprintf(out, "  DP/EDP       %10.1f ms  gradient reduce-scatter + parameter all-gather not "
                 "hidden%s\n", st->dp_ms,
            p->overlap_grad_reduce ? " (grad-reduce overlap on)" : "");
    fprintf(out, "  links: NVLink %.0f GB/s, between domains %.0f GB/s per GPU\n", p->nvlink_gbps,
            p->internode_gbps);
    steptime_confidence(out, p);
}

/* How far the modeled step time is borne out on this GPU type. */
void steptime_confidence(FILE *out, const struct moe_perf *p)
{
    const struct moe_gpu_type *t = moe_gpu_type(p->gpu);

    if (!t)
        return;
    if (t->steptime_rows == 0)
        fprintf(out, "  modeled, not calibrated: no published or measured step time on %s "
                     "checks it, so the seed's rules rank first (fit, then the most DP, "
                     "NVLink, EP over ETP, PP across nodes, CP only for long context) and the "
                     "predicted step only breaks their ties\n", t->name);
    else
        fprintf(out, "  modeled: within +-25%% of %d of %d published or measured step times on "
                     "%s (tests/calibration/steptime-table.tsv)\n", t->steptime_within,
                t->steptime_rows, t->name);
}

void steptime_explain(FILE *out, const struct moe_perf *p, const struct moe_layout_entry *e)
{
    fprintf(out, "\nstep time of #1, term by term:\n");
    steptime_print(out, p, &e->layout, &e->time);
}

json_t *steptime_json(struct moe_jb *b, const struct moe_step *st)
{
    json_t *o = json_object();

    moe_jb_num(b, o, "sync", st->sync_ms);
    moe_jb_num(b, o, "step_host", st->step_host_ms);
    moe_jb_num(b, o, "compute", st->compute_ms);
    moe_jb_num(b, o, "scores", st->scores_ms);
    moe_jb_num(b, o, "route", st->route_ms);
    moe_jb_num(b, o, "tp", st->tp_ms);
    moe_jb_num(b, o, "cp", st->cp_ms);
    moe_jb_num(b, o, "ep", st->ep_ms);
    moe_jb_num(b, o, "etp", st->etp_ms);
    moe_jb_num(b, o, "pp", st->pp_ms);
    moe_jb_num(b, o, "host", st->host_ms);
    moe_jb_num(b, o, "bubble", st->bubble_ms);
    moe_jb_num(b, o, "dp", st->dp_ms);
    return moe_jb_done(b, o);
}

json_t *steptime_confidence_json(struct moe_jb *b, const struct moe_perf *p)
{
    const struct moe_gpu_type *t = moe_gpu_type(p->gpu);

    if (!t)
        return json_null();
    return moe_jb_pack(b, "{s:s, s:i, s:i, s:s}", "gpu", t->name, "within_25pct",
                       t->steptime_within, "rows", t->steptime_rows, "record",
                       "tests/calibration/steptime-table.tsv");
}

int steptime_not_modeled_json(struct moe_jb *b, json_t *o, const struct moe_perf *p)
{
    if (!p->cuda_graphs) /* graphs_line says why */
        return 0;
    return moe_jb_set(b, o, "steptime_not_modeled", moe_jb_pack(b, "[s]", "cuda_graphs"));
}
