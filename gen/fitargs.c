/* Option parsing for fit and layouts.  Every number is checked here so that
 * the library sees only sane shapes. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "fitargs.h"
#include "study/model_check.h"
#include "study/model_json.h"
#include "study/presets.h"
#include "study/study.h"
#include "study/study_fit.h"

static int bad(const char *opt, const char *value, const char *what)
{
    struct moe_error e;

    moe_error_clear(&e);
    moe_error_set(&e, "%s '%s': %s", opt, value, what);
    moe_cli_report(&e);
    return MOE_EXIT_USAGE;
}

/* Numbers go through the one parser of numeric options (options.h); opt
 * is the option as the user wrote it, "--gpus". */
static int parse_int(const char *opt, const char *s, int min, int *out)
{
    long v;
    int rc = moe_cli_long(opt + 2, s, min, 1 << 24, &v);

    if (rc == MOE_CLI_RUN)
        *out = (int)v;
    return rc;
}

static int parse_double(const char *opt, const char *s, double min, double max, double *out)
{
    return moe_cli_double(opt + 2, s, min, false, max, out);
}

static int set_recompute(void *args, const struct moe_opt *o, char *s)
{
    struct moe_recompute_plan *r = &((struct fit_args *)args)->t.recompute;
    struct moe_error e;

    (void)o;
    moe_error_clear(&e);
    memset(r, 0, sizeof(*r));
    r->num_layers = 1;
    if (strcmp(s, "none") == 0)
        return MOE_CLI_RUN;
    if (strncmp(s, "full", 4) == 0 && (s[4] == '\0' || s[4] == ':')) {
        r->granularity = MOE_RC_FULL;
        return s[4] ? parse_int("--recompute", s + 5, 1, &r->num_layers) : -1;
    }
    r->granularity = MOE_RC_SELECTIVE;
    if (moe_recompute_modules_parse(s, &r->modules, &e) < 0)
        return moe_cli_fail(&e, MOE_EXIT_USAGE);
    return MOE_CLI_RUN;
}

static int set_preset(void *args, const struct moe_opt *o, char *value)
{
    struct fit_args *a = args;
    const struct moe_model *p = moe_preset_find(value);

    (void)o;
    if (!p)
        return bad("--preset", value, "unknown preset (see --help for the list)");
    a->model = *p;
    a->have_model = true;
    a->model_from = "--preset";
    return MOE_CLI_RUN;
}

static int set_model_json(void *args, const struct moe_opt *o, char *value)
{
    struct fit_args *a = args;
    struct moe_error e;

    (void)o;
    moe_error_clear(&e);
    if (moe_model_from_json_file(value, &a->model, &e) < 0)
        return moe_cli_fail(&e, MOE_EXIT_INVALID_INPUT);
    a->have_model = true;
    a->model_from = value;
    return MOE_CLI_RUN;
}

/* The study's precision names; every one but bf16 runs at the FP8 rate. */
static bool precision_parse(const char *arg, bool *fp8)
{
    for (int p = MOE_PREC_BF16; p <= MOE_PREC_NVFP4; p++)
        if (strcmp(arg, moe_precision_name((enum moe_precision)p)) == 0) {
            *fp8 = p != MOE_PREC_BF16;
            return true;
        }
    return false;
}

/* The GPU types' names joined by sep, the last two by last: "h100|h200"
 * for the help, "h100, h200 or a100" for a message. */
static const char *gpu_names(char *buf, size_t len, const char *sep, const char *last)
{
    size_t n = 0;

    buf[0] = '\0';
    for (int g = 0; g < MOE_GPU_COUNT && n < len; g++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", g == 0 ? "" : g + 1 < MOE_GPU_COUNT ? sep
                                                                                      : last,
                              moe_gpu_names[g]);
    return buf;
}

static int set_gpu(void *args, const struct moe_opt *o, char *arg)
{
    struct fit_args *a = args;
    char names[256], what[300];

    (void)o;
    if ((a->gpu = moe_enum_parse(moe_gpu_names, arg)) < 0) {
        /* a message: the GPU names for an error; cut, it still lists some */
        snprintf(what, sizeof(what), "expected %s", gpu_names(names, sizeof(names), ", ", " or "));
        return bad("--gpu", arg, what);
    }
    return MOE_CLI_RUN;
}

/* --gpus, --seq, --mbs, --gbs, --nvlink-domain: counts from 1. */
static int set_count(void *args, const struct moe_opt *o, char *value)
{
    char opt[64];

    /* fits: option names are short constants of this file */
    snprintf(opt, sizeof(opt), "--%s", o->name);
    return parse_int(opt, value, 1, (int *)((char *)args + o->field));
}

