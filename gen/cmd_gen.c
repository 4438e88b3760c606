/* moeflow gen: study file -> directory of sbatch scripts, written
 * atomically (a temporary directory beside the target, renamed at the end). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "cli.h"
#include "core/readfile.h"
#include "analysis/diagnose.h"
#include "study/stagegen.h"
#include "analysis/study_report.h"
#include "study/study_validate.h"
#include "study/candidates.h"
#include "study/study.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: moeflow gen STUDY -o DIR [--stage STAGE] [--dry-run]\n"
            "                   [--max-array-size N] [--templates DIR]\n"
            "       moeflow gen DIR/study.yaml --stage validate --winners DIR\n"
            "Writes one sbatch script per workflow stage (job arrays for fit, scale and\n"
            "retune), manifest.json, candidates.tsv and submit.sh into DIR, which must not\n"
            "exist yet.  See moeflow-study(5) for the study file.\n\n"
            "  -o, --output DIR        directory to create\n"
            "  -s, --stage STAGE       only this stage (%s)\n"
            "  -n, --dry-run           list what would be written; write nothing\n"
            "  -m, --max-array-size N  Slurm MaxArraySize (default: the study's, else %d;\n"
            "                          'auto' asks slurmctld through libslurm)\n"
            "  -t, --templates DIR     sbatch templates (default: $MOEFLOW_TEMPLATE_DIR, else\n"
            "                          the source tree's when run from its build tree, else\n"
            "                          %s/templates)\n"
            "  -f, --for BOTTLENECK    retune only what targets it (memory, communication,\n"
            "                          host, compute), as 'moeflow diagnose' reports it\n"
            "  -W, --winners DIR       rebuild the validate stage of the study DIR (written by\n"
            "                          moeflow gen) in place from its recorded winners: each\n"
            "                          winner alone, then their combination (no -o)\n\n"
            "example (submit.sh as the job user: the contract is never frozen as root):\n"
            "  moeflow gen etc/studies/tiny-moe-2gpu.yaml -o tiny && cat tiny/candidates.tsv\n"
            "  cd tiny && ./submit.sh\n",
            moe_stage_choices(), MOE_MAX_ARRAY_SIZE_DEFAULT, MOEFLOW_PKGDATADIR);
}

/* The templates: $MOEFLOW_TEMPLATE_DIR; else, for a moeflow run from the
 * build tree it was built in, the source tree's; else the installed ones. */
static void default_templates(char *buf, size_t len)
{
    const char *envdir = getenv("MOEFLOW_TEMPLATE_DIR");
    char exe[4096], mine[4096];
    ssize_t n;

    if (envdir && *envdir) {
        snprintf(buf, len, "%s", envdir);
        return;
    }
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        snprintf(mine, sizeof(mine), "%s/gen/moeflow", MOEFLOW_ABS_BUILDDIR);
        snprintf(buf, len, "%s/templates/submit.sh.in", MOEFLOW_ABS_SRCDIR);
        if (strcmp(exe, mine) == 0 && access(buf, R_OK) == 0) {
            snprintf(buf, len, "%s/templates", MOEFLOW_ABS_SRCDIR);
            return;
        }
    }
    snprintf(buf, len, "%s/templates", MOEFLOW_PKGDATADIR);
}

