/* moeflow gen: study file -> directory of sbatch scripts (lib/study/gen_write.c
 * writes it atomically). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "cli.h"
#include "fit_evidence.h"
#include "options.h"
#include "core/layout_name.h"
#include "core/manifest.h"
#include "core/readfile.h"
#include "core/shquote.h"
#include "core/strbuf.h"
#include "core/text.h"
#include "core/study_dir.h"
#include "plugin_probe.h"
#include "study/container.h"
#include "analysis/diagnose.h"
#include "analysis/fit_report.h"
#include "study/baseline_fit.h"
#include "study/stagegen.h"
#include "study/study_adopt.h"
#include "study/study_validate.h"
#include "study/study.h"
#include "contract/contract_check.h"
#include "contract/contract_store.h"
#include "study/gen_write.h"

struct gen_args {
    struct moe_gen_opts opts;
    char *moeflow;                  /* this moeflow's real path, for opts */
    const char *dir, *winners, *rebuild, *fit_from;
    bool dry;
    bool contention_given;          /* --contention PCT */
    double contention_pct;
};

/* Whether this moeflow is the one built in the build tree, whose source
 * tree's templates are then its own. */
static bool built_here(void)
{
    char *exe = realpath("/proc/self/exe", NULL);
    char *mine = moe_path_join(MOEFLOW_ABS_BUILDDIR, "gen/moeflow");
    char *tpl = moe_path_join(MOEFLOW_ABS_SRCDIR, "templates/submit.sh.in");
    bool here = exe && mine && tpl && strcmp(exe, mine) == 0 && access(tpl, R_OK) == 0;

    free(exe);
    free(mine);
    free(tpl);
    return here;
}

/* The templates: $MOEFLOW_TEMPLATE_DIR; else, for a moeflow run from the
 * build tree it was built in, the source tree's; else the installed ones.
 * malloc'd; NULL when out of memory. */
static char *default_templates(void)
{
    const char *envdir = getenv("MOEFLOW_TEMPLATE_DIR");

    if (envdir && *envdir)
        return strdup(envdir);
    return moe_path_join(built_here() ? MOEFLOW_ABS_SRCDIR : MOEFLOW_PKGDATADIR, "templates");
}

/* The default template folder must hold the templates: a moved or
 * bind-mounted build, or an uninstalled one, says how to point at them. */
static int check_templates(const char *dir)
{
    char *path = moe_path_join(dir, "submit.sh.in");
    int ok = path && access(path, R_OK) == 0, e = path ? errno : ENOMEM;

    free(path);
    if (ok)
        return MOE_CLI_RUN;
    return moe_cli_error(MOE_EXIT_USAGE, "moeflow gen: no templates in %s (%s); give "
                         "--templates DIR or set MOEFLOW_TEMPLATE_DIR to a templates folder "
                         "(the source tree's templates/, or the installed "
                         "share/moeflow/templates)\n", dir, strerror(e));
}

/* MaxArraySize from slurmctld, or -1 with err.  libslurm exits the process
 * when it finds no configuration, so look for one first. */
static int cluster_max_array_size(struct moe_error *err)
{
    const char *conf = getenv("SLURM_CONF");
    slurm_conf_t *c = NULL;
    int v;

    if (!(conf && access(conf, R_OK) == 0) && access("/etc/slurm/slurm.conf", R_OK) != 0) {
        moe_error_set(err, "--max-array-size=auto: no slurm.conf (set SLURM_CONF)");
        return -1;
    }
    slurm_init(NULL);
    if (slurm_load_ctl_conf((time_t)0, &c) != SLURM_SUCCESS || !c) {
        moe_error_set(err, "--max-array-size=auto: cannot ask slurmctld: %s",
                      slurm_strerror(slurm_get_errno()));
        return -1;
    }
    v = (int)c->max_array_sz;
    slurm_free_ctl_conf(c);
    slurm_fini();
    return v;
}

static int set_stage(void *args, const struct moe_opt *o, char *value)
{
    (void)o;
    if ((((struct gen_args *)args)->opts.only = moe_stage_parse(value)) == MOE_STAGE_NONE)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow gen: unknown stage '%s' (%s)\n", value,
                             moe_stage_choices());
    return MOE_CLI_RUN;
}