static int set_domain(void *args, const struct moe_opt *o, char *value)
{
    ((struct fit_args *)args)->domain_given = true;
    return set_count(args, o, value);
}

static int set_mem(void *args, const struct moe_opt *o, char *value)
{
    (void)o;
    ((struct fit_args *)args)->mem_given = true;
    return parse_double("--gpu-mem-gib", value, 1, 1e6, &((struct fit_args *)args)->c.gpu_mem_gib);
}

static int set_headroom(void *args, const struct moe_opt *o, char *value)
{
    (void)o;
    return parse_double("--headroom", value, 0, 0.9, &((struct fit_args *)args)->c.headroom);
}

static int set_offload(void *args, const struct moe_opt *o, char *value)
{
    (void)o;
    return parse_double("--optimizer-offload", value, 0, 1,
                        &((struct fit_args *)args)->t.optimizer_offload);
}

static int no_distopt(void *args, const struct moe_opt *o, char *value)
{
    (void)o;
    (void)value;
    ((struct fit_args *)args)->t.distributed_optimizer = false;
    return MOE_CLI_RUN;
}

static int set_mtp(void *args, const struct moe_opt *o, char *value)
{
    int mtp = 0, rc = parse_int("--mtp-layers", value, 0, &mtp);

    (void)o;
    if (rc == MOE_CLI_RUN)
        ((struct fit_args *)args)->model.mtp_layers = mtp;
    return rc;
}

/* --routing: drop-and-pad pads every expert to the even share (capacity
 * factor 1, as a study's default), unless a study gave its own factor. */
static int set_routing(void *args, const struct moe_opt *o, char *arg)
{
    struct moe_workload *w = &((struct fit_args *)args)->w;
    int r = moe_enum_parse(moe_routing_names, arg);

    (void)o;
    if (r < 0)
        return bad("--routing", arg, "expected dropless, drop-and-pad or force-balance");
    w->routing = (enum moe_routing)r;
    if (w->routing != MOE_ROUTING_DROP_AND_PAD)
        w->capacity_factor = 0;
    else if (w->capacity_factor <= 0)
        w->capacity_factor = 1.0;
    return MOE_CLI_RUN;
}

/* --grad-reduce-in-bf16: Megatron's flag of that name keeps the main
 * grads and their reduction in bf16 (core 0.19 arguments.py:1190-1191,
 * training.py:1988 grad_reduce_in_fp32); Megatron-Bridge's performance
 * recipes run so (ddp.grad_reduce_in_fp32 = False). */
static int grads_bf16(void *args, const struct moe_opt *o, char *value)
{
    (void)o, (void)value;
    ((struct fit_args *)args)->t.grads_fp32 = false;
    return MOE_CLI_RUN;
}

static int set_impl(void *args, const struct moe_opt *o, char *arg)
{
    struct fit_args *a = args;

    (void)o;
    if (strcmp(arg, "te") == 0 || strcmp(arg, "transformer_engine") == 0) {
        a->t.impl = MOE_IMPL_TE;
        a->t.sequence_parallel = true;
    } else if (strcmp(arg, "local") == 0) {
        a->t.impl = MOE_IMPL_LOCAL; /* as Megatron's local runs: dropout 0.1 */
        a->t.sequence_parallel = false; /* torch's RMSNorm refuses it */
        a->t.hidden_dropout = a->t.attention_dropout = 0.1;
    } else {
        return bad("--transformer-impl", arg, "expected te or local");
    }
    a->impl_given = true;
    return MOE_CLI_RUN;
}

/* fit and layouts share the table: an option of the other one is refused
 * by name rather than as unknown. */
static int only_for(const struct fit_args *a, bool layouts, const char *opt, const char *value)
{
    if (a->layouts_cmd == layouts)
        return MOE_CLI_RUN;
    return bad(opt, value, layouts ? "only for moeflow layouts" : "only for moeflow fit");
}

/* --rank-groups (fit) and --explain (layouts): a bool of the one command. */
static int own_flag(void *args, const struct moe_opt *o, bool layouts)
{
    char opt[64];
    int rc;

    /* fits: as in set_count */
    snprintf(opt, sizeof(opt), "--%s", o->name);
    if ((rc = only_for(args, layouts, opt, "")) == MOE_CLI_RUN)
        *(bool *)((char *)args + o->field) = true;
    return rc;
}

static int fit_flag(void *args, const struct moe_opt *o, char *value)
{
    (void)value;
    return own_flag(args, o, false);
}

static int layouts_flag(void *args, const struct moe_opt *o, char *value)
{
    (void)value;
    return own_flag(args, o, true);
}

