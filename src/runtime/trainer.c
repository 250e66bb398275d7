/*
 * trainer.c - synchronous data-parallel SGD on the ranks of a scv_comm.
 *
 * Every iteration: each rank k takes its slice b_k of the global batch B from the epoch's
 * sample order, computes (1/B) * sum of its samples' gradients, and one allreduce sums the
 * gradient together with a few piggybacked scalars (this rank's squared local-gradient norm,
 * loss, correct count, the Ctrl-C and the profiling stop flags). The optimiser step then also
 * accumulates the squared norm of the averaged gradient, so the two noise statistics cost no
 * extra pass and no extra collective:
 *   grad_sqnorm_local_mean = mean over ranks with b_k > 0 of |g_k|^2,  g_k = (1/b_k) sum_k grad
 *   grad_sqnorm_global     = |g|^2,  g = (1/B) sum over the global batch
 * SGD with momentum mu and weight decay wd (PyTorch's form): v = mu v + g + wd w; w -= lr v.
 * Streaming (ScaDLES, p->stream): b_k is what worker k's stream delivered since its last step
 * (src/train/stream.c), planned by every rank from rank 0's stream clock of the previous
 * allreduce, after sleeping until every buffer holds b_min; B is then sum_k b_k for the step.
 * Rank 0 writes metrics (JSONL), checkpoints and the progress line.
 * Target: periodic evaluations (the first eval_subset test samples, or all) fill a window of
 * the last target_window accuracies (prefilled by target_history); when its mean reaches the
 * target, a subset's verdict is confirmed on the whole test set (>= target - confirm_tol).
 * A loss target (target_loss) uses the same window over the period-mean training loss: the
 * sample-weighted mean of the minibatch losses since the previous periodic evaluation
 * (written as "train_loss" in the evaluation's metrics line); reached when the window's mean
 * is <= the target. No test-set confirmation: it is the training loss.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* flock */
#include "scv.h"
#include "comm.h"
#include "exchange.h"
#include "train_rules.h"
#include "../core/util.h"
#include "../io/json_out.h"
#include "../train/ckpt.h"
#include "../train/dnn.h"
#include "../train/sched.h"
#include "../train/straggler.h"
#include "../train/dynbatch.h"
#include "../train/stream.h"
#include "../train/noniid.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scalars after the gradient in its allreduce; with the straggler rule or dynamic
 * batching on, K more follow: worker k's compute seconds at X_COUNT + k (the others add 0);
 * with dynamic batching, K more: the new shares of B from rank 0 (X_REBALANCE set), used
 * from the next iteration on by every rank alike. Streaming: rank 0's stream clock (seconds
 * since the segment started, read as it enters the allreduce) as two floats, hi = (float)tau
 * and lo = (float)(tau - hi) (the others add 0, which leaves them exact): every rank plans
 * the next step's batches from the same tau = hi + lo, to about 1e-14 relative. */
enum { X_LOCAL_SQ, X_HAS, X_LOSS, X_CORRECT, X_STOP, X_TIME_STABLE, X_STRAGGLER, X_REBALANCE, X_STREAM_HI,
       X_STREAM_LO, X_COUNT };
_Static_assert(X_COUNT + 2 * SCV_MAX_WORKERS + SCV_EXCHANGE_CTL_FIXED + SCV_MAX_WORKERS <= SCV_GRAD_EXTRA,
               "the allreduce's scalars (and the exchange's, scv_exchange_ctl) outgrow SCV_GRAD_EXTRA");

/* The one piece of file-scope mutable state: a signal handler gets no context argument, so
 * SIGINT/SIGTERM can only reach the loop through a flag. scv_train_run() clears it, installs
 * the handler for its own duration and restores the previous one. Everything else a run
 * needs lives in its run_ctx.
 *
 * The stop signals (SIGINT, SIGTERM, SIGUSR1) are also blocked in the training thread, and in
 * the threads it starts (MPI's, OpenMP's), for the run's duration: stop_requested() takes a
 * pending one where the loop reads the flag. A handler must not run on this thread while
 * oneDNN 2.x's f32 GEMM kernel runs: for K above 84 (LeNet's 120 -> 84 layer) it points the
 * stack pointer into a malloc'ed workspace, so the signal frame lands in the heap and the
 * workspace's free() aborts ("corrupted size vs. prev_size"; oneDNN issue #4845, fixed in
 * 3.11.2, not in Debian 12's 2.7). Seen once in CI on a SIGINT to a K=2 LeNet run. */
static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }

static sigset_t stop_signals(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT), sigaddset(&s, SIGTERM), sigaddset(&s, SIGUSR1);
    return s;
}

/* g_stop, after taking the stop signals pending on this thread (blocked: see above). */
static int stop_requested(void)
{
    const sigset_t s = stop_signals();
    const struct timespec now = {0, 0};
    while (sigtimedwait(&s, NULL, &now) > 0) g_stop = 1;
    return g_stop;
}

/* Squared norm in double with 8 independent partial sums: no serial dependency chain, so
 * the loop vectorises and costs about one pass over memory. */
static double sqnorm(const float *restrict g, size_t n)
{
    double acc[8] = {0};
    size_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int l = 0; l < 8; l++) acc[l] += (double)g[j + l] * g[j + l];
    for (; j < n; j++) acc[0] += (double)g[j] * g[j];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* SGD with momentum mu and weight decay wd over n parameters; returns |g|^2 when with_norm.
 * Inlined twice (with_norm constant), so the variant without the norm carries no trace of
 * it: that is how bench/bench.py overhead measures the statistics' cost. */
static inline double sgd_step(float *restrict w, float *restrict mom, const float *restrict g,
                              size_t n, float lr, float mu, float wd, int with_norm)
{
    double acc[8] = {0};
    size_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int l = 0; l < 8; l++) {
            float gj = g[j + l];
            if (with_norm) acc[l] += (double)gj * gj;
            mom[j + l] = mu * mom[j + l] + gj + wd * w[j + l];
            w[j + l] -= lr * mom[j + l];
        }
    for (; j < n; j++) {
        float gj = g[j];
        if (with_norm) acc[0] += (double)gj * gj;
        mom[j] = mu * mom[j] + gj + wd * w[j];
        w[j] -= lr * mom[j];
    }
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

scv_train_params scv_train_params_default(void)
{
    scv_train_params p;
    memset(&p, 0, sizeof p);
    p.model = "lenet";
    p.hidden = "256,128";
    p.dataset = "fashion-mnist";
    p.workers = 1;
    p.threads = 1;
    p.batch = 64;
    p.lr = 0.05;
    p.momentum = 0.9;
    p.weight_decay = 5e-4;
    p.base_batch = 64;
    p.lr_gamma = 0.1;
    p.seed = 1;
    p.target_window = 1;
    p.target_confirm_tol = 0.005;
    p.dynbatch = scv_dynbatch_policy_default();
    p.stream_policy = scv_stream_policy_default();
    p.comm = scv_comm_opts_default();
    return p;
}

int scv_train_params_check(const scv_train_params *p, scv_err *err)
{
    static const char *const models[] = {"logreg", "mlp", "lenet", "resnet"};
    int known = 0;
    for (int i = 0; i < 4; i++) known |= p->model && !strcmp(p->model, models[i]);
    if (!known)
        return scv_err_set(err, SCV_EINVAL,
                           "--model '%s': unknown model (expected logreg, mlp, lenet or resnet)",
                           p->model ? p->model : "");
    if (!strcmp(p->model, "mlp")) {
        scv_model_spec spec;
        int rc = scv_model_parse_hidden(p->hidden, &spec, err);
        if (rc) return rc;
    }
    const scv_straggler_rule *sr = &p->straggler;
    if (!(sr->fraction >= 0 && sr->fraction < 1))
        return scv_err_set(err, SCV_EINVAL, "--straggler-fraction %g: must be in [0, 1)", sr->fraction);
    if (sr->fraction > 0 && (!(sr->alpha > 0 && sr->alpha <= 1) || !(sr->window_s >= 0) || sr->min_iterations < 1))
        return scv_err_set(err, SCV_EINVAL,
                           "straggler rule: alpha %g must be in (0, 1], window %g s >= 0, min_iterations %d >= 1",
                           sr->alpha, sr->window_s, sr->min_iterations);
    if (p->workers < 1 || p->workers > SCV_MAX_WORKERS)
        return scv_err_set(err, SCV_EINVAL, "--workers %d: must be in 1..%d", p->workers, SCV_MAX_WORKERS);
    if (p->batch < 1) return scv_err_set(err, SCV_EINVAL, "--batch %d: must be positive", p->batch);
    if (p->batch < p->workers)
        return scv_err_set(err, SCV_EINVAL,
                           "--batch %d is smaller than --workers %d: every worker needs at least "
                           "one sample", p->batch, p->workers);
    if (p->threads < 1 || p->threads > 256)
        return scv_err_set(err, SCV_EINVAL, "--threads %d: must be in 1..256", p->threads);
    if (!(p->lr > 0)) return scv_err_set(err, SCV_EINVAL, "--lr must be positive");
    if (p->momentum < 0 || p->momentum >= 1)
        return scv_err_set(err, SCV_EINVAL, "--momentum must be in [0,1)");
    if (p->weight_decay < 0) return scv_err_set(err, SCV_EINVAL, "--weight-decay must be >= 0");
    if (p->base_batch < 1) return scv_err_set(err, SCV_EINVAL, "--base-batch must be positive");
    if (p->epochs < 0 || p->iterations < 0 || p->eval_every < 0 || p->checkpoint_every < 0 ||
        p->eval_every_epochs < 0)
        return scv_err_set(err, SCV_EINVAL, "--epochs, --iterations, --eval-every and "
                                            "--checkpoint-every must not be negative");
    if (p->target_accuracy < 0 || p->target_accuracy > 1)
        return scv_err_set(err, SCV_EINVAL, "--target-accuracy %g: must be in (0,1]",
                           p->target_accuracy);
    if (!(p->target_loss >= 0) || !isfinite(p->target_loss))
        return scv_err_set(err, SCV_EINVAL, "--target-loss %g: must be a finite loss > 0", p->target_loss);
    if (p->target_loss > 0 && p->target_accuracy > 0)
        return scv_err_set(err, SCV_EINVAL, "--target-accuracy and --target-loss: give one target, not both");
    if (!p->elastic_control && p->epochs == 0 && p->iterations == 0 && p->target_accuracy == 0 &&
        p->target_loss == 0)
        return scv_err_set(err, SCV_EINVAL, "no stopping rule: give --epochs, --iterations, --target-accuracy "
                                            "or --target-loss");
    if (p->lr_decay == SCV_LR_STEP && !(p->lr_step_epochs > 0))
        return scv_err_set(err, SCV_EINVAL, "--lr-decay step needs --lr-step-epochs > 0");
    if (p->lr_decay == SCV_LR_COSINE && !(p->lr_horizon_epochs > 0) && !(p->epochs > 0))
        return scv_err_set(err, SCV_EINVAL, "--lr-decay cosine needs --epochs or --lr-horizon");
    if (p->resume && !p->checkpoint_dir)
        return scv_err_set(err, SCV_EINVAL, "--resume needs --checkpoint DIR");
    if (p->eval_subset < 0)
        return scv_err_set(err, SCV_EINVAL, "--eval-subset %lld: must be >= 0 (0 = the whole test set)",
                           (long long)p->eval_subset);
    if (p->target_window < 1 || p->target_window > SCV_TARGET_WINDOW_MAX)
        return scv_err_set(err, SCV_EINVAL, "--target-window %d: must be in 1..%d", p->target_window,
                           SCV_TARGET_WINDOW_MAX);
    if (!(p->target_confirm_tol >= 0 && p->target_confirm_tol < 1))
        return scv_err_set(err, SCV_EINVAL, "--target-confirm-tol %g: must be in [0,1)",
                           p->target_confirm_tol);
    if (p->n_target_history < 0 || (p->n_target_history > 0 && !p->target_history))
        return scv_err_set(err, SCV_EINVAL, "--target-history: no values");
    for (int i = 0; i < p->n_target_history; i++)
        if (!(p->target_history[i] >= 0 && (p->target_history[i] <= 1 || p->target_loss > 0)) ||
            !isfinite(p->target_history[i]))
            return scv_err_set(err, SCV_EINVAL, "--target-history: value %d (%g) must be %s", i + 1,
                               p->target_history[i], p->target_loss > 0 ? "a finite loss >= 0" : "in [0,1]");
    if (p->dynamic_batching && !(p->dynbatch.min_share > 0 && p->dynbatch.min_share < 0.5))
        return scv_err_set(err, SCV_EINVAL, "--min-share %g: must be in (0, 0.5)", p->dynbatch.min_share);
    if (p->stream) {
        const scv_stream_policy *sp = &p->stream_policy;
        if (p->dynamic_batching)
            return scv_err_set(err, SCV_EINVAL, "--stream-rate: not with --dynamic-batching (the streams set each "
                                                "worker's batch)");
        if (p->rank_weights)
            return scv_err_set(err, SCV_EINVAL, "--stream-rate: not with --batch-split (the streams set each "
                                                "worker's batch)");
        if (p->elastic_control)
            return scv_err_set(err, SCV_EINVAL, "--stream-rate: not with --elastic-control (streaming is a "
                                                "`scavenger train` mode only)");
        if (scv_stream_rates_workers(p->stream) != p->workers)
            return scv_err_set(err, SCV_EINVAL, "--stream-rate has %d rates for --workers %d (one per worker)",
                               scv_stream_rates_workers(p->stream), p->workers);
        if (!sp->full_batch && !(sp->b_min >= 1 && sp->b_min <= sp->b_max && sp->b_max <= (1 << 24)))
            return scv_err_set(err, SCV_EINVAL, "--stream-bounds %lld,%lld: expected 1 <= MIN <= MAX <= %d",
                               (long long)sp->b_min, (long long)sp->b_max, 1 << 24);
        if (sp->buffer != SCV_STREAM_TRUNCATE && sp->buffer != SCV_STREAM_PERSIST)
            return scv_err_set(err, SCV_EINVAL, "--stream-buffer: expected truncate or persist");
    }
    if (!(p->noniid_skew >= 0 && p->noniid_skew <= 1))
        return scv_err_set(err, SCV_EINVAL, "--stream-noniid %g: must be in [0, 1] (0 = IID)", p->noniid_skew);
    if (p->inject_alpha != 0 || p->inject_beta != 0) {
        if (!(p->inject_alpha > 0 && p->inject_alpha <= 1 && p->inject_beta > 0 && p->inject_beta <= 1))
            return scv_err_set(err, SCV_EINVAL, "--stream-inject %g,%g: ALPHA and BETA must be in (0, 1]",
                               p->inject_alpha, p->inject_beta);
    }
    if ((p->noniid_skew > 0 || p->inject_alpha > 0) && p->elastic_control)
        return scv_err_set(err, SCV_EINVAL, "%s: not with --elastic-control (a `scavenger train` option only)",
                           p->noniid_skew > 0 ? "--stream-noniid" : "--stream-inject");
    if (p->rank_weights) {
        /* finite, positive and within SCV_RANK_WEIGHT_RATIO of each other: a share of 1e400
         * (inf) or 1e-300 would make every other rank's share NaN or zero */
        double lo = INFINITY, hi = 0;
        for (int k = 0; k < p->workers; k++) {
            double v = p->rank_weights[k];
            if (!(v > 0) || !isfinite(v))
                return scv_err_set(err, SCV_EINVAL,
                                   "--batch-split: weight %d (%g) must be positive and finite", k + 1, v);
            lo = fmin(lo, v), hi = fmax(hi, v);
        }
        if (hi / lo > SCV_RANK_WEIGHT_RATIO)
            return scv_err_set(err, SCV_EINVAL,
                               "--batch-split: weights %g and %g are more than %g apart", lo, hi,
                               SCV_RANK_WEIGHT_RATIO);
    }
    return SCV_OK;
}