static int set_for(void *args, const struct moe_opt *o, char *value)
{
    (void)o;
    if (moe_bottleneck_parse(value) == MOE_BOTTLENECK_COUNT)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow gen: --for '%s': valid bottlenecks are "
                             "memory, communication, host, compute\n", value);
    ((struct gen_args *)args)->opts.retune_for = value;
    return MOE_CLI_RUN;
}

/* --contention PCT: the profile's compute-kernel slowdown beside
 * communication, which decides the dispatcher_sms axis (candidates.c). */
static int set_contention(void *args, const struct moe_opt *o, char *value)
{
    struct gen_args *a = args;
    int rc = moe_cli_double(o->name, value, -100, true, 1e6, &a->contention_pct);

    a->contention_given = rc == MOE_CLI_RUN;
    return rc;
}

static int set_max_array_size(void *args, const struct moe_opt *o, char *value)
{
    struct gen_args *a = args;
    struct moe_error err;

    moe_error_clear(&err);
    if (strcmp(value, "auto") == 0) {
        if ((a->opts.max_array_size = cluster_max_array_size(&err)) < 1)
            return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
        return MOE_CLI_RUN;
    }
    return moe_opt_int(args, o, value);
}

static const struct moe_opt gen_opts[] = {
    { "output", required_argument, 'o', "DIR", "directory to create", .set = moe_opt_string,
      .field = offsetof(struct gen_args, dir) },
    { "stage", required_argument, 's', "STAGE", "only this stage (%s)", .set = set_stage },
    { "dry-run", no_argument, 'n', NULL, "list what would be written; write nothing",
      .set = moe_opt_flag, .field = offsetof(struct gen_args, dry) },
    { "max-array-size", required_argument, 'm', "N",
      "Slurm MaxArraySize (default: the study's, else %d;\n"
      "'auto' asks slurmctld through libslurm)", .set = set_max_array_size,
      .field = offsetof(struct gen_args, opts.max_array_size), .min = 1, .max = 4000001 },
    { "templates", required_argument, 't', "DIR",
      "sbatch templates (default: $MOEFLOW_TEMPLATE_DIR, else\n"
      "the source tree's when run from its build tree, else\n"
      "%s/templates)", .set = moe_opt_string, .field = offsetof(struct gen_args, opts.templates_dir) },
    { "for", required_argument, 'f', "BOTTLENECK",
      "retune only what targets it (memory, communication,\n"
      "host, compute), as 'moeflow diagnose' reports it", .set = set_for },
    { "contention", required_argument, 'C', "PCT",
      "how much slower (%%) the profile's compute kernels ran\n"
      "beside communication than alone (moeflow report's\n"
      "contention); under 5 the retune axis dispatcher_sms is\n"
      "skipped, from 5 it is screened (default: unknown,\n"
      "screened with the whole catalogue)", .set = set_contention },
    { "fit-memory-from", required_argument, 'F', "DIR",
      "measured beats modeled: divide the memory the scale\n"
      "stage's layouts may use by the largest measured/predicted\n"
      "peak of the fit stage of study DIR (its sound runs, as\n"
      "moeflow report DIR --stage fit shows them)", .set = moe_opt_string,
      .field = offsetof(struct gen_args, fit_from) },
    { "winners", required_argument, 'W', "DIR",
      "rebuild the validate stage of the study DIR (written by\n"
      "moeflow gen) in place from its recorded winners: each\n"
      "winner alone, then their combination (no -o)", .set = moe_opt_string,
      .field = offsetof(struct gen_args, winners) },
    { "rebuild", required_argument, 'R', "DIR",
      "rebuild --stage STAGE and every later stage of the study\n"
      "DIR in place, each on the baseline DIR's decisions\n"
      "adopted for it (" MOE_STUDY_DECISIONS "/, as moeflow run records them),\n"
      "with DIR's fit evidence applied as --fit-memory-from\n"
      "(no -o)", .set = moe_opt_string, .field = offsetof(struct gen_args, rebuild) },
    { .name = NULL },
};

