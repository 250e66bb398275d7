/*
 * scv.h - the one public header of libscv, the library behind the `scavenger` tool.
 *
 * Scavenger trains a data-parallel model on K workers with global batch B, measures every
 * iteration (compute, communication, gradient noise) and, in later layers, plans the
 * cheapest or fastest (VM type, K, B). This header exposes the pieces a program needs:
 *
 *   status codes    one table (SCV_STATUS_MAP), scv_strerror(), and an optional scv_err
 *                   buffer passed last to every fallible call for a human-readable detail;
 *   datasets        IDX (gzip or plain) files, Fashion-MNIST from Debian, synthetic data;
 *   models          logreg, mlp, lenet, resnet with flat parameter and gradient buffers;
 *   training        scv_train_params + scv_train_run(): synchronous data-parallel SGD.
 *
 * Example (one process, no MPI launcher needed):
 *
 *     scv_train_params p = scv_train_params_default();
 *     p.model = "lenet"; p.epochs = 1; p.batch = 64;
 *     scv_err err = {0};
 *     scv_train_result r;
 *     if (scv_train_run(&p, &r, &err) != SCV_OK) fprintf(stderr, "%s\n", err.msg);
 *
 * Ownership: whoever calls X_new()/X_load() frees with X_free(); X_free(NULL) is a no-op.
 * Every function that returns int returns SCV_OK (0) or a positive SCV_E* code.
 */
#ifndef SCV_H
#define SCV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SCV_VERSION "0.1.0"

/* ---- status codes: one table; numbers are stable and never reused ---- */
#define SCV_STATUS_MAP(X)                                                      \
    X(OK, 0, "ok")                                                             \
    X(EINVAL, 1, "invalid argument")                                           \
    X(ENOMEM, 2, "out of memory")                                              \
    X(EIO, 3, "i/o error")                                                     \
    X(EPARSE, 4, "malformed input")                                            \
    X(ENOTFOUND, 5, "not found")                                               \
    X(ERANGE, 6, "value out of range")                                         \
    X(EMPI, 7, "MPI error")                                                    \
    X(ECORRUPT, 8, "corrupt data")                                             \
    X(EINTR, 9, "interrupted")                                                 \
    X(ENOCONV, 10, "did not converge")                                         \
    X(EINFEASIBLE, 11, "no configuration meets the constraints")               \
    X(EINTERNAL, 12, "internal error")                                         \
    X(EDNN, 13, "oneDNN error")

typedef enum {
#define SCV__ENUM(name, num, text) SCV_##name = num,
    SCV_STATUS_MAP(SCV__ENUM)
#undef SCV__ENUM
} scv_status;

#define SCV_ERR_LEN 512
/* Optional detail buffer. Pass NULL where no message is wanted. */
typedef struct scv_err {
    int code;
    char msg[SCV_ERR_LEN];
} scv_err;

