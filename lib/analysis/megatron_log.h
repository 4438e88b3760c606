/* Megatron-LM / Megatron-Bridge training logs, in every real format seen:
 * iteration lines with or without microsecond timestamps or a leading space,
 * `srun -l` ("0: ") and job-step ("name/0 ") prefixes, several ranks' lines
 * glued without a newline, "[Rank N] (after K iterations) memory (MB)" lines
 * (rounded or raw floats) and Bridge's "memory (GB)" lines, Bridge "Step
 * Time" lines, the argument dump, the theoretical-memory line and the CUDA
 * graph capture lines (graph_evidence.h).  Records
 * are found by unanchored search, so prefixes and glue do not matter. */
#ifndef MOEFLOW_MEGATRON_LOG_H
#define MOEFLOW_MEGATRON_LOG_H

#include <stddef.h>

#include "analysis/fit_evidence.h"
#include "analysis/graph_evidence.h"
#include "core/error.h"

/* One "iteration N/ M | ..." record.  Absent numbers are NAN. */
struct moe_log_iter {
    long iter, total;
    double step_ms;   /* elapsed time per iteration (ms), or Bridge Step Time */
    double tflops;    /* throughput per GPU (TFLOP/s/GPU) */
    double loss;      /* lm loss; NAN when the line has none */
    double lr;        /* learning rate; NAN when the line has none */
    int has_loss;
    /* What the log printed for the field when it was nan, inf or -inf (the
     * field above is then NAN, with a warning for an infinity): 0 else.
     * report.json writes it as null and lists it under "non_finite". */
    double step_ms_logged, tflops_logged, loss_logged;
    long skipped;     /* number of skipped iterations (this logging interval) */
    long nan_iters;   /* number of nan iterations */
    int line;         /* where it was found, for messages */
    int superseded;   /* a later record of this iteration in the same file replaced it */
};

/* One "[Rank R] (after K iterations) memory" record, in bytes. */
struct moe_log_mem {
    int rank;
    long after;
    double allocated, max_allocated, reserved, max_reserved;
};

/* Something in the log that cannot be right: a malformed or impossible
 * number, a truncated iteration line.  text starts with "FILE:LINE: ". */
struct moe_log_warning {
    int line;
    char text[320];
};

#define MOE_LOG_WARNINGS_MAX 200

/* A line longer than this is read up to it (the rest is skipped, with a
 * warning): the longest line of the real logs is 1.7 kB, and a file with
 * no newline must not be held whole. */
#define MOE_LOG_LINE_MAX (1L << 20)
#define MOE_LOG_LINE_MAX_TEXT "1 MiB"

/* An argument dump ends within this many lines or bytes (Megatron core
 * 0.19 prints about 850 lines, 60 kB); past that its "end of arguments" is
 * taken as lost and the lines after it are read as log lines again. */
#define MOE_LOG_DUMP_LINES_MAX 8192
#define MOE_LOG_DUMP_BYTES_MAX (4L << 20)

struct moe_log_arg {
    char *key, *value;
};

struct moe_log {
    struct moe_log_iter *iters;
    size_t niters, capiters;
    struct moe_log_mem *mems;
    size_t nmems, capmems;
    struct moe_log_arg *args; /* the argument dump, in log order */
    size_t nargs, capargs;
    /* "Theoretical memory footprints: weight and optimizer=X MB,
     * activation=Y MB, total=Z MB"; NAN where absent. */
    double theo_weight_opt_mb, theo_activation_mb, theo_total_mb;
    double theo_total_logged; /* the total's nan, inf or -inf as logged; else 0 */
    struct moe_graph_evidence graphs; /* CUDA graph capture lines (Megatron logs no replay) */
    struct moe_fit_evidence fit_evidence; /* fit stage: fit-python/'s line */
    char last_error[200]; /* the last Python exception line ("...Error: ...") */
    size_t lines;
    int in_args; /* inside the argument dump */
    size_t dump_lines, dump_bytes;    /* of the dump being read */
    struct moe_log_warning *warnings; /* at most MOE_LOG_WARNINGS_MAX kept */
    size_t nwarnings, capwarnings;
    size_t warnings_total;            /* including those not kept */
    const char *source;               /* the file being read, for warnings */
    size_t checked;                   /* iteration records already checked */
};

void moe_log_init(struct moe_log *log);
void moe_log_free(struct moe_log *log);

/* Numbers are read strictly: "1e", "abc" or a unit glued to the number are
 * malformed, a step time <= 0 or a negative throughput or count impossible;
 * such a value is dropped (NAN) and a warning names file and line. */

/* Adds one file's records (ranks' files of one run may be added in turn). */
int moe_log_read_file(struct moe_log *log, const char *path, struct moe_error *err);

/* Whether a run's last Python exception (struct moe_log's last_error) is
 * CUDA running out of memory: a fit rung's answer, not a failure. */
bool moe_log_out_of_memory(const char *last_error);

#endif
