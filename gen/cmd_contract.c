/* moeflow contract show|diff|verify|freeze: the measurement contract by hand. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "contract_job.h"
#include "contract_show.h"
#include "contract/contract.h"
#include "contract/contract_check.h"
#include "contract/contract_diff.h"
#include "contract/contract_rules.h"
#include "contract/contract_store.h"
#include "core/contract_keys.h"
#include "core/json_build.h"
#include "core/sha256.h"
#include "core/strbuf.h"
#include "core/study_dir.h"

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A run directory: a folder holding its own contract.json.  Out of memory
 * reads as no (the study's frozen contract is then read, and reported). */
static bool is_run_dir(const char *path)
{
    char *file;
    bool run;

    if (!is_dir(path) || !(file = moe_path_join(path, "contract.json")))
        return false;
    run = access(file, F_OK) == 0;
    free(file);
    return run;
}

/* A study directory means its frozen baseline, a run directory its own
 * contract.json (both verified); anything else is a contract file. */
static json_t *load_any(const char *path, char digest[MOE_SHA256_HEX_LEN + 1])
{
    struct moe_error err;
    json_t *doc;

    moe_error_clear(&err);
    if (is_dir(path) && !is_run_dir(path))
        doc = moe_contract_load_frozen(path, digest, &err);
    else {
        doc = is_dir(path) ? moe_contract_load_run(path, digest, &err)
                           : moe_contract_load_plain(path, &err);
        if (doc && !is_dir(path))
            moe_contract_digest(doc, digest, &err);
    }
    if (!doc)
        moe_cli_report(&err);
    return doc;
}

static int cmd_show(const char *path, bool json)
{
    char digest[MOE_SHA256_HEX_LEN + 1];
    json_t *doc = load_any(path, digest);
    int rc;

    if (!doc)
        return MOE_EXIT_INVALID_INPUT;
    rc = moe_contract_show(path, doc, digest, json);
    json_decref(doc);
    return rc;
}

/* diff --json; NULL with err naming the key that could not be made. */
static json_t *diff_json(const struct moe_contract_diff *d, const struct moe_contract_diff *notes,
                         const struct moe_verdict *v, struct moe_error *err)
{
    struct moe_jb b;
    json_t *out = json_object(), *verdict;

    moe_jb_init(&b, err);
    moe_jb_set(&b, out, "changes", moe_contract_diff_json(d));
    if (notes->count)
        moe_jb_set(&b, out, "annotation_changes", moe_contract_diff_json(notes));
    if (v->rule[0]) {
        verdict = json_object();
        moe_jb_bool(&b, verdict, "allowed", v->allowed);
        moe_jb_str(&b, verdict, "rule", v->rule);
        moe_jb_str(&b, verdict, "reason", v->reason);
        moe_jb_set(&b, out, "verdict", moe_jb_done(&b, verdict));
    }
    return moe_jb_done(&b, out);
}

/* notes: when the compared sections are equal but the digests are not,
 * the annotations that differ; a diff of two different contracts is never
 * "no differences". */
static int print_diff(const struct moe_contract_diff *d, const struct moe_contract_diff *notes,
                      const struct moe_verdict *v, bool json)
{
    if (json) {
        struct moe_error err;
        json_t *out;

        moe_error_clear(&err);
        if (!(out = diff_json(d, notes, v, &err)))
            return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
        json_dumpf(out, stdout, JSON_SORT_KEYS | JSON_INDENT(2));
        putchar('\n');
        json_decref(out);
    } else {
        char *text = moe_contract_diff_text(d->count ? d : notes);
        if (!d->count && notes->count)
            fputs("the compared sections are equal; the digests differ in the annotations "
                  "(sources, run), which no rule compares:\n", stdout);
        fputs(d->count || notes->count ? text : "no differences\n", stdout);
        free(text);
        if (v->rule[0]) {
            bool c = moe_cli_colour(stdout);
            printf("%s%s%s by rule %s: %s\n", c ? (v->allowed ? "\033[32m" : "\033[31m") : "",
                   v->allowed ? "allowed" : "refused", c ? "\033[0m" : "", v->rule, v->reason);
        }
    }
    return v->rule[0] && !v->allowed ? MOE_EXIT_INFEASIBLE : MOE_EXIT_OK;
}