static int set_top(void *args, const struct moe_opt *o, char *value)
{
    struct fit_args *a = args;
    int rc = only_for(a, true, "--top", value);

    (void)o;
    return rc == MOE_CLI_RUN ? parse_int("--top", value, 0, &a->top) : rc;
}

/* --tp, --cp, --pp, --vpp, --ep, --etp: the layout fit checks. */
static int set_layout_size(void *args, const struct moe_opt *o, char *value)
{
    struct fit_args *a = args;

    if (a->layouts_cmd)
        return bad("layout option", value, "moeflow layouts enumerates layouts itself");
    char opt[64];

    /* fits: as in set_count */
    snprintf(opt, sizeof(opt), "--%s", o->name);
    a->layout_given = true;
    return parse_int(opt, value, 1, (int *)((char *)args + o->field));
}

/* --layout: the whole layout in the one notation (options.h); the
 * --tp ... --etp options given after it change one part of it. */
static int set_layout(void *args, const struct moe_opt *o, char *value)
{
    struct fit_args *a = args;

    if (a->layouts_cmd)
        return bad("--layout", value, "moeflow layouts enumerates layouts itself; check one with "
                   "moeflow fit --layout");
    a->layout_given = true;
    return moe_cli_layout(o->name, value, &a->layout);
}

static int set_precision(void *args, const struct moe_opt *o, char *value)
{
    struct fit_args *a = args;

    (void)o;
    if (!precision_parse(value, &a->fp8))
        return bad("--precision", value, "expected bf16, fp8-tensorwise, fp8-delayed, "
                                         "fp8-blockwise, mxfp8 or nvfp4");
    a->precision_given = true;
    return MOE_CLI_RUN;
}

#define FIELD(m) .field = offsetof(struct fit_args, m)

/* The usage text lists these, not option by option (help NULL): its
 * compact form predates the table. */
static const struct moe_opt fit_opts[] = {
    { "preset", required_argument, 0, "NAME", NULL, .set = set_preset },
    { "model-json", required_argument, 0, "FILE", NULL, .set = set_model_json },
    { "gpus", required_argument, 0, "N", NULL, .set = set_count, FIELD(c.gpus) },
    { "seq", required_argument, 0, "S", NULL, .set = set_count, FIELD(w.seq_len) },
    { "mbs", required_argument, 0, "M", NULL, .set = set_count, FIELD(w.mbs) },
    { "gbs", required_argument, 0, "G", NULL, .set = set_count, FIELD(w.gbs) },
    { "gpu-mem-gib", required_argument, 0, "G", NULL, .set = set_mem },
    { "headroom", required_argument, 0, "F", NULL, .set = set_headroom },
    { "nvlink-domain", required_argument, 0, "N", NULL, .set = set_domain, FIELD(c.gpus_per_domain) },
    { "transformer-impl", required_argument, 0, "IMPL", NULL, .set = set_impl },
    { "recompute", required_argument, 0, "WHAT", NULL, .set = set_recompute },
    { "pipeline-layout", no_argument, 0, NULL, NULL, .set = moe_opt_flag, FIELD(t.uneven_pp) },
    { "mtp-layers", required_argument, 0, "N", NULL, .set = set_mtp },
    { "routing", required_argument, 0, "R", NULL, .set = set_routing },
    { "no-distributed-optimizer", no_argument, 0, NULL, NULL, .set = no_distopt },
    { "fixed-recompute", no_argument, 0, NULL, NULL, .set = moe_opt_flag, FIELD(t.recompute_fixed) },
    { "grad-reduce-in-bf16", no_argument, 0, NULL, NULL, .set = grads_bf16 },
    { "ep-overlap", no_argument, 0, NULL, NULL, .set = moe_opt_flag, FIELD(c.perf.ep_overlap) },
    { "optimizer-offload", required_argument, 0, "F", NULL, .set = set_offload },
    { "layout", required_argument, 0, "LAYOUT", NULL, .set = set_layout },
    { "tp", required_argument, 0, "N", NULL, .set = set_layout_size, FIELD(layout.tp) },
    { "cp", required_argument, 0, "N", NULL, .set = set_layout_size, FIELD(layout.cp) },
    { "pp", required_argument, 0, "N", NULL, .set = set_layout_size, FIELD(layout.pp) },
    { "vpp", required_argument, 0, "N", NULL, .set = set_layout_size, FIELD(layout.vpp) },
    { "ep", required_argument, 0, "N", NULL, .set = set_layout_size, FIELD(layout.ep) },
    { "etp", required_argument, 0, "N", NULL, .set = set_layout_size, FIELD(layout.etp) },
    { "json", no_argument, 'j', NULL, NULL, .set = moe_opt_flag, FIELD(json) },
    { "explain", no_argument, 0, NULL, NULL, .set = layouts_flag, FIELD(explain) },
    { "excluded", no_argument, 0, NULL, NULL, .set = layouts_flag, FIELD(excluded) },
    { "rank-groups", no_argument, 0, NULL, NULL, .set = fit_flag, FIELD(rank_groups) },
    { "top", required_argument, 0, "K", NULL, .set = set_top },
    { "gpu", required_argument, 0, "TYPE", NULL, .set = set_gpu },
    { "precision", required_argument, 0, "P", NULL, .set = set_precision },
    { .name = NULL },
};

