/* Option parsing for fit and layouts.  Every number is checked here so that
 * the library sees only sane shapes. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fitargs.h"
#include "study/model_json.h"
#include "study/presets.h"
#include "study/study.h"
#include "study/study_fit.h"

enum {
    OPT_PRESET = 256, OPT_MODEL_JSON, OPT_GPUS, OPT_SEQ, OPT_MBS, OPT_GBS, OPT_MEM, OPT_HEADROOM,
    OPT_DOMAIN, OPT_IMPL, OPT_RECOMPUTE, OPT_UNEVEN, OPT_MTP, OPT_NO_DISTOPT, OPT_OFFLOAD,
    OPT_TP, OPT_CP, OPT_PP, OPT_VPP, OPT_EP, OPT_ETP, OPT_JSON, OPT_EXPLAIN, OPT_TOP, OPT_HELP,
    OPT_GROUPS, OPT_GPU, OPT_PRECISION,
};

static const struct option options[] = {
    { "preset", required_argument, NULL, OPT_PRESET },
    { "model-json", required_argument, NULL, OPT_MODEL_JSON },
    { "gpus", required_argument, NULL, OPT_GPUS },
    { "seq", required_argument, NULL, OPT_SEQ },
    { "mbs", required_argument, NULL, OPT_MBS },
    { "gbs", required_argument, NULL, OPT_GBS },
    { "gpu-mem-gib", required_argument, NULL, OPT_MEM },
    { "headroom", required_argument, NULL, OPT_HEADROOM },
    { "nvlink-domain", required_argument, NULL, OPT_DOMAIN },
    { "transformer-impl", required_argument, NULL, OPT_IMPL },
    { "recompute", required_argument, NULL, OPT_RECOMPUTE },
    { "pipeline-layout", no_argument, NULL, OPT_UNEVEN },
    { "mtp-layers", required_argument, NULL, OPT_MTP },
    { "no-distributed-optimizer", no_argument, NULL, OPT_NO_DISTOPT },
    { "optimizer-offload", required_argument, NULL, OPT_OFFLOAD },
    { "tp", required_argument, NULL, OPT_TP },
    { "cp", required_argument, NULL, OPT_CP },
    { "pp", required_argument, NULL, OPT_PP },
    { "vpp", required_argument, NULL, OPT_VPP },
    { "ep", required_argument, NULL, OPT_EP },
    { "etp", required_argument, NULL, OPT_ETP },
    { "json", no_argument, NULL, OPT_JSON },
    { "explain", no_argument, NULL, OPT_EXPLAIN },
    { "rank-groups", no_argument, NULL, OPT_GROUPS },
    { "top", required_argument, NULL, OPT_TOP },
    { "gpu", required_argument, NULL, OPT_GPU },
    { "precision", required_argument, NULL, OPT_PRECISION },
    { "help", no_argument, NULL, OPT_HELP },
    { NULL, 0, NULL, 0 },
};

static void usage(FILE *out, bool layouts_cmd)
{
    if (layouts_cmd)
        fprintf(out,
                "usage: moeflow layouts STUDY [--top K] [--explain] [--json] [OPTIONS]\n"
                "       moeflow layouts (--preset NAME | --model-json FILE) --gpus N --seq S\n"
                "                       --mbs M --gbs G [--top K] [--explain] [--json] [OPTIONS]\n"
                "Enumerates every valid parallel-folding layout, ranks them by the scale rules\n"
                "and names the rule that decided each place.\n");
    else
        fprintf(out,
                "usage: moeflow fit STUDY [--json] [--rank-groups] [OPTIONS]\n"
                "       moeflow fit (--preset NAME | --model-json FILE) --gpus N --seq S --mbs M\n"
                "                   --gbs G [--tp N --cp N --pp N --vpp N --ep N --etp N] [--json]\n"
                "                   [--rank-groups] [OPTIONS]\n"
                "Estimates peak memory per GPU (ours next to Megatron's formula).  Without a\n"
                "layout it picks the smallest model parallelism that fits; with a STUDY it\n"
                "checks the study's baseline layout.  Options override the study.\n");
    fprintf(out,
            "options: --gpu-mem-gib G (80)  --headroom F (0.10)  --nvlink-domain N (8)\n"
            "         --transformer-impl te|local  --recompute none|full[:N]|MODULE,...\n"
            "         --pipeline-layout (explicit uneven split)  --mtp-layers N\n"
            "         --optimizer-offload F  --no-distributed-optimizer\n"
            "         --gpu h100|h200|b200|gb200|gb300|a100 (rates for the step time)\n"
            "         --precision bf16|fp8-tensorwise|fp8-delayed|fp8-blockwise|mxfp8|nvfp4\n"
            "presets:");
    for (const char *const *n = moe_preset_names(); *n; n++)
        fprintf(out, " %s", *n);
    fprintf(out, "\nexample: moeflow %s --preset qwen3-30b-a3b --gpus 16 --seq 4096 --mbs 1 "
                 "--gbs 256%s\n", layouts_cmd ? "layouts" : "fit", layouts_cmd ? " --top 5" : "");
}

static int bad(const char *opt, const char *value, const char *what)
{
    struct moe_error e;

    moe_error_clear(&e);
    moe_error_set(&e, "%s '%s': %s", opt, value, what);
    moe_cli_report(&e);
    return MOE_EXIT_USAGE;
}

static int parse_int(const char *opt, const char *s, int min, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > 1 << 24)
        return bad(opt, s, "expected a whole number in range");
    *out = (int)v;
    return -1;
}

static int parse_double(const char *opt, const char *s, double min, double max, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || v < min || v > max)
        return bad(opt, s, "expected a number in range");
    *out = v;
    return -1;
}

static int parse_recompute(const char *s, struct moe_recompute_plan *r)
{
    struct moe_error e;

    moe_error_clear(&e);
    memset(r, 0, sizeof(*r));
    r->num_layers = 1;
    if (strcmp(s, "none") == 0)
        return -1;
    if (strncmp(s, "full", 4) == 0 && (s[4] == '\0' || s[4] == ':')) {
        r->granularity = MOE_RC_FULL;
        return s[4] ? parse_int("--recompute", s + 5, 1, &r->num_layers) : -1;
    }
    r->granularity = MOE_RC_SELECTIVE;
    if (moe_recompute_modules_parse(s, &r->modules, &e) < 0) {
        moe_cli_report(&e);
        return MOE_EXIT_USAGE;
    }
    return -1;
}

static int load_model(int opt, const char *arg, struct fit_args *a)
{
    struct moe_error e;

    moe_error_clear(&e);
    if (opt == OPT_PRESET) {
        const struct moe_model *p = moe_preset_find(arg);
        if (!p)
            return bad("--preset", arg, "unknown preset (see --help for the list)");
        a->model = *p;
    } else if (moe_model_from_json_file(arg, &a->model, &e) < 0) {
        moe_cli_report(&e);
        return MOE_EXIT_INVALID_INPUT;
    }
    a->have_model = true;
    return -1;
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

static int parse_gpu(const char *arg, struct fit_args *a)
{
    struct moe_perf p;

    if (moe_perf_defaults(arg, MOE_IMPL_TE, &p) < 0)
        return bad("--gpu", arg, "expected h100, h200, b200, gb200, gb300 or a100");
    snprintf(a->gpu, sizeof(a->gpu), "%s", arg);
    return -1;
}

static int *layout_field(struct fit_args *a, int opt)
{
    switch (opt) {
    case OPT_TP: return &a->layout.tp;
    case OPT_CP: return &a->layout.cp;
    case OPT_PP: return &a->layout.pp;
    case OPT_VPP: return &a->layout.vpp;
    case OPT_EP: return &a->layout.ep;
    default: return &a->layout.etp;
    }
}

static int one_option(int opt, const char *arg, bool layouts_cmd, struct fit_args *a)
{
    int mtp;

    switch (opt) {
    case OPT_PRESET:
    case OPT_MODEL_JSON: return load_model(opt, arg, a);
    case OPT_GPUS: return parse_int("--gpus", arg, 1, &a->c.gpus);
    case OPT_SEQ: return parse_int("--seq", arg, 1, &a->w.seq_len);
    case OPT_MBS: return parse_int("--mbs", arg, 1, &a->w.mbs);
    case OPT_GBS: return parse_int("--gbs", arg, 1, &a->w.gbs);
    case OPT_MEM: return parse_double("--gpu-mem-gib", arg, 1, 1e6, &a->c.gpu_mem_gib);
    case OPT_HEADROOM: return parse_double("--headroom", arg, 0, 0.9, &a->c.headroom);
    case OPT_DOMAIN: return parse_int("--nvlink-domain", arg, 1, &a->c.gpus_per_domain);
    case OPT_OFFLOAD: return parse_double("--optimizer-offload", arg, 0, 1, &a->t.optimizer_offload);
    case OPT_RECOMPUTE: return parse_recompute(arg, &a->t.recompute);
    case OPT_UNEVEN: a->t.uneven_pp = true; return -1;
    case OPT_NO_DISTOPT: a->t.distributed_optimizer = false; return -1;
    case OPT_JSON: a->json = true; return -1;
    case OPT_MTP:
        if (parse_int("--mtp-layers", arg, 0, &mtp) >= 0)
            return MOE_EXIT_USAGE;
        a->model.mtp_layers = mtp;
        return -1;
    case OPT_IMPL:
        if (strcmp(arg, "te") == 0 || strcmp(arg, "transformer_engine") == 0) {
            a->t.impl = MOE_IMPL_TE;
            a->t.sequence_parallel = true;
            a->impl_given = true;
        } else if (strcmp(arg, "local") == 0) {
            a->impl_given = true;
            a->t.impl = MOE_IMPL_LOCAL; /* as Megatron's local runs: dropout 0.1 */
            a->t.sequence_parallel = false; /* torch's RMSNorm refuses it */
            a->t.hidden_dropout = a->t.attention_dropout = 0.1;
        } else {
            return bad("--transformer-impl", arg, "expected te or local");
        }
        return -1;
    case OPT_GROUPS:
        if (layouts_cmd)
            return bad("--rank-groups", "", "only for moeflow fit");
        a->rank_groups = true;
        return -1;
    case OPT_EXPLAIN:
        if (!layouts_cmd)
            return bad("--explain", "", "only for moeflow layouts");
        a->explain = true;
        return -1;
    case OPT_TOP:
        if (!layouts_cmd)
            return bad("--top", arg, "only for moeflow layouts");
        return parse_int("--top", arg, 0, &a->top);
    case OPT_TP: case OPT_CP: case OPT_PP: case OPT_VPP: case OPT_EP: case OPT_ETP:
        if (layouts_cmd)
            return bad("layout option", arg, "moeflow layouts enumerates layouts itself");
        a->layout_given = true;
        return parse_int("layout size", arg, 1, layout_field(a, opt));
    case OPT_GPU: return parse_gpu(arg, a);
    case OPT_PRECISION:
        if (!precision_parse(arg, &a->fp8))
            return bad("--precision", arg, "expected bf16, fp8-tensorwise, fp8-delayed, "
                                           "fp8-blockwise, mxfp8 or nvfp4");
        a->precision_given = true;
        return -1;
    case OPT_HELP: usage(stdout, layouts_cmd); return MOE_EXIT_OK;
    default: usage(stderr, layouts_cmd); return MOE_EXIT_USAGE;
    }
}

