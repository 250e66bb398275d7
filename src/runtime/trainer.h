/*
 * trainer.h - the built-in trainer's parts (internal to src/runtime/): the state of one run
 * (run_ctx) and what the files split out of trainer.c share:
 *   trainer.c        the public calls (scv_train_run, the parameters' check, the result's
 *                    JSON), setup and teardown, checkpoints;
 *   train_elastic.c  the elastic mode: one job, a segment per command (resizes, stragglers
 *                    replaced or dropped, preemptions survived in place);
 *   train_segment.c  one segment: the step as a pipeline (batch plan, compute, the values
 *                    that ride in the gradient's allreduce, the exchange, the optimiser),
 *                    evaluations and the stopping rules (train_rules.c);
 *   train_metrics.c  the metrics lines (JSONL) rank 0 writes, one function per line type.
 */
#ifndef SCV_RUNTIME_TRAINER_H
#define SCV_RUNTIME_TRAINER_H

#include "scv.h"
#include "comm.h"
#include "exchange.h"
#include "train_rules.h"
#include "../train/train.h"
#include "runtime.h"
#include "../train/ckpt.h"
#include "../train/straggler.h"
#include "../train/dynbatch.h"
#include "../train/stream.h"
#include "../train/noniid.h"
#include "../train/sched.h"

#include <stdio.h>

/* ---- state of one run ---- */
typedef struct {
    const scv_train_params *p;
    scv_comm *comm;
    int rank, K;
    scv_dataset *train, *test;
    scv_net *model;
    float *mom;
    int32_t *perm;
    float *bx;
    uint8_t *by;
    int64_t *counts, *offsets;
    scv_ckpt_state st;
    FILE *metrics;
    int metrics_errno;  /* rank 0: why the first failed metrics write failed (0: none) */
    double wall_before; /* training seconds of earlier invocations (from the checkpoint) */
    double t_start;     /* scv_now() when this invocation's training started */
    int lock_fd;        /* rank 0: the checkpoint directory's lock (-1: none) */
    int time_stable;    /* rank 0: the mean t_iter is known well enough (--stop-time-stable);
                           sent to every rank in the next iteration's allreduce */
    int batch_cap;      /* samples bx and by hold */
    /* stragglers (rank 0 watches; its verdict travels in the next allreduce) */
    scv_straggler_state *strag;  /* rank 0, while a segment watches */
    int strag_flag;     /* rank 0: 1 + the worker just found, for the next allreduce (0: none),
                           negative when the segment ends for its replacement */
    int strag_stop;     /* rank 0, elastic mode: a straggler other than worker 0 can be replaced
                           (rank 0 alone decides; the flag's sign tells the others) */
    int strag_event;    /* rank 0: the event of the worker flagged last */
    int strag_action;   /* rank 0: what it gets (scv_hetero_choice: replace, drop or kept) */
    scv_straggler_event events[SCV_MAX_STRAGGLER_EVENTS]; /* rank 0: found since the last */
    int n_events;       /*   command (elastic mode reports them) */
    /* preemption notices (elastic mode): rank 0 asks before each allreduce; 1 ends the
     * segment after that iteration for a resize in place (train_elastic.c, preempt_poll) */
    int (*preempt_poll)(void *ctx);
    void *preempt_ctx;
    /* dynamic batching: the shares of B in use (every rank), the controller (rank 0) */
    double shares[SCV_MAX_WORKERS];
    int n_shares;       /* K of shares (0: none, the parameters' split) */
    scv_dynbatch_state *dyn;
    int dyn_send;       /* rank 0: new shares ride in the next allreduce */
    scv_stream_state *stream; /* streaming: the buffers (every rank keeps the same copy) */
    /* non-IID streams and data injection (src/train/noniid.c; every rank computes the same) */
    scv_inject_plan *inj;     /* this step's injection plan (NULL: injection off) */
    const int64_t *own;       /* worker k's own samples this step: c->counts, or inj->own */
    int64_t own_off[SCV_MAX_WORKERS]; /* ... their offsets in the step's window */
    int32_t *data_scratch;    /* N indices: scratch for the re-ordering, and a worker's batch */
    int64_t *home_acc;        /* rank 0, 3 x SCV_MAX_WORKERS: worker k's home-class samples and
                                 all its samples this segment, its home samples this step */
    double window[SCV_TARGET_WINDOW_MAX]; /* the target window when the last segment ended, oldest first */
    int n_window;
    /* the gradient exchange (communication efficiency): kept from one segment to the next
     * while K, this rank and the options stay (segment_exchange) */
    scv_exchange *xc;
    scv_exchange_opts xc_opts;
    int xc_K, xc_rank;
    /* AdaScale (--lr-scaling adascale, src/train/sched.h): the noise statistics' averages
     * (every rank the same: they come from the allreduce), and at K = 1 the first half's
     * gradient while the second is computed (nparams floats; NULL: not needed yet) */
    scv_adascale ada;
    float *ada_half;
} run_ctx;