/* %s: the GPU types; %d, %d: h100's memory and NVLink domain; %s: the presets. */
#define FIT_OPTIONS_TEXT \
    "options: --gpu-mem-gib G  --headroom F (0.10)  --nvlink-domain N\n" \
    "         --transformer-impl te|local  --recompute none|full[:N]|MODULE,...\n" \
    "         --pipeline-layout (explicit uneven split)  --mtp-layers N\n" \
    "         --routing dropless|drop-and-pad|force-balance (step time: drop-and-pad\n" \
    "               has no device-to-host syncs)\n" \
    "         --optimizer-offload F  --no-distributed-optimizer\n" \
    "         --grad-reduce-in-bf16  --fixed-recompute (the --recompute given,\n" \
    "               never more: a recipe's own)\n" \
    "         --ep-overlap (step time: the EP all-to-all hides behind compute)\n" \
    "         --gpu %s (its memory, NVLink domain and\n" \
    "               rates for the step time; default h100: %d GiB, domain %d)\n" \
    "         --precision bf16|fp8-tensorwise|fp8-delayed|fp8-blockwise|mxfp8|nvfp4\n" \
    "presets:%s\n"

/* The GPU types, h100's memory and domain, and the presets' names, for
 * FIT_OPTIONS_TEXT. */
static void fit_values(FILE *out, const char *format)
{
    const struct moe_gpu_type *h100 = moe_gpu_type(MOE_GPU_H100);
    char names[2048], gpus[256];
    size_t n = 0;

    names[0] = '\0';
    for (const char *const *p = moe_preset_names(); *p && n < sizeof(names); p++)
        n += (size_t)snprintf(names + n, sizeof(names) - n, " %s", *p);
    moe_cli_printf(out, format, gpu_names(gpus, sizeof(gpus), "|", "|"), h100->memory_gib,
                   h100->nvlink_domain, names);
}

static const struct moe_cli fit_cli = {
    .usage = "usage: moeflow fit STUDY [--json] [--rank-groups] [OPTIONS]\n"
             "       moeflow fit (--preset NAME | --model-json FILE) --gpus N --seq S --mbs M\n"
             "                   --gbs G [--layout LAYOUT] [--json] [--rank-groups] [OPTIONS]\n"
             "Estimates peak memory per GPU (ours next to Megatron's formula).  Without a\n"
             "layout it picks the smallest model parallelism that fits; with a STUDY it\n"
             "checks the study's baseline layout.  Options override the study.\n"
             "LAYOUT: tp2.cp1.pp2.vpp1.ep8.etp1, an omitted part 1; --tp N, --cp N, --pp N,\n"
             "--vpp N, --ep N, --etp N set one part.\n",
    .opts = fit_opts,
    .tail = FIT_OPTIONS_TEXT
            "example: moeflow fit --preset qwen3-30b-a3b --gpus 16 --seq 4096 --mbs 1 --gbs 256\n",
    .values = fit_values,
};

static const struct moe_cli layouts_cli = {
    .usage = "usage: moeflow layouts STUDY [--top K] [--explain] [--excluded] [--json]\n"
             "                       [OPTIONS]\n"
             "       moeflow layouts (--preset NAME | --model-json FILE) --gpus N --seq S\n"
             "                       --mbs M --gbs G [--top K] [--explain] [--excluded]\n"
             "                       [--json] [OPTIONS]\n"
             "Enumerates every valid parallel-folding layout, ranks them by the scale rules\n"
             "and names the rule that decided each place.  --top K ranks K grids (10; 0:\n"
             "all); --explain adds the first grid's step time term by term and the excluded\n"
             "combinations counted by rule; --excluded lists every one of them.\n",
    .opts = fit_opts,
    .tail = FIT_OPTIONS_TEXT "example: moeflow layouts --preset qwen3-30b-a3b --gpus 16 --seq 4096 "
            "--mbs 1 --gbs 256 --top 5\n",
    .values = fit_values,
};

