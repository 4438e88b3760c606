/* Options shared by `moeflow fit` and `moeflow layouts`.  Parsing only
 * fills these structs; the work is fit_run()/layouts_run(), which a STUDY
 * argument can feed the same way once the study reader lands. */
#ifndef MOEFLOW_FITARGS_H
#define MOEFLOW_FITARGS_H

#include <stdbool.h>

#include "fit/fit.h"
#include "fit/gpu.h"
#include "fit/memory.h"
#include "core/model.h"

struct fit_args {
    struct moe_model model;
    bool have_model;
    const char *model_from;   /* the --model-json file, "--preset NAME" or the STUDY */
    struct moe_workload w;
    struct moe_train t;
    struct moe_machine c;
    struct moe_layout layout; /* fit only: the layout to check */
    bool layout_given;
    bool json;
    bool rank_groups;         /* fit only: print Megatron's process groups */
    bool explain;             /* layouts only: step-time terms, exclusions by rule */
    bool excluded;            /* layouts only: every excluded combination */
    int top;                  /* layouts only: rows to print */
    int gpu;                  /* --gpu: an enum moe_gpu, whose memory, NVLink domain and
                                 rates apply; -1: not given */
    enum moe_gpu study_gpu;   /* the study's GPU type, or h100 */
    bool mem_given, domain_given; /* --gpu-mem-gib, --nvlink-domain */
    bool impl_given;
    bool fp8, precision_given;/* --precision */
    bool layouts_cmd;         /* parsing for moeflow layouts */
};

/* Parses argv (argv[0] = subcommand).  Returns -1 when parsing succeeded
 * and the command should run, else the exit code to return (0 after
 * --help).  Messages go to stderr through moe_cli_report(). */
int fit_args_parse(int argc, char **argv, bool layouts_cmd, struct fit_args *a);

/* The computations: print text or JSON to stdout; return an exit code. */
int fit_run(const struct moe_model *m, const struct moe_workload *w, const struct moe_train *t,
            const struct moe_machine *c, const struct moe_layout *layout, bool json,
            bool rank_groups);
/* explain: the first grid's step time term by term and the exclusions by
 * rule; excluded: every excluded combination with its rule. */
int layouts_run(const struct moe_model *m, const struct moe_workload *w,
                const struct moe_train *t, const struct moe_machine *c, int top, bool explain,
                bool excluded, bool json);

#endif