static int cmd_diff(const char *a_path, const char *b_path, const char *stage_name, bool json)
{
    char da[MOE_SHA256_HEX_LEN + 1], db[MOE_SHA256_HEX_LEN + 1];
    json_t *a = load_any(a_path, da), *b = a ? load_any(b_path, db) : NULL, *winners = NULL;
    struct moe_contract_diff d = { 0 }, notes = { 0 };
    struct moe_verdict v = { 0 };
    struct moe_error err;
    int rc = MOE_EXIT_INVALID_INPUT;

    moe_error_clear(&err);
    if (!a || !b)
        goto out;
    if (stage_name) {
        enum moe_stage stage = moe_stage_parse(stage_name);
        if (stage == MOE_STAGE_NONE) {
            fprintf(stderr, "moeflow: --stage '%s': valid stages are %s\n", stage_name,
                    moe_stage_choices());
            rc = MOE_EXIT_USAGE;
            goto out;
        }
        /* validate accepts a study's recorded winners: A's, when A is a study */
        if (stage == MOE_STAGE_VALIDATE && is_dir(a_path) && !is_run_dir(a_path) &&
            !(winners = moe_contract_winner_contracts(a_path, &err)))
            goto fail;
        if (moe_contract_check_stage(stage, a, b, winners, &d, &v, &err) != 0)
            goto fail;
    } else if (moe_contract_diff(a, b, &d, &err) != 0)
        goto fail;
    if (d.count == 0 && strcmp(da, db) != 0 &&
        moe_contract_diff_annotations(a, b, &notes, &err) != 0)
        goto fail;
    rc = print_diff(&d, &notes, &v, json);
    goto out;
fail:
    moe_cli_report(&err);
    rc = MOE_EXIT_SYSTEM;
out:
    moe_contract_diff_free(&d);
    moe_contract_diff_free(&notes);
    json_decref(a);
    json_decref(b);
    json_decref(winners);
    return rc;
}

/* A run directory sits at <study>/runs/<id>: judged by the one check that
 * contract winner, gen --winners and the plugin share (rule 3). */
static int verify_run(const char *run_dir)
{
    struct moe_contract_diff notes = { 0 };
    struct moe_run_check c;
    struct moe_error err;
    int rc;

    moe_error_clear(&err);
    if (moe_contract_check_run(run_dir, &c, &err) != 0 ||
        (!c.diff.count && moe_contract_diff_annotations(c.frozen, c.record, &notes, &err) != 0)) {
        if (c.record)
            printf("%s: intact, sha256 %s\n", run_dir, c.digest);
        moe_cli_report(&err);
        moe_run_check_free(&c);
        return MOE_EXIT_INVALID_INPUT;
    }
    printf("%s: intact, sha256 %s\n", run_dir, c.digest);
    rc = print_diff(&c.diff, &notes, &c.verdict, false);
    moe_contract_diff_free(&notes);
    moe_run_check_free(&c);
    return rc;
}

static int cmd_verify(const char *path)
{
    char digest[MOE_SHA256_HEX_LEN + 1];
    json_t *doc;

    if (is_run_dir(path))
        return verify_run(path);
    if (!(doc = load_any(path, digest)))
        return MOE_EXIT_INVALID_INPUT;
    printf("%s: intact, sha256 %s\n", path, digest);
    json_decref(doc);
    return MOE_EXIT_OK;
}

/* A retune run that won becomes a recorded winner, which validate accepts
 * alone or in a declared combination. */
static int cmd_winner(const char *study, const char *run_dir)
{
    /* STUDY/winners/SHA256.json: its length is known, so the path is never cut */
    size_t len = strlen(study) + sizeof("/" MOE_STUDY_WINNERS "/") + MOE_SHA256_HEX_LEN +
                 sizeof(".json");
    char *path = malloc(len);
    struct moe_error err;
    int rc;

    if (!path)
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow contract: out of memory\n");
    moe_error_clear(&err);
    rc = moe_contract_record_winner(study, run_dir, path, len, &err);
    if (rc < 0) {
        free(path);
        /* as freeze: a run that cannot win, a study or winners/ others can
         * write are invalid input, not a system error */
        moe_cli_report(&err);
        return MOE_EXIT_INVALID_INPUT;
    }
    printf("%s winner %s\n", rc == 0 ? "recorded" : "already recorded", path);
    free(path);
    return MOE_EXIT_OK;
}

