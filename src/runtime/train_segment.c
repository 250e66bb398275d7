/*
 * train_segment.c - one segment of synchronous data-parallel SGD, as a pipeline a step at a
 * time (scv_train_segment reads on one screen):
 *   stop before?     the iteration cap, the epoch bound (and the rules' verdicts)
 *   batch plan       which samples each worker computes: an even split or the shares
 *                    (--batch-split, dynamic batching), the streams' deliveries, non-IID
 *                    re-ordering and data injection (batch_plan_*)
 *   compute          forward and backward on this rank's slice
 *   exchange         the gradient's allreduce with the step's values riding after it (one
 *                    typed layout, step_values), or the compressed exchange (exchange.c)
 *   optimiser        SGD with momentum, |g|^2 of the averaged gradient in the same pass
 *   account          counters, the straggler rule, dynamic batching, the metrics line
 *   evaluate         periodic evaluations (train_eval.c) and the target window (train_rules.c)
 *   checkpoint, progress, stop after?
 * Every rank sees the same reduced numbers, so every rank takes the same branches.
 */
#define _POSIX_C_SOURCE 200809L
#include "trainer.h"
#include "../core/util.h"
#include "../train/sched.h"
#include "../model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the values after the gradient in its allreduce: one typed layout ----
 * The fixed scalars; with the straggler rule or dynamic batching on, K more follow: worker
 * k's compute seconds in slot k (the others add 0); with dynamic batching, K more: the new
 * shares of B from rank 0 (rebalance set), used from the next iteration on by every rank
 * alike. Streaming: rank 0's stream clock (seconds since the segment started, read as it
 * enters the allreduce) as two floats, hi = (float)tau and lo = (float)(tau - hi) (the
 * others add 0, which leaves them exact): every rank plans the next step's batches from the
 * same tau = hi + lo, to about 1e-14 relative. */
typedef struct step_scalars {
    float local_sq;    /* this rank's |g_k|^2 of its mean gradient */
    float has;         /* 1: this rank had samples */
    float loss;        /* the loss sum */
    float correct;     /* the correct count */
    float stop;        /* a stop signal came (Ctrl-C) */
    float time_stable; /* rank 0: the profiling rule fired */
    float straggler;   /* rank 0: 1 + the worker just found (negative: replace it) */
    float rebalance;   /* rank 0: new shares follow */
    float stream_hi, stream_lo; /* rank 0's stream clock */
    float preempt;     /* rank 0, elastic mode: the job resizes after this iteration for a
                          preemption notice (1) or a restore (2) (c->preempt_poll) */
} step_scalars;
#define STEP_SCALARS (sizeof(step_scalars) / sizeof(float))
_Static_assert(sizeof(step_scalars) == 11 * sizeof(float), "step_scalars: floats only, no padding");
_Static_assert(STEP_SCALARS + 2 * SCV_MAX_WORKERS + SCV_EXCHANGE_CTL_FIXED + SCV_MAX_WORKERS <= SCV_GRAD_EXTRA,
               "the allreduce's scalars (and the exchange's, scv_exchange_ctl) outgrow SCV_GRAD_EXTRA");

typedef struct step_values {
    step_scalars *x;
    float *t_workers; /* K: each worker's compute seconds (NULL: not sent) */
    float *shares;    /* K: rank 0's new shares (NULL: no dynamic batching) */
    size_t n;         /* the floats after the gradient */
} step_values;

static step_values step_values_at(float *g, size_t np, int K, int per_worker, int dyn)
{
    step_values v = {.x = (step_scalars *)(void *)(g + np), .n = STEP_SCALARS};
    if (per_worker) v.t_workers = g + np + STEP_SCALARS, v.n += (size_t)K;
    if (dyn) v.shares = g + np + STEP_SCALARS + K, v.n += (size_t)K;
    return v;
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
    if (!rc && c->rank == 0) scv_tm_latency(c, scv_median(t, LATENCY_PROBES));
    return rc;
}

/* ---- stragglers and dynamic batching (rank 0 decides; its verdicts ride in the next
 * allreduce) ---- */

/* Rank 0, elastic mode: what a slow worker found at the rule's ratio gets (the segment's
 * straggler rule: by_model 0, replaced whenever a spare exists; 1, the loop's model's
 * speeds, model/hetero.c): SCV_HETERO_REPLACE, _DROP or _ABSORB (kept); the event's note says
 * which and why. Worker 0 runs the job and is kept. */
static scv_hetero_choice straggler_action(const run_ctx *c, scv_straggler_event *ev)
{
    const scv_straggler_rule *r = &c->p->straggler;
    if (ev->worker == 0 || !c->p->elastic_control) return SCV_HETERO_ABSORB;
    if (!r->by_model) return c->strag_stop ? SCV_HETERO_REPLACE : SCV_HETERO_ABSORB;
    const double x = scv_hetero_speed_of_ratio(ev->ratio, c->K);
    scv_hetero_choice a = c->strag_stop && x < r->replace_below ? SCV_HETERO_REPLACE
                          : c->K > 1 && x < r->drop_below     ? SCV_HETERO_DROP
                                                              : SCV_HETERO_ABSORB;
    size_t n = strlen(ev->note);
    snprintf(ev->note + n, sizeof ev->note - n, "; speed %.2f, the model's choice: %s (drop under %.2f, replace under %.2f%s)",
             x, scv_hetero_choice_name(a), r->drop_below, r->replace_below, c->strag_stop ? "" : ", no spare");
    return a;
}

/* Rank 0: worker f was found slow (ev): kept as an event and flagged for the next
 * allreduce (negative: the segment ends for its replacement or its drop, in elastic mode
 * when it is not worker 0; c->strag_action says which). */
static void straggler_found(run_ctx *c, scv_straggler_event *ev)
{
    c->strag_action = straggler_action(c, ev);
    c->strag_flag = c->strag_action != SCV_HETERO_ABSORB ? -(ev->worker + 1) : ev->worker + 1;
    if (c->n_events == SCV_MAX_STRAGGLER_EVENTS) c->n_events--; /* full: the newest replaces the last */
    c->strag_event = c->n_events;
    c->events[c->n_events++] = *ev;
}