/* --gpu picks its type's memory and NVLink domain (unless --gpu-mem-gib or
 * --nvlink-domain is given); --gpu or --transformer-impl pick the rate
 * defaults again (a study's own values give way to them); --precision
 * only switches the rate used. */
static void apply_perf(struct fit_args *a)
{
    struct moe_perf keep = a->c.perf;

    if (a->gpu >= 0) {
        const struct moe_gpu_type *type = moe_gpu_type((enum moe_gpu)a->gpu);

        if (!a->mem_given)
            a->c.gpu_mem_gib = type->memory_gib;
        if (!a->domain_given)
            a->c.gpus_per_domain = type->nvlink_domain;
    }
    if (a->gpu >= 0 || a->impl_given) {
        moe_perf_defaults(a->gpu >= 0 ? (enum moe_gpu)a->gpu : a->study_gpu, a->t.impl,
                          &a->c.perf);
        a->c.perf.fp8 = keep.fp8;
        a->c.perf.overlap_grad_reduce = keep.overlap_grad_reduce;
        a->c.perf.overlap_param_gather = keep.overlap_param_gather;
        a->c.perf.tp_comm_overlap = keep.tp_comm_overlap;
        a->c.perf.ep_overlap = keep.ep_overlap;
    }
    if (a->precision_given)
        a->c.perf.fp8 = a->t.fp8_inputs = a->fp8;
}

/* A STUDY argument sets everything the options can; options given as well
 * override it. */
static int load_study(const char *path, bool layouts_cmd, struct fit_args *a)
{
    struct moe_study s;
    struct moe_error e;
    int rc = -1;

    moe_error_clear(&e);
    if (moe_study_load(&s, path, &e) != 0 || moe_study_fit_inputs(&s, &a->t, &a->c, &e) != 0) {
        moe_cli_report(&e);
        moe_study_free(&s);
        return MOE_EXIT_INVALID_INPUT;
    }
    a->model = s.model;
    a->have_model = true;
    a->model_from = path;
    a->study_gpu = s.cluster.gpu;
    a->w = s.workload;
    if (!layouts_cmd) {
        a->layout = s.baseline.layout;
        a->layout_given = true;
    }
    moe_study_free(&s);
    return rc;
}

/* fit and layouts hold every model, wherever it came from and whatever
 * option changed it (--mtp-layers), to the one model check. */
static int check_model(const struct fit_args *a)
{
    struct moe_error e, out;
    const char *key;

    moe_error_clear(&e);
    if (moe_model_check(&a->model, &key, &e) == 0)
        return MOE_CLI_RUN;
    moe_error_clear(&out);
    moe_error_at(&out, a->model_from ? a->model_from : "model", 0, 0, "model %s: %s: %.400s",
                 a->model.name, key ? key : "?", e.text);
    moe_cli_report(&out);
    return MOE_EXIT_INVALID_INPUT;
}

static void fit_args_defaults(struct fit_args *a, bool layouts_cmd)
{
    memset(a, 0, sizeof(*a));
    a->layouts_cmd = layouts_cmd;
    moe_train_defaults(&a->t);
    moe_machine_defaults(&a->c);
    a->layout = (struct moe_layout){ .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 };
    a->top = 10;
    a->gpu = -1;
    a->study_gpu = MOE_GPU_H100;
}

int fit_args_parse(int argc, char **argv, bool layouts_cmd, struct fit_args *a)
{
    const struct moe_cli *cli = layouts_cmd ? &layouts_cli : &fit_cli;
    const char *study;
    int first, rc;

    fit_args_defaults(a, layouts_cmd);
    study = moe_cli_first_operand(cli, argc, argv);
    if (study && (rc = load_study(study, layouts_cmd, a)) >= 0)
        return rc;
    if ((rc = moe_cli_parse(cli, argc, argv, a, &first)) != MOE_CLI_RUN)
        return rc;
    if (first + 1 < argc || (first < argc && argv[first] != study))
        return bad("argument", argv[first + (argv[first] == study)],
                   "only one STUDY file is read");
    if (!a->have_model)
        return bad("model", "", "give --preset NAME or --model-json FILE");
    if ((rc = check_model(a)) != MOE_CLI_RUN)
        return rc;
    apply_perf(a);
    if (a->c.gpus < 1 || a->w.seq_len < 1 || a->w.mbs < 1 || a->w.gbs < 1)
        return bad("shape", "", "--gpus, --seq, --mbs and --gbs are required");
    return MOE_CLI_RUN;
}