int scv_train_result_json(const scv_train_result *r, char *buf, size_t cap)
{
    char bs[32] = "null", acc[32] = "null", loss[32] = "null", tl[32] = "null"; /* JSON has no NaN */
    char by[sizeof r->reached_by + 2] = "null", st[64] = "null";
    if (!strcmp(r->stopped_by, "straggler"))
        snprintf(st, sizeof st, "{\"worker\":%d,\"ratio\":%.4g}", r->straggler, r->straggler_ratio);
    if (r->reached_by[0]) snprintf(by, sizeof by, "\"%s\"", r->reached_by);
    if (isfinite(r->b_simple)) snprintf(bs, sizeof bs, "%.6g", r->b_simple);
    if (isfinite(r->test_accuracy)) snprintf(acc, sizeof acc, "%.6g", r->test_accuracy);
    if (isfinite(r->test_loss)) snprintf(loss, sizeof loss, "%.6g", r->test_loss);
    if (isfinite(r->train_loss)) snprintf(tl, sizeof tl, "%.6g", r->train_loss); /* none: 0 iterations */
    int len = snprintf(buf, cap,
                    "{\"model\":\"%s\",\"workers\":%d,\"batch\":%d,\"iterations\":%lld,"
                    "\"iterations_run\":%lld,\"samples_seen\":%lld,\"epochs\":%.6g,\"samples_per_sec\":%.6g,"
                    "\"test_accuracy\":%s,\"test_loss\":%s,\"train_loss\":%s,"
                    "\"wall_seconds\":%.6g,\"t_compute_mean\":%.6g,\"t_comm_mean\":%.6g,"
                    "\"t_iter_mean\":%.6g,\"reached_target\":%s,\"interrupted\":%s,"
                    "\"stopped_by\":\"%s\",\"b_simple\":%s,\"accuracy_set\":\"%s\","
                    "\"reached_by\":%s,\"eval_seconds\":%.6g,\"evals_subset\":%d,\"evals_full\":%d,"
                    "\"straggler\":%s,\"stream_wait_seconds\":%.6g,\"stream_dropped\":%lld}",
                    r->model, r->workers, r->batch, (long long)r->iterations,
                    (long long)r->iterations_run, (long long)r->samples_seen, r->epochs, r->samples_per_sec, acc, loss, tl, r->wall_seconds, r->t_compute_mean,
                    r->t_comm_mean, r->t_iter_mean, r->reached_target ? "true" : "false",
                    r->interrupted ? "true" : "false", r->stopped_by, bs,
                    r->accuracy_full ? "full" : "subset", by, r->eval_seconds, r->evals_subset,
                    r->evals_full, st, r->stream_wait_seconds, (long long)r->stream_dropped);
    /* dynamic batching: the controller's adjustments and the shares it ended with, inside the object */
    if (r->n_shares > 0 && len > 0 && (size_t)len < cap) {
        len += snprintf(buf + len - 1, cap - (size_t)len + 1, ",\"rebalances\":%d,\"shares\":[", r->rebalances) - 1;
        for (int k = 0; k < r->n_shares && (size_t)len < cap; k++)
            len += snprintf(buf + len, cap - (size_t)len, "%s%.5f", k ? "," : "", r->shares[k]);
        if ((size_t)len < cap) len += snprintf(buf + len, cap - (size_t)len, "]}");
    }
    /* non-IID streams and data injection (src/train/noniid.c), inside the object: the skew,
     * the copies injection trained on (and what sending them would cost), and each worker's
     * home-class share of its batches when measured (streaming or a data option on) */
    if (len > 0 && (size_t)len < cap) {
        char hm[32] = "null";
        if (r->n_home > 0 && isfinite(r->home_fraction_mean)) snprintf(hm, sizeof hm, "%.6g", r->home_fraction_mean);
        len += snprintf(buf + len - 1, cap - (size_t)len + 1, /* over the closing brace */
                        ",\"noniid_skew\":%.6g,\"injected_samples\":%lld,\"injected_bytes\":%.0f,"
                        "\"home_fraction_mean\":%s,\"home_fraction\":%s", r->noniid_skew,
                        (long long)r->injected_samples, r->injected_bytes, hm, r->n_home > 0 ? "[" : "null}") - 1;
        for (int k = 0; k < r->n_home && (size_t)len < cap; k++)
            len += snprintf(buf + len, cap - (size_t)len, "%s%.5f", k ? "," : "", r->home_fraction[k]);
        if (r->n_home > 0 && (size_t)len < cap) len += snprintf(buf + len, cap - (size_t)len, "]}");
    }
    return len;
}

/* ---- state of one run ---- */
typedef struct {
    const scv_train_params *p;
    scv_comm *comm;
    int rank, K;
    scv_dataset *train, *test;
    scv_model *model;
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
    scv_straggler_event events[SCV_MAX_STRAGGLER_EVENTS]; /* rank 0: found since the last */
    int n_events;       /*   command (elastic mode reports them) */
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
    scv_comm_opts xc_opts;
    int xc_K, xc_rank;
} run_ctx;

/* Accuracy and mean loss on the first n samples of the test set (n = test->n: all of it);
 * each rank evaluates a contiguous share. */
static int evaluate(run_ctx *c, int64_t n, double *acc, double *loss, scv_err *err)
{
    int64_t lo = n * c->rank / c->K, hi = n * (c->rank + 1) / c->K;
    size_t d = (size_t)c->test->c * c->test->h * c->test->w;
    double v[2] = {0, 0};
    int64_t correct = 0;
    int rc = SCV_OK;
    for (int64_t i = lo; i < hi && !rc; i += 256) {
        int m = (int)(hi - i < 256 ? hi - i : 256);
        rc = scv_model_eval(c->model, c->test->x + (size_t)i * d, c->test->y + i, m, &v[0], &correct,
                            err);
    }
    rc = scv_comm_agree(c->comm, rc, err);
    if (rc) return rc;
    v[1] = (double)correct;
    if ((rc = scv_comm_allreduce_f64(c->comm, v, 2, err))) return rc;
    *loss = v[0] / (double)n;
    *acc = v[1] / (double)n;
    return SCV_OK;
}

/* Rank 0, after a metrics line: keeps the errno of the first failed write (metrics_flush,
 * which reports it, runs later, when errno says nothing any more). */
static void metrics_note(run_ctx *c)
{
    if (c->metrics && ferror(c->metrics) && !c->metrics_errno) c->metrics_errno = errno ? errno : EIO;
}

/* The latency probe, at a segment's start: LATENCY_PROBES allreduces of one float (after one
 * that waits for the last rank to arrive); rank 0 writes their median as a "latency" line.
 * A small collective's time is its latency term alone (log2 K rounds of alpha in Open MPI's
 * recursive doubling): the planner prices the sparse collectives' messages with it, where the
 * dense fit's alpha also holds what a large message costs beyond its bytes. About 1 ms. */
#define LATENCY_PROBES 9
static int latency_probe(run_ctx *c, scv_err *err)
{
    double t[LATENCY_PROBES];
    float x = 0;
    int rc = scv_comm_allreduce_f32(c->comm, &x, 1, err);
    for (int i = 0; !rc && i < LATENCY_PROBES; i++) {
        double t0 = scv_now();
        rc = scv_comm_allreduce_f32(c->comm, &x, 1, err);
        t[i] = scv_now() - t0;
    }
    if (!rc && c->rank == 0 && c->metrics) {
        fprintf(c->metrics, "{\"type\":\"latency\",\"iter\":%llu,\"workers\":%d,\"seconds\":%.6e}\n",
                (unsigned long long)c->st.iteration, c->K, scv_median(t, LATENCY_PROBES));
        metrics_note(c);
    }
    return rc;
}

/* evaluate() on the first n test samples, timed and counted in res; with a role
 * ("periodic" | "confirm") rank 0 writes an eval metrics line. window_mean: the target
 * window's mean after this evaluation (NaN: none, left out). */
/* train_loss: the period-mean training loss written with a periodic evaluation, over
 * period_samples samples (NaN: none) */
static int eval_on(run_ctx *c, int64_t n, const char *role, double train_loss, double period_samples,
                   double *acc, double *loss, scv_train_result *res, scv_err *err)
{
    double t0 = scv_now();
    int rc = evaluate(c, n, acc, loss, err);
    if (rc) return rc;
    double dt = scv_now() - t0;
    int full = n >= c->test->n;
    res->eval_seconds += dt;
    if (full) res->evals_full++;
    else res->evals_subset++;
    if (c->metrics && role) {
        char tl[80] = "null";
        if (isfinite(train_loss))
            snprintf(tl, sizeof tl, "%.6g,\"train_loss_samples\":%.0f", train_loss, period_samples);
        fprintf(c->metrics,
                "{\"type\":\"eval\",\"iter\":%llu,\"epoch_progress\":%.6f,"
                "\"test_accuracy\":%.6f,\"test_loss\":%.6f,\"train_loss\":%s,\"wall_seconds\":%.3f,"
                "\"set\":\"%s\",\"n\":%lld,\"role\":\"%s\",\"eval_seconds\":%.6f}\n",
                (unsigned long long)c->st.iteration,
                (double)c->st.samples_seen / (double)c->train->n, *acc, *loss, tl,
                c->wall_before + scv_now() - c->t_start, full ? "full" : "subset", (long long)n,
                role, dt);
        metrics_note(c);
    }
    return SCV_OK;
}

/* Rank 0: pushes the metrics written so far to the file and reports a failed write (a full
 * disk, say) naming the file. Checked where the ranks agree anyway: at checkpoints and at
 * the end (a write error is sticky, so none is missed). */
static int metrics_flush(run_ctx *c, scv_err *err)
{
    if (!c->metrics) return SCV_OK;
    errno = 0;
    if (fflush(c->metrics) != 0 || ferror(c->metrics)) {
        int e = errno ? errno : c->metrics_errno; /* a line that failed before: its errno */
        c->metrics_errno = 0;
        return scv_err_set(err, SCV_EIO, "%s: cannot write metrics: %s", c->p->metrics_path,
                           e ? strerror(e) : "write error");
    }
    return SCV_OK;
}