/* Rank 0, after an iteration: feeds the workers' compute seconds (t[k], as reduced) to the
 * straggler rule; a worker it finds is written to the metrics, kept as an event and flagged
 * for the next allreduce. */
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
    scv_tm_straggler(c, &ev);
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
    scv_tm_unabsorbed(c, &ev);
}

/* Under dynamic batching the shares absorb a slow worker and the throughput rule is off,
 * unless the loop's model says a worker under some speed is better dropped or replaced
 * (elastic mode): then the rule looks for those only, at the ratio of that speed (at most
 * the rule's own fraction). 0: off. */
static double straggler_dyn_fraction(const run_ctx *c, const scv_train_params *p)
{
    const scv_straggler_rule *r = &p->straggler;
    if (!r->by_model || !p->elastic_control) return 0;
    double x = r->drop_below > r->replace_below ? r->drop_below : r->replace_below;
    double f = scv_hetero_ratio_of_speed(x, c->K);
    return f < r->fraction ? f : r->fraction;
}

/* ---- the gradient exchange ---- */

/* The same exchange settings: the options a segment command or the job can set. */
static int same_comm(const scv_exchange_opts *a, const scv_exchange_opts *b)
{
    return a->compress == b->compress && a->cf == b->cf && a->collective == b->collective &&
           a->var_root == b->var_root && a->dense_steps == b->dense_steps && a->selsync == b->selsync &&
           a->sel.delta == b->sel.delta && a->sel.lssr == b->sel.lssr && a->gravac.eps == b->gravac.eps;
}

/* The segment's exchange in c->xc: the previous segment's goes on when every rank kept one for
 * the same K, rank and options (its residual, the unsent gradient, is not dropped; SelSync's
 * history and GraVAC's factor go on), else every rank starts a new one (a rank that is new,
 * a spare in a straggler's place, has none: then all do). Collective: every rank calls it. */
static int segment_exchange(run_ctx *c, const scv_exchange_opts *o, size_t np, scv_err *err)
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

/* ---- the batch plan: which samples each worker computes this step ----
 * c->counts[k] and c->offsets[k] (worker k's share of the global batch and where it starts
 * in the step's window of the epoch order), c->own (its own samples: c->counts, or
 * injection's); the global batch and the epoch samples taken. */
typedef struct batch_plan {
    int stream_on, inject_on, data_on, home_on;
    double tau;           /* streaming: rank 0's clock of the last allreduce (the next plan's) */
    double wait;          /* streaming: the seconds waited for data so far */
    double s_start;       /* streaming: the stream time this step takes its data at */
    double t_data;        /* when the step's data was there (this worker's own work starts) */
    int64_t batch;        /* the step's global batch */
    int64_t epoch_samples; /* the samples of the epoch it takes (fewer with injection) */
} batch_plan;

/* Streaming: sleeps until scv_now() >= until, in slices of at most 50 ms so that Ctrl-C
 * (g_stop) cuts a long wait short (the step then goes ahead with its planned batches and the
 * stop travels in its allreduce). */
