/* manifest.json, the index of a study directory that `moeflow gen` wrote:
 * its stages, each stage's candidates and what it skipped.  The generator
 * writes it; the plugin (which candidate an array task runs), `moeflow
 * report` (labels, windows, fit predictions) and `gen --winners` (the
 * retune candidates the winners came from) read it back.  Its keys are
 * named in manifest.c (reading) and manifest_write.c only: everywhere
 * else a candidate is a struct.  In core because the plugin and the
 * analysis, which may not include study/, read it too (lib/README.md). */
#ifndef MOEFLOW_MANIFEST_H
#define MOEFLOW_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/error.h"
#include "core/stage.h"
#include "core/strv.h"
#include "core/study_dir.h"

/* One run of a stage.  Strings are owned (moe_candidate_free); NULL reads
 * as absent.  value is JSON because it is polymorphic and nothing looks
 * inside it: a string ("baseline", "fp8-delayed", a layout), true (a
 * switch), an integer (mbs) or a list of strings (recompute and CUDA-graph
 * modules, the winners a combination joins); it is only ever written out
 * (manifest, candidates.tsv, scripts, report labels) and hashed into the
 * id.  contract is JSON because the declared contract is a JSON document
 * whose canonical text is its identity (contract/contract.h). */
struct moe_candidate {
    enum moe_stage stage;
    char *variable;          /* "baseline", "layout", a retune variable, "combination",
                                MOE_CANDIDATE_CHECKPOINT */
    json_t *value;
    char *label;             /* "training-equivalent" | "benchmark-only": what users see */
    struct moe_strv label_reasons; /* why benchmark-only ("mock data", "forced-balance
                                      routing"); empty when training-equivalent */
    char *bottleneck;        /* what the change targets (core/retune.h), "none", "unknown" */
    struct moe_strv argv;    /* the trainer's arguments */
    struct moe_strv env;     /* NAME=value; written as one object, sorted by name */
    int nodes, tasks_per_node, world_size;
    int rank;                /* fit: the rank one GPU stands in for; -1: none */
    char *note;
    double predicted_mib;    /* fit: the memory model's peak of that rank; NAN: none.
                                Not part of the id: what moeflow expects of a run is
                                not what runs, and a model change must not rename jobs */
    json_t *contract;        /* the declared contract */
    char *id;                /* moe_candidate_hash(), or a winners' combination's digest */
    char *twin_of;           /* validate: the id of the unprofiled run this one profiles
                                (a profiling twin), NULL otherwise.  Not part of the id:
                                argv, env and the contract's profiling block already name
                                what the twin runs; the link only says which timed run it
                                stands beside, and readers of step time skip it */
};

/* validation.checkpoint's candidate (study/validate_checkpoint.h): the
 * generator writes it, the report reads its two runs. */
#define MOE_CANDIDATE_CHECKPOINT "checkpoint"
/* Where it saves, below the study: a folder named by its value, the id of
 * the configuration it checkpoints. */
#define MOE_CANDIDATE_CHECKPOINT_DIR MOE_STUDY_RESULTS "/validate/checkpoint"
/* Where a validate profiling twin's profiler writes, relative to the study
 * directory, named by the id of the run it is the twin of (its own id is a
 * hash over its arguments, which name this folder): the PyTorch profiler's
 * --tensorboard-dir is <dir>/tensorboard, so Megatron's Kineto traces land
 * in <dir>/torch_profile/rank-N.json.gz (core 0.19, bridge-pin: trace_handler
 * in megatron/training/training.py, core_v0.19.0:3677, 2a75ac12:3794, writes
 * "{tensorboard_dir}/../torch_profile") or in <dir>/tensorboard (core 0.16);
 * Nsight Systems writes <dir>/nsys-rankN.
 * The generator (study/validate_profile.c) writes, the report
 * (analysis/profile_pair.c) reads. */
#define MOE_TWIN_PROFILE_DIR_FMT MOE_STUDY_RESULTS "/validate/profile-%s"

/* A catalogue entry a stage did not emit, and why. */
struct moe_skip {
    char variable[64];
    json_t *value;           /* owned; as a candidate's, or null, or a count */
    char reason[1024];
};

/* One sbatch submission of a stage: array indices offset .. offset+count-1. */
struct moe_chunk {
    int offset, count;
    char array[48];          /* sbatch's --array value, "0-4%2" */
    char args[112];          /* what submit.sh adds to sbatch */
    char sbatch[192];        /* the whole command */
};