static int save_checkpoint(run_ctx *c, double wall, scv_err *err)
{
    int rc = SCV_OK;
    if (c->rank == 0) rc = metrics_flush(c, err);
    if (c->rank == 0 && !rc) {
        c->st.wall_seconds = c->wall_before + wall;
        c->st.workers = c->K;
        c->st.batch = c->p->batch;
        rc = scv_ckpt_save(c->p->checkpoint_dir, &c->st, scv_model_params(c->model), c->mom,
                           scv_model_nparams(c->model), err);
        if (!rc && c->p->contract_state) { /* the trainer contract's progress file, after the state */
            char text[256];
            snprintf(text, sizeof text, "{\"iteration\":%llu,\"samples_seen\":%llu,\"epoch\":%llu,\"position\":%llu}\n",
                     (unsigned long long)c->st.iteration, (unsigned long long)c->st.samples_seen,
                     (unsigned long long)c->st.epoch, (unsigned long long)c->st.pos);
            char path[4200];
            snprintf(path, sizeof path, "%s/scavenger-state.json", c->p->checkpoint_dir);
            scv_iov part = {.p = text, .n = strlen(text)};
            rc = scv_write_atomic(path, &part, 1, err);
        }
    }
    return scv_comm_agree(c->comm, rc, err);
}

/* Rank 0 reads the checkpoint; all ranks receive its state. */
static int resume(run_ctx *c, scv_err *err)
{
    size_t n = scv_model_nparams(c->model);
    int rc = SCV_OK;
    if (c->rank == 0) {
        float *p = NULL, *m = NULL;
        size_t cn = 0;
        scv_ckpt_state st;
        rc = scv_ckpt_load(c->p->checkpoint_dir, &st, &p, &m, &cn, err);
        if (!rc && (strcmp(st.arch, scv_model_arch(c->model)) != 0 || cn != n))
            rc = scv_err_set(err, SCV_EINVAL,
                             "%s: checkpoint holds model %s (%zu parameters), this run builds %s "
                             "(%zu)", c->p->checkpoint_dir, st.arch, cn, scv_model_arch(c->model), n);
        if (!rc && st.n_train != (uint64_t)c->train->n)
            rc = scv_err_set(err, SCV_EINVAL,
                             "%s: checkpoint was written for a training set of %llu samples, "
                             "this dataset has %lld", c->p->checkpoint_dir,
                             (unsigned long long)st.n_train, (long long)c->train->n);
        if (!rc && st.seed != c->p->seed)
            rc = scv_err_set(err, SCV_EINVAL,
                             "%s: checkpoint used --seed %llu; resume with the same seed",
                             c->p->checkpoint_dir, (unsigned long long)st.seed);
        if (!rc) {
            memcpy(scv_model_params(c->model), p, n * sizeof(float));
            memcpy(c->mom, m, n * sizeof(float));
            c->st = st;
        }
        free(p);
        free(m);
    }
    if ((rc = scv_comm_agree(c->comm, rc, err))) return rc;
    if ((rc = scv_comm_bcast(c->comm, &c->st, sizeof c->st, 0, err))) return rc;
    if ((rc = scv_comm_bcast(c->comm, scv_model_params(c->model), n * sizeof(float), 0, err)))
        return rc;
    rc = scv_comm_bcast(c->comm, c->mom, n * sizeof(float), 0, err);
    c->wall_before = c->st.wall_seconds;
    return rc;
}

static void fmt_eta(double s, char *buf, size_t cap)
{
    if (!(s >= 0) || s > 1e7) snprintf(buf, cap, "?");
    else if (s >= 3600) snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
    else snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

#define LOCK_WAIT_TRIES 100 /* x 50 ms: how long a job waits for a checkpoint directory in use */

/* Rank 0: takes the checkpoint directory's lock for the whole run (released when the
 * process exits or in teardown), so a second job on the same directory is refused. */
static int lock_checkpoint_dir(run_ctx *c, scv_err *err)
{
    const char *dir = c->p->checkpoint_dir;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return scv_err_set(err, SCV_EIO, "%s: cannot create checkpoint directory: %s", dir,
                           strerror(errno));
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, SCV_CKPT_LOCK_FILE);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return scv_err_set(err, SCV_EIO, "%s: cannot open lock file: %s", path, strerror(errno));
    /* a job restarted after a failure may start while the failed one's last process is still
     * leaving (mpirun ends the ranks with SIGTERM, and they stop at an iteration boundary):
     * wait for the lock a little before refusing */
    struct timespec pause = {0, 50000000L};
    for (int i = 0; i < LOCK_WAIT_TRIES && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK; i++)
        nanosleep(&pause, NULL);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            return scv_err_set(err, SCV_EINVAL,
                               "--checkpoint %s: the directory is in use by another training job (%s is "
                               "locked; waited %d s); wait for it or use another directory", dir, path,
                               LOCK_WAIT_TRIES / 20);
        return scv_err_set(err, SCV_EIO, "%s: cannot lock: %s", path, strerror(e));
    }
    c->lock_fd = fd;
    return SCV_OK;
}

/* Rank 0: opens c->p->metrics_path (line-buffered: a driver reads the measurements while
 * the job runs) and writes the job line: what the planner needs to know about the job,
 * once per invocation (per segment in elastic mode). */
static int open_metrics(run_ctx *c, const char *mode, scv_err *err)
{
    const scv_train_params *p = c->p;
    if (c->metrics) fclose(c->metrics);
    if (!(c->metrics = fopen(p->metrics_path, mode)))
        return scv_err_set(err, SCV_EIO, "%s: cannot open metrics file: %s", p->metrics_path, strerror(errno));
    setvbuf(c->metrics, NULL, _IOLBF, 0);
    char vmj[256];
    size_t d = (size_t)c->train->c * c->train->h * c->train->w;
    if (fprintf(c->metrics,
                "{\"type\":\"job\",\"model\":\"%s\",\"arch\":\"%s\",\"params\":%zu,"
                "\"act_bytes\":%zu,\"input_floats\":%zu,\"n_train\":%lld,\"vm\":%s,"
                "\"threads\":%d,\"workers\":%d,\"batch\":%d}\n",
                p->model, scv_model_arch(c->model), scv_model_nparams(c->model),
                4 * scv_model_act_floats(c->model), d, (long long)c->train->n,
                scv_json_strbuf(vmj, sizeof vmj, p->vm_type), p->threads, c->K, p->batch) < 0)
        return scv_err_set(err, SCV_EIO, "%s: cannot write metrics: %s", p->metrics_path, strerror(errno));
    return SCV_OK;
}

static int setup(run_ctx *c, scv_err *err)
{
    const scv_train_params *p = c->p;
    int rc = scv_comm_new(&c->comm, err);
    if (rc) return rc;
    c->rank = scv_comm_rank(c->comm);
    c->K = scv_comm_size(c->comm);
    const int joined = scv_comm_joined(c->comm); /* spawned into an elastic job: parked */
    if (!joined && c->K != p->workers)
        rc = scv_err_set(err, SCV_EINVAL, "--workers %d but %d ranks were started", p->workers, c->K);
    if (!rc && c->rank == 0 && p->checkpoint_dir) rc = lock_checkpoint_dir(c, err);
    if (!rc) rc = scv_dataset_load(p->dataset, 0, &c->train, err);
    if (!rc) rc = scv_dataset_load(p->dataset, 1, &c->test, err);
    if (!rc && (c->test->c != c->train->c || c->test->h != c->train->h ||
                c->test->w != c->train->w || c->test->n_classes != c->train->n_classes))
        rc = scv_err_set(err, SCV_EINVAL,
                         "--dataset %s: test samples are %dx%dx%d, training samples %dx%dx%d",
                         p->dataset, c->test->c, c->test->h, c->test->w, c->train->c,
                         c->train->h, c->train->w);
    if (!rc && (c->train->n < p->batch))
        rc = scv_err_set(err, SCV_EINVAL, "--batch %d is larger than the training set (%lld)",
                         p->batch, (long long)c->train->n);
    if (!rc) {
        scv_model_spec spec = {.name = p->model,
                               .in_c = c->train->c,
                               .in_h = c->train->h,
                               .in_w = c->train->w,
                               .n_classes = c->train->n_classes};
        if (strcmp(p->model, "mlp") == 0) rc = scv_model_parse_hidden(p->hidden, &spec, err);
        if (!rc) rc = scv_model_new(&spec, &c->model, err);
    }
    if ((rc = scv_comm_agree(c->comm, rc, err))) return rc;
    size_t n = scv_model_nparams(c->model), d = (size_t)c->train->c * c->train->h * c->train->w;
    /* a worker's slice: at most B, or with streaming at most b_max (and the training set) */
    int cap = p->batch;
    if (p->stream && !p->stream_policy.full_batch) {
        int64_t bm = p->stream_policy.b_max < c->train->n ? p->stream_policy.b_max : c->train->n;
        if (bm > cap) cap = (int)bm;
    }
    c->mom = calloc(n, sizeof(float));
    c->perm = malloc(sizeof(int32_t) * (size_t)c->train->n);
    c->bx = malloc(sizeof(float) * d * (size_t)cap);
    c->by = malloc((size_t)cap);
    c->counts = malloc(sizeof(int64_t) * (size_t)(c->K > 1 ? c->K : 1));
    c->offsets = malloc(sizeof(int64_t) * (size_t)(c->K > 1 ? c->K : 1));
    c->batch_cap = cap;
    if (!c->mom || !c->perm || !c->bx || !c->by || !c->counts || !c->offsets)
        rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    if ((rc = scv_comm_agree(c->comm, rc, err))) return rc;
    scv_model_init(c->model, p->seed);
    snprintf(c->st.arch, sizeof c->st.arch, "%s", scv_model_arch(c->model));
    c->st.seed = p->seed;
    c->st.n_train = (uint64_t)c->train->n;
    if (p->resume && !joined && (rc = resume(c, err))) return rc;
    if (c->rank == 0 && p->metrics_path) rc = open_metrics(c, p->resume ? "a" : "w", err);
    return scv_comm_agree(c->comm, rc, err);
}

static void teardown(run_ctx *c)
{
    if (c->metrics) fclose(c->metrics); /* flushed and checked by metrics_flush */
    scv_dataset_free(c->train);
    scv_dataset_free(c->test);
    scv_model_free(c->model);
    free(c->mom);
    free(c->perm);
    free(c->bx);
    free(c->by);
    free(c->counts);
    free(c->offsets);
    free(c->strag);
    free(c->dyn);
    free(c->stream);
    free(c->inj);
    free(c->data_scratch);
    free(c->home_acc);
    scv_exchange_free(c->xc);
    scv_comm_free(c->comm);
    if (c->lock_fd >= 0) close(c->lock_fd); /* releases the lock */
    c->lock_fd = -1;
}

/* Rank 0, after an iteration: feeds the workers' compute seconds (t[k], as reduced) to the
 * straggler rule; a worker it finds is written to the metrics, kept as an event and flagged
 * for the next allreduce. */
/* Rank 0: worker f was found slow (ev): kept as an event and flagged for the next
 * allreduce (negative: replace it, in elastic mode when it is not worker 0). */
static void straggler_found(run_ctx *c, const scv_straggler_event *ev)
{
    c->strag_flag = c->strag_stop && ev->worker != 0 ? -(ev->worker + 1) : ev->worker + 1;
    if (c->n_events == SCV_MAX_STRAGGLER_EVENTS) c->n_events--; /* full: the newest replaces the last */
    c->strag_event = c->n_events;
    c->events[c->n_events++] = *ev;
}

static void straggler_watch(run_ctx *c, const float *t, double dt)
{
    double tk[SCV_MAX_WORKERS];
    for (int k = 0; k < c->K; k++) tk[k] = t[k];
    int f = scv_straggler_update(c->strag, tk, c->counts, dt);
    if (f < 0) return;
    scv_straggler_event ev = {.iteration = (int64_t)c->st.iteration, .worker = f, .ratio = c->strag->ratio[f]};
    snprintf(ev.note, sizeof ev.note, "below %.2f of the median for %.1f s (%d iterations)",
             c->strag->rule.fraction, c->strag->below_s[f], c->strag->below_n[f]);
    straggler_found(c, &ev);
    if (c->metrics) {
        fprintf(c->metrics,
                "{\"type\":\"straggler\",\"iter\":%llu,\"worker\":%d,\"ratio\":%.4f,\"fraction\":%.3g,"
                "\"below_s\":%.3f,\"below_iterations\":%d}\n",
                (unsigned long long)ev.iteration, f, ev.ratio, c->strag->rule.fraction, c->strag->below_s[f],
                c->strag->below_n[f]);
        metrics_note(c);
    }
}

/* Rank 0, dynamic batching: the worker the controller has just found it cannot absorb (its
 * balanced share under the floor) is reported like a straggler; its ratio is its throughput
 * over the median worker's. */
static void unabsorbed_found(run_ctx *c)
{
    const scv_dynbatch_state *d = c->dyn;
    const int f = d->unabsorbed;
    scv_straggler_event ev = {.iteration = (int64_t)c->st.iteration, .worker = f, .ratio = d->unabsorbed_ratio};
    snprintf(ev.note, sizeof ev.note,
             "dynamic batching cannot absorb it: balanced share %.4f under the floor %.2f; at the floor it computes "
             "%.2fx as long as the others", d->balanced[f], d->pol.min_share, d->floor_slowdown);
    straggler_found(c, &ev);
    if (c->metrics) {
        fprintf(c->metrics,
                "{\"type\":\"unabsorbed\",\"iter\":%llu,\"worker\":%d,\"ratio\":%.4f,\"balanced_share\":%.5f,"
                "\"min_share\":%.3g,\"floor_slowdown\":%.4f}\n",
                (unsigned long long)ev.iteration, f, ev.ratio, d->balanced[f], d->pol.min_share, d->floor_slowdown);
        metrics_note(c);
    }
}

