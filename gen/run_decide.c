/* moeflow run's loop: after a stage, the decision lib/loop makes from its
 * evidence, then moeflow gen --rebuild writes the later stages from the
 * study's trail.  Each step is marked in run-state.json's "loop" object
 * before the next, so that a resumed run neither decides nor rebuilds
 * twice, and a decision already sealed is read back (lib/loop/trail.c). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "run_ctx.h"
#include "run_exec.h"
#include "run_state.h"
#include "core/json_build.h"
#include "core/strbuf.h"
#include "core/text.h"
#include "loop/loop.h"

/* The state's "loop" object, made when absent; NULL when out of memory. */
static json_t *loop_state(struct run_ctx *c)
{
    json_t *l = json_object_get(c->state, "loop");

    if (!json_is_object(l)) {
        l = json_object();
        /* checked: NULL makes the caller's set fail, naming its key */
        if (json_object_set_new(c->state, "loop", l) < 0)
            return NULL;
    }
    return l;
}

static bool marked(struct run_ctx *c, const char *key)
{
    return json_is_string(json_object_get(loop_state(c), key));
}

/* loop.key = v in the state, not yet saved; MOE_EXIT_OK or the exit code, said. */
static int loop_set(struct run_ctx *c, const char *key, json_t *v)
{
    struct moe_error err;
    struct moe_jb b;

    moe_error_clear(&err);
    moe_jb_init(&b, &err);
    if (moe_jb_set(&b, loop_state(c), key, v) < 0) {
        moe_jb_within(&b, "loop");
        moe_jb_within(&b, RUN_STATE_FILE);
        return moe_cli_fail(&err, MOE_EXIT_SYSTEM);
    }
    return MOE_EXIT_OK;
}

static int mark(struct run_ctx *c, const char *key, const char *what)
{
    int rc = loop_set(c, key, json_string(what));

    return rc == MOE_EXIT_OK ? run_save(c) : rc;
}

static int scale_round(struct run_ctx *c)
{
    json_int_t r = json_integer_value(json_object_get(loop_state(c), "scale_round"));

    return r >= 1 && r <= MOE_LOOP_SCALE_ROUNDS ? (int)r : 1;
}

/* gen --rebuild DIR --stage from [--for b] [--contention PCT]: the later
 * stages written from the trail, and the manifest read again.  contention:
 * the profile's, measured, or NAN. */
