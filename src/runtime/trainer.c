/*
 * trainer.c - synchronous data-parallel SGD on the ranks of a scv_comm.
 *
 * This file: the public calls (scv_train_run, the parameters' defaults and check, the
 * result's JSON), the run's setup and teardown and checkpoints (rank 0 writes, every rank
 * agrees). The elastic mode (one job, a segment per command) is train_elastic.c's, a
 * segment train_segment.c's, its metrics lines train_metrics.c's, its stopping rules
 * train_rules.c's (trainer.h lists the parts).
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
 * Target: periodic evaluations (eval_subset test samples, the test set's slices in turn, or
 * all) fill a window of
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
#include "../train/train.h"
#include "runtime.h"
#include "comm.h"
#include "exchange.h"
#include "trainer.h"
#include "../model/stoprule.h"
#include "../model/model.h"
#include "../core/util.h"
#include "../train/ckpt.h"
#include "../train/dnn.h"
#include "../train/sched.h"

#include <errno.h>
#include <fcntl.h>
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

/* The one piece of file-scope mutable state: a signal handler gets no context argument, so
 * SIGINT/SIGTERM can only reach the loop through a flag. scv_train_run() clears it, installs
 * the handler for its own duration and restores the previous one. Everything else a run
 * needs lives in its run_ctx.
 *
 * The stop signals (SIGINT, SIGTERM, SIGUSR1) are also blocked in the training thread, and in
 * the threads it starts (MPI's, OpenMP's), for the run's duration: scv_train_stop_requested() takes a
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
int scv_train_stop_requested(void)
{
    const sigset_t s = stop_signals();
    const struct timespec now = {0, 0};
    while (sigtimedwait(&s, NULL, &now) > 0) g_stop = 1;
    return g_stop;
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
    p.lr = SCV_RECIPE_LR;
    p.momentum = SCV_RECIPE_MOMENTUM;
    p.weight_decay = SCV_RECIPE_WEIGHT_DECAY;
    p.base_batch = SCV_RECIPE_BASE_BATCH;
    p.lr_gamma = SCV_RECIPE_LR_GAMMA;
    p.seed = 1;
    p.target_window = 1;
    p.target_confirm_tol = SCV_TARGET_CONFIRM_TOL;
    p.dynbatch = scv_dynbatch_policy_default();
    p.stream_policy = scv_stream_policy_default();
    p.comm = scv_exchange_opts_default();
    return p;
}

/* The job: the model, the workers, the batch, the optimiser. */
static int check_job(const scv_train_params *p, scv_err *err)
{
    int rc = scv_net_check(p->model, p->hidden, err);
    if (rc) return rc;
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
    if (p->lr_scaling == SCV_LR_SCALE_ADASCALE && (p->no_grad_stats || scv_exchange_opts_on(&p->comm)))
        return scv_err_set(err, SCV_EINVAL,
                           "--lr-scaling adascale measures the gradient's noise at every step: not with "
                           "--no-grad-stats nor a compressed or selective exchange");
    return SCV_OK;
}

/* The stopping rules, the schedule, the evaluations and the target window. */
static int check_stopping(const scv_train_params *p, scv_err *err)
{
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
    return SCV_OK;
}