static void sleep_until(double until)
{
    for (;;) {
        double left = until - scv_now();
        if (!(left > 0) || scv_train_stop_requested()) return;
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

/* The segment's plan: streaming, non-IID and injection state (allocated once per job and
 * kept); 0, or SCV_ENOMEM. */
static int batch_plan_begin(run_ctx *c, batch_plan *bp)
{
    const scv_train_params *p = c->p;
    const int64_t N = c->train->n;
    int oom = 0;
    memset(bp, 0, sizeof *bp);
    /* streaming: the buffers start empty at stream time 0 (this segment's start); tau is
     * rank 0's clock from the last allreduce, at which the next step is planned */
    bp->stream_on = p->stream != NULL;
    if (bp->stream_on && !c->stream && !(c->stream = malloc(sizeof *c->stream))) oom = 1;
    if (bp->stream_on && !oom) scv_stream_init(c->stream, p->stream, &p->stream_policy, p->batch);
    /* non-IID streams and data injection (data_plan); the home-class shares are measured
     * with them and with streaming (rank 0 counts every worker's batch) */
    bp->inject_on = p->inject_alpha > 0 && p->inject_beta > 0, bp->data_on = p->noniid_skew > 0 || bp->inject_on;
    bp->home_on = bp->data_on || bp->stream_on;
    if (bp->inject_on && !c->inj && !(c->inj = malloc(sizeof *c->inj))) oom = 1;
    if (!bp->inject_on) free(c->inj), c->inj = NULL;
    if (bp->home_on && !c->data_scratch && !(c->data_scratch = malloc(sizeof(int32_t) * (size_t)N))) oom = 1;
    if (bp->home_on && c->rank == 0 && !c->home_acc && !(c->home_acc = malloc(sizeof(int64_t) * 3 * SCV_MAX_WORKERS)))
        oom = 1;
    if (bp->home_on && c->home_acc) memset(c->home_acc, 0, sizeof(int64_t) * 3 * SCV_MAX_WORKERS);
    c->own = c->counts;
    return oom ? SCV_ENOMEM : SCV_OK;
}

/* The step's plan at the epoch position (t_origin: the segment's start, the stream clock's
 * zero): the streams' deliveries or the split of B (the shares: dynamic batching's, else
 * the parameters'), then the data options' re-ordering and injection. */
static int batch_plan_step(run_ctx *c, batch_plan *bp, double t_origin, scv_err *err)
{
    const scv_train_params *p = c->p;
    const int64_t N = c->train->n, left = N - (int64_t)c->st.pos;
    bp->s_start = 0;
    bp->batch = left < p->batch ? left : p->batch;
    if (bp->stream_on) {
        /* deterministic on every rank (the same tau, the same buffers): they all stop alike */
        if ((bp->batch = stream_batches(c, bp->tau, t_origin, left, &bp->s_start)) < 0)
            return scv_err_set(err, SCV_EINVAL, "--stream-rate: at stream time %.6g s a worker's stream is too slow "
                                                "ever to deliver --stream-bounds' minimum; training cannot go on",
                               bp->tau);
    } else {
        scv_split_batch(bp->batch, c->K, c->n_shares ? c->shares : p->rank_weights, c->counts, c->offsets);
    }
    bp->t_data = scv_now(); /* the data is there: this worker's own work starts */
    /* the samples of the epoch this step takes: the batch, fewer with injection (its copies
     * are trained on as well: the global batch stays, each worker's c->counts[k]) */
    bp->epoch_samples = bp->home_on ? data_plan(c, (int64_t)c->st.pos + bp->batch >= N) : bp->batch;
    if (bp->stream_on) scv_stream_consume(c->stream, bp->s_start, c->own); /* each worker's own samples */
    return SCV_OK;
}

/* This rank's samples of the step, gathered into c->bx, c->by; their count. */
static int64_t batch_plan_gather(run_ctx *c, const batch_plan *bp)
{
    const size_t d = (size_t)c->train->c * c->train->h * c->train->w;
    int64_t bk = c->counts[c->rank], off = (int64_t)c->st.pos + c->offsets[c->rank];
    const int32_t *idx = c->perm + off;
    if (bp->data_on) idx = c->data_scratch, bk = worker_batch(c, c->rank, c->data_scratch);
    for (int64_t i = 0; i < bk; i++) {
        int32_t s = idx[i];
        memcpy(c->bx + (size_t)i * d, c->train->x + (size_t)s * d, d * sizeof(float));
        c->by[i] = c->train->y[s];
    }
    return bk;
}

/* After the step's allreduce: the next step's stream time (rank 0's, never before this
 * step's), the wait; rank 0 counts each worker's home-class samples (outside t_iter). */
static void batch_plan_done(run_ctx *c, batch_plan *bp, const step_scalars *x, double t0, int after_step)
{
    if (!after_step) {
        if (bp->stream_on) {
            double tau = (double)x->stream_hi + (double)x->stream_lo;
            bp->tau = tau > bp->s_start ? tau : bp->s_start;
            bp->wait += bp->t_data - t0;
        }
        return;
    }
    if (bp->home_on && c->home_acc) {
        int64_t *hs = c->home_acc, *ht = hs + SCV_MAX_WORKERS, *hk = ht + SCV_MAX_WORKERS;
        for (int k = 0; k < c->K; k++) {
            int64_t n = worker_batch(c, k, c->data_scratch);
            hk[k] = 0;
            for (int64_t i = 0; i < n; i++)
                hk[k] += scv_noniid_home(c->train->y[c->data_scratch[i]], k, c->K, c->train->n_classes);
            hs[k] += hk[k], ht[k] += n;
        }
    }
}

/* ---- one segment ---- */

/* The segment's state: its settings, what carries from step to step, and the step in hand. */
typedef struct seg {
    const scv_train_params *p;
    int64_t N, B, eval_every, n_test, sub_n;
    int subset_on, target_on, dyn, watch, per_worker;
    double eval_period, sample_bytes;
    size_t np;
    float *w, *g;
    step_values v;
    scv_stoprule rules;
    batch_plan bp;
    scv_exchange *xc;
    scv_exchange_step xs;
    double x_tprev, x_bprev;
    uint64_t order_epoch; /* the epoch c->perm holds, when have_order */
    int have_order;
    /* the segment so far */
    int64_t run_iters, run_samples, injected;
    double t_start, sum_comp, sum_comm, sum_iter, last_print;
    double acc, tloss, loss_ema;
    double period_loss, period_samples; /* the training loss since the last periodic point */
    int evaluated_at_end, acc_full, time_stop;
    /* the step in hand */
    double t0, t1, t2, t3, t4, tc, t_avg, gsq, local_mean;
    double gain; /* AdaScale's gain ratio of the step (1: another rule) */
    int64_t bk;
    int exact;
    float lr;
    int flagged, strag_end; /* the straggler rank 0 flagged in the last step; replace it */
    int preempt_end;        /* rank 0 saw a preemption notice (1) or a restore (2): resize in place */
} seg;

/* The segment's settings and state; latency probe. */
static int seg_begin(run_ctx *c, seg *s, scv_train_result *res, scv_err *err)
{
    const scv_train_params *p = c->p;
    int rc;
    memset(s, 0, sizeof *s);
    c->time_stable = 0;
    s->p = p, s->N = c->train->n, s->B = p->batch;
    s->eval_every = p->eval_every;
    if (p->eval_every_epochs > 0 && !p->eval_every) {
        s->eval_every = (int64_t)(p->eval_every_epochs * (double)s->N / (double)s->B);
        if (s->eval_every < 1) s->eval_every = 1;
    }
    s->np = scv_net_nparams(c->model);
    s->w = scv_net_params(c->model), s->g = scv_net_grads(c->model);
    s->t_start = scv_now(), s->acc = s->tloss = s->loss_ema = NAN, s->acc_full = 1;
    s->target_on = p->target_accuracy > 0 || p->target_loss > 0;
    c->t_start = s->t_start;
    /* periodic evaluations: sub_n test samples (subset_from; all of them when 0 or too many) */
    s->n_test = c->test->n;
    s->sub_n = p->eval_subset > 0 && p->eval_subset < s->n_test ? p->eval_subset : s->n_test;
    s->subset_on = s->sub_n < s->n_test;
    /* the stopping rules: the target window (the last W periodic accuracies, history
     * first), the noise and profiling rules, the iteration cap (train_rules.c) */
    scv_train_rules_init(&s->rules, p, c->K);
    /* stragglers: every rank adds its compute seconds to the allreduce, rank 0 applies the
     * rule and flags the worker it finds in the next one, so every rank sees it together;
     * under dynamic batching a slow worker is rebalanced, and reported only when the shares
     * cannot absorb it (unabsorbed_found), not by the throughput rule */
    s->dyn = p->dynamic_batching && c->K > 1;
    s->watch = p->straggler.fraction > 0 && c->K > 1 && (!s->dyn || straggler_dyn_fraction(c, p) > 0);
    s->per_worker = s->watch || s->dyn; /* the workers' compute seconds ride in the allreduce */
    s->v = step_values_at(s->g, s->np, c->K, s->per_worker, s->dyn);
    c->strag_flag = 0, c->dyn_send = 0;
    int oom = batch_plan_begin(c, &s->bp) != SCV_OK;
    const size_t d = (size_t)c->train->c * c->train->h * c->train->w;
    s->sample_bytes = (double)(d * sizeof(float) + 1); /* a sample as the trainer holds it, and its label */
    /* --eval-every-epochs with streaming or injection: every that many samples (the batches
     * vary, or a step takes fewer than B samples of the epoch) */
    s->eval_period = (s->bp.stream_on || s->bp.inject_on) && p->eval_every_epochs > 0 && !p->eval_every
                         ? p->eval_every_epochs * (double)s->N : 0;
    if (s->watch && c->rank == 0 && !c->strag && !(c->strag = malloc(sizeof *c->strag))) oom = 1;
    if (s->dyn && c->rank == 0 && !c->dyn && !(c->dyn = malloc(sizeof *c->dyn))) oom = 1;
    /* the shares: the previous segment's at the same K (dynamic batching goes on), else the
     * parameters' split */
    if (!s->dyn || c->n_shares != c->K) {
        c->n_shares = 0;
        if (s->dyn) {
            for (int k = 0; k < c->K; k++) c->shares[k] = p->rank_weights ? p->rank_weights[k] : 1;
            c->n_shares = c->K;
        }
    }
    if (oom) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    /* communication efficiency: the exchange replaces the gradient's allreduce (its residual
     * and its controllers go on from the previous segment where they can) */
    if (scv_exchange_opts_on(&p->comm)) {
        if ((rc = segment_exchange(c, &p->comm, s->np, err))) return rc;
        s->xc = c->xc;
    }
    if (s->watch && c->rank == 0) {
        scv_straggler_rule rule = p->straggler;
        if (s->dyn) rule.fraction = straggler_dyn_fraction(c, p);
        scv_straggler_init(c->strag, &rule, c->K);
    }
    if (s->dyn && c->rank == 0) scv_dynbatch_init(c->dyn, &p->dynbatch, c->K, s->B, c->shares);
    if (c->K > 1 && (rc = latency_probe(c, err))) return rc;
    res->b_simple = NAN;
    snprintf(res->stopped_by, sizeof res->stopped_by, "%s", "max_epochs");
    return SCV_OK;
}

/* The stopping rules checked before a step (the cap, the epoch bound, the profiling rule's
 * verdict from the last allreduce, the safety bound); then the epoch's order. 1: stop. */
static int seg_stop_before(run_ctx *c, seg *s, scv_train_result *res)
{
    const scv_train_params *p = s->p;
    if (s->time_stop) return 1;
    if (scv_stoprule_capped(&s->rules, (int64_t)c->st.iteration)) {
        snprintf(res->stopped_by, sizeof res->stopped_by, "iterations");
        return 1;
    }
    if (p->epochs > 0 && (double)c->st.samples_seen >= p->epochs * (double)s->N - 0.5) {
        snprintf(res->stopped_by, sizeof res->stopped_by, "epochs");
        return 1;
    }
    if (s->target_on && !(p->epochs > 0) && !p->iterations && (double)c->st.samples_seen >= 200.0 * (double)s->N)
        return 1; /* safety bound: 200 epochs */
    if (c->st.pos >= (uint64_t)s->N) {
        c->st.epoch++;
        c->st.pos = 0;
    }
    if (!s->have_order || c->st.epoch != s->order_epoch) {
        scv_epoch_order(p->seed, c->st.epoch, s->N, c->perm);
        s->order_epoch = c->st.epoch, s->have_order = 1;
    }
    return 0;
}

/* AdaScale at K = 1 (one slice): forward and backward on each half of the batch, the
 * halves' gradients summed in g (the batch's, as one pass would give) and the mean of their
 * squared mean-gradient norms in *sq_half (slices of bk / 2 samples). */
static int step_halves(run_ctx *c, float *g, size_t np, int64_t bk, int64_t B, double *loss_sum, int64_t *correct,
                       double *sq_half, scv_err *err)
{
    const size_t d = (size_t)c->train->c * c->train->h * c->train->w;
    const int64_t n1 = bk / 2, n2 = bk - n1;
    if (!c->ada_half && !(c->ada_half = malloc(sizeof(float) * np)))
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int rc = scv_net_train_step(c->model, c->bx, c->by, (int)n1, 1.0f / (float)B, loss_sum, correct, err);
    if (rc) return rc;
    memcpy(c->ada_half, g, sizeof(float) * np);
    rc = scv_net_train_step(c->model, c->bx + (size_t)n1 * d, c->by + n1, (int)n2, 1.0f / (float)B, loss_sum, correct,
                            err);
    if (rc) return rc;
    double u1 = (double)B / (double)n1, u2 = (double)B / (double)n2; /* the buffers hold (n_h / B) g_h */
    *sq_half = 0.5 * (sqnorm(c->ada_half, np) * u1 * u1 + sqnorm(g, np) * u2 * u2);
    for (size_t i = 0; i < np; i++) g[i] += c->ada_half[i];
    return SCV_OK;
}

/* Forward and backward on this rank's slice, then the allreduce of the gradient with the
 * step's values (or the exchange), then the optimiser (at the learning rate of the schedule,
 * times AdaScale's gain where that is the rule: its statistics observed after the step). */
static int seg_step(run_ctx *c, seg *s, scv_err *err)
{
    const scv_train_params *p = s->p;
    const int64_t Bcur = s->bp.batch, bk = s->bk = batch_plan_gather(c, &s->bp);
    const int ada = p->lr_scaling == SCV_LR_SCALE_ADASCALE, halves = ada && c->K == 1 && bk >= 2;
    double loss_sum = 0, sq_half = NAN;
    int64_t correct = 0;
    s->t1 = scv_now();
    int rc = halves ? step_halves(c, s->g, s->np, bk, Bcur, &loss_sum, &correct, &sq_half, err)
                    : scv_net_train_step(c->model, c->bx, c->by, (int)bk, 1.0f / (float)Bcur, &loss_sum, &correct, err);
    s->tc = scv_now(); /* this worker's own compute ends (the agreement waits for the others) */
    if ((rc = scv_comm_agree(c->comm, rc, err))) return rc;
    s->t2 = scv_now();
    /* |g_k|^2 of this rank's mean gradient: the buffer holds (b_k/B) g_k */
    const size_t np = s->np;
    float *g = s->g;
    step_scalars *x = s->v.x;
    double sq = p->no_grad_stats && !scv_exchange_opts_on(&p->comm) ? 0 : sqnorm(g, np); /* the exchange uses it */
    double unscale = bk > 0 ? (double)Bcur / (double)bk : 0;
    x->local_sq = (float)(sq * unscale * unscale);
    x->has = bk > 0;
    x->loss = (float)loss_sum;
    x->correct = (float)correct;
    x->stop = (float)scv_train_stop_requested();
    x->time_stable = (float)c->time_stable;
    x->straggler = (float)c->strag_flag;
    x->rebalance = (float)c->dyn_send;
    x->preempt = (float)(c->rank == 0 && c->preempt_poll ? c->preempt_poll(c->preempt_ctx) : 0);
    double clk = s->bp.stream_on && c->rank == 0 ? scv_now() - s->t_start : 0;
    x->stream_hi = (float)clk;
    x->stream_lo = (float)(clk - (double)x->stream_hi);
    if (s->per_worker) {
        memset(s->v.t_workers, 0, sizeof(float) * (size_t)c->K * (s->dyn ? 2 : 1));
        s->v.t_workers[c->rank] = (float)(s->tc - s->bp.t_data + scv_now() - s->t2);
        for (int k = 0; c->dyn_send && k < c->K; k++) s->v.shares[k] = (float)c->dyn->share[k];
    }
    if ((rc = s->xc ? scv_exchange_run(s->xc, c->comm, g, s->v.n, unscale, sq, s->x_tprev, s->x_bprev, &s->xs, err)
                    : scv_comm_allreduce_f32(c->comm, g, np + s->v.n, err)))
        return rc;
    s->t3 = scv_now();
    batch_plan_done(c, &s->bp, x, s->t0, 0);
    /* SGD step, with |g|^2 of the averaged gradient in the same pass */
    s->gain = ada ? scv_adascale_gain(&c->ada, (double)Bcur, (double)p->base_batch) : 1;
    s->lr = (float)(scv_lr_at(p, Bcur, (int64_t)c->st.samples_seen, s->N) * s->gain);
    float mu = (float)p->momentum, wd = (float)p->weight_decay;
    s->exact = !s->xc || s->xs.dense; /* g is the batch's mean gradient */
    s->gsq = p->no_grad_stats || !s->exact ? sgd_step(s->w, c->mom, g, np, s->lr, mu, wd, 0)
                                           : sgd_step(s->w, c->mom, g, np, s->lr, mu, wd, 1);
    if (ada && halves) scv_adascale_observe(&c->ada, sq_half, 0.5 * (double)bk, s->gsq, (double)Bcur);
    else if (ada && x->has >= 2) /* the workers' slices, B / K each */
        scv_adascale_observe(&c->ada, x->local_sq / x->has, (double)Bcur / x->has, s->gsq, (double)Bcur);
    s->t_avg = 0; /* SelSync's average of the replicas (parameters and momenta): communication too */
    if (s->xc && s->xs.average_params) {
        if ((rc = scv_exchange_average(s->xc, c->comm, s->w, c->mom, &s->t_avg, err))) return rc;
        s->xs.t_exchange += s->t_avg, s->xs.bytes += 8.0 * (double)np;
    }
    s->t4 = scv_now();
    s->x_tprev = s->t4 - s->t0, s->x_bprev = (double)Bcur;
    return SCV_OK;
}

/* After the step: the position, the counters, the divergence check, rank 0's straggler rule
 * and dynamic batching controller, the metrics line. */
static int seg_account(run_ctx *c, seg *s, scv_err *err)
{
    const int64_t Bcur = s->bp.batch;
    const step_scalars *x = s->v.x;
    batch_plan_done(c, &s->bp, x, s->t0, 1);
    if (c->inj) s->injected += c->inj->injected;
    c->st.iteration++;
    c->st.pos += (uint64_t)s->bp.epoch_samples; /* the epoch moves by its samples taken, copies not counted */
    c->st.samples_seen += (uint64_t)s->bp.epoch_samples;
    s->run_iters++;
    s->run_samples += Bcur;
    double loss = x->loss / (double)Bcur;
    s->local_mean = x->has > 0 ? x->local_sq / x->has : 0;
    if (!isfinite(loss)) { /* its line first (the loss as printf writes it): a driver reading the metrics
                              * sees the divergence, whatever the exit */
        scv_tm_iter_line(c, &(scv_tm_iter){.batch = Bcur, .local_batch = s->bk, .t_compute = s->t2 - s->t1,
                                           .t_comm = s->t3 - s->t2 + s->t_avg, .t_iter = s->t4 - s->t0,
                                           .loss = loss, .lr = s->lr, .local_mean = s->local_mean, .gsq = s->gsq,
                                           .stats = !s->p->no_grad_stats, .exact = s->exact});
        return scv_err_set(err, SCV_ERANGE, "training diverged at iteration %llu (loss is not finite); lower --lr",
                           (unsigned long long)c->st.iteration);
    }
    s->loss_ema = isnan(s->loss_ema) ? loss : 0.95 * s->loss_ema + 0.05 * loss;
    s->period_loss += x->loss, s->period_samples += (double)Bcur;
    s->sum_comp += s->t2 - s->t1;
    s->sum_comm += s->t3 - s->t2 + s->t_avg;
    s->sum_iter += s->t4 - s->t0;
    /* a straggler found in the previous iteration; a negative flag: replace it */
    const int flagged = s->flagged = (int)fabsf(x->straggler) - 1;
    s->strag_end = x->straggler < 0;
    s->preempt_end = (int)lrintf(x->preempt);
    c->strag_flag = 0;
    if (s->watch && c->rank == 0 && flagged < 0) straggler_watch(c, s->v.t_workers, s->t4 - s->t0);
    if (s->dyn && x->rebalance > 0) /* rank 0's new shares: from the next iteration */
        for (int k = 0; k < c->K; k++) c->shares[k] = s->v.shares[k];
    c->dyn_send = 0;
    if (s->dyn && c->rank == 0 && !(x->rebalance > 0)) { /* the controller (one change in flight) */
        double tk[SCV_MAX_WORKERS];
        for (int k = 0; k < c->K; k++) tk[k] = s->v.t_workers[k];
        const int changed = scv_dynbatch_update(c->dyn, tk, c->counts);
        if (c->dyn->unabsorbed >= 0) unabsorbed_found(c);
        if (changed) c->dyn_send = 1, scv_tm_rebalance(c);
    }
    const batch_plan *bp = &s->bp;
    scv_tm_iter_line(c, &(scv_tm_iter){.batch = Bcur,
                                       .local_batch = s->bk,
                                       .epoch_samples = bp->epoch_samples,
                                       .t_compute = s->t2 - s->t1,
                                       .t_comm = s->t3 - s->t2 + s->t_avg,
                                       .t_iter = s->t4 - s->t0,
                                       .loss = loss,
                                       .train_accuracy = x->correct / (double)Bcur,
                                       .lr = s->lr,
                                       .local_mean = s->local_mean,
                                       .gsq = s->gsq,
                                       .stats = !s->p->no_grad_stats,
                                       .exact = s->exact,
                                       .t_workers = s->per_worker ? s->v.t_workers : NULL,
                                       .batches = s->per_worker || bp->stream_on || bp->data_on,
                                       .stream = bp->stream_on,
                                       .stream_clock = bp->s_start,
                                       .stream_wait = bp->t_data - s->t0,
                                       .home = bp->home_on,
                                       .data = bp->data_on,
                                       .sample_bytes = s->sample_bytes,
                                       .xs = s->xc ? &s->xs : NULL,
                                       .ada = s->p->lr_scaling == SCV_LR_SCALE_ADASCALE,
                                       .ada_gain = s->gain,
                                       .ada_noise_scale = scv_adascale_noise_scale(&c->ada)});
    return SCV_OK;
}

/* The target window reached at a periodic evaluation: confirmed on the whole test set when
 * the evaluations are on a subset (accuracy), written as a "target" line. */
static int seg_target(run_ctx *c, seg *s, scv_train_result *res, scv_err *err)
{
    const scv_train_params *p = s->p;
    const int by_loss = p->target_loss > 0, W = s->rules.W, n_hist = s->rules.n_from_history;
    const double target = by_loss ? p->target_loss : p->target_accuracy, mean = s->rules.mean;
    char how[128], hist[48] = "", conf[96] = "";
    if (n_hist) snprintf(hist, sizeof hist, ", %d from --target-history", n_hist);
    if (by_loss)
        snprintf(how, sizeof how, "mean of last %d period-mean training losses%s %.4f <= %.4f", W, hist, mean, target);
    else if (W == 1)
        snprintf(how, sizeof how, "%s eval (n=%lld) %.4f >= %.4f", s->subset_on ? "subset" : "full test",
                 (long long)s->sub_n, mean, target);
    else
        snprintf(how, sizeof how, "mean of last %d %s evals (n=%lld%s) %.4f >= %.4f", W,
                 s->subset_on ? "subset" : "full test", (long long)s->sub_n, hist, mean, target);
    int ok = 1, rc;
    double facc = NAN;
    if (s->subset_on && !by_loss) { /* confirm on the whole test set */
        if ((rc = scv_train_eval_on(c, 0, s->n_test, "confirm", NAN, 0, &facc, &s->tloss, res, err))) return rc;
        s->acc = facc;
        s->evaluated_at_end = s->acc_full = 1;
        double floor_ = p->target_accuracy - p->target_confirm_tol;
        ok = facc >= floor_;
        snprintf(conf, sizeof conf, ", full test (n=%lld) %.4f %s %.4f (tol %g)", (long long)s->n_test, facc,
                 ok ? ">=" : "<", floor_, p->target_confirm_tol);
    }
    if (ok) {
        res->reached_target = 1;
        snprintf(res->reached_by, sizeof res->reached_by, "%s%s", how, conf);
    }
    scv_tm_target_line(c, &(scv_tm_target){.by_loss = by_loss, .target = target, .window = W, .from_history = n_hist,
                                           .mean = mean, .subset = s->subset_on, .n = s->sub_n, .full_accuracy = facc,
                                           .confirm_tol = p->target_confirm_tol, .reached = ok, .how = how,
                                           .confirm = conf});
    return SCV_OK;
}

/* Where a periodic evaluation on a subset starts: the test set in slices of sub_n samples,
 * taken in turn (the evaluation's number by the period: samples, iterations or epochs
 * trained), so that every sample is evaluated once every ceil(n_test / sub_n) evaluations and
 * the target window's mean stands for the whole set. The first sub_n samples alone read
 * Fashion-MNIST's accuracy 0.8-1.2 points above the whole set's (logistic regression, an MLP
 * and LeNet, 12 evaluations each over 3 epochs, docs/BENCHMARKS.md): the window reached an
 * accuracy target the whole set had not, and its curve stood above the whole set's. */
static int64_t subset_from(const run_ctx *c, const seg *s)
{
    if (!s->subset_on) return 0;
    int64_t k = (s->n_test + s->sub_n - 1) / s->sub_n, e;
    if (s->eval_period > 0) e = (int64_t)floor((double)c->st.samples_seen / s->eval_period);
    else if (s->eval_every) e = (int64_t)c->st.iteration / s->eval_every;
    else e = (int64_t)(c->st.samples_seen / (uint64_t)s->N);
    return e % k * s->sub_n % s->n_test;
}

/* A periodic evaluation when one is due (with a target, even when stopping), and the
 * target window on it. */
static int seg_evaluate(run_ctx *c, seg *s, int stop_now, scv_train_result *res, scv_err *err)
{
    const int epoch_end = c->st.pos >= (uint64_t)s->N;
    const int do_eval = s->eval_period > 0 ? floor((double)c->st.samples_seen / s->eval_period) >
                                                 floor((double)(c->st.samples_seen - (uint64_t)s->bp.epoch_samples) /
                                                       s->eval_period)
                        : s->eval_every ? (int64_t)c->st.iteration % s->eval_every == 0
                                        : epoch_end;
    s->evaluated_at_end = 0;
    if (!(do_eval && (s->target_on || !stop_now))) return SCV_OK;
    double ploss = s->period_samples > 0 ? s->period_loss / s->period_samples : NAN, pn = s->period_samples;
    s->period_loss = s->period_samples = 0;
    int rc;
    if (s->xc && (rc = scv_exchange_sync(s->xc, c->comm, s->w, c->mom, err))) return rc; /* one model is evaluated */
    if ((rc = scv_train_eval_on(c, subset_from(c, s), s->sub_n, "periodic", ploss, pn, &s->acc, &s->tloss, res, err)))
        return rc;
    s->evaluated_at_end = s->acc_full = !s->subset_on;
    /* the window decides once it holds W values (every rank sees the same reduced
     * accuracies, so every rank decides the same) */
    if (scv_train_rules_eval(&s->rules, s->p, s->acc, ploss) == SCV_STOP_TARGET) return seg_target(c, s, res, err);
    return SCV_OK;
}

static void fmt_eta(double s, char *buf, size_t cap)
{
    if (!(s >= 0) || s > 1e7) snprintf(buf, cap, "?");
    else if (s >= 3600) snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
    else snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
}

/* Rank 0, --progress: the terminal's progress line, at most every 0.5 s (and at the end). */
static void seg_progress(run_ctx *c, seg *s, int force)
{
    const scv_train_params *p = s->p;
    double now = scv_now();
    if (!(now - s->last_print > 0.5 || force)) return;
    const double N = (double)s->N;
    double el = now - s->t_start, rate = el > 0 ? (double)s->run_iters / el : 0, left = -1;
    if (p->iterations) left = (double)(p->iterations - (int64_t)c->st.iteration) / rate;
    if (p->epochs > 0) {
        double l2 = (p->epochs * N - (double)c->st.samples_seen) / (double)s->B / rate;
        if (left < 0 || l2 < left) left = l2;
    }
    char eta[32];
    fmt_eta(left, eta, sizeof eta);
    fprintf(stderr, "\r\033[Kiter %llu | epoch %.2f | loss %.4f | test acc %s%.4f | %.0f samples/s | ETA %s",
            (unsigned long long)c->st.iteration, (double)c->st.samples_seen / N, s->loss_ema, isnan(s->acc) ? "-" : "",
            isnan(s->acc) ? 0.0 : s->acc, el > 0 ? (double)s->run_samples / el : 0.0, eta);
    fflush(stderr);
    s->last_print = now;
}

/* The stopping rules checked after a step, in their order: a stop signal, the target, a
 * straggler to replace, the noise rule, the profiling rule (rank 0's; it travels in the next
 * allreduce, so all ranks stop after the same iteration). 1: stop now. */
static int seg_stop_after(run_ctx *c, seg *s, int stop_now, int last, scv_train_result *res)
{
    if (stop_now) {
        res->interrupted = 1;
        snprintf(res->stopped_by, sizeof res->stopped_by, "interrupted");
        return 1;
    }
    if (res->reached_target) {
        snprintf(res->stopped_by, sizeof res->stopped_by, "target");
        return 1;
    }
    if (s->strag_end && !last && !s->time_stop) { /* the segment goes on without the straggler */
        snprintf(res->stopped_by, sizeof res->stopped_by, "straggler");
        res->straggler = s->flagged;
        res->straggler_ratio = c->rank == 0 ? c->events[c->strag_event].ratio : NAN;
        return 1;
    }
    if (s->preempt_end && !last && !s->time_stop) { /* the job resizes for a notice or a restore */
        snprintf(res->stopped_by, sizeof res->stopped_by, s->preempt_end == 1 ? "preempt" : "restored");
        return 1;
    }
    const scv_stop_verdict v =
        scv_train_rules_iter(&s->rules, s->p, s->bp.batch, s->local_mean, s->gsq, s->exact, s->t4 - s->t0);
    res->b_simple = s->rules.b_simple;
    if (v == SCV_STOP_NOISE) {
        snprintf(res->stopped_by, sizeof res->stopped_by, "noise_stable");
        return 1;
    }
    if (v == SCV_STOP_TIME && c->rank == 0) c->time_stable = 1;
    return 0;
}

/* After the last step: the exchange's replicas made one, the final evaluation, the window
 * kept for an elastic continuation, the metrics flushed, the end checkpoint. */
static int seg_end(run_ctx *c, seg *s, int rc, scv_train_result *res, double *wall, scv_err *err)
{
    const scv_train_params *p = s->p;
    if (c->rank == 0 && p->progress) fputc('\n', stderr);
    if (!rc && s->xc) rc = scv_exchange_sync(s->xc, c->comm, s->w, c->mom, err); /* what is evaluated and saved */
    if (rc && s->xc) { /* a failed segment: the ranks' exchanges may not agree any more */
        scv_exchange_free(c->xc);
        c->xc = NULL;
    }
    *wall = scv_now() - s->t_start;
    /* the whole test set at the end: unless told not to, except where the run ends (the
     * target reached, the epoch bound) and the last evaluation was not on the whole set */
    int run_ends = res->reached_target || !strcmp(res->stopped_by, "epochs");
    if (!rc && !res->interrupted &&
        (!p->no_final_eval ? !s->evaluated_at_end : run_ends && (!s->acc_full || isnan(s->acc)))) {
        rc = scv_train_eval_on(c, 0, s->n_test, NULL, NAN, 0, &s->acc, &s->tloss, res, err); /* the whole test set */
        s->acc_full = 1;
    }
    /* an elastic job continues a segment with it */
    c->n_window = scv_stoprule_window(&s->rules, c->window, SCV_TARGET_WINDOW_MAX);
    if (!rc) rc = scv_comm_agree(c->comm, c->rank == 0 ? scv_tm_flush(c, err) : SCV_OK, err);
    if (!rc && p->checkpoint_dir && (!p->no_end_checkpoint || res->interrupted))
        rc = scv_train_save_checkpoint(c, *wall, err);
    if (!rc && res->interrupted)
        rc = scv_err_set(err, SCV_EINTR, "interrupted at iteration %llu%s%s", (unsigned long long)c->st.iteration,
                         p->checkpoint_dir ? "; checkpoint saved in " : "", p->checkpoint_dir ? p->checkpoint_dir : "");
    return rc;
}

/* res: what the segment did. */
static void seg_result(run_ctx *c, const seg *s, double wall, scv_train_result *res)
{
    const scv_train_params *p = s->p;
    snprintf(res->model, sizeof res->model, "%s", p->model);
    res->workers = c->K;
    res->batch = p->batch;
    res->iterations = (int64_t)c->st.iteration;
    res->iterations_run = s->run_iters;
    res->epochs = c->train ? (double)c->st.samples_seen / (double)c->train->n : 0;
    res->samples_seen = (int64_t)c->st.samples_seen;
    res->wall_seconds = c->wall_before + wall;
    c->wall_before += wall; /* the next segment (elastic mode) continues the clock */
    res->samples_per_sec = s->sum_iter > 0 ? (double)s->run_samples / s->sum_iter : 0;
    res->test_accuracy = s->acc;
    res->test_loss = s->tloss;
    res->accuracy_full = s->acc_full;
    res->train_loss = s->loss_ema;
    res->stream_wait_seconds = s->bp.wait;
    if (s->dyn) { /* every rank holds the shares in use; rank 0 the controller's count */
        res->rebalances = c->rank == 0 ? c->dyn->adjustments : 0;
        res->n_shares = c->K;
        memcpy(res->shares, c->shares, sizeof(double) * (size_t)c->K);
    }
    for (int k = 0; s->bp.stream_on && k < c->K; k++) res->stream_dropped += c->stream->dropped[k];
    /* non-IID streams and data injection: the skew, the home-class shares (rank 0 measured
     * them), the copies and their bytes */
    res->noniid_skew = p->noniid_skew;
    res->home_fraction_mean = NAN;
    if (s->bp.home_on && c->home_acc) {
        const int64_t *hs = c->home_acc, *ht = hs + SCV_MAX_WORKERS;
        int64_t h = 0, t = 0;
        res->n_home = c->K < 64 ? c->K : 64;
        for (int k = 0; k < c->K; k++) {
            if (k < res->n_home) res->home_fraction[k] = ht[k] > 0 ? (double)hs[k] / (double)ht[k] : 0;
            h += hs[k], t += ht[k];
        }
        if (t > 0) res->home_fraction_mean = (double)h / (double)t;
    }
    res->injected_samples = s->injected;
    res->injected_bytes = (double)s->injected * s->sample_bytes;
    if (s->run_iters) {
        res->t_compute_mean = s->sum_comp / (double)s->run_iters;
        res->t_comm_mean = s->sum_comm / (double)s->run_iters;
        res->t_iter_mean = s->sum_iter / (double)s->run_iters;
    }
}

int scv_train_segment(run_ctx *c, scv_train_result *res, scv_err *err)
{
    const scv_train_params *p = c->p;
    seg s;
    int rc = seg_begin(c, &s, res, err);
    if (rc) return rc;
    for (;;) {
        if (seg_stop_before(c, &s, res)) break;
        s.t0 = scv_now();
        if ((rc = batch_plan_step(c, &s.bp, s.t_start, err))) break;
        if ((rc = seg_step(c, &s, err))) break;
        if ((rc = seg_account(c, &s, err))) break;
        const int stop_now = s.v.x->stop > 0; /* the step's values, as reduced */
        if (!stop_now && s.v.x->time_stable > 0) { /* rank 0's iteration-time rule fired */
            snprintf(res->stopped_by, sizeof res->stopped_by, "time_stable");
            s.time_stop = 1;
        }
        const int last = (p->iterations && (int64_t)c->st.iteration >= p->iterations) ||
                         (p->epochs > 0 && (double)c->st.samples_seen >= p->epochs * (double)s.N - 0.5);
        if ((rc = seg_evaluate(c, &s, stop_now, res, err))) break;
        const int ckpt_now = p->checkpoint_dir && p->checkpoint_every && (int64_t)c->st.iteration % p->checkpoint_every == 0;
        if (ckpt_now && s.xc && (rc = scv_exchange_sync(s.xc, c->comm, s.w, c->mom, err))) break;
        if (ckpt_now && (rc = scv_train_save_checkpoint(c, scv_now() - s.t_start, err))) break;
        if (c->rank == 0 && p->progress) seg_progress(c, &s, last || stop_now || res->reached_target);
        if (seg_stop_after(c, &s, stop_now, last, res)) break;
    }
    double wall;
    rc = seg_end(c, &s, rc, res, &wall, err);
    seg_result(c, &s, wall, res);
    return rc;
}