static void gen_help_values(FILE *out, const char *format)
{
    moe_cli_printf(out, format, moe_stage_choices(), MOE_MAX_ARRAY_SIZE_DEFAULT,
                   MOEFLOW_PKGDATADIR);
}

static const struct moe_cli gen_cli = {
    .usage = "usage: moeflow gen STUDY -o DIR [--stage STAGE] [--dry-run]\n"
             "                   [--max-array-size N] [--templates DIR]\n"
             "       moeflow gen DIR/study.yaml --stage validate --winners DIR\n"
             "       moeflow gen DIR/study.yaml --stage STAGE --rebuild DIR\n"
             "Writes one sbatch script per workflow stage (job arrays for fit, scale and\n"
             "retune), " MOE_STUDY_MANIFEST ", candidates.tsv and submit.sh into DIR, "
             "which must not\n"
             "exist yet.  See moeflow-study(5) for the study file.\n\n",
    .opts = gen_opts,
    .column = 26,
    .shorts = true,
    .tail = "\nexample (submit.sh as the job user: the contract is never frozen as root):\n"
            "  moeflow gen etc/studies/tiny-moe-2gpu.yaml -o tiny && cat tiny/candidates.tsv\n"
            "  cd tiny && ./submit.sh\n",
    .values = gen_help_values,
};

static void dry_run(const char *dir, const struct moe_gen_output *out)
{
    printf("would create %s/ with:\n", dir);
    for (int i = 0; i < out->n; i++)
        printf("  %-16s %8zu bytes  mode %04o\n", out->files[i].name, out->files[i].len,
               (unsigned)out->files[i].mode);
    printf("  %-16s\n", "logs/");
}

#define SKIPS_SHOWN 4

/* A skipped entry as one line: "variable=value: reason" ("variable:
 * reason" when it has no value, as the checkpoint run and the twins). */
static void print_skip(const struct moe_skip *sk)
{
    char *val = json_is_null(sk->value) ? NULL
                                        : json_dumps(sk->value, JSON_COMPACT | JSON_ENCODE_ANY);

    printf("             skipped %s%s%s: %s\n", sk->variable, json_is_null(sk->value) ? "" : "=",
           json_is_null(sk->value) ? "" : val ? val : "?", sk->reason);
    free(val);
}

static void print_stage(const char *dir, const struct moe_stage_plan *sp)
{
    printf("  %-9s %3zu candidate%s", moe_stage_name(sp->stage), sp->n, sp->n == 1 ? "" : "s");
    if (sp->n_skipped)
        printf(", %zu skipped", sp->n_skipped);
    putchar('\n');
    for (size_t j = 0; j < sp->n_skipped; j++) {
        if (j == SKIPS_SHOWN) {
            printf("             ... %zu more in %s/" MOE_STUDY_MANIFEST "\n",
                   sp->n_skipped - SKIPS_SHOWN, dir);
            break;
        }
        print_skip(&sp->skipped[j]);
    }
}

/* What gen wrote, from the plan: each stage with its candidates and what
 * it skipped (by which rule), where it went, and the command that comes
 * next. */
static void print_summary(const char *dir, const struct moe_study *study,
                          const struct moe_gen_plan *plan)
{
    size_t jobs = 0;
    char *quoted;

    for (int i = 0; i < plan->n; i++)
        jobs += plan->stages[i].n;
    printf("moeflow gen: wrote %s: study %s, %zu runs in %zu stages\n", dir, study->name, jobs,
           (size_t)plan->n);
    for (int i = 0; i < plan->n; i++)
        print_stage(dir, &plan->stages[i]);
    quoted = moe_shquote(dir);
    printf("next, as the job user (contracts are never frozen as root): cd %s && ./submit.sh\n",
           quoted ? quoted : dir);
    free(quoted);
}

static void print_validate(const char *dir, const struct moe_stage_plan *validate)
{
    printf("validate: %zu runs in %s/validate.sbatch (an array):\n", validate->n, dir);
    for (size_t i = 0; i < validate->n; i++) {
        const struct moe_candidate *c = &validate->cands[i];
        char *val = json_dumps(c->value, JSON_COMPACT | JSON_ENCODE_ANY);

        printf("  %zu: %s = %s", i, c->variable, val ? val : "?");
        for (size_t k = 0; c->twin_of && k < validate->n; k++)
            if (validate->cands[k].id && strcmp(validate->cands[k].id, c->twin_of) == 0)
                printf(" (profiling twin of %zu, never timed)", k);
        putchar('\n');
        free(val);
    }
    for (size_t i = 0; i < validate->n_skipped; i++)
        printf("  skipped %s: %s\n", validate->skipped[i].variable, validate->skipped[i].reason);
    printf("submit it from %s: sbatch validate.sbatch\n", dir);
}

