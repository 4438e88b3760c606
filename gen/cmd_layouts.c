/* moeflow layouts: every valid layout for a world size, ranked by the scale
 * rules, with the deciding rule per place and, with --explain, the first
 * rule that excluded each rejected layout. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "fitargs.h"
#include "options.h"
#include "core/layout_name.h"
#include "fit/layouts.h"
#include "steptime_text.h"

/* printf's width counts bytes; "×" is two. */
static void print_padded(const char *s, int width)
{
    int cols = 0;

    for (const char *p = s; *p; p++)
        cols += ((unsigned char)*p & 0xc0) != 0x80;
    fputs(s, stdout);
    for (; cols < width; cols++)
        putchar(' ');
}

static void print_row(size_t i, const struct moe_layout_set *s, const struct moe_layout_entry *e)
{
    char a[96], b[96], name[MOE_LAYOUT_NAME_MAX];
    struct moe_fit f;

    moe_layout_entry_fit(s, e, &f);
    printf("%3zu  %-27s ", i + 1, moe_layout_name(&e->layout, name, sizeof(name)));
    print_padded(moe_layout_format_attention(&e->layout, a, sizeof(a)), 31);
    print_padded(moe_layout_format_moe(&e->layout, b, sizeof(b)), 31);
    printf("%7.1f GiB  %-9s %9.1f %7.1f  %s\n", e->mem.total / MOE_GIB,
           e->fits ? moe_fit_step_kind(&f) : "no fit", e->time.step_ms, e->time.tflops_per_gpu,
           e->decided_by != MOE_SCALE_NONE ? moe_scale_rule_text(e->decided_by) : "-");
    if (e->n_vpp > 1) {
        int shown = e->n_vpp - 1 < MOE_VPP_ALT_MAX ? e->n_vpp - 1 : MOE_VPP_ALT_MAX;
        printf("     other VPP:");
        for (int k = 0; k < shown; k++)
            printf(" VPP%d %.1f ms%s", e->alt[k].vpp, e->alt[k].step_ms,
                   e->alt[k].fits ? "" : " (no fit)");
        if (e->n_vpp - 1 > shown)
            printf(" and %d slower", e->n_vpp - 1 - shown);
        printf("\n");
    }
}

static void print_rejected(const struct moe_model *m, const struct moe_workload *w,
                           const struct moe_train *t, const struct moe_machine *c,
                           const struct moe_layout_set *s)
{
    char why[256], name[MOE_LAYOUT_NAME_MAX];

    printf("\nexcluded (%zu combinations; first rule that rejects each):\n",
           s->considered - s->n_valid);
    for (size_t i = 0; i < s->n_rejected; i++) {
        struct moe_layout l = s->rejected[i].layout;
        moe_layout_check(m, &l, w, t, c->gpus, why, sizeof(why));
        printf("  %-27s %-20s %s\n", moe_layout_name(&l, name, sizeof(name)),
               moe_rule_id(s->rejected[i].rule), why);
    }
}

/* One line per rule: how many combinations it rejected first, and why, by
 * its first example; --excluded lists them all. */
static void print_rejected_by_rule(const struct moe_model *m, const struct moe_workload *w,
                                   const struct moe_train *t, const struct moe_machine *c,
                                   const struct moe_layout_set *s)
{
    bool shown[MOE_RULE_COUNT] = { false };
    char why[256], name[MOE_LAYOUT_NAME_MAX];

    printf("\nexcluded: %zu combinations, by the first rule that rejects each (--excluded "
           "lists them):\n", s->considered - s->n_valid);
    for (size_t i = 0; i < s->n_rejected; i++) {
        enum moe_rule r = s->rejected[i].rule;
        struct moe_layout l = s->rejected[i].layout;

        if (r <= 0 || r >= MOE_RULE_COUNT || shown[r])
            continue;
        shown[r] = true;
        moe_layout_check(m, &l, w, t, c->gpus, why, sizeof(why));
        printf("  %-22s %8zu  e.g. %s: %s\n", moe_rule_id(r), s->rejected_by[r],
               moe_layout_name(&l, name, sizeof(name)), why);
    }
}