/* A stage as the manifest records it.  The writer reads every field; the
 * reader fills stage, script, array, cands, n and reference (owned by the
 * moe_manifest), and moe_manifest_stage_chunks reads the chunks. */
struct moe_manifest_stage {
    enum moe_stage stage;    /* MOE_STAGE_NONE: a name no stage has */
    const char *script;      /* "fit.sbatch", "" when nothing runs */
    bool array;
    const struct moe_chunk *chunks;
    size_t n_chunks;
    struct moe_candidate *cands;
    size_t n;
    const struct moe_skip *skipped;
    size_t n_skipped;
    /* retune: the run it is compared with when that is not the scale
     * stage's baseline -- the scale candidate of the layout moeflow run's
     * scale decision adopted, which ran (its log is results/scale/<id>.log);
     * NULL otherwise */
    struct moe_candidate *reference;
};

void moe_candidate_init(struct moe_candidate *c);
/* c (initialised here) from its object as manifest.json holds it
 * (moe_candidate_json); -1 when out of memory.  Free c in any case. */
int moe_candidate_from_json(const json_t *o, struct moe_candidate *c);
void moe_candidate_free(struct moe_candidate *c);
/* dst: a deep copy of src (dst is overwritten, not freed); -1 when out of memory. */
int moe_candidate_copy(struct moe_candidate *dst, const struct moe_candidate *src);
/* Replaces *field with a copy of s (NULL clears it); -1 when out of memory. */
int moe_candidate_set(char **field, const char *s);

/* The candidate as manifest.json holds it; without_id: the document the id
 * is the hash of: without id, predicted_mib, twin_of and label_reasons, and
 * with "label" the contract's semantics.class (the routing class), not the
 * label users see.  Ids were named before mock data counted as
 * benchmark-only; hashing the routing class keeps every id, and the GPU
 * evidence committed under them, as it was.  NULL with err as for
 * moe_manifest_stage_json below. */
json_t *moe_candidate_json(const struct moe_candidate *c, bool without_id,
                           struct moe_error *err);
/* Sets c->id: the SHA-256 of the canonical text of moe_candidate_json(c,
 * true).  -1 when it cannot be serialised. */
int moe_candidate_hash(struct moe_candidate *c);

/* What a candidate's results are, as its readers (report, the evidence
 * pack) show it: benchmark-only with each reason its declared contract
 * gives (forced-balance routing, mock data), else training-equivalent;
 * without a contract, manifest.json's label and label_reasons.  The
 * contract decides because it is what ran: a manifest written before mock
 * data counted calls a mock-data run training-equivalent.  Reasons go to
 * reasons (room for MOE_LABEL_REASONS_MAX); returns the label and sets *n. */
#define MOE_LABEL_REASONS_MAX 8
/* The reasons, in the order both the generator (study/study_contract.c,
 * moe_study_label) and the contract reader give them: what differs from
 * training, and the setting that runs instead. */
#define MOE_REASON_FORCED_BALANCE "forced-balance routing"
#define MOE_REASON_MOCK_DATA "mock data"
#define MOE_REASON_NO_LR_SCHEDULE "no LR schedule stated (1e-4, linear decay over the run's own steps)"
#define MOE_REASON_NO_AUX_LOSS "no aux-loss coefficient stated (Megatron's 0: no load-balancing loss)"
#define MOE_REASON_NULL_TOKENIZER "null tokenizer"
const char *moe_candidate_semantics(const struct moe_candidate *c, const char **reasons,
                                    size_t *n);

/* The same as text, "benchmark-only: mock data, forced-balance routing",
 * into buf. */
void moe_candidate_label_text(const struct moe_candidate *c, char *buf, size_t len);
/* Whether id is what moe_candidate_hash writes (and a combination's
 * digest): 64 lowercase hex digits.  A folder named after a candidate
 * (MOE_TWIN_PROFILE_DIR_FMT) takes no other id: a manifest is data and
 * may have been edited. */
bool moe_candidate_id_is_hash(const char *id);

/* The text of a value in labels: a string as it is, anything else as
 * compact JSON.  malloc'd; NULL when out of memory. */
char *moe_value_text(const json_t *value);

/* Whether c's step time measures its configuration: not a profiling twin
 * (it runs under a profiler; its profile is the matched A/B's) nor
 * validation.checkpoint's run (deterministic and saving; its own verdict
 * compares it).  Timing reports and the evidence pack read only these. */
bool moe_candidate_is_timed(const struct moe_candidate *c);

