/*
 * train.h - the internal declarations of the training layer (src/train/): datasets, the
 * networks (scv_net), and the trainer's policy defaults and stream rates. Not part of the
 * public contract (include/scv.h): libscv.so does not export them; the library's other
 * layers, the CLI, the service and the in-tree tests include this header where they use
 * them.
 */
#ifndef SCV_TRAIN_INTERNAL_H
#define SCV_TRAIN_INTERNAL_H

#include "scv.h"

/* ---- datasets ---- */
/* Images as float [n][c][h][w], normalised; labels uint8 in [0, n_classes). */
typedef struct scv_dataset {
    int64_t n;
    int c, h, w;
    int n_classes;
    float *x;                   /* read-only (it may be a shared mapping) */
    uint8_t *y;
    void *map;                  /* the cache mapping x and y point into (NULL: malloc'ed) */
    size_t map_len;
} scv_dataset;

/* spec: "fashion-mnist" (Debian's dataset-fashion-mnist), a directory holding the four
 * IDX files (train-images-idx3-ubyte[.gz], ...), or "synthetic:N" (N training samples,
 * N/5 test samples, a seeded learnable 10-class problem). split: 0 = train, 1 = test. */
int scv_dataset_load(const char *spec, int split, scv_dataset **out, scv_err *err);
/* scv_dataset_load that can be stopped: stop() (NULL: never) is asked every
 * SCV_DATA_STOP_EVERY synthetic samples, and before loading; when it returns non-zero the
 * load ends with SCV_EINTR (nothing allocated is kept), so a stop during setup is bounded
 * by the time of that many samples, not by the data set's size. */
#define SCV_DATA_STOP_EVERY 1024
int scv_dataset_load_stop(const char *spec, int split, int (*stop)(void), scv_dataset **out, scv_err *err);
void scv_dataset_free(scv_dataset *ds);
#define SCV_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
/* synthetic:N's bound: its N training and N/5 test samples (28x28 floats and a label each)
 * take at most SCV_SYNTHETIC_MAX_BYTES per rank (every rank holds the whole set), so N is at
 * most 570,471; the command line and the service refuse more, naming the bound. */
#define SCV_SYNTHETIC_SAMPLE_BYTES ((int64_t)(28 * 28 * 4 + 1))
#define SCV_SYNTHETIC_MAX_BYTES ((int64_t)2 << 30)
#define SCV_SYNTHETIC_MAX_N (SCV_SYNTHETIC_MAX_BYTES * 5 / (6 * SCV_SYNTHETIC_SAMPLE_BYTES))

typedef struct scv_net scv_net;

/* scv_net_new refuses a model with more parameters than this (2^28: 1 GiB of floats),
 * or a layer or input whose size does not fit an int. */
#define SCV_NET_MAX_PARAMS ((size_t)1 << 28)

int scv_net_new(const scv_net_spec *spec, scv_net **out, scv_err *err);
/* The networks scv_net_new builds, '|'-separated: the one list the option tables, the
 * trainer's check and the messages use. */
#define SCV_NET_NAMES "logreg|mlp|lenet|resnet"
/* 1 when name is one of SCV_NET_NAMES. */
int scv_net_known(const char *name);
/* The network a job names, checked before anything runs: model one of SCV_NET_NAMES (an
 * unknown one named with the nearest), and an mlp's hidden layers (the caller's, its default
 * resolved).
 * SCV_EINVAL naming --model or --hidden. The one check the trainer and the job setup use. */
int scv_net_check(const char *model, const char *hidden, scv_err *err);
void scv_net_free(scv_net *m);
size_t scv_net_nparams(const scv_net *m);
float *scv_net_params(scv_net *m);

/* The gradient buffer has room for SCV_GRAD_EXTRA more floats after the n parameters, so a
 * trainer can reduce a few scalars in the same collective as the gradient. */
float *scv_net_grads(scv_net *m);
#define SCV_GRAD_EXTRA (24 + 3 * SCV_MAX_WORKERS)
/* A string that identifies the architecture, e.g. "mlp:784-256-128-10"; checkpoints store it. */
const char *scv_net_arch(const scv_net *m);
/* Floats of activations one sample produces in a forward pass (the memory model's input). */
size_t scv_net_act_floats(const scv_net *m);
/* PyTorch-style init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases. */
void scv_net_init(scv_net *m, uint64_t seed);
/* Forward and backward on n samples. Sets the gradient buffer to
 * scale * sum_i d loss_i / d params (scale = 1/B gives this rank's share of the mean
 * gradient over a global batch B). Adds the summed loss and correct count to *loss_sum and
 * *n_correct. n may be 0 (gradient set to zero). */
int scv_net_train_step(scv_net *m, const float *x, const uint8_t *y, int n, float scale,
                         double *loss_sum, int64_t *n_correct, scv_err *err);
/* Forward only; adds summed loss and correct count. */
int scv_net_eval(scv_net *m, const float *x, const uint8_t *y, int n, double *loss_sum,
                   int64_t *n_correct, scv_err *err);

scv_dynbatch_policy scv_dynbatch_policy_default(void);

scv_gravac_policy scv_gravac_policy_default(void);

scv_selsync_policy scv_selsync_policy_default(void);

scv_stream_policy scv_stream_policy_default(void);

int scv_stream_rates_workers(const scv_stream_rates *r);
/* S_k(tau), samples/s (the rate in force at tau; 0 before 0). */
double scv_stream_rate(const scv_stream_rates *r, int k, double tau);
/* arrived_k(tau) = integral of S_k from 0 to tau, samples (real; floor() of it are whole). */
double scv_stream_arrived(const scv_stream_rates *r, int k, double tau);

#endif /* SCV_TRAIN_INTERNAL_H */