static int print_text(const struct moe_model *m, const struct moe_workload *w,
                      const struct moe_train *t, const struct moe_machine *c,
                      const struct moe_layout_set *s, bool explain, bool excluded)
{
    char advice[256];

    printf("%s on %d GPUs (%.0f GiB, %.0f%% headroom, NVLink domain %d): %zu combinations, "
           "%zu valid, %zu fit, %zu distinct grids\n", m->name, c->gpus, c->gpu_mem_gib,
           c->headroom * 100, c->gpus_per_domain, s->considered, s->n_valid, s->n_fitting,
           s->n_grids);
    steptime_confidence(stdout, &c->perf);
    if (s->n_ranked > 0) {
        printf("%3s  %-27s %-30s %-30s %11s  %-9s %9s %7s  %s\n", "#", "layout",
               "attention grid", "MoE grid", "peak", "fit step", "step ms", "TFLOP/s", "ranked above the next by");
        for (size_t i = 0; i < s->n_ranked; i++)
            print_row(i, s, &s->valid[i]);
    }
    printf("rejections by rule:");
    for (int r = 1; r < MOE_RULE_COUNT; r++)
        if (s->rejected_by[r])
            printf(" %s=%zu", moe_rule_id((enum moe_rule)r), s->rejected_by[r]);
    printf("\n");
    if (explain && s->n_ranked > 0)
        steptime_explain(stdout, &c->perf, &s->valid[0]);
    if (explain)
        print_rejected_by_rule(m, w, t, c, s);
    if (excluded)
        print_rejected(m, w, t, c, s);
    if (s->n_fitting > 0)
        return MOE_EXIT_OK;
    const struct moe_layout_entry *n = moe_layouts_nearest_miss(s, c, advice, sizeof(advice));
    struct moe_error e;
    char a[96], b[96], name[MOE_LAYOUT_NAME_MAX];
    moe_error_clear(&e);
    if (!n)
        moe_error_set(&e, "no layout can use %d GPUs: %s", c->gpus, advice);
    else
        moe_error_set(&e, "nothing fits; nearest miss %s (%s %s): %s",
                      moe_layout_name(&n->layout, name, sizeof(name)),
                      moe_layout_format_attention(&n->layout, a, sizeof(a)),
                      moe_layout_format_moe(&n->layout, b, sizeof(b)), advice);
    moe_cli_report(&e);
    return MOE_EXIT_INFEASIBLE;
}

static json_t *other_vpp_json(struct moe_jb *b, const struct moe_layout_entry *e)
{
    json_t *alts = json_array();
    int shown = e->n_vpp - 1 < MOE_VPP_ALT_MAX ? e->n_vpp - 1 : MOE_VPP_ALT_MAX;

    for (int k = 0; k < shown; k++) {
        json_t *o = json_object();

        moe_jb_int(b, o, "vpp", e->alt[k].vpp);
        moe_jb_num(b, o, "step_ms", e->alt[k].step_ms);
        moe_jb_bool(b, o, "fits", e->alt[k].fits);
        moe_jb_append(b, alts, moe_jb_done(b, o));
    }
    return moe_jb_done(b, alts);
}

static json_t *entry_json(struct moe_jb *b, const struct moe_layout_set *s,
                          const struct moe_layout_entry *e)
{
    char a[96], m[96], name[MOE_LAYOUT_NAME_MAX];
    struct moe_fit f;
    const struct moe_layout *l = &e->layout;
    json_t *o;

    moe_layout_entry_fit(s, e, &f);
    o = moe_jb_pack(b, "{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:b, s:s, s:s}",
                    "name", moe_layout_name(l, name, sizeof(name)), "tp", l->tp, "cp", l->cp,
                    "dp", l->dp, "pp", l->pp, "vpp", l->vpp, "ep", l->ep, "etp", l->etp, "edp",
                    l->edp, "attention",
                    moe_layout_format_attention(l, a, sizeof(a)), "moe",
                    moe_layout_format_moe(l, m, sizeof(m)), "fits", e->fits, "fit_step",
                    moe_fit_step_kind(&f), "decided_by",
                    e->decided_by != MOE_SCALE_NONE ? moe_scale_rule_text(e->decided_by) : "");
    moe_jb_num(b, o, "peak_gib", e->mem.total / MOE_GIB);
    moe_jb_set(b, o, "other_vpp", other_vpp_json(b, e));
    moe_jb_num(b, o, "step_ms", e->time.step_ms);
    moe_jb_num(b, o, "tflops_per_gpu", e->time.tflops_per_gpu);
    moe_jb_set(b, o, "step_terms_ms", steptime_json(b, &e->time));
    return moe_jb_done(b, o);
}

