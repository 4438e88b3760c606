/* Reading the runs of a report from disk. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/trace.h"
#include "analysis/report_internal.h"
#include "analysis/report_runs.h"
#include "analysis/report_runs_internal.h"
#include "core/json_build.h"
#include "core/strbuf.h"

#define MAX_EXPECT 64

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);

    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int is_log(const char *name)
{
    return has_suffix(name, ".log") || has_suffix(name, ".out") || has_suffix(name, ".err") ||
           has_suffix(name, ".txt");
}

/* A run record's contract.json is not a profile. */
static int is_profile(const char *name)
{
    if (strcmp(name, "contract.json") == 0)
        return 0;
    return has_suffix(name, ".json") || has_suffix(name, ".json.gz") || has_suffix(name, ".sqlite");
}

static int read_profile(struct moe_report_run *r, const char *path, struct moe_error *err)
{
    struct moe_trace t;
    int rc;

    moe_trace_init(&t, path, NULL, NULL);
    rc = moe_trace_load(&t, path, err);
    if (rc == 0)
        rc = moe_report_run_profile(r, &t, err);
    moe_trace_free(&t);
    return rc;
}

static void file_read(const struct moe_report_reader *rd)
{
    if (rd->file_read)
        rd->file_read(rd->data);
}

static void warnings(const struct moe_report_reader *rd, const struct moe_log *log)
{
    if (rd->warnings)
        rd->warnings(log, rd->data);
}

/* One run to read: where, its name, what its arguments must say. */
struct run_spec {
    const char *path, *name;
    struct moe_report_expect ex[MAX_EXPECT];
    size_t nex;
};

/* The run's name: its label, else the last part of its path.  A name cut
 * to fit buf would be another run's name: -1 with err. */
static int run_spec(struct run_spec *s, const char *path, const char *label,
                    const struct moe_report_reader *rd, char *buf, size_t len,
                    struct moe_error *err)
{
    size_t end = strlen(path), start;

    while (end > 1 && path[end - 1] == '/')
        end--;
    for (start = end; start > 0 && path[start - 1] != '/'; start--)
        ;
    if (start == end) /* "/" */
        start = 0;
    if (!label && end - start >= len) {
        moe_error_at(err, path, 0, 0, "the run's name (the path's last part) is over %zu bytes",
                     len - 1);
        return -1;
    }
    memcpy(buf, path + start, label ? 0 : end - start);
    buf[label ? 0 : end - start] = '\0';
    s->path = path;
    s->name = label ? label : buf;
    s->nex = 0;
    for (size_t i = 0; i < rd->nexpect && s->nex < MAX_EXPECT; i++)
        if (!rd->expect[i].run || strcmp(rd->expect[i].run, s->name) == 0)
            s->ex[s->nex++] = rd->expect[i].e;
    return 0;
}

static int load_file_run(const struct run_spec *s, const struct moe_report_reader *rd,
                         struct moe_report_run *r, struct moe_error *err)
{
    struct moe_log log;
    int rc;

    moe_log_init(&log);
    rc = moe_log_read_file(&log, s->path, err);
    file_read(rd);
    warnings(rd, &log);
    if (rc == 0)
        rc = moe_report_run_init(r, s->name, &log, rd->first, rd->last, s->ex, s->nex, err);
    moe_log_free(&log);
    return rc;
}

/* DIR/NAME of the run's directory; NULL with err. */
static char *run_file(const struct run_spec *s, const char *name, struct moe_error *err)
{
    char *path = moe_path_join(s->path, name);

    if (!path)
        moe_error_at(err, s->path, 0, 0, "out of memory");
    return path;
}

/* A directory: its rank logs make one log, then its profiles are added. */
static int load_dir_run(const struct run_spec *s, const struct moe_report_reader *rd,
                        struct moe_report_run *r, struct moe_error *err)
{
    struct dirent **ents = NULL;
    struct moe_log log;
    char *path;
    int n, rc = -1;

    n = scandir(s->path, &ents, NULL, alphasort);
    if (n < 0) {
        moe_error_at(err, s->path, 0, 0, "%s", strerror(errno));
        return -1;
    }
    moe_log_init(&log);
    for (int i = 0; i < n; i++) {
        int bad;

        if (!is_log(ents[i]->d_name))
            continue;
        path = run_file(s, ents[i]->d_name, err);
        bad = !path || moe_log_read_file(&log, path, err) < 0;
        free(path);
        if (bad)
            goto out;
        file_read(rd);
    }
    warnings(rd, &log);
    if (moe_report_run_init(r, s->name, &log, rd->first, rd->last, s->ex, s->nex, err) < 0)
        goto out;
    for (int i = 0; i < n; i++) {
        int bad;

        if (!is_profile(ents[i]->d_name))
            continue;
        path = run_file(s, ents[i]->d_name, err);
        bad = !path || read_profile(r, path, err) < 0;
        free(path);
        if (bad) {
            moe_report_run_free(r);
            goto out;
        }
    }
    rc = 0;
out:
    for (int i = 0; i < n; i++)
        free(ents[i]);
    free(ents);
    moe_log_free(&log);
    return rc;
}