/* The same exchange settings: the options a segment command or the job can set. */
static int same_comm(const scv_comm_opts *a, const scv_comm_opts *b)
{
    return a->compress == b->compress && a->cf == b->cf && a->collective == b->collective &&
           a->var_root == b->var_root && a->dense_steps == b->dense_steps && a->selsync == b->selsync &&
           a->sel.delta == b->sel.delta && a->sel.lssr == b->sel.lssr && a->gravac.eps == b->gravac.eps;
}

/* The segment's exchange in c->xc: the previous segment's goes on when every rank kept one for
 * the same K, rank and options (its residual, the unsent gradient, is not dropped; SelSync's
 * history and GraVAC's factor go on), else every rank starts a new one (a rank that is new,
 * a spare in a straggler's place, has none: then all do). Collective: every rank calls it. */
static int segment_exchange(run_ctx *c, const scv_comm_opts *o, size_t np, scv_err *err)
{
    float fresh = !(c->xc && c->xc_K == c->K && c->xc_rank == c->rank && same_comm(&c->xc_opts, o));
    int rc = scv_comm_allreduce_f32(c->comm, &fresh, 1, err);
    if (rc || fresh == 0) return rc;
    scv_exchange_free(c->xc);
    c->xc = NULL;
    rc = scv_exchange_new(o, c->K, c->rank, np, &c->xc, err);
    if ((rc = scv_comm_agree(c->comm, rc, err))) { /* every rank, or none: a rank short of memory
                                                     must not hang the others */
        scv_exchange_free(c->xc);
        c->xc = NULL;
        return rc;
    }
    c->xc_opts = *o, c->xc_K = c->K, c->xc_rank = c->rank;
    return SCV_OK;
}

/* Streaming: sleeps until scv_now() >= until, in slices of at most 50 ms so that Ctrl-C
 * (g_stop) cuts a long wait short (the step then goes ahead with its planned batches and the
 * stop travels in its allreduce). */
