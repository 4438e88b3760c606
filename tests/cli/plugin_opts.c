/* The plugin's options and plugstack.conf arguments at submission, without
 * Slurm: the library calls spank_moeflow.so makes in sbatch/srun (the
 * allocator context), in its order, for tests/cli/hostile-round.sh.
 *
 *   plugin_opts [--plugstack=KEY=VALUE]... [--array=...] [--moe-OPTION=VALUE]...
 *
 * plugstack.conf arguments (lib/core/plugin_config.c, as spank/dispatch.c
 * parses them), then each option through the setter its callback calls
 * (spank/args.c, spank/enforce_args.c), then the checks of
 * spank/alloc.c's validate_submission(), then spank/contract.c's: the
 * enforcement mode, the rules that a stage after the contract names a
 * study and, outside a job array (--array, read as the plugin reads
 * sbatch's command line), one of the stage's candidates, and the contract
 * check of every candidate the submission may run.  An error is printed as
 * the plugin prints it ("moeflow: ...") and exits 2, where sbatch would
 * refuse the job; in warn mode a contract violation is a warning.  0 when
 * the job would be submitted.  tests/integration/hostile-round.sh puts the
 * same cases to the real plugin. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "contract/contract_check.h"
#include "contract/jobopts.h"
#include "core/manifest.h"
#include "core/plugin_config.h"
#include "core/text.h"
#include "topology/affinity.h"
#include "topology/placement.h"

#define ARGS_MAX 64

static int refuse(const struct moe_error *err)
{
    char buf[MOE_ERROR_TEXT_MAX + MOE_ERROR_SOURCE_MAX + 32];

    fprintf(stderr, "moeflow: %s\n", moe_error_format(err, buf, sizeof(buf)));
    return 2;
}

/* spank/enforce_args.c's check_override(). */
static int affinity(const struct moe_plugin_config *cfg, const char *v, struct moe_error *err)
{
    struct moe_affinity_opts o;

    if (moe_affinity_opts_parse(v, &o, err) != 0)
        return -1;
    if (o.mode_set && !cfg->affinity_user_override && o.mode != cfg->affinity) {
        moe_error_set(err, "--moe-affinity=%s: the administrator fixed the mode to %s "
                      "(affinity_override=deny)", moe_affinity_mode_name(o.mode),
                      moe_affinity_mode_name(cfg->affinity));
        return -1;
    }
    return 0;
}

static int option(const struct moe_plugin_config *cfg, struct moe_jobopts *opts, const char *arg,
                  struct moe_error *err)
{
    const char *eq = strchr(arg, '='), *v = eq ? eq + 1 : "";
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    struct moe_layout l;
    enum moe_placement_mode pm;

#define IS(name) (n == strlen(name) && strncmp(arg, name, n) == 0)
    if (IS("--moe-stage"))
        return moe_jobopts_set_stage(opts, v, err);
    if (IS("--moe-study"))
        return moe_jobopts_set_study(opts, v, err);
    if (IS("--moe-candidate"))
        return moe_jobopts_set_candidate(opts, v, err);
    if (IS("--moe-enforce"))
        return moe_jobopts_set_enforce(opts, v, err);
    if (IS("--moe-affinity"))
        return affinity(cfg, v, err);
    if (IS("--moe-layout") && moe_layout_parse(v, &l, err) != 0) {
        /* spank/enforce_args.c's message */
        char why[MOE_ERROR_TEXT_MAX], shown[256];
        const char *vis = moe_text_visible(v, shown, sizeof(shown));

        snprintf(why, sizeof(why), "%s", err->text);
        moe_error_at(err, "", 0, 0, "--moe-layout=%.64s%s: column %d: %s", vis,
                     strlen(vis) > 64 ? "..." : "", err->column, why);
        return -1;
    }
    if (IS("--moe-layout"))
        return 0;
    if (IS("--moe-placement"))
        return moe_placement_mode_parse(v, &pm, err);
#undef IS
    if (strncmp(arg, "--array", 7) == 0)
        return 0; /* sbatch's own: see main() */
    moe_error_set(err, "plugin_opts: unknown argument '%s'", arg);
    return -1;
}

/* spank/contract.c's moe_submission_rules(): outside an array, a stage of
 * several candidates names the one it runs. */