/* --gpu or --transformer-impl pick the rate defaults again (a study's own
 * rates give way to them); --precision only switches the rate used. */
static void apply_perf(struct fit_args *a)
{
    struct moe_perf keep = a->c.perf;

    if (a->gpu[0] || a->impl_given) {
        moe_perf_defaults(a->gpu[0] ? a->gpu : a->study_gpu, a->t.impl, &a->c.perf);
        a->c.perf.fp8 = keep.fp8;
        a->c.perf.overlap_grad_reduce = keep.overlap_grad_reduce;
        a->c.perf.overlap_param_gather = keep.overlap_param_gather;
        a->c.perf.tp_comm_overlap = keep.tp_comm_overlap;
        a->c.perf.ep_overlap = keep.ep_overlap;
    }
    if (a->precision_given)
        a->c.perf.fp8 = a->fp8;
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
        if (s.json)
            moe_study_free(&s);
        return MOE_EXIT_INVALID_INPUT;
    }
    a->model = s.model;
    a->have_model = true;
    snprintf(a->study_gpu, sizeof(a->study_gpu), "%s", moe_gpu_name(s.cluster.gpu));
    a->w = s.workload;
    if (!layouts_cmd) {
        a->layout = s.baseline.layout;
        a->layout_given = true;
    }
    moe_study_free(&s);
    return rc;
}