static void sleep_until(double until)
{
    for (;;) {
        double left = until - scv_now();
        if (!(left > 0) || stop_requested()) return;
        struct timespec ts = {0, (long)((left < 0.05 ? left : 0.05) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* Streaming, before a step: the batches of every worker from the stream buffers at the
 * stream time tau (rank 0's clock of the last allreduce: every rank plans alike), waiting
 * (sleeping) until every buffer holds b_min; clamped at the epoch's end (`left` samples) in
 * proportion, what is not taken staying in the buffers. Sets c->counts, c->offsets, *start
 * (the stream time the step takes its data at) and returns the global batch, or -1 when a
 * stream never fills. The caller consumes the samples from the buffers (scv_stream_consume
 * with c->own: with data injection a worker takes only its own samples from its stream). */
static int64_t stream_batches(run_ctx *c, double tau, double t_origin, int64_t left, double *start)
{
    const int K = c->K;
    *start = scv_stream_plan(c->stream, tau, c->counts);
    if (!isfinite(*start)) return -1;
    sleep_until(t_origin + *start); /* every rank by its own clock: they start together */
    int64_t sum = 0;
    for (int k = 0; k < K; k++) sum += c->counts[k];
    if (sum > left) {
        double w[SCV_MAX_WORKERS];
        for (int k = 0; k < K; k++) w[k] = (double)c->counts[k];
        scv_split_batch(left, K, w, c->counts, c->offsets); /* c_k <= b_k: largest remainders */
        sum = left;
    } else {
        int64_t off = 0;
        for (int k = 0; k < K; off += c->counts[k], k++) c->offsets[k] = off;
    }
    return sum;
}

/* Non-IID streams and data injection (src/train/noniid.c states the rules), before a step
 * whose workers compute c->counts[k] samples (the global batch, sum of them) from the epoch
 * order at c->st.pos: plans the injection (worker k's own samples c->own[k], the rest of its
 * batch copies of the chosen workers' own samples), re-orders the step's window of
 * sum c->own[k] samples in c->perm so that each worker's own slice is skewed towards its home
 * classes, and returns that window's size: the samples of the epoch this step takes (the
 * global batch without injection). Every rank computes the same from (seed, epoch,
 * iteration): no communication. A window is re-ordered only once, as the step takes it, so
 * every sample is still taken once per epoch. The epoch's last step (tail: it takes all that
 * is left) injects nothing, so the epoch ends there instead of in ever smaller steps that
 * each take a 1 / (1 + alpha beta K) part of what is left. */
static int64_t data_plan(run_ctx *c, int tail)
{
    const scv_train_params *p = c->p;
    const uint64_t key = scv_hash64(p->seed ^ scv_hash64(c->st.epoch ^ scv_hash64(c->st.iteration + 0x6e6f6e6969ULL)));
    c->own = c->counts;
    if (c->inj) {
        scv_inject_make(c->inj, c->counts, c->K, tail ? 0 : p->inject_alpha, p->inject_beta, key ^ 0x696e6a656374ULL);
        c->own = c->inj->own;
    }
    int64_t U = 0;
    for (int k = 0; k < c->K; k++) c->own_off[k] = U, U += c->own[k];
    if (p->noniid_skew > 0) {
        int32_t *win = c->perm + c->st.pos;
        scv_noniid_assign(win, U, c->train->y, c->train->n_classes, c->K, c->own, p->noniid_skew, key, win,
                          c->data_scratch);
    }
    return U;
}

/* Worker k's local batch of this step (after data_plan): its own slice of the window, then
 * the copies it receives (the first samples of each chosen worker's slice); idx gets its
 * c->counts[k] sample indices, the count is returned. */
static int64_t worker_batch(const run_ctx *c, int k, int32_t *idx)
{
    return scv_worker_batch(c->perm + c->st.pos, c->own, c->own_off, c->inj, k, idx);
}

/* One segment: trains from the current state (c->st, the model, the optimiser) under the
 * stopping rules of c->p, then evaluates, flushes the metrics and checkpoints as the rules
 * say; res describes the segment. The whole job when not elastic. */
static int train_segment(run_ctx *c, scv_train_result *res, scv_err *err)
{
    const scv_train_params *p = c->p;
    int rc = SCV_OK, time_stop = 0;
    c->time_stable = 0;
    const int64_t N = c->train->n, B = p->batch;
    int64_t eval_every = p->eval_every;
    if (p->eval_every_epochs > 0 && !p->eval_every) {
        eval_every = (int64_t)(p->eval_every_epochs * (double)N / (double)B);
        if (eval_every < 1) eval_every = 1;
    }
    const size_t np = scv_model_nparams(c->model);
    const size_t d = (size_t)c->train->c * c->train->h * c->train->w;
    float *w = scv_model_params(c->model), *g = scv_model_grads(c->model);
    uint64_t order_epoch = 0; /* the epoch c->perm holds, when have_order */
    int have_order = 0;
    int64_t run_iters = 0, run_samples = 0;
    double t_start = scv_now(), sum_comp = 0, sum_comm = 0, sum_iter = 0, last_print = 0;
    double acc = NAN, tloss = NAN, loss_ema = NAN;
    double period_loss = 0, period_samples = 0; /* the training loss since the last periodic point */
    const int target_on = p->target_accuracy > 0 || p->target_loss > 0;
    int evaluated_at_end = 0, acc_full = 1;
    c->t_start = t_start;
    /* periodic evaluations: the first sub_n test samples (all of them when 0 or too many) */
    const int64_t n_test = c->test->n;
    const int64_t sub_n = p->eval_subset > 0 && p->eval_subset < n_test ? p->eval_subset : n_test;
    const int subset_on = sub_n < n_test;
    /* the stopping rules: the target window (the last W periodic accuracies, history
     * first), the noise and profiling rules, the iteration cap (train_rules.c) */
    scv_stoprule rules;
    scv_train_rules_init(&rules, p, c->K);
    const int W = rules.W;
    int oom = 0;
    /* stragglers: every rank adds its compute seconds to the allreduce, rank 0 applies the
     * rule and flags the worker it finds in the next one, so every rank sees it together */
    /* under dynamic batching a slow worker is rebalanced, and reported only when the shares
     * cannot absorb it (unabsorbed_found), not by the throughput rule */
    const int dyn = p->dynamic_batching && c->K > 1, watch = p->straggler.fraction > 0 && c->K > 1 && !dyn;
    const int per_worker = watch || dyn; /* the workers' compute seconds ride in the allreduce */
    const size_t nx = np + X_COUNT + (per_worker ? (size_t)c->K : 0) + (dyn ? (size_t)c->K : 0);
    c->strag_flag = 0, c->dyn_send = 0;
    /* streaming: the buffers start empty at stream time 0 (this segment's start); stream_tau
     * is rank 0's clock from the last allreduce, at which the next step is planned */
    const int stream_on = p->stream != NULL;
    double stream_tau = 0, stream_wait = 0;
    if (stream_on && !c->stream && !(c->stream = malloc(sizeof *c->stream))) oom = 1;
    if (stream_on && !oom) scv_stream_init(c->stream, p->stream, &p->stream_policy, B);
    /* non-IID streams and data injection (data_plan); the home-class shares are measured
     * with them and with streaming (rank 0 counts every worker's batch) */
    const int inject_on = p->inject_alpha > 0 && p->inject_beta > 0, data_on = p->noniid_skew > 0 || inject_on;
    const int home_on = data_on || stream_on;
    int64_t injected = 0; /* copies trained on in this segment */
    const double sample_bytes = (double)(d * sizeof(float) + 1); /* a sample as the trainer holds it, and its label */
    if (inject_on && !c->inj && !(c->inj = malloc(sizeof *c->inj))) oom = 1;
    if (!inject_on) free(c->inj), c->inj = NULL;
    if (home_on && !c->data_scratch && !(c->data_scratch = malloc(sizeof(int32_t) * (size_t)N))) oom = 1;
    if (home_on && c->rank == 0 && !c->home_acc && !(c->home_acc = malloc(sizeof(int64_t) * 3 * SCV_MAX_WORKERS)))
        oom = 1;
    if (home_on && c->home_acc) memset(c->home_acc, 0, sizeof(int64_t) * 3 * SCV_MAX_WORKERS);
    c->own = c->counts;
    /* --eval-every-epochs with streaming or injection: every that many samples (the batches
     * vary, or a step takes fewer than B samples of the epoch) */
    const double eval_period = (stream_on || inject_on) && p->eval_every_epochs > 0 && !p->eval_every ? p->eval_every_epochs * (double)N : 0;
    if (watch && c->rank == 0 && !c->strag && !(c->strag = malloc(sizeof *c->strag))) oom = 1;
    if (dyn && c->rank == 0 && !c->dyn && !(c->dyn = malloc(sizeof *c->dyn))) oom = 1;
    /* the shares: the previous segment's at the same K (dynamic batching goes on), else the
     * parameters' split */
    if (!dyn || c->n_shares != c->K) {
        c->n_shares = 0;
        if (dyn) {
            for (int k = 0; k < c->K; k++) c->shares[k] = p->rank_weights ? p->rank_weights[k] : 1;
            c->n_shares = c->K;
        }
    }
    if (oom) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    /* communication efficiency: the exchange replaces the gradient's allreduce (its residual
     * and its controllers go on from the previous segment where they can) */
    scv_exchange *xc = NULL;
    scv_exchange_step xs = {0};
    double x_tprev = 0, x_bprev = 0;
    if (scv_comm_opts_on(&p->comm)) {
        if ((rc = segment_exchange(c, &p->comm, np, err))) return rc;
        xc = c->xc;
    }
    if (watch && c->rank == 0) scv_straggler_init(c->strag, &p->straggler, c->K);
    if (dyn && c->rank == 0) scv_dynbatch_init(c->dyn, &p->dynbatch, c->K, B, c->shares);
    if (c->K > 1 && (rc = latency_probe(c, err))) return rc;
    res->b_simple = NAN;
    snprintf(res->stopped_by, sizeof res->stopped_by, "%s", "max_epochs");

    for (;;) {
        /* stopping rules checked before the step */
        if (time_stop) break;
        if (scv_stoprule_capped(&rules, (int64_t)c->st.iteration)) {
            snprintf(res->stopped_by, sizeof res->stopped_by, "iterations");
            break;
        }
        if (p->epochs > 0 && (double)c->st.samples_seen >= p->epochs * (double)N - 0.5) {
            snprintf(res->stopped_by, sizeof res->stopped_by, "epochs");
            break;
        }
        if (target_on && !(p->epochs > 0) && !p->iterations &&
            (double)c->st.samples_seen >= 200.0 * (double)N) break; /* safety bound: 200 epochs */
        if (c->st.pos >= (uint64_t)N) {
            c->st.epoch++;
            c->st.pos = 0;
        }
        if (!have_order || c->st.epoch != order_epoch) {
            scv_epoch_order(p->seed, c->st.epoch, N, c->perm);
            order_epoch = c->st.epoch, have_order = 1;
        }
        double t0 = scv_now(), s_start = 0;
        int64_t Bcur = N - (int64_t)c->st.pos < B ? N - (int64_t)c->st.pos : B;
        if (stream_on) {
            /* deterministic on every rank (the same tau, the same buffers): they all stop alike */
            if ((Bcur = stream_batches(c, stream_tau, t_start, N - (int64_t)c->st.pos, &s_start)) < 0) {
                rc = scv_err_set(err, SCV_EINVAL, "--stream-rate: at stream time %.6g s a worker's stream is "
                                                  "too slow ever to deliver --stream-bounds' minimum; training "
                                                  "cannot go on", stream_tau);
                break;
            }
        } else {
            scv_split_batch(Bcur, c->K, c->n_shares ? c->shares : p->rank_weights, c->counts, c->offsets);
        }
        double tw = scv_now(); /* the data is there: this worker's own work starts */
        /* the samples of the epoch this step takes: Bcur, fewer with injection (its copies
         * are trained on as well: the global batch stays Bcur, each worker's c->counts[k]) */
        int64_t Bdata = home_on ? data_plan(c, (int64_t)c->st.pos + Bcur >= N) : Bcur;
        if (stream_on) scv_stream_consume(c->stream, s_start, c->own); /* each worker's own samples */
        int64_t bk = c->counts[c->rank], off = (int64_t)c->st.pos + c->offsets[c->rank];
        const int32_t *idx = c->perm + off;
        if (data_on) idx = c->data_scratch, bk = worker_batch(c, c->rank, c->data_scratch);
        for (int64_t i = 0; i < bk; i++) {
            int32_t s = idx[i];
            memcpy(c->bx + (size_t)i * d, c->train->x + (size_t)s * d, d * sizeof(float));
            c->by[i] = c->train->y[s];
        }
        double loss_sum = 0;
        int64_t correct = 0;
        double t1 = scv_now();
        rc = scv_model_train_step(c->model, c->bx, c->by, (int)bk, 1.0f / (float)Bcur, &loss_sum,
                                  &correct, err);
        double tc = scv_now(); /* this worker's own compute ends (the agreement waits for the others) */
        if ((rc = scv_comm_agree(c->comm, rc, err))) break;
        double t2 = scv_now();
        /* |g_k|^2 of this rank's mean gradient: the buffer holds (b_k/B) g_k */
        double sq = p->no_grad_stats && !scv_comm_opts_on(&p->comm) ? 0 : sqnorm(g, np); /* the exchange uses it */
        double unscale = bk > 0 ? (double)Bcur / (double)bk : 0;
        g[np + X_LOCAL_SQ] = (float)(sq * unscale * unscale);
        g[np + X_HAS] = bk > 0;
        g[np + X_LOSS] = (float)loss_sum;
        g[np + X_CORRECT] = (float)correct;
        g[np + X_STOP] = (float)stop_requested();
        g[np + X_TIME_STABLE] = (float)c->time_stable;
        g[np + X_STRAGGLER] = (float)c->strag_flag;
        g[np + X_REBALANCE] = (float)c->dyn_send;
        {
            double clk = stream_on && c->rank == 0 ? scv_now() - t_start : 0;
            float hi = (float)clk;
            g[np + X_STREAM_HI] = hi;
            g[np + X_STREAM_LO] = (float)(clk - (double)hi);
        }
        if (per_worker) {
            memset(g + np + X_COUNT, 0, sizeof(float) * (size_t)c->K * (dyn ? 2 : 1));
            g[np + X_COUNT + c->rank] = (float)(tc - tw + scv_now() - t2);
            for (int k = 0; c->dyn_send && k < c->K; k++) g[np + X_COUNT + c->K + k] = (float)c->dyn->share[k];
        }
        if ((rc = xc ? scv_exchange_run(xc, c->comm, g, nx - np, unscale, sq, x_tprev, x_bprev, &xs, err)
                     : scv_comm_allreduce_f32(c->comm, g, nx, err)))
            break;
        double t3 = scv_now();
        if (stream_on) { /* the next step's stream time: rank 0's, never before this step's */
            double tau = (double)g[np + X_STREAM_HI] + (double)g[np + X_STREAM_LO];
            stream_tau = tau > s_start ? tau : s_start;
            stream_wait += tw - t0;
        }
        /* SGD step, with |g|^2 of the averaged gradient in the same pass */
        float lr = (float)scv_lr_at(p, Bcur, (int64_t)c->st.samples_seen, N);
        float mu = (float)p->momentum, wd = (float)p->weight_decay;
        const int exact = !xc || xs.dense; /* g is the batch's mean gradient */
        double gsq = p->no_grad_stats || !exact ? sgd_step(w, c->mom, g, np, lr, mu, wd, 0)
                                                : sgd_step(w, c->mom, g, np, lr, mu, wd, 1);
        double t_avg = 0; /* SelSync's average of the replicas (parameters and momenta): communication too */
        if (xc && xs.average_params) {
            if ((rc = scv_exchange_average(xc, c->comm, w, c->mom, &t_avg, err))) break;
            xs.t_exchange += t_avg, xs.bytes += 8.0 * (double)np;
        }
        double t4 = scv_now();
        x_tprev = t4 - t0, x_bprev = (double)Bcur;
        if (home_on && c->home_acc) { /* rank 0: each worker's home-class samples (outside t_iter) */
            int64_t *hs = c->home_acc, *ht = hs + SCV_MAX_WORKERS, *hk = ht + SCV_MAX_WORKERS;
            for (int k = 0; k < c->K; k++) {
                int64_t n = worker_batch(c, k, c->data_scratch);
                hk[k] = 0;
                for (int64_t i = 0; i < n; i++)
                    hk[k] += scv_noniid_home(c->train->y[c->data_scratch[i]], k, c->K, c->train->n_classes);
                hs[k] += hk[k], ht[k] += n;
            }
        }
        if (c->inj) injected += c->inj->injected;
        c->st.iteration++;
        c->st.pos += (uint64_t)Bdata; /* the epoch moves by its samples taken, copies not counted */
        c->st.samples_seen += (uint64_t)Bdata;
        run_iters++;
        run_samples += Bcur;
        double loss = g[np + X_LOSS] / (double)Bcur;
        double local_mean = g[np + X_HAS] > 0 ? g[np + X_LOCAL_SQ] / g[np + X_HAS] : 0;
        if (!isfinite(loss)) {
            rc = scv_err_set(err, SCV_ERANGE,
                             "training diverged at iteration %llu (loss is not finite); lower --lr",
                             (unsigned long long)c->st.iteration);
            break;
        }
        loss_ema = isnan(loss_ema) ? loss : 0.95 * loss_ema + 0.05 * loss;
        period_loss += g[np + X_LOSS], period_samples += (double)Bcur;
        sum_comp += t2 - t1;
        sum_comm += t3 - t2 + t_avg;
        sum_iter += t4 - t0;
        /* a straggler found in the previous iteration; a negative flag: replace it */
        const int flagged = (int)fabsf(g[np + X_STRAGGLER]) - 1, strag_end = g[np + X_STRAGGLER] < 0;
        c->strag_flag = 0;
        if (watch && c->rank == 0 && flagged < 0) straggler_watch(c, g + np + X_COUNT, t4 - t0);
        if (dyn && g[np + X_REBALANCE] > 0) /* rank 0's new shares: from the next iteration */
            for (int k = 0; k < c->K; k++) c->shares[k] = g[np + X_COUNT + c->K + k];
        c->dyn_send = 0;
        if (dyn && c->rank == 0 && !(g[np + X_REBALANCE] > 0)) { /* the controller (one change in flight) */
            double tk[SCV_MAX_WORKERS];
            for (int k = 0; k < c->K; k++) tk[k] = g[np + X_COUNT + k];
            const int changed = scv_dynbatch_update(c->dyn, tk, c->counts);
            if (c->dyn->unabsorbed >= 0) unabsorbed_found(c);
            if (changed) {
                c->dyn_send = 1;
                if (c->metrics) {
                    fprintf(c->metrics, "{\"type\":\"rebalance\",\"iter\":%llu,\"shares\":[",
                            (unsigned long long)c->st.iteration);
                    for (int k = 0; k < c->K; k++) fprintf(c->metrics, "%s%.5f", k ? "," : "", c->dyn->share[k]);
                    fputs("],\"seconds_per_sample\":[", c->metrics);
                    for (int k = 0; k < c->K; k++) fprintf(c->metrics, "%s%.4e", k ? "," : "", c->dyn->tau[k]);
                    fputs("]}\n", c->metrics);
                    metrics_note(c);
                }
            }
        }
        if (c->metrics) {
            char nl[32] = "null", ng[32] = "null"; /* null when the statistics are off */
            if (!p->no_grad_stats) {
                snprintf(nl, sizeof nl, "%.6e", local_mean);
                if (exact) snprintf(ng, sizeof ng, "%.6e", gsq); /* compressed, local: unknown */
            }
            fprintf(c->metrics,
                    "{\"type\":\"iter\",\"iter\":%llu,\"epoch\":%llu,\"epoch_progress\":%.6f,"
                    "\"workers\":%d,\"batch\":%lld,\"local_batch\":%lld,\"t_compute\":%.6e,"
                    "\"t_comm\":%.6e,\"t_iter\":%.6e,\"loss\":%.6g,\"train_accuracy\":%.4f,"
                    "\"lr\":%.6g,\"grad_sqnorm_local_mean\":%s,\"grad_sqnorm_global\":%s,"
                    "\"samples_seen\":%llu,\"ts\":%.6f",
                    (unsigned long long)c->st.iteration, (unsigned long long)c->st.epoch,
                    (double)c->st.samples_seen / (double)N, c->K, (long long)Bcur, (long long)bk,
                    t2 - t1, t3 - t2 + t_avg, t4 - t0, loss, g[np + X_CORRECT] / (double)Bcur, lr, nl, ng,
                    (unsigned long long)c->st.samples_seen, scv_wall_clock());
            if (per_worker && c->K <= 64) { /* each worker's compute seconds */
                fputs(",\"t_compute_workers\":[", c->metrics);
                for (int k = 0; k < c->K; k++) fprintf(c->metrics, "%s%.4e", k ? "," : "", g[np + X_COUNT + k]);
                fputc(']', c->metrics);
            }
            if ((per_worker || stream_on || data_on) && c->K <= 64) { /* ... and samples */
                fputs(",\"local_batches\":[", c->metrics);
                for (int k = 0; k < c->K; k++) fprintf(c->metrics, "%s%lld", k ? "," : "", (long long)c->counts[k]);
                fputc(']', c->metrics);
            }
            if (stream_on) { /* the stream time the data was taken at, this step's wait (in
                              * t_iter), each buffer after the step and its drops so far */
                fprintf(c->metrics, ",\"stream_clock\":%.6f,\"stream_wait\":%.6e", s_start, tw - t0);
                if (c->K <= 64) {
                    fputs(",\"stream_buffers\":[", c->metrics);
                    for (int k = 0; k < c->K; k++)
                        fprintf(c->metrics, "%s%lld", k ? "," : "", (long long)scv_stream_level(c->stream, k, s_start, NULL));
                    fputs("],\"stream_dropped\":[", c->metrics);
                    for (int k = 0; k < c->K; k++) fprintf(c->metrics, "%s%lld", k ? "," : "", (long long)c->stream->dropped[k]);
                    fputc(']', c->metrics);
                }
            }
            if (home_on && c->home_acc && c->K <= 64) { /* each worker's home-class samples in its batch */
                fputs(",\"home_samples\":[", c->metrics);
                for (int k = 0; k < c->K; k++)
                    fprintf(c->metrics, "%s%lld", k ? "," : "", (long long)c->home_acc[2 * SCV_MAX_WORKERS + k]);
                fputc(']', c->metrics);
            }
            if (data_on) /* the skew, and the samples of the epoch the step took (fewer than the
                          * batch with injection) */
                fprintf(c->metrics, ",\"noniid_skew\":%.6g,\"epoch_samples\":%lld", p->noniid_skew, (long long)Bdata);
            if (c->inj) { /* the copies the workers trained on, what sending them would cost, and
                           * each worker's own samples */
                fprintf(c->metrics, ",\"injected\":%lld,\"injected_bytes\":%.0f", (long long)c->inj->injected,
                        (double)c->inj->injected * sample_bytes);
                if (c->K <= 64) {
                    fputs(",\"own_batches\":[", c->metrics);
                    for (int k = 0; k < c->K; k++) fprintf(c->metrics, "%s%lld", k ? "," : "", (long long)c->inj->own[k]);
                    fputc(']', c->metrics);
                }
            }
            if (xc) { /* the exchange: what travelled, how, and what it cost */
                char gain[32] = "null";
                if (isfinite(xs.gain)) snprintf(gain, sizeof gain, "%.5f", xs.gain);
                else if (isfinite(xs.probe_gain)) snprintf(gain, sizeof gain, "%.5f", xs.probe_gain);
                fprintf(c->metrics, ",\"cf\":%.6g,\"gain\":%s,\"collective\":\"%s\",\"bytes_sent\":%.0f,"
                        "\"t_exchange\":%.6e,\"t_compress\":%.6e",
                        xs.cf, gain, xs.collective, xs.bytes, xs.t_exchange, xs.t_compress);
                if (p->comm.selsync) fprintf(c->metrics, ",\"sync\":%s,\"lssr\":%.5f", xs.local ? "false" : "true", xs.lssr);
            }
            fputs("}\n", c->metrics);
            metrics_note(c);
        }
        int stop_now = g[np + X_STOP] > 0;
        if (!stop_now && g[np + X_TIME_STABLE] > 0) { /* rank 0's iteration-time rule fired */
            snprintf(res->stopped_by, sizeof res->stopped_by, "time_stable");
            time_stop = 1;
        }
        int epoch_end = c->st.pos >= (uint64_t)N;
        int last = (p->iterations && (int64_t)c->st.iteration >= p->iterations) ||
                   (p->epochs > 0 && (double)c->st.samples_seen >= p->epochs * (double)N - 0.5);
        int do_eval = eval_period > 0 ? floor((double)c->st.samples_seen / eval_period) >
                                            floor((double)(c->st.samples_seen - (uint64_t)Bdata) / eval_period)
                      : eval_every ? (int64_t)c->st.iteration % eval_every == 0
                                   : epoch_end;
        evaluated_at_end = 0;
        if ((do_eval && target_on) || (do_eval && !stop_now)) {
            double ploss = period_samples > 0 ? period_loss / period_samples : NAN, pn = period_samples;
            period_loss = period_samples = 0;
            if (xc && (rc = scv_exchange_sync(xc, c->comm, w, c->mom, err))) break; /* one model is evaluated */
            if ((rc = eval_on(c, sub_n, "periodic", ploss, pn, &acc, &tloss, res, err))) break;
            evaluated_at_end = acc_full = !subset_on;
            const int by_loss = p->target_loss > 0;
            const double target = by_loss ? p->target_loss : p->target_accuracy;
            /* the window decides once it holds W values (every rank sees the same reduced
             * accuracies, so every rank decides the same) */
            if (scv_train_rules_eval(&rules, p, acc, ploss) == SCV_STOP_TARGET) {
                const double mean = rules.mean;
                const int n_hist = rules.n_from_history;
                {
                    char how[128], hist[48] = "", conf[96] = "";
                    if (n_hist)
                        snprintf(hist, sizeof hist, ", %d from --target-history", n_hist);
                    if (by_loss)
                        snprintf(how, sizeof how, "mean of last %d period-mean training losses%s %.4f <= %.4f",
                                 W, hist, mean, target);
                    else if (W == 1)
                        snprintf(how, sizeof how, "%s eval (n=%lld) %.4f >= %.4f",
                                 subset_on ? "subset" : "full test", (long long)sub_n, mean, target);
                    else
                        snprintf(how, sizeof how, "mean of last %d %s evals (n=%lld%s) %.4f >= %.4f",
                                 W, subset_on ? "subset" : "full test", (long long)sub_n, hist, mean,
                                 target);
                    int ok = 1;
                    double facc = NAN;
                    if (subset_on && !by_loss) { /* confirm on the whole test set */
                        if ((rc = eval_on(c, n_test, "confirm", NAN, 0, &facc, &tloss, res, err))) break;
                        acc = facc;
                        evaluated_at_end = acc_full = 1;
                        double floor_ = p->target_accuracy - p->target_confirm_tol;
                        ok = facc >= floor_;
                        snprintf(conf, sizeof conf, ", full test (n=%lld) %.4f %s %.4f (tol %g)",
                                 (long long)n_test, facc, ok ? ">=" : "<", floor_,
                                 p->target_confirm_tol);
                    }
                    if (ok) {
                        res->reached_target = 1;
                        snprintf(res->reached_by, sizeof res->reached_by, "%s%s", how, conf);
                    }
                    if (c->metrics) {
                        char fa[32] = "null";
                        if (isfinite(facc)) snprintf(fa, sizeof fa, "%.6f", facc);
                        fprintf(c->metrics,
                                "{\"type\":\"target\",\"iter\":%llu,\"epoch_progress\":%.6f,"
                                "\"metric\":\"%s\",\"target\":%.6f,\"window\":%d,\"window_from_history\":%d,"
                                "\"window_mean\":%.6f,\"set\":\"%s\",\"n\":%lld,"
                                "\"full_accuracy\":%s,\"confirm_tol\":%g,\"reached\":%s,"
                                "\"reached_by\":\"%s%s%s\"}\n",
                                (unsigned long long)c->st.iteration,
                                (double)c->st.samples_seen / (double)N,
                                by_loss ? "train_loss" : "test_accuracy", target, W,
                                n_hist, mean, subset_on ? "subset" : "full", (long long)sub_n, fa,
                                p->target_confirm_tol, ok ? "true" : "false", how, conf,
                                ok ? "" : ": not reached, training continues");
                        metrics_note(c);
                    }
                }
            }
        }
        int ckpt_now = p->checkpoint_dir && p->checkpoint_every &&
                       (int64_t)c->st.iteration % p->checkpoint_every == 0;
        if (ckpt_now && xc && (rc = scv_exchange_sync(xc, c->comm, w, c->mom, err))) break;
        if (ckpt_now && (rc = save_checkpoint(c, scv_now() - t_start, err))) break;
        if (c->rank == 0 && p->progress) {
            double now = scv_now();
            if (now - last_print > 0.5 || last || stop_now || res->reached_target) {
                double el = now - t_start, rate = el > 0 ? (double)run_iters / el : 0, left = -1;
                if (p->iterations) left = (double)(p->iterations - (int64_t)c->st.iteration) / rate;
                if (p->epochs > 0) {
                    double l2 = (p->epochs * (double)N - (double)c->st.samples_seen) / (double)B / rate;
                    if (left < 0 || l2 < left) left = l2;
                }
                char eta[32];
                fmt_eta(left, eta, sizeof eta);
                fprintf(stderr,
                        "\r\033[Kiter %llu | epoch %.2f | loss %.4f | test acc %s%.4f | "
                        "%.0f samples/s | ETA %s",
                        (unsigned long long)c->st.iteration, (double)c->st.samples_seen / (double)N,
                        loss_ema, isnan(acc) ? "-" : "", isnan(acc) ? 0.0 : acc,
                        el > 0 ? (double)run_samples / el : 0.0, eta);
                fflush(stderr);
                last_print = now;
            }
        }
        if (stop_now) {
            res->interrupted = 1;
            snprintf(res->stopped_by, sizeof res->stopped_by, "interrupted");
            break;
        }
        if (res->reached_target) {
            snprintf(res->stopped_by, sizeof res->stopped_by, "target");
            break;
        }
        if (strag_end && !last && !time_stop) { /* the segment goes on without the straggler */
            snprintf(res->stopped_by, sizeof res->stopped_by, "straggler");
            res->straggler = flagged;
            res->straggler_ratio = c->rank == 0 ? c->events[c->strag_event].ratio : NAN;
            break;
        }
        /* noise stable: B_simple of two consecutive windows agree (every rank sees the same
         * reduced numbers, so every rank stops at the same iteration); iteration time known
         * well enough: rank 0 decides on its t_iter (set by the slowest rank through the
         * allreduce); the decision travels in the next iteration's allreduce, so all ranks
         * stop after the same iteration */
        const scv_stop_verdict v = scv_train_rules_iter(&rules, p, Bcur, local_mean, gsq, exact, t4 - t0);
        res->b_simple = rules.b_simple;
        if (v == SCV_STOP_NOISE) {
            snprintf(res->stopped_by, sizeof res->stopped_by, "noise_stable");
            break;
        }
        if (v == SCV_STOP_TIME && c->rank == 0) c->time_stable = 1;
    }
    if (c->rank == 0 && p->progress) fputc('\n', stderr);
    if (!rc && xc) rc = scv_exchange_sync(xc, c->comm, w, c->mom, err); /* what is evaluated and saved */
    if (rc && xc) { /* a failed segment: the ranks' exchanges may not agree any more */
        scv_exchange_free(c->xc);
        c->xc = NULL;
    }
    double wall = scv_now() - t_start;
    /* the whole test set at the end: unless told not to, except where the run ends (the
     * target reached, the epoch bound) and the last evaluation was not on the whole set */
    int run_ends = res->reached_target || !strcmp(res->stopped_by, "epochs");
    if (!rc && !res->interrupted && (!p->no_final_eval ? !evaluated_at_end : run_ends && (!acc_full || isnan(acc)))) {
        rc = eval_on(c, n_test, NULL, NAN, 0, &acc, &tloss, res, err); /* the whole test set */
        acc_full = 1;
    }
    /* an elastic job continues a segment with it */
    c->n_window = scv_stoprule_window(&rules, c->window, SCV_TARGET_WINDOW_MAX);
    if (!rc) rc = scv_comm_agree(c->comm, c->rank == 0 ? metrics_flush(c, err) : SCV_OK, err);
    if (!rc && p->checkpoint_dir && (!p->no_end_checkpoint || res->interrupted))
        rc = save_checkpoint(c, wall, err);
    if (!rc && res->interrupted)
        rc = scv_err_set(err, SCV_EINTR, "interrupted at iteration %llu%s%s",
                         (unsigned long long)c->st.iteration,
                         p->checkpoint_dir ? "; checkpoint saved in " : "",
                         p->checkpoint_dir ? p->checkpoint_dir : "");
    snprintf(res->model, sizeof res->model, "%s", p->model);
    res->workers = c->K;
    res->batch = p->batch;
    res->iterations = (int64_t)c->st.iteration;
    res->iterations_run = run_iters;
    res->epochs = c->train ? (double)c->st.samples_seen / (double)c->train->n : 0;
    res->samples_seen = (int64_t)c->st.samples_seen;
    res->wall_seconds = c->wall_before + wall;
    c->wall_before += wall; /* the next segment (elastic mode) continues the clock */
    res->samples_per_sec = sum_iter > 0 ? (double)run_samples / sum_iter : 0;
    res->test_accuracy = acc;
    res->test_loss = tloss;
    res->accuracy_full = acc_full;
    res->train_loss = loss_ema;
    res->stream_wait_seconds = stream_wait;
    if (dyn) { /* every rank holds the shares in use; rank 0 the controller's count */
        res->rebalances = c->rank == 0 ? c->dyn->adjustments : 0;
        res->n_shares = c->K;
        memcpy(res->shares, c->shares, sizeof(double) * (size_t)c->K);
    }
    for (int k = 0; stream_on && k < c->K; k++) res->stream_dropped += c->stream->dropped[k];
    /* non-IID streams and data injection: the skew, the home-class shares (rank 0 measured
     * them), the copies and their bytes */
    res->noniid_skew = p->noniid_skew;
    res->home_fraction_mean = NAN;
    if (home_on && c->home_acc) {
        const int64_t *hs = c->home_acc, *ht = hs + SCV_MAX_WORKERS;
        int64_t h = 0, t = 0;
        res->n_home = c->K < 64 ? c->K : 64;
        for (int k = 0; k < c->K; k++) {
            if (k < res->n_home) res->home_fraction[k] = ht[k] > 0 ? (double)hs[k] / (double)ht[k] : 0;
            h += hs[k], t += ht[k];
        }
        if (t > 0) res->home_fraction_mean = (double)h / (double)t;
    }
    res->injected_samples = injected;
    res->injected_bytes = (double)injected * sample_bytes;
    if (run_iters) {
        res->t_compute_mean = sum_comp / (double)run_iters;
        res->t_comm_mean = sum_comm / (double)run_iters;
        res->t_iter_mean = sum_iter / (double)run_iters;
    }
    return rc;
}

/* ---- elastic mode: one job, a segment per command ----
 *
 * The driver appends commands (JSON lines) to CONTROL/cmd and reads the answers from
 * CONTROL/reply, both plain files that each side tails (no FIFO open-order deadlocks, and
 * a restarted job starts from fresh files). Rank 0 reads a command and broadcasts it to
 * every process of the job, parked ones included (scv_comm_command); each applies it:
 *   {"cmd":"segment","workers":K,"batch":B, stopping rules..., "metrics":PATH,
 *    "checkpoint_every":N, "checkpoint_end":0|1}
 *       K processes become the active ranks (more are spawned when the job has fewer;
 *       the others are parked); the state (position, parameters, optimiser) goes from
 *       rank 0 to the active ranks in memory; B takes effect at the first iteration;
 *       then one segment trains and rank 0 answers {"type":"segment","rc":..,"result":..}
 *   {"cmd":"stop"} every process leaves (the last checkpoint is the segment's).
 * A grow re-broadcasts the same command over the grown job, so the newcomers (which start
 * parked, load the data and wait for a command) apply it with everyone else. */
#define CMD_BYTES 16384

typedef struct {
    FILE *cmd, *reply;  /* rank 0 */
    long cmd_off;
    char exe[4096];     /* this program, for spawning */
} control;

/* Rank 0: the next complete command line (SCV_OK), SCV_EINTR when interrupted. Polls the
 * file every millisecond (the latency of a configuration change). */
static int control_read(control *ctl, char *line, size_t cap)
{
    struct timespec ts = {0, 1000000L};
    for (;;) {
        if (stop_requested()) return SCV_EINTR;
        clearerr(ctl->cmd);
        fseek(ctl->cmd, ctl->cmd_off, SEEK_SET);
        if (fgets(line, (int)cap, ctl->cmd)) {
            size_t n = strlen(line);
            if (n && line[n - 1] == '\n') { /* complete */
                ctl->cmd_off += (long)n;
                line[n - 1] = 0;
                return SCV_OK;
            }
        }
        nanosleep(&ts, NULL);
    }
}

static void control_reply(control *ctl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void control_reply(control *ctl, const char *fmt, ...)
{
    if (!ctl->reply) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(ctl->reply, fmt, ap);
    va_end(ap);
    fputc('\n', ctl->reply);
    fflush(ctl->reply);
}

static double jnum(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* An integer field in [lo, hi] (dflt when absent); a value out of range is refused. */
static int jint(const cJSON *o, const char *k, double lo, double hi, double dflt, int64_t *out, scv_err *err)
{
    double v = jnum(o, k, dflt);
    if (!(v >= lo && v <= hi) || v != floor(v))
        return scv_err_set(err, SCV_EINVAL, "elastic command: \"%s\" %g is not an integer in %g..%g", k, v, lo, hi);
    *out = (int64_t)v;
    return SCV_OK;
}

/* The segment's parameters: the job's (base) with the command's configuration and rules. */
static int segment_params(const scv_train_params *base, const cJSON *o, scv_train_params *q, double *split,
                          double *hist, char *metrics, size_t mcap, scv_err *err)
{
    *q = *base;
    int64_t K = 0, B = 0, it = 0, sub = 0, W = 1, nw = 0, tm = 0, ce = 0;
    int rc;
    if ((rc = jint(o, "workers", 1, SCV_MAX_SPACE, 0, &K, err)) || (rc = jint(o, "batch", 1, 1 << 24, 0, &B, err)) ||
        (rc = jint(o, "until_iterations", 0, 1e15, 0, &it, err)) ||
        (rc = jint(o, "eval_subset", 0, 1e12, 0, &sub, err)) || (rc = jint(o, "target_window", 1, 10000, 1, &W, err)) ||
        (rc = jint(o, "noise_window", 0, 1e9, 0, &nw, err)) || (rc = jint(o, "time_min", 0, 1e9, 0, &tm, err)) ||
        (rc = jint(o, "checkpoint_every", 0, 1e15, (double)base->checkpoint_every, &ce, err)))
        return rc;
    q->workers = (int)K, q->batch = (int)B, q->iterations = it, q->eval_subset = sub, q->target_window = (int)W;
    q->stop_noise_window = (int)nw, q->stop_time_min = (int)tm, q->checkpoint_every = ce;
    q->epochs = jnum(o, "epochs", 0);
    q->target_accuracy = jnum(o, "target_accuracy", 0);
    q->target_loss = jnum(o, "target_loss", 0);
    q->eval_every = 0;
    q->eval_every_epochs = jnum(o, "eval_every_epochs", 0);
    q->stop_noise_tol = jnum(o, "noise_tol", 0);
    q->stop_time_rse = jnum(o, "time_rse", 0);
    q->no_final_eval = !(jnum(o, "final_eval", 0) > 0);
    q->no_end_checkpoint = !(jnum(o, "checkpoint_end", 0) > 0);
    q->resume = 0;
    q->progress = 0;
    q->rank_weights = NULL;
    q->dynamic_batching = jnum(o, "dynamic_batching", 0) > 0; /* base->dynbatch: the policy */
    /* the segment's gradient exchange: Top-k at "compress_cf" over "collective", else the job's */
    double cf = jnum(o, "compress_cf", 0);
    if (cf != 0) {
        if (!(cf > 1 && cf <= 1e6) || scv_comm_opts_on(&base->comm))
            return scv_err_set(err, SCV_EINVAL, "elastic command: \"compress_cf\" %g: expected a factor in (1, 1e6] "
                                                "on a job without its own communication options", cf);
        const cJSON *co = cJSON_GetObjectItemCaseSensitive(o, "collective");
        const char *cs = cJSON_IsString(co) ? co->valuestring : "auto";
        q->comm.compress = SCV_COMPRESS_TOPK, q->comm.cf = cf;
        if (!strcmp(cs, "auto")) q->comm.collective = SCV_COLL_AUTO;
        else if (!strcmp(cs, "allgather")) q->comm.collective = SCV_COLL_ALLGATHER;
        else if (!strcmp(cs, "artopk")) q->comm.collective = SCV_COLL_ARTOPK;
        else return scv_err_set(err, SCV_EINVAL, "elastic command: \"collective\" '%s': expected auto, allgather or "
                                                 "artopk", cs);
    }
    const cJSON *sl = cJSON_GetObjectItemCaseSensitive(o, "selsync_lssr"); /* SelSync at a share of local steps */
    if (sl) {
        if (!cJSON_IsNumber(sl) || !(sl->valuedouble >= 0 && sl->valuedouble < 1) || cf != 0 || scv_comm_opts_on(&base->comm))
            return scv_err_set(err, SCV_EINVAL, "elastic command: \"selsync_lssr\": expected a share in [0, 1), "
                                                "without \"compress_cf\", on a job without its own communication options");
        q->comm.selsync = 1, q->comm.sel.lssr = sl->valuedouble, q->comm.sel.delta = 0;
    }
    const cJSON *sr = cJSON_GetObjectItemCaseSensitive(o, "straggler");
    q->straggler = (scv_straggler_rule){0};
    if (cJSON_IsObject(sr)) {
        scv_straggler_rule d = scv_straggler_rule_default();
        q->straggler = (scv_straggler_rule){.fraction = jnum(sr, "fraction", d.fraction), .alpha = jnum(sr, "alpha", d.alpha),
                                            .window_s = jnum(sr, "window_s", d.window_s),
                                            .min_iterations = (int)jnum(sr, "min_iterations", d.min_iterations)};
    }
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "split");
    if (a) {
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != q->workers)
            return scv_err_set(err, SCV_EINVAL, "elastic command: \"split\" needs %d shares", q->workers);
        int i = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, a) split[i++] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        q->rank_weights = split; /* checked below (finite, positive, within the ratio) */
    }
    q->n_target_history = 0, q->target_history = NULL;
    a = cJSON_GetObjectItemCaseSensitive(o, "history");
    if (cJSON_IsArray(a)) {
        const cJSON *v;
        cJSON_ArrayForEach(v, a) if (q->n_target_history < 64) hist[q->n_target_history++] =
            cJSON_IsNumber(v) ? v->valuedouble : NAN;
        q->target_history = hist;
    }
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metrics");
    q->metrics_path = NULL;
    if (cJSON_IsString(m) && strlen(m->valuestring) < mcap) {
        snprintf(metrics, mcap, "%s", m->valuestring);
        q->metrics_path = metrics;
    }
    return scv_train_params_check(q, err);
}

/* The job's processes as elastic mode sees them (every process keeps the same copy: every
 * process sees every command). Process i runs on host i of elastic_hosts when given. */
typedef struct {
    char hosts_buf[4096];
    const char *hosts[SCV_MAX_WORKERS];
    int nh;                         /* 0: no host list (local processes) */
    char excl[SCV_MAX_WORKERS];     /* processes left out for good (stragglers) */
    int members[SCV_MAX_WORKERS];   /* the active ones, by rank in all (worker k = members[k]) */
    int n_members;
} procs;

static void procs_init(procs *pr, const char *hosts)
{
    memset(pr, 0, sizeof *pr);
    if (!hosts) return;
    snprintf(pr->hosts_buf, sizeof pr->hosts_buf, "%s", hosts);
    char *save = NULL;
    for (char *t = strtok_r(pr->hosts_buf, ",", &save); t && pr->nh < SCV_MAX_WORKERS; t = strtok_r(NULL, ",", &save))
        pr->hosts[pr->nh++] = t;
}

static const char *host_of(const procs *pr, int proc) { return proc >= 0 && proc < pr->nh ? pr->hosts[proc] : ""; }

/* The job's processes (all_size of them) not left out. */
static int n_kept(const procs *pr, int all_size)
{
    int n = 0;
    for (int i = 0; i < all_size; i++) n += !pr->excl[i];
    return n;
}

/* 1 when a straggler among K workers can be replaced: a process left that is neither active
 * nor excluded, or a host left to spawn one on (without a host list every process shares
 * this machine's cores, and a fresh one would be no faster). */
static int can_replace(const procs *pr, int all_size, int K)
{
    return pr->nh && (n_kept(pr, all_size) > K || pr->nh > all_size);
}

/* Makes K processes the active ranks: the first K that are not excluded (spawning more
 * when the job has too few: *grew), and gives the state of worker 0 to any that was not
 * active before (*joined: the first of them, -1: none); B's buffers grow to q->batch. A new
 * B alone is a buffer resize; a shrink parks the leaving ranks (the staying ones hold the
 * state already). */
static int elastic_resize(run_ctx *c, control *ctl, procs *pr, const scv_train_params *q, int *grew, int *joined,
                          scv_err *err)
{
    int K = q->workers, rc = SCV_OK;
    *grew = 0, *joined = -1;
    int have = scv_comm_all_size(c->comm), avail = n_kept(pr, have);
    if (K > avail) {
        int n_new = K - avail;
        if (have + n_new > SCV_MAX_WORKERS)
            return scv_err_set(err, SCV_EINVAL, "elastic: %d processes, at most %d", have + n_new, SCV_MAX_WORKERS);
        if (pr->nh && pr->nh < have + n_new)
            return scv_err_set(err, SCV_EINVAL, "elastic: %d workers need %d hosts, %d given", K, have + n_new, pr->nh);
        if ((rc = scv_comm_grow(c->comm, ctl->exe, c->p->elastic_argv, n_new, pr->nh ? pr->hosts + have : NULL, err)))
            return rc;
        *grew = 1;
        return SCV_OK;
    }
    int members[SCV_MAX_WORKERS], n = 0, changed = K != pr->n_members;
    for (int i = 0; i < have && n < K; i++)
        if (!pr->excl[i]) members[n++] = i;
    for (int k = 0; k < K; k++) {
        int was = 0;
        for (int j = 0; j < pr->n_members && !was; j++) was = pr->members[j] == members[k];
        if (!was && *joined < 0) *joined = members[k];
        changed |= k >= pr->n_members || pr->members[k] != members[k];
    }
    if (changed && (rc = scv_comm_activate(c->comm, members, K, err))) return rc;
    memcpy(pr->members, members, sizeof(int) * (size_t)K);
    pr->n_members = K;
    c->rank = scv_comm_rank(c->comm);
    c->K = scv_comm_size(c->comm);
    if (c->rank < 0) return SCV_OK; /* parked */
    int64_t *cn = realloc(c->counts, sizeof(int64_t) * (size_t)K), *of = cn ? realloc(c->offsets, sizeof(int64_t) * (size_t)K) : NULL;
    if (cn) c->counts = cn;
    if (of) c->offsets = of;
    if (q->batch > c->batch_cap) {
        size_t d = (size_t)c->train->c * c->train->h * c->train->w;
        float *bx = realloc(c->bx, sizeof(float) * d * (size_t)q->batch);
        uint8_t *by = bx ? realloc(c->by, (size_t)q->batch) : NULL;
        if (bx) c->bx = bx;
        if (by) c->by = by, c->batch_cap = q->batch;
        if (!bx || !by) rc = SCV_ENOMEM;
    }
    if (!cn || !of) rc = SCV_ENOMEM;
    if ((rc = scv_comm_agree(c->comm, rc ? scv_err_set(err, rc, "out of memory") : SCV_OK, err))) return rc;
    if (*joined < 0) return SCV_OK; /* every worker held the state already */
    size_t np = scv_model_nparams(c->model);
    if ((rc = scv_comm_bcast(c->comm, &c->st, sizeof c->st, 0, err))) return rc;
    if ((rc = scv_comm_bcast(c->comm, &c->wall_before, sizeof c->wall_before, 0, err))) return rc;
    if ((rc = scv_comm_bcast(c->comm, scv_model_params(c->model), np * sizeof(float), 0, err))) return rc;
    return scv_comm_bcast(c->comm, c->mom, np * sizeof(float), 0, err);
}

/* Rank 0: rewrites a command's "exclude" to the processes left out (with proc, >= 0, added;
 * taken back when the command's K needs them) so that every process, spawned later ones
 * too, applies the same list, and, when c is given, its "history" to
 * the target window as it stands (the command then continues the segment that just
 * stopped). 0 when it does not fit. */
static int rewrite_cmd(char *cmd, size_t cap, procs *pr, int proc, const run_ctx *c, int all_size)
{
    cJSON *o = cJSON_Parse(cmd), *ex = cJSON_CreateArray(), *h = c ? cJSON_CreateDoubleArray(c->window, c->n_window) : NULL;
    int ok = o && ex && (h || !c);
    if (proc >= 0) pr->excl[proc] = 1;
    /* more workers than the processes left and the hosts to spawn on: the processes left out
     * come back, the latest first (a slow worker is better than none) */
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "workers");
    int K = cJSON_IsNumber(w) && w->valuedouble >= 1 && w->valuedouble <= SCV_MAX_WORKERS ? (int)w->valuedouble : 0;
    int avail = (pr->nh ? pr->nh - all_size : SCV_MAX_WORKERS) + n_kept(pr, all_size);
    for (int i = all_size - 1; i > 0 && avail < K; i--)
        if (pr->excl[i]) pr->excl[i] = 0, avail++;
    for (int i = 0; ok && i < SCV_MAX_WORKERS; i++)
        if (pr->excl[i]) ok = cJSON_AddItemToArray(ex, cJSON_CreateNumber(i));
    if (ok) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "exclude");
        cJSON_AddItemToObject(o, "exclude", ex), ex = NULL;
        if (h) {
            cJSON_DeleteItemFromObjectCaseSensitive(o, "history");
            cJSON_AddItemToObject(o, "history", h), h = NULL;
        }
        ok = cJSON_PrintPreallocated(o, cmd, (int)cap, 0);
    }
    cJSON_Delete(o), cJSON_Delete(ex), cJSON_Delete(h);
    return ok;
}

/* The segment reply's "stragglers" array: the events found since the last reply. */
static void events_json(char *buf, size_t cap, run_ctx *c)
{
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < c->n_events && len < cap; i++) {
        const scv_straggler_event *e = &c->events[i];
        char h[2 * sizeof e->host], bh[2 * sizeof e->by_host], note[2 * sizeof e->note];
        len += (size_t)snprintf(buf + len, cap - len,
                                "%s{\"iteration\":%lld,\"worker\":%d,\"host\":%s,\"ratio\":%.4f,\"replaced\":%s,"
                                "\"by_host\":%s,\"idle_s\":%.6f,\"note\":%s}",
                                i ? "," : "", (long long)e->iteration, e->worker, scv_json_strbuf(h, sizeof h, e->host),
                                e->ratio, e->replaced ? "true" : "false", scv_json_strbuf(bh, sizeof bh, e->by_host),
                                e->idle_s, scv_json_strbuf(note, sizeof note, e->note));
    }
    if (len < cap) snprintf(buf + len, cap - len, "]");
    c->n_events = 0;
}