/* Stages rebuilt in place are cut into arrays as the first gen cut them
 * (its --max-array-size, in manifest.json), unless told otherwise. */
static int same_array_size(struct gen_args *a, struct moe_error *err)
{
    struct moe_manifest m;
    json_int_t n;

    if (moe_manifest_load(a->dir, &m, err) < 0)
        return moe_cli_fail(err, MOE_EXIT_INVALID_INPUT);
    n = json_integer_value(json_object_get(m.json, "max_array_size"));
    if (n >= 1 && n <= 4000001)
        a->opts.max_array_size = (int)n;
    moe_manifest_free(&m);
    return MOE_CLI_RUN;
}

/* --winners DIR rebuilds the validate stage of DIR in place, --rebuild
 * DIR the stage given and every later one: DIR is the output. */
static int check_in_place(struct gen_args *a)
{
    const char *dir = a->winners ? a->winners : a->rebuild;
    struct moe_error err;

    if (!dir)
        return MOE_CLI_RUN;
    if (a->winners && a->rebuild)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow gen: --winners or --rebuild, not both\n");
    if (a->dir || a->dry ||
        (a->winners && a->opts.only != MOE_STAGE_NONE && a->opts.only != MOE_STAGE_VALIDATE))
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow gen: --%s DIR updates %s of DIR in place: "
                             "no -o, --dry-run%s\n", a->winners ? "winners" : "rebuild",
                             a->winners ? "the validate stage" : "stages",
                             a->winners ? " or other --stage" : "");
    if (a->rebuild && a->opts.only == MOE_STAGE_NONE)
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow gen: --rebuild DIR needs --stage STAGE, the "
                             "first stage to rebuild\n");
    if (!moe_study_is_dir(dir))
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow gen: --%s '%s': not a study directory "
                             "written by moeflow gen (no " MOE_STUDY_MANIFEST ")\n",
                             a->winners ? "winners" : "rebuild", dir);
    a->dir = dir;
    if (a->winners)
        a->opts.only = MOE_STAGE_VALIDATE;
    a->opts.onward = a->rebuild != NULL;
    /* a gen --winners killed mid-way is finished (or undone) first: until
     * then the study's readers refuse it */
    moe_error_clear(&err);
    if (moe_gen_finish_interrupted(dir, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    return a->opts.max_array_size ? MOE_CLI_RUN : same_array_size(a, &err);
}

/* The validate stage as planned: the winners' plan plus what planning adds
 * to it (validation.checkpoint's run), as validate.sbatch holds it. */
static const struct moe_stage_plan *validate_planned(const struct moe_gen_plan *p,
                                                     const struct moe_stage_plan *winners)
{
    for (int i = 0; i < p->n; i++)
        if (p->stages[i].stage == MOE_STAGE_VALIDATE)
            return &p->stages[i];
    return winners;
}

/* --rebuild: each stage rebuilt, on which baseline. */
static void print_rebuilt(const struct gen_args *a, const struct moe_gen_plan *plan)
{
    printf("moeflow gen: rebuilt %s in place:\n", a->dir);
    for (int i = 0; i < plan->n; i++) {
        print_stage(a->dir, &plan->stages[i]);
        if (a->opts.adopted[plan->stages[i].stage])
            printf("             on the baseline its decisions adopted "
                   "(%s/" MOE_STUDY_DECISIONS ")\n", a->dir);
    }
}

/* Plan, render, then write: a new study directory, or with --winners or
 * --rebuild stages of an existing one. */
static int build_and_write(const struct moe_study *study, const struct gen_args *a)
{
    struct moe_gen_plan plan;
    struct moe_gen_output out;
    struct moe_error err;
    int rc = MOE_EXIT_OK;

    moe_error_clear(&err);
    if (moe_gen_plan(study, &a->opts, &plan, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    if (moe_gen_render(study, &a->opts, &plan, &out, &err) < 0) {
        moe_gen_plan_free(&plan);
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    }
    if ((a->winners || a->rebuild) && moe_gen_update_stages(a->dir, &plan, &out, &err) < 0)
        rc = moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    else if (a->winners)
        print_validate(a->dir, validate_planned(&plan, a->opts.validate));
    else if (a->rebuild)
        print_rebuilt(a, &plan);
    else if (a->dry)
        dry_run(a->dir, &out);
    else if (moe_gen_write_new(a->dir, &out, &err) < 0)
        rc = moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    else
        print_summary(a->dir, study, &plan);
    moe_gen_output_free(&out);
    moe_gen_plan_free(&plan);
    return rc;
}

/* The jobs name the study's files by absolute path inside the container
 * too, so gen mounts the study directory at its own path when no mount of
 * the study shows it there (study/container.h): said, as it is a mount
 * the study did not ask for. */
static void note_container_mount(const struct moe_study *s, const char *study_dir)
{
    if (!moe_study_str_set(s->cluster.container_image) ||
        moe_container_mounts_cover(s->cluster.container_mounts, study_dir))
        return;
    fprintf(stderr, "moeflow gen: note: the jobs mount the study directory %s in the container "
            "at its own path (%s:%s is added to cluster.container.mounts), where they find "
            "their scripts and write " MOE_STUDY_RESULTS "/\n", study_dir, study_dir, study_dir);
}

/* Which scripts gen writes (cluster.plugin): the moeflow plugin's, or --
 * on a cluster without it -- scripts that make its contract checks
 * themselves with this moeflow.  auto asks sbatch; with no Slurm to ask
 * here the scripts are the plugin's, and submit.sh checks for it before
 * it submits anything.  0, or an exit status after saying why. */
static int choose_scripts(const struct moe_study *s, struct gen_args *a)
{
    char why[256];

    a->opts.plugin_free = false;
    switch (s->cluster.plugin) {
    case MOE_PLUGIN_REQUIRED:
        return 0;
    case MOE_PLUGIN_AUTO:
        if (plugin_probe(why, sizeof(why)) != PLUGIN_ABSENT)
            return 0;
        return moe_cli_error(MOE_EXIT_INVALID_INPUT,
                             "moeflow gen: this cluster's Slurm does not load the moeflow SPANK "
                             "plugin (%s), and the scripts of cluster.plugin: auto would need "
                             "it: sbatch would refuse their --moe-* options. Either set "
                             "cluster.plugin: none in the study, and the scripts check the "
                             "measurement contract themselves with moeflow contract check "
                             "(moeflow-study(5), PLUGIN); or ask the cluster's admin to install "
                             "spank_moeflow.so in plugstack.conf (spank_moeflow(8))\n", why);
    case MOE_PLUGIN_NONE:
        break;
    }
    a->opts.plugin_free = true;
    /* the scripts run this very moeflow on the nodes, by its real path */
    if (!(a->moeflow = realpath("/proc/self/exe", NULL)))
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow gen: /proc/self/exe: %s: the scripts "
                             "without the plugin run this moeflow by its path\n",
                             strerror(errno));
    a->opts.moeflow_path = a->moeflow;
    return 0;
}

/* --fit-memory-from DIR: the fit stage's measured/predicted peak. */
static int fit_memory_ratio(const char *dir, struct moe_study *study)
{
    struct moe_fit_report r;
    const struct moe_fit_row *from;
    struct moe_error err;
    double ratio;

    moe_error_clear(&err);
    if (!moe_study_is_dir(dir))
        return moe_cli_error(MOE_EXIT_USAGE, "moeflow gen: --fit-memory-from '%s': not a study "
                             "directory written by moeflow gen (no " MOE_STUDY_MANIFEST ")\n", dir);
    if (moe_fit_report_load(dir, &r, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    from = moe_gen_take_fit_evidence(study, &r);
    ratio = from ? study->fit_memory_ratio : 0;
    if (study->fit_static_shapes < 0)
        fprintf(stderr, "moeflow gen: retune stage: shapes %s: full_iteration CUDA graphs are "
                "skipped\n", study->fit_shapes_why);
    if (ratio > 0)
        fprintf(stderr, "moeflow gen: scale stage: usable memory divided by %.3f, the measured/"
                "predicted peak of fit candidate %s (rank %d) in %s\n", ratio, from->label,
                from->rank, dir);
    moe_fit_report_free(&r);
    if (!(ratio > 0))
        return moe_cli_error(MOE_EXIT_INVALID_INPUT, "moeflow gen: --fit-memory-from '%s': no "
                             "fit run there can be trusted yet (see moeflow report %s --stage "
                             "fit)\n", dir, dir);
    return MOE_CLI_RUN;
}

/* The last scale decision of a trail (contract_store.h), or NULL. */
static const json_t *last_scale_decision(const json_t *trail)
{
    const json_t *last = NULL, *t;
    size_t i;

    json_array_foreach(trail, i, t) {
        const json_t *d = json_object_get(t, "decision");
        const char *st = json_string_value(json_object_get(d, "stage"));

        if (st && strcmp(st, "scale") == 0)
            last = d;
    }
    return last;
}

/* The layouts the last scale decision of DIR's trail asks the next round
 * to run ("next_round"), into s->scale_round; 0 when there are none. */
static int next_scale_round(const char *dir, const json_t *last, struct moe_study *s,
                            struct moe_error *err)
{
    const json_t *v;
    size_t i;

    s->scale_round_n = 0;
    json_array_foreach(json_object_get(last, "next_round"), i, v) {
        struct moe_layout *l = &s->scale_round[s->scale_round_n];
        const char *name = json_string_value(v);
        enum moe_layout_form form = MOE_LAYOUT_KEYVALUE;
        struct moe_error why;

        /* the one notation, as moeflow writes it (core/layout_name.h) */
        moe_error_clear(&why);
        if (s->scale_round_n == MOE_STUDY_LIST_MAX || !name ||
            moe_layout_name_parse(name, l, &form, &why) < 0 || form != MOE_LAYOUT_DOTTED) {
            moe_error_set(err, "%s/" MOE_STUDY_DECISIONS ": the last scale decision's "
                          "next_round[%zu] is not a layout moeflow writes%s%s", dir, i,
                          why.text[0] ? ": " : "", why.text);
            return -1;
        }
        s->scale_round_n++;
    }
    return 0;
}

/* The scale run retune is compared with: the one DIR's last scale
 * decision adopted ("chose"."run_as"), into *ref; 0 with none. */
static int retune_reference(const char *dir, const json_t *last, struct moe_candidate **ref,
                            struct moe_error *err)
{
    const json_t *run_as = json_object_get(json_object_get(last, "chose"), "run_as");

    if (json_is_object(run_as) && (*ref = calloc(1, sizeof(**ref))) &&
        moe_candidate_from_json(run_as, *ref) < 0) {
        moe_error_set(err, "%s/" MOE_STUDY_DECISIONS ": out of memory", dir);
        return -1;
    }
    return 0;
}

/* --winners and --rebuild DIR: the stages planned from st on run on the
 * baseline DIR's decisions adopted for each (contract_check.h
 * moe_contract_reference), in copies[st] of study sharing its strings.  A
 * study whose contract stage has not run has nothing decided. */
static int adopt_decisions(struct gen_args *a, const struct moe_study *study,
                           struct moe_study *copies, struct moe_error *err)
{
    char digest[MOE_SHA256_HEX_LEN + 1], *path = moe_path_join(a->dir, MOE_STUDY_FROZEN);
    json_t *frozen, *trail = NULL;
    const json_t *last;
    int rc = 0, frozen_there = path && access(path, F_OK) == 0;

    free(path);
    if (!path) {
        moe_error_set(err, "out of memory");
        return -1;
    }
    if (!frozen_there)
        return 0;
    if (!(frozen = moe_contract_load_frozen(a->dir, digest, err)) ||
        !(trail = moe_contract_load_trail(a->dir, err))) {
        json_decref(frozen);
        return -1;
    }
    last = last_scale_decision(trail);
    if (a->opts.only <= MOE_STAGE_RETUNE && a->rebuild &&
        retune_reference(a->dir, last, (struct moe_candidate **)&a->opts.retune_reference,
                         err) < 0)
        rc = -1;
    for (int st = a->opts.only; rc == 0 && st < MOE_STAGE_COUNT; st++) {
        json_t *ref = moe_contract_reference_in(trail, (enum moe_stage)st, frozen, err);

        if (!ref)
            rc = -1;
        else if (!json_equal(ref, frozen)) {
            copies[st] = *study;
            if ((rc = moe_study_adopt(&copies[st], ref, err)) == 0)
                a->opts.adopted[st] = &copies[st];
        }
        json_decref(ref);
        if (rc == 0 && st == MOE_STAGE_SCALE && a->rebuild) {
            if (!a->opts.adopted[st])
                copies[st] = *study;
            if ((rc = next_scale_round(a->dir, last, &copies[st], err)) == 0 &&
                (a->opts.adopted[st] || copies[st].scale_round_n))
                a->opts.adopted[st] = &copies[st];
        }
    }
    json_decref(trail);
    json_decref(frozen);
    return rc;
}

/* --rebuild: the fit evidence of DIR applies by itself, when it has any
 * a reader can trust (moe_fit_report_ratio). */
static void fit_ratio_of(const char *dir, struct moe_study *study)
{
    struct moe_fit_report r;
    struct moe_error err;

    moe_error_clear(&err);
    if (moe_fit_report_load(dir, &r, &err) < 0)
        return;
    moe_gen_take_fit_evidence(study, &r);
    moe_fit_report_free(&r);
}

/* The study file at PATH, loaded, and what the options ask for from it. */
static int gen(struct gen_args *a, const char *path)
{
    struct moe_study study;
    struct moe_error err;
    struct moe_stage_plan validate = { .n = 0 };
    struct moe_study *copies;
    /* the absolute path of -o: the real path of its parent (at most
     * PATH_MAX) and its last name, so never cut */
    size_t dir_len = PATH_MAX + strlen(a->dir) + 2;
    char *text, *study_dir;
    size_t len;
    int rc;

    moe_error_clear(&err);
    if (!(text = moe_read_file(path, "study", &len, &err)))
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    if (moe_study_load_text(&study, path, text, len, &err) < 0) {
        moe_study_free(&study); /* what it read before the error */
        free(text);
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    }
    if (!(copies = calloc(MOE_STAGE_COUNT, sizeof(*copies))) ||
        !(study_dir = malloc(dir_len))) {
        free(copies);
        moe_study_free(&study);
        free(text);
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow gen: out of memory\n");
    }
    a->opts.study_text = text;
    a->opts.study_dir = study_dir;
    study.contention_measured = a->contention_given;
    study.contention_pct = a->contention_pct;
    if (a->rebuild && !a->fit_from)
        fit_ratio_of(a->rebuild, &study);
    rc = a->fit_from ? fit_memory_ratio(a->fit_from, &study) : MOE_CLI_RUN;
    if (rc != MOE_CLI_RUN)
        ; /* fit_memory_ratio said why */
    else if (moe_gen_target_path(a->dir, study_dir, dir_len, &err) < 0)
        rc = moe_cli_fail(&err, MOE_EXIT_USAGE);
    else if ((a->winners || a->rebuild) && adopt_decisions(a, &study, copies, &err) < 0)
        rc = moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    else if (a->winners &&
             moe_validate_candidates(a->opts.adopted[MOE_STAGE_VALIDATE]
                                         ? a->opts.adopted[MOE_STAGE_VALIDATE] : &study,
                                     a->winners, &validate, &err) < 0)
        rc = moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    else if (!a->winners && !a->rebuild && (rc = moe_study_baseline_fit(&study, &err)) != 0)
        rc = moe_cli_fail(&err, rc > 0 ? MOE_EXIT_INFEASIBLE : MOE_EXIT_INVALID_INPUT);
    else if (a->rebuild && moe_study_baseline_shapes(&study, &err) != 0)
        rc = moe_cli_fail(&err, MOE_EXIT_INFEASIBLE);
    else if ((rc = choose_scripts(&study, a)) != 0)
        ; /* choose_scripts said why */
    else {
        note_container_mount(&study, study_dir);
        a->opts.validate = a->winners ? &validate : NULL;
        rc = build_and_write(&study, a);
    }
    /* a outlives what they point to */
    a->opts.validate = NULL;
    memset(a->opts.adopted, 0, sizeof(a->opts.adopted));
    if (a->opts.retune_reference)
        moe_candidate_free((struct moe_candidate *)a->opts.retune_reference);
    free((void *)a->opts.retune_reference);
    a->opts.retune_reference = NULL;
    a->opts.study_dir = a->opts.study_text = a->opts.moeflow_path = NULL;
    free(a->moeflow);
    a->moeflow = NULL;
    free(study_dir);
    free(copies);
    moe_stage_plan_free(&validate);
    moe_study_free(&study);
    free(text);
    return rc;
}

/* The output directory's name lands in every script (--moe-study) and in
 * messages: the one rule for text (core/text.h) holds for it as for every
 * string of the study. */
static int control_in_dir(const char *dir)
{
    long at = moe_text_control_at(dir, strlen(dir));
    struct moe_error err;
    char name[48];

    if (at < 0)
        return 0;
    moe_error_clear(&err);
    moe_error_at(&err, "-o", 0, 0, "holds %s at byte %ld: no control characters are allowed",
                 moe_text_control_name(dir + at, name, sizeof(name)), at + 1);
    moe_cli_report(&err);
    return -1;
}

/* -o as a folder name: "o/" names the folder o (the temporary folder is
 * made beside it, not inside it); an empty name names nothing.  *buf
 * (malloc'd) holds the name when it had to be trimmed. */
static int output_dir(struct gen_args *a, char **buf)
{
    size_t n = strlen(a->dir);

    if (n == 0) {
        struct moe_error err;

        moe_error_clear(&err);
        moe_error_at(&err, "-o", 0, 0, "an empty path names no folder");
        moe_cli_report(&err);
        return -1;
    }
    while (n > 1 && a->dir[n - 1] == '/')
        n--;
    if (n < strlen(a->dir)) {
        if (!(*buf = strndup(a->dir, n))) {
            fprintf(stderr, "moeflow gen: out of memory\n");
            return -1;
        }
        a->dir = *buf;
    }
    return 0;
}

int cmd_gen(int argc, char **argv)
{
    struct gen_args a = { .opts = { .only = MOE_STAGE_NONE, .version = PACKAGE_VERSION } };
    struct moe_error err;
    struct stat st;
    char *templates = NULL, *dir = NULL;
    int first, rc = moe_cli_parse(&gen_cli, argc, argv, &a, &first);

    if (rc != MOE_CLI_RUN || (rc = check_in_place(&a)) != MOE_CLI_RUN)
        return rc;
    if (first >= argc)
        return moe_cli_missing(&gen_cli, "gen", "missing STUDY, the study file to generate from");
    if (first < argc - 1)
        return moe_cli_missing(&gen_cli, "gen", "one STUDY at a time (options go before it or "
                               "after it, e.g. -o DIR)");
    if (!a.dir)
        return moe_cli_missing(&gen_cli, "gen", "missing -o DIR, the study directory to "
                               "create (it must not exist yet)");
    if (control_in_dir(a.dir) < 0 || output_dir(&a, &dir) < 0)
        return MOE_EXIT_USAGE;
    if (!a.opts.templates_dir) {
        if (!(templates = default_templates()))
            rc = moe_cli_error(MOE_EXIT_SYSTEM, "moeflow gen: out of memory\n");
        else
            rc = check_templates(templates);
        a.opts.templates_dir = templates;
    }
    /* lstat: a dangling symlink is a name that is taken too */
    if (rc == MOE_CLI_RUN && !a.dry && !a.winners && !a.rebuild && lstat(a.dir, &st) == 0) {
        moe_error_clear(&err);
        moe_error_at(&err, a.dir, 0, 0, "already exists; remove it or choose another -o");
        rc = moe_cli_fail(&err, MOE_EXIT_USAGE);
    }
    if (rc == MOE_CLI_RUN)
        rc = gen(&a, argv[first]);
    free(templates);
    free(dir);
    return rc;
}
