/* moeflow fit: peak memory per GPU for one layout (ours next to Megatron's
 * formula), or the smallest model parallelism that fits. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "fitargs.h"
#include "options.h"
#include "fit/fit_where.h"
#include "core/layout_name.h"
#include "fit/layouts.h"
#include "fit/megatron_memory.h"
#include "fit/rankgroups.h"
#include "steptime_text.h"

/* Checked against measured runs: the fit matrix (tests/gpu/fit-matrix.tsv,
 * one H200 under the fake process group with fit-python/) and the real
 * 2xH200 runs (tests/data/memory, tests/gpu/results.tsv).  The matrix's
 * range is in sample (49a8036 was fitted on it), so the line gives the
 * range of the model as it stood when the runs were made beside it.  Every
 * figure here is derived by tests/calibration/figures.py and checked by
 * tests/cli/accuracy-register.sh (claims.tsv, "@fit"): edit both together. */
#define BAND_PCT 10
#define CONFIDENCE \
    "-8.2% to +5.8% on 90 fit-stage runs of 13 models on H200, in sample (the " \
    "attention-backward fix was fitted on them); as the model stood when they ran, " \
    "-37.1% to +4.2% (22 outside 10%); within 1% on real 2xH200 runs (local " \
    "implementation: EP 1-8, ETP 2, PP 2-4 with VPP 2, MBS 1-4, every recompute it allows); " \
    "TE, TP > 1 and CP terms follow the same tensors but are not yet measured"

/* The recompute plan in words.  Every caller's buf is rc[RECOMPUTE_TEXT]:
 * "selective " + at most 127 bytes of modules + " + offload" fits. */
#define RECOMPUTE_TEXT 160
static const char *recompute_text(const struct moe_train *t, char *buf, size_t len)
{
    char mods[128];
    const char *off = t->optimizer_offload > 0 || t->offload_layers > 0 ? " + offload" : "";

    switch (t->recompute.granularity) {
    case MOE_RC_NONE:
        /* fits: RECOMPUTE_TEXT above */
        snprintf(buf, len, "none%s", off);
        return buf;
    case MOE_RC_SELECTIVE:
        /* fits: RECOMPUTE_TEXT above */
        snprintf(buf, len, "selective %s%s",
                 moe_recompute_modules_format(t->recompute.modules, mods, sizeof(mods)), off);
        return buf;
    case MOE_RC_FULL:
        /* fits: RECOMPUTE_TEXT above */
        snprintf(buf, len, "full (%s, %d)%s",
                 t->recompute.method == MOE_RC_BLOCK ? "block" : "uniform",
                 t->recompute.num_layers, off);
        return buf;
    }
    return "(a recompute granularity this moeflow does not know)";
}

/* The CUDA-graph terms, each with what it rests on (fit/memory_graphs.c);
 * nothing without graphs. */
static void graphs_text(const struct moe_memory *x)
{
    if (x->graph_kind == MOE_GRAPHS_NONE)
        return;
    printf("  CUDA graph pool%-16s%8.2f GiB  %s\n",
           x->graph_kind == MOE_GRAPHS_FULL_ITERATION ? " (full step)" : " (modules)",
           x->graph_pool / MOE_GIB, moe_memory_graphs_label(x->graph_kind));
    printf("  CUDA graph static buffers      %8.2f GiB  modeled\n", x->graph_static / MOE_GIB);
}