static int elastic_main(run_ctx *c, scv_train_result *res, scv_err *err)
{
    control ctl = {0};
    const scv_train_params *base = c->p;
    int rc = SCV_OK;
    ssize_t xn = readlink("/proc/self/exe", ctl.exe, sizeof ctl.exe - 1);
    if (xn <= 0) rc = scv_err_set(err, SCV_EIO, "cannot resolve /proc/self/exe: %s", strerror(errno));
    else ctl.exe[xn] = 0;
    const int root = scv_comm_all_rank(c->comm) == 0; /* reads the commands, writes the replies */
    if (!rc && root) {
        char path[4096];
        snprintf(path, sizeof path, "%s/cmd", base->elastic_control);
        if (!(ctl.cmd = fopen(path, "r")))
            rc = scv_err_set(err, SCV_EIO, "%s: cannot open the elastic control file: %s", path, strerror(errno));
        snprintf(path, sizeof path, "%s/reply", base->elastic_control);
        if (!rc && !(ctl.reply = fopen(path, "a")))
            rc = scv_err_set(err, SCV_EIO, "%s: cannot open the elastic reply file: %s", path, strerror(errno));
        if (!rc) control_reply(&ctl, "{\"type\":\"ready\",\"processes\":%d}", scv_comm_all_size(c->comm));
    }
    char *cmd = calloc(1, CMD_BYTES), *evs = calloc(1, CMD_BYTES), metrics[4096] = "";
    double split[SCV_MAX_SPACE], hist[SCV_TARGET_WINDOW_MAX]; /* segment_params reads at most 64 */
    procs *pr = calloc(1, sizeof *pr);
    if (!cmd || !evs || !pr) rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
    /* A failure that the processes do not share (here, or a broken collective below) would
     * leave the others waiting in a command broadcast: the job is ended (mpirun ends every
     * process), and the driver restarts it from the checkpoint. */
    if (rc) {
        fprintf(stderr, "scavenger train: %s\n", err ? err->msg : "elastic job failed");
        scv_comm_abort(c->comm, 1);
    }
    procs_init(pr, base->elastic_hosts);
    if (!scv_comm_joined(c->comm)) /* mpirun started the first K, all active */
        for (int i = 0; i < scv_comm_size(c->comm); i++) pr->members[pr->n_members++] = i;
    scv_train_params last = *base; /* the latest segment's parameters (its B, its metrics) */
    int resend = 0; /* a grow re-broadcasts the same command over the grown job */
    int have = 0;   /* root: cmd holds the next command already (a segment's continuation) */
    int dirty = 0;   /* trained since the last checkpoint */
    int release = 0; /* a failed segment ends the job: the parked processes get a stop */
    int pending = -1; /* root: the straggler event whose replacement the next resize makes */
    double t0 = 0;  /* when the command was read (a grow's spawn counts in its resize time) */
    while (!rc) {
        if (root && !resend && !have) {
            t0 = scv_now();
            int r = control_read(&ctl, cmd, CMD_BYTES);
            if (r == SCV_EINTR) snprintf(cmd, CMD_BYTES, "{\"cmd\":\"stop\",\"why\":\"interrupted\"}");
            else if (!rewrite_cmd(cmd, CMD_BYTES, pr, -1, NULL, scv_comm_all_size(c->comm))) /* too long or not
                                                                              JSON: refused below */
                snprintf(cmd, CMD_BYTES, "{\"cmd\":\"not a command\"}");
        } else if (!root && !resend) {
            t0 = scv_now();
        }
        resend = have = 0;
        if ((rc = scv_comm_command(c->comm, cmd, CMD_BYTES, err))) {
            fprintf(stderr, "scavenger train: %s\n", err ? err->msg : "command broadcast failed");
            scv_comm_abort(c->comm, 1);
        }
        cJSON *o = cJSON_Parse(cmd);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "cmd");
        if (!cJSON_IsString(k) || strcmp(k->valuestring, "segment")) { /* stop, or not a command */
            int bad = !cJSON_IsString(k) || strcmp(k->valuestring, "stop");
            if (bad && root) control_reply(&ctl, "{\"type\":\"error\",\"error\":\"not a command; stopping\"}");
            cJSON_Delete(o);
            if (dirty && c->rank >= 0 && base->checkpoint_dir) { /* the state trained since: durable */
                c->p = &last;
                rc = save_checkpoint(c, 0, err);
                c->p = base;
            }
            break;
        }
        const cJSON *ex = cJSON_GetObjectItemCaseSensitive(o, "exclude"), *v;
        memset(pr->excl, 0, sizeof pr->excl); /* the command's list is the whole of it */
        cJSON_ArrayForEach(v, ex) if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < SCV_MAX_WORKERS)
            pr->excl[(int)v->valuedouble] = 1;
        scv_train_params q;
        scv_err qe = {0};
        int qrc = segment_params(base, o, &q, split, hist, metrics, sizeof metrics, &qe);
        cJSON_Delete(o);
        if (qrc) { /* every process read the same command: all refuse it alike, the job goes on */
            char esc[2 * sizeof qe.msg];
            if (root)
                control_reply(&ctl, "{\"type\":\"segment\",\"rc\":%d,\"refused\":true,\"error\":%s}", qrc,
                              scv_json_strbuf(esc, sizeof esc, qe.msg));
            continue;
        }
        int grew = 0, joined = -1;
        if ((rc = elastic_resize(c, &ctl, pr, &q, &grew, &joined, err))) {
            fprintf(stderr, "scavenger train: %s\n", err ? err->msg : "resizing failed");
            scv_comm_abort(c->comm, 1);
        }
        if (grew) {
            resend = 1;
            continue;
        }
        double resize_s = scv_now() - t0;
        if (root && pending >= 0) { /* the straggler's replacement: the process that joined */
            scv_straggler_event *e = &c->events[pending];
            snprintf(e->by_host, sizeof e->by_host, "%s", host_of(pr, joined));
            e->idle_s = resize_s;
            pending = -1;
        }
        if (c->rank < 0) continue; /* parked: wait for the next command */
        c->p = &q;
        c->strag_stop = can_replace(pr, scv_comm_all_size(c->comm), q.workers);
        memset(res, 0, sizeof *res);
        scv_err se = {0};
        int src = c->rank == 0 && q.metrics_path ? open_metrics(c, "a", &se) : SCV_OK;
        if (!(src = scv_comm_agree(c->comm, src, &se))) src = train_segment(c, res, &se);
        res->rank = c->rank;
        last = q;
        c->p = base;
        for (int i = 0; root && i < c->n_events; i++) { /* where the stragglers found ran */
            scv_straggler_event *e = &c->events[i];
            if (!e->host[0] && e->worker < pr->n_members)
                snprintf(e->host, sizeof e->host, "%s", host_of(pr, pr->members[e->worker]));
        }
        if (!src && !strcmp(res->stopped_by, "straggler")) {
            /* every worker stopped at the same iteration: the segment goes on without the
             * straggler (a spare process takes its place), as a command that all-rank 0 gives
             * itself and broadcasts like any other */
            int proc = pr->members[res->straggler];
            c->n_shares = 0; /* a fresh worker in its place: dynamic batching starts again */
            if (root) {
                scv_straggler_event *e = &c->events[c->strag_event];
                e->replaced = 1;
                snprintf(e->note + strlen(e->note), sizeof e->note - strlen(e->note), "; replaced");
                pending = c->strag_event;
                t0 = scv_now();
                if (!rewrite_cmd(cmd, CMD_BYTES, pr, proc, c, scv_comm_all_size(c->comm))) { /* a window of 64
                                                              values made it too long: the job ends */
                    rc = scv_err_set(err, SCV_ENOMEM, "elastic: the continued command does not fit");
                    fprintf(stderr, "scavenger train: %s\n", err->msg);
                    scv_comm_abort(c->comm, 1);
                }
                have = 1;
            }
            dirty = 1;
            continue;
        }
        for (int i = 0; root && i < c->n_events; i++) { /* found, not replaced: why */
            scv_straggler_event *e = &c->events[i];
            if (!e->replaced && !strstr(e->note, "not replaced"))
                snprintf(e->note + strlen(e->note), sizeof e->note - strlen(e->note), "; not replaced: %s",
                         e->worker == 0 ? "worker 0 runs the job"
                         : !pr->nh      ? "no host list (local processes share this machine's cores)"
                         : !c->strag_stop ? "no spare host"
                                          : "the segment ended at that iteration");
        }
        if (c->rank == 0) {
            char js[16384], esc[2 * sizeof se.msg];
            scv_train_result_json(res, js, sizeof js);
            events_json(evs, CMD_BYTES, c);
            control_reply(&ctl,
                          "{\"type\":\"segment\",\"rc\":%d,\"error\":%s,\"resize_s\":%.6f,\"stragglers\":%s,"
                          "\"result\":%s}",
                          src, scv_json_strbuf(esc, sizeof esc, src ? se.msg : ""), resize_s, evs, js);
        }
        if (src) { /* interrupted or failed (every active rank alike: train_segment agrees):
                    * the job ends; the driver resumes from the checkpoint */
            rc = src, release = 1;
            if (err) *err = se;
            break;
        }
        dirty = q.no_end_checkpoint;
    }
    /* a failed segment: the active ranks release the parked ones with a stop (rank 0 sends,
     * the others take part in the broadcast the parked ones wait in) */
    if (release) {
        snprintf(cmd, CMD_BYTES, "{\"cmd\":\"stop\"}");
        scv_comm_command(c->comm, cmd, CMD_BYTES, NULL);
    }
    free(cmd);
    free(evs);
    free(pr);
    if (ctl.cmd) fclose(ctl.cmd);
    if (ctl.reply) fclose(ctl.reply);
    return rc;
}