static int write_file(const char *dir, const struct moe_gen_file *f, struct moe_error *err)
{
    char path[4400];
    int fd;

    snprintf(path, sizeof(path), "%.4096s/%s", dir, f->name);
    if (strchr(f->name, '/')) {
        /* one level of subfolder (contracts/) */
        char sub[4200];
        snprintf(sub, sizeof(sub), "%.4096s/%.*s", dir, (int)(strchr(f->name, '/') - f->name),
                 f->name);
        if (mkdir(sub, 0755) < 0 && errno != EEXIST) {
            moe_error_at(err, sub, 0, 0, "cannot create: %s", strerror(errno));
            return -1;
        }
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f->mode);
    if (fd < 0 || write(fd, f->data, f->len) != (ssize_t)f->len) {
        moe_error_at(err, path, 0, 0, "cannot write: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* The umask must not strip the execute bits of the scripts. */
    if (fchmod(fd, (mode_t)f->mode) < 0 || close(fd) < 0) {
        moe_error_at(err, path, 0, 0, "cannot write: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static int sync_tree(const char *dir, struct moe_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0 || syncfs(fd) < 0) {
        moe_error_at(err, dir, 0, 0, "cannot flush: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

static void remove_tree(const char *dir, const struct moe_gen_output *out)
{
    char path[4400];

    for (int i = 0; i < out->n; i++) {
        snprintf(path, sizeof(path), "%.4096s/%s", dir, out->files[i].name);
        unlink(path);
    }
    snprintf(path, sizeof(path), "%.4096s/logs", dir);
    rmdir(path);
    snprintf(path, sizeof(path), "%.4096s/contracts", dir);
    rmdir(path);
    rmdir(dir);
}

/* Builds everything in DIR.XXXXXX next to DIR, then renames it into place:
 * readers see either no DIR or a complete one. */
static int write_atomically(const char *dir, const struct moe_gen_output *out,
                            struct moe_error *err)
{
    char tmp[4200], logs[4300];
    struct stat st;

    if (lstat(dir, &st) == 0) {
        moe_error_at(err, dir, 0, 0, "already exists; remove it or choose another -o");
        return -1;
    }
    if (strlen(dir) > 4000) {
        moe_error_at(err, dir, 0, 0, "path too long");
        return -1;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", dir);
    if (!mkdtemp(tmp)) {
        moe_error_at(err, dir, 0, 0, "cannot create a temporary directory beside it: %s",
                     strerror(errno));
        return -1;
    }
    chmod(tmp, 0755);
    snprintf(logs, sizeof(logs), "%s/logs", tmp);
    if (mkdir(logs, 0755) < 0) {
        moe_error_at(err, logs, 0, 0, "cannot create: %s", strerror(errno));
        remove_tree(tmp, out);
        return -1;
    }
    for (int i = 0; i < out->n; i++)
        if (write_file(tmp, &out->files[i], err) < 0) {
            remove_tree(tmp, out);
            return -1;
        }
    /* One flush for the whole tree before it becomes visible, instead of a
     * fsync per file: a crash never leaves DIR with empty scripts. */
    if (sync_tree(tmp, err) < 0 || rename(tmp, dir) < 0) {
        if (!err->text[0])
            moe_error_at(err, dir, 0, 0, "cannot rename %s into place: %s", tmp,
                         strerror(errno));
        remove_tree(tmp, out);
        return -1;
    }
    return 0;
}

/* The absolute path DIR will have, for --moe-study: the plugin resolves it
 * in sbatch and again in slurmstepd, where the working directory differs. */
static int absolute_target(const char *dir, char *out, size_t len, struct moe_error *err)
{
    char *d1 = strdup(dir), *d2 = strdup(dir), parent[4096];
    int rc = 0;

    if (!d1 || !d2 || !realpath(dirname(d1), parent)) {
        moe_error_at(err, dir, 0, 0, "cannot resolve the parent folder: %s", strerror(errno));
        rc = -1;
    } else {
        snprintf(out, len, "%s/%s", strcmp(parent, "/") == 0 ? "" : parent, basename(d2));
    }
    free(d1);
    free(d2);
    return rc;
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

/* Replaces dir/name whole: a reader sees the old file or the new one. */
static int replace_file(const char *dir, const char *name, const char *data, size_t len, int mode,
                        struct moe_error *err)
{
    char path[4400], tmp[4500];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", path, (long)getpid());
    f = fopen(tmp, "w");
    if (!f || fwrite(data, 1, len, f) != len || fchmod(fileno(f), (mode_t)mode) != 0) {
        moe_error_at(err, tmp, 0, 0, "cannot write: %s", strerror(errno));
        if (f)
            fclose(f);
        unlink(tmp);
        return -1;
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        moe_error_at(err, path, 0, 0, "cannot replace: %s", strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

static const struct moe_gen_file *find_out(const struct moe_gen_output *out, const char *name)
{
    for (int i = 0; i < out->n; i++)
        if (strcmp(out->files[i].name, name) == 0)
            return &out->files[i];
    return NULL;
}

/* gen --winners DIR: the validate stage of the study at DIR, rebuilt from its
 * recorded winners, goes into DIR itself: validate.sbatch, the new declared
 * contracts, the validate entry of manifest.json and its rows of
 * candidates.tsv.  Nothing else of DIR changes. */
static int update_validate(const char *dir, const struct moe_gen_output *out,
                           struct moe_error *err)
{
    const struct moe_gen_file *f = find_out(out, "manifest.json"), *tsv;
    json_t *mine = NULL, *theirs = NULL, *st, *newst = NULL;
    char path[4400], *text = NULL, *old = NULL, *line, *save = NULL;
    json_error_t je;
    size_t i, len = 0;
    FILE *m;
    int rc = -1;

    snprintf(path, sizeof(path), "%s/manifest.json", dir);
    theirs = json_load_file(path, 0, &je);
    mine = f ? json_loads(f->data, 0, &je) : NULL;
    if (!theirs || !mine) {
        moe_error_at(err, path, je.line, je.column, "%s", je.text);
        goto out;
    }
    if (!json_equal(json_object_get(theirs, "study_hash"), json_object_get(mine, "study_hash"))) {
        moe_error_at(err, path, 0, 0, "study_hash: %s was generated from another study (or "
                     "another version of it) than the one given", dir);
        goto out;
    }
    newst = json_array_get(json_object_get(mine, "stages"), 0);
    json_array_foreach(json_object_get(theirs, "stages"), i, st) {
        if (strcmp(json_string_value(json_object_get(st, "stage")), "validate") == 0) {
            json_array_set(json_object_get(theirs, "stages"), i, newst);
            newst = NULL;
            break;
        }
    }
    if (newst)
        json_array_append(json_object_get(theirs, "stages"), newst);
    for (i = 0; i < (size_t)out->n; i++) {
        const struct moe_gen_file *g = &out->files[i];
        struct stat sb;

        snprintf(path, sizeof(path), "%s/%s", dir, g->name);
        if (strncmp(g->name, "contracts/", 10) == 0 && stat(path, &sb) != 0 &&
            replace_file(dir, g->name, g->data, g->len, g->mode, err) < 0)
            goto out;
    }
    f = find_out(out, "validate.sbatch");
    if (!f || replace_file(dir, f->name, f->data, f->len, f->mode, err) < 0)
        goto out;
    /* candidates.tsv: the other stages' rows as they were, then validate's. */
    snprintf(path, sizeof(path), "%s/candidates.tsv", dir);
    old = moe_read_file(path, "candidates.tsv", NULL, err);
    tsv = find_out(out, "candidates.tsv");
    m = old && tsv ? open_memstream(&text, &len) : NULL;
    if (!m)
        goto out;
    for (line = strtok_r(old, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (strncmp(line, "validate\t", 9) != 0)
            fprintf(m, "%s\n", line);
    for (const char *p = tsv->data; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);

        if (strncmp(p, "validate\t", 9) == 0)
            fprintf(m, "%.*s\n", (int)l, p);
        p = e ? e + 1 : p + l;
    }
    fclose(m);
    if (replace_file(dir, "candidates.tsv", text, len, 0644, err) < 0)
        goto out;
    free(text);
    text = json_dumps(theirs, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    if (!text)
        goto out;
    len = strlen(text);
    text[len++] = '\n'; /* json_dumps leaves room for the NUL it wrote */
    rc = replace_file(dir, "manifest.json", text, len, 0644, err);
out:
    free(text);
    free(old);
    json_decref(mine);
    json_decref(theirs);
    return rc;
}

static void dry_run(const char *dir, const struct moe_gen_output *out)
{
    printf("would create %s/ with:\n", dir);
    for (int i = 0; i < out->n; i++)
        printf("  %-16s %8zu bytes  mode %04o\n", out->files[i].name, out->files[i].len,
               (unsigned)out->files[i].mode);
    printf("  %-16s\n", "logs/");
}

int cmd_gen(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "stage", required_argument, NULL, 's' },
        { "dry-run", no_argument, NULL, 'n' },
        { "max-array-size", required_argument, NULL, 'm' },
        { "templates", required_argument, NULL, 't' },
        { "for", required_argument, NULL, 'f' },
        { "winners", required_argument, NULL, 'W' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct moe_gen_opts opts = { NULL, 0, MOE_STAGE_NONE, NULL, PACKAGE_VERSION, NULL, NULL, NULL };
    const char *dir = NULL, *winners = NULL;
    json_t *vcands = NULL;
    char templates[4096], study_dir[4200], *text = NULL, *end;
    struct moe_study study;
    struct moe_gen_output out;
    struct moe_error err;
    bool dry = false;
    int c, rc;
    long v;

    moe_error_clear(&err);
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:s:nm:t:f:hW:", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (moe_bottleneck_parse(optarg) == MOE_BOTTLENECK_COUNT) {
                fprintf(stderr, "moeflow gen: --for '%s': valid bottlenecks are memory, "
                        "communication, host, compute\n", optarg);
                return MOE_EXIT_USAGE;
            }
            opts.retune_for = optarg;
            break;
        case 'o':
            dir = optarg;
            break;
        case 'W':
            winners = optarg;
            break;
        case 's':
            if ((opts.only = moe_stage_parse(optarg)) == MOE_STAGE_NONE) {
                fprintf(stderr, "moeflow gen: unknown stage '%s' (%s)\n", optarg,
                        moe_stage_choices());
                return MOE_EXIT_USAGE;
            }
            break;
        case 'n':
            dry = true;
            break;
        case 'm':
            if (strcmp(optarg, "auto") == 0) {
                if ((opts.max_array_size = cluster_max_array_size(&err)) < 1) {
                    moe_cli_report(&err);
                    return MOE_EXIT_SYSTEM;
                }
                break;
            }
            v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 4000001) {
                fprintf(stderr, "moeflow gen: --max-array-size wants 1..4000001, not '%s'\n",
                        optarg);
                return MOE_EXIT_USAGE;
            }
            opts.max_array_size = (int)v;
            break;
        case 't':
            opts.templates_dir = optarg;
            break;
        case 'h':
            usage(stdout);
            return MOE_EXIT_OK;
        default:
            moe_cli_suggest_option(argc, argv, longopts);
            usage(stderr);
            return MOE_EXIT_USAGE;
        }
    }
    if (winners && (dir || dry || (opts.only != MOE_STAGE_NONE &&
                                   opts.only != MOE_STAGE_VALIDATE))) {
        fprintf(stderr, "moeflow gen: --winners DIR updates the validate stage of DIR in place: "
                "no -o, --dry-run or other --stage\n");
        return MOE_EXIT_USAGE;
    }
    if (winners && !moe_study_is_dir(winners)) {
        fprintf(stderr, "moeflow gen: --winners '%s': not a study directory written by moeflow "
                "gen (no manifest.json)\n", winners);
        return MOE_EXIT_USAGE;
    }
    if (winners) {
        dir = winners;
        opts.only = MOE_STAGE_VALIDATE;
    }
    if (optind != argc - 1 || !dir) {
        usage(stderr);
        return MOE_EXIT_USAGE;
    }
    if (!opts.templates_dir) {
        default_templates(templates, sizeof(templates));
        opts.templates_dir = templates;
    }
    if (!dry && !winners && access(dir, F_OK) == 0) {
        moe_error_at(&err, dir, 0, 0, "already exists; remove it or choose another -o");
        moe_cli_report(&err);
        return MOE_EXIT_USAGE;
    }
    if (!(text = moe_read_file(argv[optind], "study", NULL, &err))) {
        moe_cli_report(&err);
        return MOE_EXIT_INVALID_INPUT;
    }
    if (moe_study_load_string(&study, argv[optind], text, &err) < 0) {
        moe_cli_report(&err);
        free(text);
        return MOE_EXIT_INVALID_INPUT;
    }
    opts.study_text = text;
    if (absolute_target(dir, study_dir, sizeof(study_dir), &err) < 0) {
        moe_cli_report(&err);
        moe_study_free(&study);
        free(text);
        return MOE_EXIT_USAGE;
    }
    opts.study_dir = study_dir;
    rc = MOE_EXIT_OK;
    if (winners) {
        struct moe_stage_plan plan = { .candidates = NULL };

        if (moe_candidates_build(&study, MOE_STAGE_VALIDATE, &plan, &err) == 0)
            vcands = moe_validate_from_winners(winners, json_array_get(plan.candidates, 0),
                                               &err);
        moe_stage_plan_free(&plan);
        if (!vcands) {
            moe_cli_report(&err);
            moe_study_free(&study);
            free(text);
            return MOE_EXIT_INVALID_INPUT;
        }
        opts.validate = vcands;
    }
    if (moe_gen_build(&study, &opts, &out, &err) < 0) {
        moe_cli_report(&err);
        rc = MOE_EXIT_INVALID_INPUT;
    } else {
        if (winners) {
            if (update_validate(dir, &out, &err) < 0) {
                moe_cli_report(&err);
                rc = MOE_EXIT_SYSTEM;
            } else {
                json_t *vc;
                size_t i;

                printf("validate: %zu runs in %s/validate.sbatch (an array):\n",
                       json_array_size(vcands), dir);
                json_array_foreach(vcands, i, vc) {
                    char *val = json_dumps(json_object_get(vc, "value"),
                                           JSON_COMPACT | JSON_ENCODE_ANY);

                    printf("  %zu: %s = %s\n", i,
                           json_string_value(json_object_get(vc, "variable")), val ? val : "?");
                    free(val);
                }
                printf("submit it from %s: sbatch validate.sbatch\n", dir);
            }
        } else if (dry)
            dry_run(dir, &out);
        else if (write_atomically(dir, &out, &err) < 0) {
            moe_cli_report(&err);
            rc = MOE_EXIT_SYSTEM;
        }
        moe_gen_output_free(&out);
    }
    json_decref(vcands);
    moe_study_free(&study);
    free(text);
    return rc;
}