static void print_text(const struct moe_model *m, const struct moe_layout *l,
                       const struct moe_machine *c, const struct moe_fit *f,
                       const struct moe_megatron_memory *mg)
{
    const struct moe_memory *x = &f->mem;
    char a[96], b[96], rc[RECOMPUTE_TEXT], why[200], name[MOE_LAYOUT_NAME_MAX];

    printf("model %s on %d GPUs\n", m->name, c->gpus);
    printf("layout  %s   %s   %s\n", moe_layout_name(l, name, sizeof(name)),
           moe_layout_format_attention(l, a, sizeof(a)), moe_layout_format_moe(l, b, sizeof(b)));
    printf("recompute %s\n", recompute_text(&f->train, rc, sizeof(rc)));
    printf("  weights (bf16)                 %8.2f GiB\n", x->weights / MOE_GIB);
    printf("  main grads                     %8.2f GiB\n", x->grads / MOE_GIB);
    printf("  optimizer (fp32 main + Adam)   %8.2f GiB\n", x->optimizer / MOE_GIB);
    printf("  persistent buffers             %8.2f GiB\n", x->persistent / MOE_GIB);
    printf("  activations (%d in flight)     %8.2f GiB\n", x->in_flight,
           x->activations / MOE_GIB);
    printf("  transients%-21s%8.2f GiB\n", x->peak_in_optimizer ? " (optimizer step)" : "",
           x->transient / MOE_GIB);
    graphs_text(x);
    printf("peak per GPU (ours)              %8.2f GiB  +-%d%%, pipeline rank %d\n",
           x->total / MOE_GIB, BAND_PCT, x->stage);
    printf("  confidence: %s\n", CONFIDENCE);
    printf("Megatron's theoretical estimate  %8.2f GiB  (weight and optimizer %.2f, "
           "activation %.2f)\n", mg->total / 1024, mg->weight_and_optimizer / 1024,
           mg->activation / 1024);
    printf("%s: %s\n", f->fits ? "fits" : "does not fit", moe_fit_describe(f, c, why, sizeof(why)));
}

static json_t *ours_json(struct moe_jb *b, const struct moe_memory *x)
{
    json_t *o = json_object();

    /* only with graphs: the JSON of a study without them stays as it was */
    if (x->graph_kind != MOE_GRAPHS_NONE) {
        moe_jb_num(b, o, "graph_pool", x->graph_pool / MOE_GIB);
        moe_jb_num(b, o, "graph_static", x->graph_static / MOE_GIB);
        moe_jb_num(b, o, "graphs", x->graphs / MOE_GIB);
        moe_jb_str(b, o, "graphs_label", moe_memory_graphs_label(x->graph_kind));
    }

    moe_jb_num(b, o, "weights", x->weights / MOE_GIB);
    moe_jb_num(b, o, "grads", x->grads / MOE_GIB);
    moe_jb_num(b, o, "optimizer", x->optimizer / MOE_GIB);
    moe_jb_num(b, o, "persistent", x->persistent / MOE_GIB);
    moe_jb_num(b, o, "activations", x->activations / MOE_GIB);
    moe_jb_num(b, o, "transient", x->transient / MOE_GIB);
    moe_jb_num(b, o, "total", x->total / MOE_GIB);
    moe_jb_int(b, o, "stage", x->stage);
    moe_jb_int(b, o, "in_flight", x->in_flight);
    moe_jb_int(b, o, "band_pct", BAND_PCT);
    return moe_jb_done(b, o);
}

static json_t *memory_json(struct moe_jb *b, const struct moe_fit *f,
                           const struct moe_megatron_memory *mg, const struct moe_machine *c)
{
    char rc[RECOMPUTE_TEXT];
    json_t *o = json_object(), *meg = json_object();

    moe_jb_bool(b, o, "fits", f->fits);
    moe_jb_str(b, o, "step", moe_fit_step_kind(f));
    moe_jb_str(b, o, "recompute", recompute_text(&f->train, rc, sizeof(rc)));
    moe_jb_set(b, o, "ours_gib", ours_json(b, &f->mem));
    moe_jb_num(b, meg, "weight_and_optimizer", mg->weight_and_optimizer);
    moe_jb_num(b, meg, "activation", mg->activation);
    moe_jb_num(b, meg, "total", mg->total);
    moe_jb_set(b, o, "megatron_mib", moe_jb_done(b, meg));
    moe_jb_num(b, o, "usable_gib", moe_machine_usable(c) / MOE_GIB);
    moe_jb_str(b, o, "confidence", CONFIDENCE);
    return moe_jb_done(b, o);
}