static int rebuild(struct run_ctx *c, enum moe_stage from, const char *bottleneck,
                   double contention)
{
    char *yaml = moe_path_join(c->dir, "study.yaml"), stage[16], pct[32];
    char *argv[12] = { NULL, "gen", yaml, "--stage", stage, "--rebuild", c->dir, NULL };
    int n = 7;
    struct moe_error err;
    int rc;

    if (!yaml)
        return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: out of memory\n");
    /* fits: a stage's name is at most 8 bytes (core/stage.h) */
    snprintf(stage, sizeof(stage), "%s", moe_stage_name(from));
    if (bottleneck) {
        argv[n++] = "--for";
        argv[n++] = (char *)bottleneck;
    }
    if (isfinite(contention)) {
        /* a number of at most a few digits: %.17g round-trips it */
        snprintf(pct, sizeof(pct), "%.17g", contention);
        argv[n++] = "--contention";
        argv[n++] = pct;
    }
    rc = run_self("gen", argv);
    free(yaml);
    if (rc != 0)
        return moe_cli_error(MOE_EXIT_STAGE_FAILED, "moeflow run: the stages from %s were not "
                             "rebuilt from the decisions (moeflow gen exited %d); nothing after "
                             "it was submitted\n", stage, rc);
    moe_manifest_free(&c->m);
    moe_error_clear(&err);
    if (moe_manifest_load(c->dir, &c->m, &err) < 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    return MOE_EXIT_OK;
}

static void said(const char *stage, const struct moe_loop_outcome *o)
{
    char shown[1100];
    /* room for every byte written as \xHH: the file's name is never cut */
    size_t len = 4 * strlen(o->file) + 1;
    char *file = malloc(len);

    printf("%s: decided%s: %s\n    (%s)\n", stage, o->recorded ? "" : " earlier",
           moe_text_visible(o->said, shown, sizeof(shown)),
           file ? moe_text_visible(o->file, file, len) : "its file: out of memory to show it");
    free(file);
}

static int after_fit(struct run_ctx *c)
{
    struct moe_loop_outcome o;
    struct moe_error err;
    int rc;

    if (marked(c, "fit"))
        return MOE_EXIT_OK;
    moe_error_clear(&err);
    if ((rc = moe_loop_decide_fit(c->dir, &o, &err)) != 0)
        return moe_cli_fail(&err, rc > 0 ? MOE_EXIT_INFEASIBLE : MOE_EXIT_INVALID_INPUT);
    said("fit", &o);
    if ((rc = rebuild(c, MOE_STAGE_SCALE, NULL, NAN)) != MOE_EXIT_OK)
        return rc;
    return mark(c, "fit", "rebuilt");
}

/* A next round replaces the scale stage: its state so far is kept under
 * "scale-round-N" and the stage starts afresh. */
static int after_scale(struct run_ctx *c)
{
    struct moe_loop_outcome o;
    struct moe_error err;
    int round = scale_round(c), rc;
    char key[32];

    /* fits: round is at most MOE_LOOP_SCALE_ROUNDS */
    snprintf(key, sizeof(key), "scale-%d", round);
    if (marked(c, key))
        return MOE_EXIT_OK;
    moe_error_clear(&err);
    if (moe_loop_decide_scale(c->dir, round, &o, &err) != 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    said("scale", &o);
    if ((rc = rebuild(c, o.next_round ? MOE_STAGE_SCALE : MOE_STAGE_PROFILE, NULL, NAN)) !=
        MOE_EXIT_OK)
        return rc;
    if (o.next_round) {
        json_t *stages = json_object_get(c->state, "stages");
        char old[32];

        /* fits: as key */
        snprintf(old, sizeof(old), "scale-round-%d", round);
        /* checked: the round's state must be kept before it is deleted */
        if (json_object_set(stages, old, json_object_get(stages, "scale")) < 0)
            return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: %s: %s.%s: cannot be kept (out "
                                 "of memory)\n", RUN_STATE_FILE, "stages", old);
        json_object_del(stages, "scale");
        if ((rc = loop_set(c, "scale_round", json_integer(round + 1))) != MOE_EXIT_OK)
            return rc;
    }
    if ((rc = mark(c, key, "rebuilt")) != MOE_EXIT_OK)
        return rc;
    return o.next_round ? RUN_AGAIN : MOE_EXIT_OK;
}

/* moeflow diagnose of the profile stage, as JSON; NULL when it could not
 * say (no trace, say), which the caller reports. */
static json_t *diagnosis(struct run_ctx *c)
{
    char *argv[] = { (char *)run_self_path(), "diagnose", c->dir, "--stage", "profile", "--json",
                     NULL };
    struct run_limits lim = { .stop = &run_interrupted };
    struct run_result r;
    char shown[2048];

    printf("--- moeflow diagnose %s --stage profile --json\n", c->shown);
    if (!argv[0][0] || run_program(NULL, argv, 1, &lim, &r) < 0) {
        fprintf(stderr, "moeflow run: cannot run moeflow diagnose: %s\n", strerror(errno));
        return NULL;
    }
    if (r.status == 0) {
        json_error_t jerr;
        json_t *d = json_loads(r.out, 0, &jerr);

        if (!d)
            fprintf(stderr, "moeflow run: warning: moeflow diagnose of the profile printed no "
                    "JSON it can read (line %d: %s)\n", jerr.line,
                    moe_text_visible(jerr.text, shown, sizeof(shown)));
        return d;
    }
    fprintf(stderr, "moeflow run: warning: moeflow diagnose of the profile exited %d:\n%s",
            r.status, moe_text_visible(r.err, shown, sizeof(shown)));
    return NULL;
}

/* The diagnosis's measured contention (%), or NAN: gen --contention. */
static double contention_of(const json_t *d)
{
    const json_t *v = json_object_get(json_object_get(d, "contention"), "slowdown_pct");

    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int after_profile(struct run_ctx *c)
{
    struct moe_loop_outcome o;
    struct moe_error err;
    json_t *d;
    const char *b = NULL;
    int rc;

    if (marked(c, "profile"))
        return MOE_EXIT_OK;
    if (c->a->all) {
        printf("profile: --all: retune screens the whole catalogue\n");
    } else if (!(d = diagnosis(c))) {
        printf("profile: no diagnosis from the profile; retune screens the whole catalogue\n");
    } else {
        moe_error_clear(&err);
        rc = moe_loop_decide_profile(c->dir, d, &o, &err);
        if (rc == 0) {
            said("profile", &o);
            b = json_string_value(json_object_get(d, "bottleneck"));
        }
        if (rc == 0 && (rc = rebuild(c, MOE_STAGE_RETUNE, b, contention_of(d))) == MOE_EXIT_OK)
            rc = mark(c, "profile", "rebuilt");
        else if (rc != 0)
            rc = moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
        json_decref(d);
        return rc;
    }
    return mark(c, "profile", "full catalogue");
}

static int after_retune(struct run_ctx *c)
{
    struct moe_loop_outcome o;
    struct moe_error err;

    if (marked(c, "retune"))
        return MOE_EXIT_OK;
    moe_error_clear(&err);
    if (moe_loop_decide_retune(c->dir, &o, &err) != 0)
        return moe_cli_fail(&err, MOE_EXIT_INVALID_INPUT);
    said("retune", &o);
    return mark(c, "retune", "recorded");
}

int run_decide(struct run_ctx *c, enum moe_stage st)
{
    switch (st) {
    case MOE_STAGE_FIT:
        return after_fit(c);
    case MOE_STAGE_SCALE:
        return after_scale(c);
    case MOE_STAGE_PROFILE:
        return after_profile(c);
    case MOE_STAGE_RETUNE:
        return after_retune(c);
    case MOE_STAGE_CONTRACT: /* nothing decided from a contract or after validate */
    case MOE_STAGE_VALIDATE:
        return MOE_EXIT_OK;
    case MOE_STAGE_NONE:
    case MOE_STAGE_COUNT:
        break;
    }
    return moe_cli_error(MOE_EXIT_SYSTEM, "moeflow run: no stage %d to decide after\n", (int)st);
}

void run_decide_dry(const struct run_ctx *c, enum moe_stage st)
{
    static const char *const next[MOE_STAGE_COUNT] = {
        [MOE_STAGE_FIT] = "decide the least recompute whose measured peak fits, then rebuild "
                          "scale..validate on it (moeflow gen --rebuild)",
        [MOE_STAGE_SCALE] = "decide the fastest measured layout and correct the step model; "
                            "rebuild profile..validate on it, or run a second scale round",
        [MOE_STAGE_PROFILE] = "diagnose the profile (moeflow diagnose --json) and rebuild retune "
                              "for its bottleneck",
        [MOE_STAGE_RETUNE] = "record the winners in the trail",
    };

    (void)c;
    if (next[st])
        printf("%s: would then %s\n", moe_stage_name(st), next[st]);
}