int moe_report_load_run(const char *path, const char *label, const struct moe_report_reader *rd,
                        struct moe_report_run *r, struct moe_error *err)
{
    struct run_spec s;
    struct stat st;
    char name[128];

    if (stat(path, &st) < 0) {
        moe_error_at(err, path, 0, 0, "%s", strerror(errno));
        return -1;
    }
    if (run_spec(&s, path, label, rd, name, sizeof(name), err) < 0)
        return -1;
    if (S_ISDIR(st.st_mode))
        return load_dir_run(&s, rd, r, err);
    return load_file_run(&s, rd, r, err);
}

size_t moe_report_count_logs(char *const *args, int n)
{
    size_t total = 0;

    for (int i = 0; i < n; i++) {
        struct stat st;
        DIR *d;
        struct dirent *e;

        if (stat(args[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
            total++;
            continue;
        }
        d = opendir(args[i]);
        while (d && (e = readdir(d)))
            total += is_log(e->d_name) != 0;
        if (d)
            closedir(d);
    }
    return total;
}

static int file_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The flags whose effect a report must prove (the seed's pitfall 8: a
 * backend can fall back, an overlap be dropped), each with its key in
 * Megatron's argument dump (argparse's dest: --fp8-format is "fp8"). */
static const struct moe_report_flag requested_keys[] = {
    { "--moe-token-dispatcher-type", "moe_token_dispatcher_type" },
    { "--moe-flex-dispatcher-backend", "moe_flex_dispatcher_backend" },
    /* the dispatcher_sms axis, as each dialect spells it (megatron_args.c) */
    { "--moe-deepep-num-sms", "moe_deepep_num_sms" },
    { "--moe-hybridep-num-sms", "moe_hybridep_num_sms" },
    { "--moe-flex-dispatcher-num-sms", "moe_flex_dispatcher_num_sms" },
    { "--fp8-format", "fp8" },
    { "--fp8-recipe", "fp8_recipe" },
    { "--fp4-format", "fp4" },
    { "--fp4-recipe", "fp4_recipe" },
    { "--bf16", "bf16" },
    { "--overlap-moe-expert-parallel-comm", "overlap_moe_expert_parallel_comm" },
    { "--moe-shared-expert-overlap", "moe_shared_expert_overlap" },
    { "--delay-wgrad-compute", "delay_wgrad_compute" },
    { "--overlap-grad-reduce", "overlap_grad_reduce" },
    { "--overlap-param-gather", "overlap_param_gather" },
    { "--tp-comm-overlap", "tp_comm_overlap" },
    { "--recompute-granularity", "recompute_granularity" },
    { "--recompute-method", "recompute_method" },
    { "--recompute-modules", "recompute_modules" },
    { "--cuda-graph-impl", "cuda_graph_impl" },
    { "--cuda-graph-scope", "cuda_graph_scope" },
    { "--cuda-graph-modules", "cuda_graph_modules" },
};

const struct moe_report_flag *moe_report_requested_flags(size_t *n)
{
    *n = sizeof(requested_keys) / sizeof(requested_keys[0]);
    return requested_keys;
}

/* What candidate c asked Megatron for on its command line, as
 * expectations of its run's argument dump, each for the run named run:
 * the dispatcher and its backend, the precision, the overlap switches,
 * recompute and the CUDA-graph scope.  Values are written into buf; at most
 * max.  Returns how many. */
static size_t moe_report_requested(const struct moe_candidate *c, const char *run,
                                   struct moe_report_expect_for *out, size_t max, char *buf,
                                   size_t len)
{
    size_t n = 0, used = 0;

    for (size_t i = 0; i < c->argv.n && n < max; i++) {
        const char *key = NULL, *value;
        size_t start = used;

        for (size_t k = 0; k < sizeof(requested_keys) / sizeof(requested_keys[0]) && !key; k++)
            if (strcmp(c->argv.v[i], requested_keys[k].flag) == 0)
                key = requested_keys[k].key;
        if (!key)
            continue;
        /* the values up to the next flag, as one space-separated string */
        for (size_t nv = moe_strv_flag_values(&c->argv, i); nv > 0; nv--, i++) {
            int w = snprintf(buf + used, len - used, "%s%s", used > start ? " " : "",
                             c->argv.v[i + 1]);

            if (w < 0 || (size_t)w >= len - used)
                return n; /* out of room: what fits is checked */
            used += (size_t)w;
        }
        if (used == start) {
            value = "True"; /* a switch */
        } else {
            value = buf + start;
            used++; /* past the NUL */
        }
        out[n++] = (struct moe_report_expect_for){ run, { key, value, true } };
    }
    return n;
}

/* The candidate of any stage whose id is id, or NULL. */
static const struct moe_candidate *candidate_anywhere(const struct moe_manifest *m, const char *id)
{
    for (size_t s = 0; s < m->n_stages; s++)
        for (size_t k = 0; k < m->stages[s].n; k++)
            if (m->stages[s].cands[k].id && strcmp(m->stages[s].cands[k].id, id) == 0)
                return &m->stages[s].cands[k];
    return NULL;
}

int moe_report_load_study_run(const struct moe_study_view *v, const struct moe_study_cand *c,
                              const char *label, const struct moe_report_reader *rd,
                              struct moe_report_run *r, struct moe_error *err)
{
    struct moe_report_expect_for ex[MAX_EXPECT];
    struct moe_report_reader mine = *rd;
    struct moe_manifest m;
    struct moe_error merr;
    const struct moe_candidate *cand;
    char buf[8192];
    size_t n = 0;
    int rc;

    for (size_t i = 0; i < rd->nexpect && n < MAX_EXPECT; i++)
        ex[n++] = rd->expect[i];
    moe_error_clear(&merr);
    memset(&m, 0, sizeof(m));
    /* a study laid out by hand has no manifest: its runs prove nothing more */
    if (moe_manifest_load(v->study, &m, &merr) == 0 && (cand = candidate_anywhere(&m, c->id)))
        n += moe_report_requested(cand, label, ex + n, MAX_EXPECT - n, buf, sizeof(buf));
    mine.expect = ex;
    mine.nexpect = n;
    rc = moe_report_load_run(c->log, label, &mine, r, err);
    moe_manifest_free(&m);
    return rc;
}

/* skipped += {candidate, id, reason}.  A reason that could not be made
 * (out of memory) still lists the candidate, saying so. */
static void skip(json_t *skipped, const struct moe_study_cand *c, const char *why)
{
    struct moe_jb b;
    json_t *k = json_object();

    moe_jb_init(&b, NULL);
    moe_jb_str(&b, k, "candidate", c->label);
    moe_jb_str(&b, k, "id", c->id);
    moe_jb_set(&b, k, "reason", moe_report_text_json(why ? why : "(out of memory)"));
    if (moe_jb_append(&b, skipped, moe_jb_done(&b, k)) < 0)
        /* the candidate's label and id come from the manifest (UTF-8): only out of memory */
        fprintf(stderr, "moeflow: candidate %s skipped (%s); its record: %s\n", c->id,
                why ? why : "out of memory", b.why);
}

size_t moe_report_load_candidates(const struct moe_study_view *v,
                                  const struct moe_report_reader *rd,
                                  struct moe_report_run *runs, json_t *skipped)
{
    struct moe_error err;
    size_t n = 0;

    for (size_t i = 0; i < v->n; i++) {
        const struct moe_study_cand *c = &v->cands[i];
        char *why;

        moe_error_clear(&err);
        if (!file_exists(c->log))
            why = moe_strdup_printf("no log yet (%s)", c->log);
        else if (moe_report_load_study_run(v, c, c->label, rd, &runs[n], &err) < 0)
            why = strdup(err.text);
        else {
            n++;
            continue;
        }
        skip(skipped, c, why);
        free(why);
    }
    return n;
}

/* The contract's "winner" rule: for each variable, the run with the best
 * "win" verdict. */
int moe_report_best_win(const struct moe_report_run *runs, size_t nruns, size_t i,
                        const struct moe_report_opts *o, const char **better)
{
    const char *eq = strchr(runs[i].name, '=');
    size_t vlen = eq ? (size_t)(eq - runs[i].name) : strlen(runs[i].name);
    struct moe_report_ab mine, other;
    double best;

    moe_report_compare(&runs[0], &runs[i], o, &mine);
    best = mine.delta_pct;
    *better = NULL;
    for (size_t k = 1; k < nruns; k++) {
        if (k == i || strncmp(runs[k].name, runs[i].name, vlen) != 0 || runs[k].name[vlen] != '=')
            continue;
        moe_report_compare(&runs[0], &runs[k], o, &other);
        if (other.verdict == MOE_VERDICT_WIN &&
            (other.delta_pct < best || (other.delta_pct == best && k < i && !*better))) {
            best = other.delta_pct;
            *better = runs[k].name;
        }
    }
    return *better == NULL;
}