const char *scv_strerror(int code);  /* "invalid argument" */
const char *scv_errname(int code);   /* "SCV_EINVAL" */
/* Formats msg into err (if not NULL), stores code and returns it. */
int scv_err_set(scv_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- datasets ---- */
/* Images as float [n][c][h][w], normalised; labels uint8 in [0, n_classes). */
typedef struct scv_dataset {
    int64_t n;
    int c, h, w;
    int n_classes;
    float *x;
    uint8_t *y;
} scv_dataset;

/* spec: "fashion-mnist" (Debian's dataset-fashion-mnist), a directory holding the four
 * IDX files (train-images-idx3-ubyte[.gz], ...), or "synthetic:N" (N training samples,
 * N/5 test samples, a seeded learnable 10-class problem). split: 0 = train, 1 = test. */
int scv_dataset_load(const char *spec, int split, scv_dataset **out, scv_err *err);
void scv_dataset_free(scv_dataset *ds);
#define SCV_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

/* ---- models ---- */
typedef struct scv_model scv_model;
#define SCV_MAX_HIDDEN 8
typedef struct scv_model_spec {
    const char *name;          /* logreg | mlp | lenet | resnet */
    int hidden[SCV_MAX_HIDDEN]; /* mlp only */
    int n_hidden;
    int in_c, in_h, in_w;      /* input shape per sample */
    int n_classes;
} scv_model_spec;

int scv_model_new(const scv_model_spec *spec, scv_model **out, scv_err *err);
void scv_model_free(scv_model *m);
size_t scv_model_nparams(const scv_model *m);
float *scv_model_params(scv_model *m);
/* The gradient buffer has room for SCV_GRAD_EXTRA more floats after the n parameters, so a
 * trainer can reduce a few scalars in the same collective as the gradient. */
float *scv_model_grads(scv_model *m);
#define SCV_GRAD_EXTRA 8
/* A string that identifies the architecture, e.g. "mlp:784-256-128-10"; checkpoints store it. */
const char *scv_model_arch(const scv_model *m);
/* PyTorch-style init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases. */
void scv_model_init(scv_model *m, uint64_t seed);
/* Forward and backward on n samples. Sets the gradient buffer to
 * scale * sum_i d loss_i / d params (scale = 1/B gives this rank's share of the mean
 * gradient over a global batch B). Adds the summed loss and correct count to *loss_sum and
 * *n_correct. n may be 0 (gradient set to zero). */
int scv_model_train_step(scv_model *m, const float *x, const uint8_t *y, int n, float scale,
                         double *loss_sum, int64_t *n_correct, scv_err *err);
/* Forward only; adds summed loss and correct count. */
int scv_model_eval(scv_model *m, const float *x, const uint8_t *y, int n, double *loss_sum,
                   int64_t *n_correct, scv_err *err);
/* Parses "256,128" into spec->hidden. */
int scv_model_parse_hidden(const char *s, scv_model_spec *spec, scv_err *err);

/* ---- training ---- */
typedef enum { SCV_LR_CONST = 0, SCV_LR_STEP, SCV_LR_COSINE } scv_lr_decay;
typedef enum { SCV_LR_SCALE_NONE = 0, SCV_LR_SCALE_LINEAR, SCV_LR_SCALE_SQRT } scv_lr_scaling;

typedef struct scv_train_params {
    const char *model;         /* logreg | mlp | lenet | resnet */
    const char *hidden;        /* mlp hidden sizes, "256,128" */
    const char *dataset;       /* see scv_dataset_load */
    int workers;               /* K: expected number of ranks (checked) */
    int threads;               /* compute threads per rank */
    int batch;                 /* global batch B */
    const double *rank_weights; /* optional: per-rank share of B (K values), NULL = even */
    /* optimiser */
    double lr, momentum, weight_decay;
    int base_batch;            /* reference batch for LR scaling */
    scv_lr_scaling lr_scaling;
    double warmup_epochs;
    scv_lr_decay lr_decay;
    double lr_step_epochs, lr_gamma; /* step decay: lr *= gamma every step_epochs */
    double lr_horizon_epochs;  /* cosine horizon; 0 = the --epochs value */
    /* stopping: any that is set; at least one must be */
    double epochs;             /* 0 = unset */
    int64_t iterations;        /* total iterations, counting resumed ones; 0 = unset */
    double target_accuracy;    /* test accuracy in (0,1]; 0 = unset */
    int64_t eval_every;        /* iterations; 0 = once an epoch */
    uint64_t seed;
    /* output */
    const char *metrics_path;  /* JSONL per iteration, NULL = none */
    const char *checkpoint_dir;
    int64_t checkpoint_every;  /* iterations; 0 = only at the end */
    int resume;
    int progress;              /* 1 = progress line on stderr */
    int no_grad_stats;         /* 1 = skip the gradient-norm statistics (benchmarks only) */
    int quiet;
} scv_train_params;

typedef struct scv_train_result {
    int rank;                  /* this process's rank: only rank 0 reports */
    char model[64];
    int workers, batch;
    int64_t iterations;        /* total, counting resumed ones */
    int64_t iterations_run;    /* in this invocation */
    double epochs;             /* samples seen / training set size */
    double samples_per_sec;
    double test_accuracy, test_loss;
    double train_loss;         /* mean loss over the last iterations */
    double wall_seconds;
    double t_compute_mean, t_comm_mean, t_iter_mean;
    int reached_target;
    int interrupted;
} scv_train_result;

scv_train_params scv_train_params_default(void);
/* Validates everything that does not need the data (usage errors): returns SCV_EINVAL
 * with the option named in err. */
int scv_train_params_check(const scv_train_params *p, scv_err *err);
/* Runs training in this process; under mpirun every rank calls it. Rank 0 writes metrics,
 * checkpoints and progress. Returns SCV_EINTR after a clean stop on SIGINT/SIGTERM. */
int scv_train_run(const scv_train_params *p, scv_train_result *res, scv_err *err);
/* Writes res as one JSON object (no newline) into buf; returns the length. */
int scv_train_result_json(const scv_train_result *res, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* SCV_H */