/* fit --json: what fit prints as text; NULL with b's error on a failure. */
static json_t *fit_json(struct moe_jb *b, const struct moe_model *m, const struct moe_layout *l,
                        const struct moe_machine *c, const struct moe_fit *f,
                        const struct moe_megatron_memory *mg, const struct moe_step *st,
                        const char *where)
{
    char a[96], mo[96], name[MOE_LAYOUT_NAME_MAX];
    json_t *o = moe_jb_pack(b, "{s:s, s:i, s:{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:s}}",
                            "model", m->name, "gpus", c->gpus, "layout", "name",
                            moe_layout_name(l, name, sizeof(name)), "tp", l->tp, "cp",
                            l->cp, "dp", l->dp, "pp", l->pp, "vpp", l->vpp, "ep", l->ep, "etp",
                            l->etp, "edp", l->edp, "attention",
                            moe_layout_format_attention(l, a, sizeof(a)), "moe",
                            moe_layout_format_moe(l, mo, sizeof(mo)));

    moe_jb_set(b, o, "memory", memory_json(b, f, mg, c));
    if (!f->fits) {
        /* no step time for a configuration that cannot run (issue 37) */
        moe_jb_set(b, o, "step_ms", json_null());
        moe_jb_set(b, o, "tflops_per_gpu", json_null());
        moe_jb_str(b, o, "no_step_because", "does not fit");
        moe_jb_str(b, o, "fits_instead", where);
        return moe_jb_done(b, o);
    }
    moe_jb_num(b, o, "step_ms", st->step_ms);
    moe_jb_num(b, o, "tflops_per_gpu", st->tflops_per_gpu);
    moe_jb_set(b, o, "step_terms_ms", steptime_json(b, st));
    moe_jb_set(b, o, "steptime_calibration", steptime_confidence_json(b, &c->perf));
    steptime_not_modeled_json(b, o, &c->perf);
    /* the two streams whose slower one (+ the sync stalls) is the step's
     * microbatch time; not terms of step_ms */
    moe_jb_num(b, o, "host_stream_ms", st->host_stream_ms);
    moe_jb_num(b, o, "gpu_stream_ms", st->gpu_stream_ms);
    return moe_jb_done(b, o);
}

