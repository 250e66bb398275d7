/*
 * metrics_line.h - the one strict reader of a metrics line (the JSON lines a trainer
 * writes: docs/TRAINER-CONTRACT.md "Metrics lines"). One line is parsed (cJSON) into a
 * typed struct for its type (job, iter, eval, latency; any other type is OTHER and
 * skipped, as the contract says); every number is checked against its range (a table in
 * metrics_line.c), and a field that is not a number, is out of range, or is required and
 * lacking is an error naming the file, the line and the field. A non-finite number (NaN or
 * Infinity written bare, as Python's json.dumps and C's printf write a diverged loss, or a
 * number beyond a double's range) is named apart (out->nonfinite): the trainer diverged. A
 * reader state (scv_ml_reader) checks what spans lines: iter increases, samples_seen and ts
 * do not decrease, workers is the segment's K. io/profile.c (which stops
 * at the first error), drivers/trainjob.c (which tails a running segment) and the
 * service's series all read lines through it. Internal to the library (not in scv.h).
 */
#ifndef SCV_IO_METRICS_LINE_H
#define SCV_IO_METRICS_LINE_H
#include "scv.h"
#include <stddef.h>

typedef enum {
    SCV_ML_BLANK = 0,  /* only white space */
    SCV_ML_OTHER,      /* a type this reader does not know (or none): skipped */
    SCV_ML_JOB,
    SCV_ML_ITER,
    SCV_ML_EVAL,
    SCV_ML_LATENCY,
} scv_ml_type;

/* Numbers that are absent, null or refused read NaN. */
typedef struct scv_ml_job {
    char model[64], arch[64], vm[64], dataset[64];
    double params, act_bytes, n_train, input_floats, threads;
} scv_ml_job;

typedef struct scv_ml_iter {
    double iter, epoch_progress, workers, batch, t_compute, t_comm, t_iter, loss;
    double g_local, g_global;   /* grad_sqnorm_local_mean, grad_sqnorm_global */
    double samples_seen, ts;
    double cf, t_compress;      /* a compressed exchange's factor and kernel seconds */
} scv_ml_iter;

typedef struct scv_ml_eval {
    double iter, epoch_progress, test_accuracy, test_loss, train_loss, train_loss_samples;
    double eval_seconds;        /* the evaluation's own time (NaN: not written) */
    double n;                   /* the held-out samples evaluated (NaN: not written) */
    double from;                /* ... from this test sample on, wrapping (NaN: not written) */
    char role[32];              /* "periodic", ... ("" : none) */
    char set[32];               /* "full", "subset" ("" : none) */
} scv_ml_eval;

typedef struct scv_ml_latency {
    double workers, seconds;
} scv_ml_latency;

typedef struct scv_metrics_line {
    scv_ml_type type;
    const char *nonfinite;      /* the first field whose value is not finite (NULL: none) */
    char nonfinite_as[16];      /* ... as the line wrote it: "NaN", "Infinity", "inf", ... */
    union {
        scv_ml_job job;
        scv_ml_iter iter;
        scv_ml_eval eval;
        scv_ml_latency latency;
    } u;
} scv_metrics_line;

/* Parses one line (NUL-terminated; a trailing newline is fine) of file `path`, line
 * `lineno`. SCV_OK; or SCV_EPARSE naming "path:lineno" and the first bad field (a line that
 * is not a JSON object; a field that is not a number, out of range or, for the type's
 * required fields, lacking): out->type is then still the line's type, and its fields that
 * could be read are set (the others NaN), so a caller that only reads along (a running
 * segment's tail) can take a bad value as missing. */
int scv_metrics_line_parse(const char *text, const char *path, int lineno, scv_metrics_line *out, scv_err *err);

/* Seconds a line's "ts" may lie before the previous line's (a wall clock stepped back by
 * its time service) before the file is refused. */
#define SCV_ML_TS_SLACK_S 1.0

/* What one file's reader remembers across lines: the last iteration line's counters (NaN:
 * none since the file's start or its last job line, which starts a new stream), the
 * segment's K and B (0: any, a profile's files) and where the segment starts. */
typedef struct scv_ml_reader {
    int workers;
    int batch;                  /* the segment's B (SCV_BATCH; 0: any): an iteration's batch is B, or
                                   less in the iteration that ends an epoch (of the job line's n_train) */
    int strict;                 /* a trainer's segment (the exec driver's tail): the fields a trainer
                                   must write are required, the first line must be the job line, one
                                   iter line per iteration (iter grows by one) and samples_seen grows by
                                   at most the line's batch */
    double start_iter;          /* the checkpoint's iteration the segment resumes (NaN: unknown): its
                                   first iter line must be past it (set by the caller after init) */
    int job_line;               /* the job line's number (0: none yet) */
    double n_train;             /* the job line's (NaN: none yet) */
    double iter, samples_seen, ts;
    int iter_line, samples_line, ts_line;
} scv_ml_reader;
void scv_ml_reader_init(scv_ml_reader *r, int workers);
/* The schema, the tables the reader checks, as the Markdown table docs/TRAINER-CONTRACT.md
 * shows (one row per field: line type, name, type and range, required, meaning) into buf;
 * returns the length it needs (snprintf's rule). */
int scv_ml_schema_markdown(char *buf, size_t cap);
/* scv_metrics_line_parse (strict when r->strict), then the checks across lines: with
 * r->strict an iter, eval or latency line before the job line is refused; on an iteration line: "iter" must
 * increase, "samples_seen" and "ts" must not decrease (ts by SCV_ML_TS_SLACK_S at most),
 * "workers" must be r->workers when set, "batch" r->batch when set (less only where the
 * iteration ends an epoch); with r->strict "iter" grows by exactly one from line to line and
 * past r->start_iter, "samples_seen" by at most the line's batch; SCV_EPARSE naming
 * path:lineno, the field and the earlier line otherwise. text is NUL-terminated. */
int scv_metrics_line_next(scv_ml_reader *r, const char *text, const char *path, int lineno, scv_metrics_line *out,
                          scv_err *err);
/* The same on a line of len bytes as read from the file (getline's count): a NUL byte in it
 * (which would end the text early, a line beginning with one read as blank) is refused
 * naming the line and the byte. */
int scv_metrics_line_next_n(scv_ml_reader *r, const char *text, size_t len, const char *path, int lineno,
                            scv_metrics_line *out, scv_err *err);
#endif