static json_t *rejected_by_json(struct moe_jb *b, const struct moe_layout_set *s)
{
    json_t *rej = json_object();

    for (int r = 1; r < MOE_RULE_COUNT; r++)
        if (s->rejected_by[r])
            moe_jb_int(b, rej, moe_rule_id((enum moe_rule)r), (json_int_t)s->rejected_by[r]);
    return moe_jb_done(b, rej);
}

static json_t *excluded_json(struct moe_jb *b, const struct moe_layout_set *s)
{
    json_t *ex = json_array();
    char name[MOE_LAYOUT_NAME_MAX];

    for (size_t i = 0; i < s->n_rejected; i++) {
        const struct moe_layout *l = &s->rejected[i].layout;

        moe_jb_append(b, ex, moe_jb_pack(b, "{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:s}", "name",
                                         moe_layout_name(l, name, sizeof(name)), "tp", l->tp,
                                         "cp", l->cp, "pp", l->pp, "vpp", l->vpp, "ep", l->ep,
                                         "etp", l->etp, "rule",
                                         moe_rule_id(s->rejected[i].rule)));
    }
    return moe_jb_done(b, ex);
}

static json_t *layouts_json(struct moe_jb *b, const struct moe_model *m,
                            const struct moe_machine *c, const struct moe_layout_set *s,
                            bool excluded)
{
    json_t *o = moe_jb_pack(b, "{s:s, s:i, s:I, s:I, s:I, s:I}", "model", m->name, "gpus",
                            c->gpus, "considered", (json_int_t)s->considered, "valid",
                            (json_int_t)s->n_valid, "fitting", (json_int_t)s->n_fitting,
                            "grids", (json_int_t)s->n_grids);
    json_t *arr = json_array();

    for (size_t i = 0; i < s->n_ranked; i++)
        moe_jb_append(b, arr, entry_json(b, s, &s->valid[i]));
    moe_jb_set(b, o, "layouts", moe_jb_done(b, arr));
    moe_jb_set(b, o, "steptime_calibration", steptime_confidence_json(b, &c->perf));
    steptime_not_modeled_json(b, o, &c->perf);
    moe_jb_set(b, o, "rejected_by", rejected_by_json(b, s));
    if (excluded)
        moe_jb_set(b, o, "excluded", excluded_json(b, s));
    return moe_jb_done(b, o);
}

static int print_json(const struct moe_model *m, const struct moe_machine *c,
                      const struct moe_layout_set *s, bool excluded)
{
    struct moe_error err;
    struct moe_jb b;
    json_t *o;

    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    if (!(o = layouts_json(&b, m, c, s, excluded)))
        return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    json_dumpf(o, stdout, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    putchar('\n');
    json_decref(o);
    return s->n_fitting > 0 ? MOE_EXIT_OK : MOE_EXIT_INFEASIBLE;
}

int layouts_run(const struct moe_model *m, const struct moe_workload *w,
                const struct moe_train *t, const struct moe_machine *c, int top, bool explain,
                bool excluded, bool json)
{
    struct moe_layout_set s;
    struct moe_error e;
    int rc;

    moe_error_clear(&e);
    if (moe_layouts_enumerate(m, w, t, c, (size_t)top, explain || excluded, &s, &e) < 0) {
        moe_cli_report(&e);
        return MOE_EXIT_SYSTEM;
    }
    rc = json ? print_json(m, c, &s, excluded)
              : print_text(m, w, t, c, &s, explain, excluded);
    moe_layout_set_free(&s);
    return rc;
}

int cmd_layouts(int argc, char **argv)
{
    struct fit_args a;
    int rc = fit_args_parse(argc, argv, true, &a);

    if (rc != MOE_CLI_RUN)
        return rc;
    return layouts_run(&a.model, &a.w, &a.t, &a.c, a.top, a.explain, a.excluded, a.json);
}