/* The data options: dynamic batching, streaming, non-IID streams, injection, the split. */
static int check_data(const scv_train_params *p, scv_err *err)
{
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

int scv_train_params_check(const scv_train_params *p, scv_err *err)
{
    int rc = check_job(p, err);
    if (!rc) rc = check_stopping(p, err);
    if (!rc) rc = check_data(p, err);
    return rc;
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

int scv_train_save_checkpoint(run_ctx *c, double wall, scv_err *err)
{
    int rc = SCV_OK;
    if (c->rank == 0) rc = scv_tm_flush(c, err);
    if (c->rank == 0 && !rc) {
        c->st.wall_seconds = c->wall_before + wall;
        c->st.workers = c->K;
        c->st.batch = c->p->batch;
        rc = scv_ckpt_save(c->p->checkpoint_dir, &c->st, scv_net_params(c->model), c->mom,
                           scv_net_nparams(c->model), err);
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
    size_t n = scv_net_nparams(c->model);
    int rc = SCV_OK;
    if (c->rank == 0) {
        float *p = NULL, *m = NULL;
        size_t cn = 0;
        scv_ckpt_state st;
        rc = scv_ckpt_load(c->p->checkpoint_dir, &st, &p, &m, &cn, err);
        if (!rc && (strcmp(st.arch, scv_net_arch(c->model)) != 0 || cn != n))
            rc = scv_err_set(err, SCV_EINVAL,
                             "%s: checkpoint holds model %s (%zu parameters), this run builds %s "
                             "(%zu)", c->p->checkpoint_dir, st.arch, cn, scv_net_arch(c->model), n);
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
            memcpy(scv_net_params(c->model), p, n * sizeof(float));
            memcpy(c->mom, m, n * sizeof(float));
            c->st = st;
        }
        free(p);
        free(m);
    }
    if ((rc = scv_comm_agree(c->comm, rc, err))) return rc;
    if ((rc = scv_comm_bcast(c->comm, &c->st, sizeof c->st, 0, err))) return rc;
    if ((rc = scv_comm_bcast(c->comm, scv_net_params(c->model), n * sizeof(float), 0, err)))
        return rc;
    rc = scv_comm_bcast(c->comm, c->mom, n * sizeof(float), 0, err);
    c->wall_before = c->st.wall_seconds;
    return rc;
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
int scv_train_open_metrics(run_ctx *c, const char *mode, scv_err *err)
{
    const scv_train_params *p = c->p;
    if (c->metrics) fclose(c->metrics);
    if (!(c->metrics = fopen(p->metrics_path, mode)))
        return scv_err_set(err, SCV_EIO, "%s: cannot open metrics file: %s", p->metrics_path, strerror(errno));
    setvbuf(c->metrics, NULL, _IOLBF, 0);
    if (scv_tm_job(c) < 0)
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
    /* an elastic job may start short (a cluster's VMs preempted at its start): its commands say K */
    if (!joined && c->K != p->workers && !(p->elastic_control && c->K < p->workers))
        rc = scv_err_set(err, SCV_EINVAL, "--workers %d but %d ranks were started", p->workers, c->K);
    if (!rc && c->rank == 0 && p->checkpoint_dir) rc = lock_checkpoint_dir(c, err);
    /* the data can take long (synthetic:N is generated on every rank): a stop during it is
     * taken (the stop signals are blocked, scv_train_stop_requested reads them) */
    if (!rc) rc = scv_dataset_load_stop(p->dataset, 0, scv_train_stop_requested, &c->train, err);
    if (!rc) rc = scv_dataset_load_stop(p->dataset, 1, scv_train_stop_requested, &c->test, err);
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
        scv_net_spec spec = {.name = p->model,
                               .in_c = c->train->c,
                               .in_h = c->train->h,
                               .in_w = c->train->w,
                               .n_classes = c->train->n_classes};
        if (strcmp(p->model, "mlp") == 0) rc = scv_net_parse_hidden(p->hidden, &spec, err);
        if (!rc) rc = scv_net_new(&spec, &c->model, err);
    }
    if ((rc = scv_comm_agree(c->comm, rc, err))) return rc;
    size_t n = scv_net_nparams(c->model), d = (size_t)c->train->c * c->train->h * c->train->w;
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
    scv_net_init(c->model, p->seed);
    snprintf(c->st.arch, sizeof c->st.arch, "%s", scv_net_arch(c->model));
    c->st.seed = p->seed;
    c->st.n_train = (uint64_t)c->train->n;
    if (p->resume && !joined && (rc = resume(c, err))) return rc;
    if (c->rank == 0 && p->metrics_path) rc = scv_train_open_metrics(c, p->resume ? "a" : "w", err);
    return scv_comm_agree(c->comm, rc, err);
}

static void teardown(run_ctx *c)
{
    if (c->metrics) fclose(c->metrics); /* flushed and checked by scv_tm_flush */
    scv_dataset_free(c->train);
    scv_dataset_free(c->test);
    scv_net_free(c->model);
    free(c->mom);
    free(c->perm);
    free(c->bx);
    free(c->by);
    free(c->ada_half);
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
    if (!rc) rc = p->elastic_control ? scv_train_elastic_main(&c, res, err) : scv_train_segment(&c, res, err);
    teardown(&c);
    scv_train_stop_requested(); /* a stop that came after the last step: taken, not left for the old handlers */
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGUSR1, &old_usr1, NULL);
    return rc;
}