static int print_json(const struct moe_model *m, const struct moe_layout *l,
                      const struct moe_machine *c, const struct moe_fit *f,
                      const struct moe_megatron_memory *mg, const struct moe_step *st,
                      const char *where)
{
    struct moe_error err;
    struct moe_jb b;
    json_t *o;

    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    if (!(o = fit_json(&b, m, l, c, f, mg, st, where)))
        return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    json_dumpf(o, stdout, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    putchar('\n');
    json_decref(o);
    return f->fits ? MOE_EXIT_OK : MOE_EXIT_INFEASIBLE;
}

/* No layout given: the smallest model parallelism that fits. */
static int choose_layout(const struct moe_model *m, const struct moe_workload *w,
                         const struct moe_train *t, const struct moe_machine *c,
                         struct moe_layout *out)
{
    struct moe_layout_set s;
    struct moe_error e;
    char advice[256], a[96], b[96], name[MOE_LAYOUT_NAME_MAX];

    moe_error_clear(&e);
    if (moe_layouts_enumerate(m, w, t, c, 0, false, &s, &e) < 0) {
        moe_cli_report(&e);
        return MOE_EXIT_SYSTEM;
    }
    if (s.n_fitting == 0) {
        const struct moe_layout_entry *n = moe_layouts_nearest_miss(&s, c, advice, sizeof(advice));
        if (!n)
            moe_error_set(&e, "no layout can use %d GPUs: %s", c->gpus, advice);
        else
            moe_error_set(&e, "%s does not fit on %d GPUs of %.0f GiB; nearest miss %s (%s %s): "
                          "%s", m->name, c->gpus, c->gpu_mem_gib,
                          moe_layout_name(&n->layout, name, sizeof(name)),
                          moe_layout_format_attention(&n->layout, a, sizeof(a)),
                          moe_layout_format_moe(&n->layout, b, sizeof(b)), advice);
        moe_cli_report(&e);
        moe_layout_set_free(&s);
        return MOE_EXIT_INFEASIBLE;
    }
    *out = moe_layouts_smallest_fit(&s)->layout;
    moe_layout_set_free(&s);
    return -1;
}

/* For a configuration that does not fit, the smallest layout or GPU count
 * that does (fit takes --gpus, not nodes: any count, no node named). */
static int where_it_fits(const struct moe_model *m, const struct moe_workload *w,
                         const struct moe_train *t, const struct moe_machine *c, char *buf,
                         size_t len)
{
    struct moe_fit_where wh;
    struct moe_error e;

    moe_error_clear(&e);
    if (moe_fit_where(m, w, t, c, 0, &wh, &e) < 0) {
        moe_cli_report(&e);
        return -1;
    }
    moe_fit_where_text(&wh, c, 0, buf, len);
    return 0;
}

/* Megatron's process groups for the layout (rank order tp-cp-ep-dp-pp). */
static void print_groups(const struct moe_layout *l, int world)
{
    static char buf[1 << 20];

    if (moe_rank_groups_format(l, world, buf, sizeof(buf)) < 0)
        printf("rank groups: too many ranks to print\n");
    else
        fputs(buf, stdout);
}

int fit_run(const struct moe_model *m, const struct moe_workload *w, const struct moe_train *t,
            const struct moe_machine *c, const struct moe_layout *layout, bool json,
            bool rank_groups)
{
    struct moe_layout l;
    struct moe_fit f;
    struct moe_megatron_memory mg;
    struct moe_step st;
    struct moe_error e;
    char why[256], where[512] = "";
    int rc;

    moe_error_clear(&e);
    if (layout) {
        l = *layout;
        enum moe_rule r = moe_layout_check(m, &l, w, t, c->gpus, why, sizeof(why));
        if (r != MOE_RULE_OK) {
            moe_error_set(&e, "layout rejected (%s): %s", moe_rule_id(r), why);
            moe_cli_report(&e);
            return MOE_EXIT_INVALID_INPUT;
        }
    } else if ((rc = choose_layout(m, w, t, c, &l)) >= 0) {
        return rc;
    }
    if (moe_fit_layout(m, &l, w, t, c, &f, &e) < 0) {
        moe_cli_report(&e);
        return MOE_EXIT_INVALID_INPUT;
    }
    moe_megatron_memory(m, &l, w, &f.train, &mg);
    moe_step_time(m, &l, w, &f.train, &c->perf, c->gpus_per_domain, f.mem.params_dense,
                  f.mem.params_expert, &st);
    if (!f.fits && where_it_fits(m, w, t, c, where, sizeof(where)) < 0)
        return MOE_EXIT_SYSTEM;
    if (json)
        return print_json(m, &l, c, &f, &mg, &st, where);
    if (!layout)
        printf("smallest model parallelism that fits (rules: fits, footprint, then the "
               "fastest):\n");
    print_text(m, &l, c, &f, &mg);
    if (f.fits)
        steptime_print(stdout, &c->perf, &l, &st);
    else
        printf("predicted step: none: a configuration that does not fit has no step time\n"
               "  where it fits: %s\n", where);
    if (rank_groups)
        print_groups(&l, c->gpus);
    return f.fits ? MOE_EXIT_OK : MOE_EXIT_INFEASIBLE;
}

int cmd_fit(int argc, char **argv)
{
    struct fit_args a;
    int rc = fit_args_parse(argc, argv, false, &a);

    if (rc != MOE_CLI_RUN)
        return rc;
    return fit_run(&a.model, &a.w, &a.t, &a.c, a.layout_given ? &a.layout : NULL, a.json,
                   a.rank_groups);
}