/* A candidate as reports and the winners' combination name it:
 * "variable=value" ("?" for what it lacks).  malloc'd; NULL when out of
 * memory. */
char *moe_candidate_label(const struct moe_candidate *c);

/* The manifest's entry of one stage, its chunks alone (the scripts'
 * templates read them too), and the whole document.  NULL when any part
 * of it could not be made (out of memory, a string that is not UTF-8, no
 * stages): never a document with a key left out; err (may be NULL) then
 * names the key path, "candidates[2].note: not UTF-8".  A number that is not
 * finite (an infinite predicted_mib) is null, named under the object's
 * "non_finite" (core/json_build.h). */
json_t *moe_manifest_stage_json(const struct moe_manifest_stage *st, struct moe_error *err);
json_t *moe_manifest_chunks_json(const struct moe_manifest_stage *st, struct moe_error *err);
json_t *moe_manifest_json(const char *version, const char *study, const char *study_hash,
                          int max_array_size, json_t *stages, struct moe_error *err);
/* The file's text: sorted keys, indented, a final newline.  malloc'd. */
char *moe_manifest_text(const json_t *manifest);

/* What a path is to the readers of generated studies: the one check. */
enum moe_study_dir {
    MOE_STUDY_NOT_DIR,       /* not a directory: a study file, or nothing */
    MOE_STUDY_PLAIN_DIR,     /* a directory without manifest.json (laid out by hand:
                                contracts/ only, the baseline is its one candidate) */
    MOE_STUDY_GENERATED,     /* manifest.json is a regular file: `moeflow gen` wrote it */
    MOE_STUDY_ODD_MANIFEST,  /* manifest.json is something else: reading it says what */
};
enum moe_study_dir moe_study_dir(const char *path);

/* True for MOE_STUDY_GENERATED: what report and gen's --winners and
 * --fit-memory-from take. */
bool moe_study_is_dir(const char *path);

/* A manifest as read back.  study and study_hash point into json (NULL
 * when missing); has_stages: "stages" is an array (else stages is empty). */
struct moe_manifest {
    char *path;           /* DIR/manifest.json, malloc'd */
    json_t *json;
    const char *study, *study_hash;
    bool has_stages;
    struct moe_manifest_stage *stages;
    size_t n_stages;
};

/* dir/manifest.json.  Missing or ill-typed fields read as absent (a hand-
 * written manifest may hold ids only); -1 with err when the file cannot be
 * read or is no JSON (m is then freed already; freeing it again is
 * harmless). */
int moe_manifest_load(const char *dir, struct moe_manifest *m, struct moe_error *err);
void moe_manifest_free(struct moe_manifest *m);

/* The first entry of stage st, or NULL. */
const struct moe_manifest_stage *moe_manifest_find(const struct moe_manifest *m,
                                                   enum moe_stage st);

/* The chunks of the first entry of stage st, as moeflow run submits them:
 * *chunks malloc'd (free()), *n of them.  -1 with err naming
 * stages[i].chunks[k].<key> when a key is missing, not an integer (offset,
 * count) or string (array, args, sbatch), out of int range or too long for
 * struct moe_chunk, or when the stage has no entry or no chunks array.
 * Whether they cover the stage's candidates is the caller's to check. */
int moe_manifest_stage_chunks(const struct moe_manifest *m, enum moe_stage st,
                              struct moe_chunk **chunks, size_t *n, struct moe_error *err);

/* The first candidate of a stage st whose id is id, or NULL. */
const struct moe_candidate *moe_manifest_candidate_by_id(const struct moe_manifest *m,
                                                         enum moe_stage st, const char *id);

/* The candidate ids of stage st in array-index order: none when dir has no
 * manifest (MOE_STUDY_PLAIN_DIR, MOE_STUDY_NOT_DIR).  -1 with err when it
 * cannot be read. */
int moe_manifest_stage_ids(const char *dir, enum moe_stage st, struct moe_strv *ids,
                           struct moe_error *err);

/* The first entry of stage st in a manifest document, or NULL. */
json_t *moe_manifest_entry(const json_t *manifest, enum moe_stage st);

/* manifest with the first entry of entry's stage replaced by entry, or
 * entry appended when it has none (gen --winners rebuilds validate in
 * place).  Takes a reference to entry; -1 when it could not be put in
 * place (a NULL entry, no "stages" array, out of memory). */
int moe_manifest_put_stage(json_t *manifest, json_t *entry);

#endif
