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

#include "cli.h"
#include "stagegen.h"
#include "study.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: moeflow gen STUDY -o DIR [--stage STAGE] [--dry-run]\n"
            "                   [--max-array-size N] [--templates DIR]\n"
            "Writes one sbatch script per workflow stage (job arrays for fit, scale and\n"
            "retune), manifest.json, candidates.tsv and submit.sh into DIR, which must not\n"
            "exist yet.  See moeflow-study(5) for the study file.\n\n"
            "  -o, --output DIR        directory to create\n"
            "  -s, --stage STAGE       only this stage (%s)\n"
            "  -n, --dry-run           list what would be written; write nothing\n"
            "  -m, --max-array-size N  Slurm MaxArraySize (default: the study's, else %d)\n"
            "  -t, --templates DIR     sbatch templates (default: $MOEFLOW_TEMPLATE_DIR, else\n"
            "                          %s/templates)\n\n"
            "example:\n"
            "  moeflow gen etc/studies/tiny-moe-2gpu.yaml -o tiny && tiny/submit.sh\n",
            moe_stage_choices(), MOE_MAX_ARRAY_SIZE_DEFAULT, MOEFLOW_PKGDATADIR);
}

static char *slurp(const char *path, struct moe_error *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;

    if (!f) {
        moe_error_at(err, path, 0, 0, "cannot open: %s", strerror(errno));
        return NULL;
    }
    do {
        if (len + 4097 > cap) {
            char *p = realloc(buf, cap = cap ? cap * 2 : 16384);
            if (!p) {
                free(buf);
                fclose(f);
                moe_error_at(err, path, 0, 0, "out of memory");
                return NULL;
            }
            buf = p;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static int write_file(const char *dir, const struct moe_gen_file *f, struct moe_error *err)
{
    char path[4200];
    int fd;

    snprintf(path, sizeof(path), "%.4096s/%s", dir, f->name);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, f->mode);
    if (fd < 0 || write(fd, f->data, f->len) != (ssize_t)f->len || fsync(fd) < 0) {
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

static void remove_tree(const char *dir, const struct moe_gen_output *out)
{
    char path[4200];

    for (int i = 0; i < out->n; i++) {
        snprintf(path, sizeof(path), "%.4096s/%s", dir, out->files[i].name);
        unlink(path);
    }
    snprintf(path, sizeof(path), "%.4096s/logs", dir);
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
    if (rename(tmp, dir) < 0) {
        moe_error_at(err, dir, 0, 0, "cannot rename %s into place: %s", tmp, strerror(errno));
        remove_tree(tmp, out);
        return -1;
    }
    return 0;
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
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct moe_gen_opts opts = { NULL, 0, MOE_STAGE_NONE, NULL, PACKAGE_VERSION };
    const char *dir = NULL;
    char templates[4096], *text = NULL, *end;
    struct moe_study study;
    struct moe_gen_output out;
    struct moe_error err;
    bool dry = false;
    int c, rc;
    long v;

    moe_error_clear(&err);
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:s:nm:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            dir = optarg;
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
    if (optind != argc - 1 || !dir) {
        usage(stderr);
        return MOE_EXIT_USAGE;
    }
    if (!opts.templates_dir) {
        const char *envdir = getenv("MOEFLOW_TEMPLATE_DIR");
        snprintf(templates, sizeof(templates), "%s", envdir && *envdir ? envdir
                                                                      : MOEFLOW_PKGDATADIR
                 "/templates");
        opts.templates_dir = templates;
    }
    if (!dry && access(dir, F_OK) == 0) {
        moe_error_at(&err, dir, 0, 0, "already exists; remove it or choose another -o");
        moe_cli_report(&err);
        return MOE_EXIT_USAGE;
    }
    if (!(text = slurp(argv[optind], &err))) {
        moe_cli_report(&err);
        return MOE_EXIT_INVALID_INPUT;
    }
    if (moe_study_load_string(&study, argv[optind], text, &err) < 0) {
        moe_cli_report(&err);
        free(text);
        return MOE_EXIT_INVALID_INPUT;
    }
    opts.study_text = text;
    rc = MOE_EXIT_OK;
    if (moe_gen_build(&study, &opts, &out, &err) < 0) {
        moe_cli_report(&err);
        rc = MOE_EXIT_INVALID_INPUT;
    } else {
        if (dry)
            dry_run(dir, &out);
        else if (write_atomically(dir, &out, &err) < 0) {
            moe_cli_report(&err);
            rc = MOE_EXIT_SYSTEM;
        }
        moe_gen_output_free(&out);
    }
    moe_study_free(&study);
    free(text);
    return rc;
}