static int cmd_freeze(const char *study, const char *from)
{
    char digest[MOE_SHA256_HEX_LEN + 1];
    struct moe_error err;
    json_t *doc;
    int rc;

    moe_error_clear(&err);
    doc = moe_contract_load_plain(from, &err);
    if (!doc) {
        moe_cli_report(&err);
        return MOE_EXIT_INVALID_INPUT;
    }
    rc = moe_contract_freeze(study, doc, digest, &err);
    json_decref(doc);
    if (rc < 0) {
        moe_cli_report(&err);
        return MOE_EXIT_INVALID_INPUT;
    }
    printf("%s %s/" MOE_STUDY_FROZEN " sha256 %s\n", rc == 0 ? "froze" : "already frozen", study,
           digest);
    return MOE_EXIT_OK;
}

struct contract_args {
    const char *stage, *from, *candidate, *run;
    bool json;
};

static const struct moe_opt contract_opts[] = {
    { "json", no_argument, 'j', NULL, NULL, .set = moe_opt_flag, .field = offsetof(struct contract_args, json) },
    { "stage", required_argument, 's', "STAGE", NULL, .set = moe_opt_string,
      .field = offsetof(struct contract_args, stage) },
    { "from", required_argument, 'f', "FILE", NULL, .set = moe_opt_string,
      .field = offsetof(struct contract_args, from) },
    { "candidate", required_argument, 'c', "ID", NULL, .set = moe_opt_string,
      .field = offsetof(struct contract_args, candidate) },
    { "run", required_argument, 'r', "ID", NULL, .set = moe_opt_string,
      .field = offsetof(struct contract_args, run) },
    { .name = NULL },
};

static const struct moe_cli contract_cli = {
    .usage = "usage: moeflow contract show STUDY|FILE [--json]\n"
             "       moeflow contract diff A B [--stage STAGE] [--json]\n"
             "       moeflow contract verify STUDY|RUN_DIR\n"
             "       moeflow contract freeze STUDY --from FILE\n"
             "       moeflow contract winner STUDY RUN_DIR\n"
             "       moeflow contract check STUDY --stage STAGE [--candidate ID] [--run ID]\n"
             "\n"
             "A and B are contract files or study directories (their frozen baseline).\n"
             "diff --stage applies that stage's rule and exits 3 when the rule refuses.\n"
             "check is the moeflow plugin's check, made by a job script on a cluster\n"
             "without the plugin (cluster.plugin: none): without --run as at submission,\n"
             "with --run as at task start on this node, sealing the run under\n"
             MOE_STUDY_RUNS "/ID; it exits 3 when the stage's rule refuses.\n"
             "\n"
             "example: moeflow contract diff tiny tiny/" MOE_STUDY_RUNS "/6_0 --stage retune\n",
    .opts = contract_opts,
};

int cmd_contract(int argc, char **argv)
{
    struct contract_args a = { 0 };
    const char *verb;
    int first, rc = moe_cli_parse(&contract_cli, argc, argv, &a, &first);

    if (rc != MOE_CLI_RUN)
        return rc;
    verb = first < argc ? argv[first] : "";
    argc -= first + 1;
    argv += first + 1;
    if (strcmp(verb, "show") == 0 && argc == 1)
        return cmd_show(argv[0], a.json);
    if (strcmp(verb, "diff") == 0 && argc == 2)
        return cmd_diff(argv[0], argv[1], a.stage, a.json);
    if (strcmp(verb, "verify") == 0 && argc == 1)
        return cmd_verify(argv[0]);
    if (strcmp(verb, "winner") == 0 && argc == 2)
        return cmd_winner(argv[0], argv[1]);
    if (strcmp(verb, "check") == 0 && argc == 1 && a.stage)
        return contract_check_job(argv[0], a.stage, a.candidate ? a.candidate : "", a.run);
    if (strcmp(verb, "freeze") == 0 && argc == 1 && a.from)
        return cmd_freeze(argv[0], a.from);
    return moe_cli_misuse(&contract_cli);
}