static int one_candidate(const struct moe_jobopts *o, bool array, struct moe_error *err)
{
    struct stat st;
    struct moe_strv ids;
    size_t n;

    if (o->candidate[0] || array || stat(o->study, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    if (moe_manifest_stage_ids(o->study, o->stage, &ids, err) < 0)
        return 0; /* the contract check reports an unreadable manifest */
    n = ids.n;
    moe_strv_free(&ids);
    if (n <= 1)
        return 0;
    moe_error_set(err, "--moe-stage=%s of %s has %zu candidates: submit the stage's job array "
                  "(sbatch %s.sbatch) or name one with --moe-candidate=ID (ids in "
                  "candidates.tsv)", moe_stage_name(o->stage), o->study, n,
                  moe_stage_name(o->stage));
    return -1;
}

/* spank/contract.c's submit_check_one(), strict. */
static int check_one(const struct moe_jobopts *o, const char *candidate, struct moe_error *err)
{
    struct moe_contract_outcome out = { 0 };
    json_t *req = moe_contract_declared(o->study, candidate, err);
    int rc = req ? moe_contract_enforce(o->study, o->stage, req, false,
                                        o->stage == MOE_STAGE_CONTRACT, &out, err)
                 : -1;

    if (rc == 0 && !out.allowed) {
        moe_error_set(err, "contract check at submission: refused by rule %s: %s", out.rule,
                      out.reason);
        rc = -1;
    }
    moe_contract_outcome_free(&out);
    json_decref(req);
    return rc;
}

static int contract_at_submit(const struct moe_jobopts *o, struct moe_error *err)
{
    struct stat st;
    struct moe_strv ids;
    int rc = 0;

    if (o->stage == MOE_STAGE_NONE || !o->study[0] || stat(o->study, &st) != 0 ||
        !S_ISDIR(st.st_mode))
        return 0;
    if (o->candidate[0])
        return check_one(o, o->candidate, err);
    if (moe_manifest_stage_ids(o->study, o->stage, &ids, err) < 0)
        return -1;
    if (ids.n == 0)
        rc = check_one(o, "", err);
    for (size_t i = 0; i < ids.n; i++) {
        if ((rc = check_one(o, ids.v[i], err)) != 0)
            break;
    }
    moe_strv_free(&ids);
    return rc;
}

int main(int argc, char **argv)
{
    struct moe_plugin_config cfg;
    struct moe_jobopts opts;
    struct moe_error err;
    enum moe_enforce_mode mode;
    char *plug[ARGS_MAX];
    int nplug = 0;

    moe_error_clear(&err);
    for (int i = 1; i < argc && nplug < ARGS_MAX; i++)
        if (strncmp(argv[i], "--plugstack=", 12) == 0)
            plug[nplug++] = argv[i] + 12;
    if (moe_plugin_config_parse(&cfg, nplug, plug, &err) != 0)
        return refuse(&err);
    moe_jobopts_init(&opts);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "--plugstack=", 12) != 0 && option(&cfg, &opts, argv[i], &err) != 0)
            return refuse(&err);
    if (opts.study[0] && moe_study_path_check(opts.study, &err) != 0)
        return refuse(&err);
    mode = opts.enforce < 0 ? cfg.enforce : (enum moe_enforce_mode)opts.enforce;
    if (mode == MOE_ENFORCE_WARN && cfg.enforce != MOE_ENFORCE_WARN &&
        !cfg.enforce_user_override) {
        moe_error_set(&err, "--moe-enforce=warn is not allowed on this cluster (plugstack.conf: "
                      "enforce_override=deny)");
        return refuse(&err);
    }
    if (opts.stage != MOE_STAGE_NONE && opts.stage != MOE_STAGE_CONTRACT && !opts.study[0])
        moe_error_set(&err, "--moe-stage=%s needs --moe-study=DIR (the study directory moeflow "
                      "gen wrote)", moe_stage_name(opts.stage));
    else if (opts.stage != MOE_STAGE_NONE && opts.stage != MOE_STAGE_CONTRACT &&
             one_candidate(&opts, moe_sbatch_args_request_array(argc, argv), &err) != 0)
        ; /* err says why */
    else if (contract_at_submit(&opts, &err) != 0 && !err.text[0])
        moe_error_set(&err, "contract check at submission failed");
    if (err.text[0] && mode == MOE_ENFORCE_STRICT)
        return refuse(&err);
    if (err.text[0])
        fprintf(stderr, "moeflow: warning (enforce=warn): %s\n", err.text);
    printf("submitted: stage=%s study=%s candidate=%s\n",
           opts.stage == MOE_STAGE_NONE ? "" : moe_stage_name(opts.stage), opts.study,
           opts.candidate);
    return 0;
}