int scv_train_run(const scv_train_params *p, scv_train_result *res, scv_err *err)
{
    memset(res, 0, sizeof *res);
    int rc = scv_train_params_check(p, err);
    if (rc) return rc;
    scv_compute_threads(p->threads);
    run_ctx c = {.p = p, .lock_fd = -1};
    g_stop = 0;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    struct sigaction old_usr1; /* the trainer contract's stop (mpirun forwards SIGUSR1) */
    sigaction(SIGUSR1, &sa, &old_usr1);
    const sigset_t stops = stop_signals(); /* blocked before setup starts MPI's threads */
    sigset_t old_mask;
    pthread_sigmask(SIG_BLOCK, &stops, &old_mask);
    rc = setup(&c, err);
    res->rank = c.rank;
    if (rc && p->elastic_control && c.comm && scv_comm_joined(c.comm)) { /* spawned, and failed: the */
        fprintf(stderr, "scavenger train: %s\n", err ? err->msg : "setup failed"); /* job waits for it */
        scv_comm_abort(c.comm, 1);
    }
    if (!rc) rc = p->elastic_control ? elastic_main(&c, res, err) : train_segment(&c, res, err);
    teardown(&c);
    stop_requested(); /* a stop that came after the last step: taken, not left for the old handlers */
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGUSR1, &old_usr1, NULL);
    return rc;
}