/* The first non-option argument, found without acting on any option; NULL
 * when an option is wrong, which the real pass then reports. */
static const char *find_study_arg(int argc, char **argv)
{
    const char *study = NULL;
    bool bad = false;
    int c;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1)
        bad |= c == '?';
    if (optind < argc && !bad)
        study = argv[optind];
    optind = 0;
    opterr = 1;
    return study;
}

int fit_args_parse(int argc, char **argv, bool layouts_cmd, struct fit_args *a)
{
    const char *study;
    int opt, rc;

    memset(a, 0, sizeof(*a));
    moe_train_defaults(&a->t);
    moe_machine_defaults(&a->c);
    a->layout = (struct moe_layout){ .tp = 1, .cp = 1, .pp = 1, .vpp = 1, .ep = 1, .etp = 1 };
    a->top = 10;
    snprintf(a->study_gpu, sizeof(a->study_gpu), "h100");
    study = find_study_arg(argc, argv);
    if (study && (rc = load_study(study, layouts_cmd, a)) >= 0)
        return rc;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        if (opt == 'h')
            opt = OPT_HELP;
        if (opt == '?')
            moe_cli_suggest_option(argc, argv, options);
        if ((rc = one_option(opt, optarg, layouts_cmd, a)) >= 0)
            return rc;
    }
    if (optind + 1 < argc || (optind < argc && argv[optind] != study))
        return bad("argument", argv[optind + (argv[optind] == study)],
                   "only one STUDY file is read");
    if (!a->have_model)
        return bad("model", "", "give --preset NAME or --model-json FILE");
    apply_perf(a);
    if (a->c.gpus < 1 || a->w.seq_len < 1 || a->w.mbs < 1 || a->w.gbs < 1)
        return bad("shape", "", "--gpus, --seq, --mbs and --gbs are required");
    return -1;
}