/* ---- trainer.c ---- */
/* The stop signals taken (Ctrl-C, SIGTERM, the contract's SIGUSR1): 1 once one came. */
int scv_train_stop_requested(void);
/* Rank 0 writes the checkpoint (and flushes the metrics) at training seconds wall; every
 * rank agrees on the outcome. */
int scv_train_save_checkpoint(run_ctx *c, double wall, scv_err *err);
/* Rank 0: opens c->p->metrics_path with mode ("w" or "a") and writes the job line. */
int scv_train_open_metrics(run_ctx *c, const char *mode, scv_err *err);

/* ---- train_elastic.c ---- */
/* The elastic mode's loop over the commands of c->p->elastic_control, after setup: every
 * process of the job, until a stop or a failure; res is the last segment's. */
int scv_train_elastic_main(run_ctx *c, scv_train_result *res, scv_err *err);

/* ---- train_segment.c ---- */
/* One segment: trains from the current state under the stopping rules of c->p, then
 * evaluates, flushes the metrics and checkpoints as the rules say; res describes it. */
int scv_train_segment(run_ctx *c, scv_train_result *res, scv_err *err);
/* Accuracy and mean loss on n test samples from sample `from` on (train_eval.c), timed and
 * counted in res; with a role ("periodic" | "confirm") rank 0 writes an eval metrics line
 * with train_loss, the period-mean training loss over period_samples samples (NaN: none). */
int scv_train_eval_on(run_ctx *c, int64_t from, int64_t n, const char *role, double train_loss, double period_samples,
                      double *acc, double *loss, scv_train_result *res, scv_err *err);

/* ---- train_metrics.c: rank 0's metrics lines (nothing when c->metrics is NULL) ---- */
/* One iteration's line ("type":"iter"): what train_segment measured (the rest is c's). */
typedef struct scv_tm_iter {
    int64_t batch, local_batch;   /* the global batch, this rank's */
    int64_t epoch_samples;        /* samples of the epoch the step took (data options) */
    double t_compute, t_comm, t_iter, loss, train_accuracy, lr;
    double local_mean, gsq;       /* the noise statistics */
    int stats, exact;             /* statistics on; gsq is the batch's mean gradient's */
    const float *t_workers;       /* each worker's compute seconds (NULL: not measured) */
    int batches;                  /* write each worker's batch (c->counts) */
    int stream;                   /* streaming: */
    double stream_clock, stream_wait; /* the stream time the data was taken at, the wait */
    int home;                     /* each worker's home-class samples (c->home_acc) */
    int data;                     /* non-IID or injection on: the skew, epoch_samples */
    double sample_bytes;          /* a sample's bytes (injection's cost) */
    const scv_exchange_step *xs;  /* the exchange's step (NULL: the dense allreduce) */
    int ada;                      /* AdaScale: its step's gain and the noise scale it stands on */
    double ada_gain, ada_noise_scale;
} scv_tm_iter;

/* A periodic or confirming evaluation's line ("type":"eval"). */
typedef struct scv_tm_eval {
    const char *role;             /* "periodic" | "confirm" */
    double accuracy, loss;
    double train_loss, train_loss_samples; /* the period-mean training loss (NaN: none) */
    int full;                     /* on the whole test set */
    int64_t n, from;              /* n samples from test sample `from` on (wrapping) */
    double seconds;
} scv_tm_eval;

/* The target window's verdict ("type":"target"). */
typedef struct scv_tm_target {
    int by_loss;
    double target;
    int window, from_history;
    double mean;
    int subset;                   /* periodic evaluations on a subset of n samples */
    int64_t n;
    double full_accuracy;         /* the confirmation's (NaN: none) */
    double confirm_tol;
    int reached;
    const char *how, *confirm;    /* the reached_by text's two parts */
} scv_tm_target;

void scv_tm_note(run_ctx *c);
int scv_tm_flush(run_ctx *c, scv_err *err);
int scv_tm_job(run_ctx *c);
void scv_tm_latency(run_ctx *c, double seconds);
void scv_tm_iter_line(run_ctx *c, const scv_tm_iter *l);
void scv_tm_eval_line(run_ctx *c, const scv_tm_eval *l);
void scv_tm_target_line(run_ctx *c, const scv_tm_target *l);
void scv_tm_straggler(run_ctx *c, const scv_straggler_event *ev);
void scv_tm_unabsorbed(run_ctx *c, const scv_straggler_event *ev);
void scv_tm_rebalance(run_ctx *c);

#endif
