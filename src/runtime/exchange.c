/*
 * exchange.c - the gradient exchange with communication efficiency (see exchange.h). Units:
 * seconds, bytes. The exchange's own control floats, after the caller's, are
 *   [0] the compression gain of this rank's step   [1] SelSync: this rank asks to synchronise
 *   [2] rank 0's factor for the next step          [3] rank 0's collective for the next step
 *   [4 .. 4+K) rank k's |g_ef|^2 (VAR picks the largest of the previous step); under SelSync
 *              with a target share of local steps, rank k's change of |g_k|^2 (every rank
 *              decides on the largest, alike)
 * and they are summed over the ranks with the caller's, inside whichever collective carries
 * the gradient, so a step costs one collective (two for AR-Topk: the indices' broadcast and
 * the values' allreduce; SelSync: the scalars' allreduce, then the gradient's or the
 * parameters' when it synchronises). Rank 0 alone decides the factor (GraVAC) and the
 * collective, and every rank adopts them from the sums, so all use the same k and the same
 * collective at every step.
 *
 * The collectives' costs (Open MPI's ring allreduce, allgather and broadcast; AR-Topk's
 * Table I): a dense allreduce of M bytes 2(K-1) alpha + 2 (K-1)/K M beta; an allgather of m
 * bytes per rank log2 K alpha + (K-1) m beta; AR-Topk's broadcast of 4k bytes and allreduce
 * of m bytes (log2 K + 2(K-1)) alpha + (4k log2 K + 2 (K-1)/K m) beta. Each measured exchange
 * is one equation t = a alpha + b beta; alpha and beta are the least-squares fit over them
 * with a forgetting factor (old steps fade, so the fit follows the network), and rank 0
 * switches collective when the other is predicted (scv_sparse_cost, src/model/perf.c) to be at
 * least 10% cheaper at the current factor.
 */
#define _POSIX_C_SOURCE 200809L
#include "exchange.h"
#include "../core/util.h"
#include "../train/compress.h"
#include "../train/train.h"
#include "../model/model.h"
#include "runtime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { C_GAIN, C_SYNC, C_CF, C_COLL, C_NORM, C_FIXED = C_NORM };
_Static_assert(C_FIXED == SCV_EXCHANGE_CTL_FIXED, "exchange.h states the control floats");
#define FORGET 0.98   /* the alpha-beta fit's forgetting factor per step */
#define SWITCH 0.9    /* switch collective when the other costs at most this share */

struct scv_exchange {
    scv_exchange_opts o;
    int K, rank;
    size_t np;
    int64_t steps;
    double cf;                      /* the factor in use (1: dense) */
    scv_sparse_coll coll;           /* the sparse collective in use */
    float *e, *val, *pack;          /* residual; values; packing buffer */
    uint32_t *idx, *work;
    scv_topk_guess guess;           /* the last selection's threshold, the next one's guess */
    double prev_norm[SCV_MAX_WORKERS];
    scv_gravac_state gv;
    scv_selsync_state ss;
    int in_sync;
    int e_dirty;                    /* the residual may hold unsent mass */
    double last_gain, last_cf;      /* the previous step's mean gain and its factor (GraVAC's input) */
    double saa, sab, sbb, sat, sbt; /* the fit's normal equations */
    double alpha, beta;
};

scv_exchange_opts scv_exchange_opts_default(void)
{
    return (scv_exchange_opts){.compress = SCV_COMPRESS_NONE, .cf = 100, .collective = SCV_COLL_AUTO, .var_root = 0,
                           .dense_steps = 20, .selsync = 0, .gravac = scv_gravac_policy_default(),
                           .sel = scv_selsync_policy_default()};
}

int scv_exchange_opts_on(const scv_exchange_opts *o) { return o && (o->compress != SCV_COMPRESS_NONE || o->selsync); }

size_t scv_exchange_ctl(int K) { return C_FIXED + (size_t)(K > 0 ? K : 1); }

int scv_exchange_new(const scv_exchange_opts *o, int K, int rank, size_t np, scv_exchange **out, scv_err *err)
{
    *out = NULL;
    if (o->selsync && o->compress != SCV_COMPRESS_NONE)
        return scv_err_set(err, SCV_EINVAL, "SelSync and compression do not combine: choose one");
    if (o->selsync && !(o->sel.lssr >= 0 && o->sel.lssr < 1))
        return scv_err_set(err, SCV_EINVAL, "SelSync's share of local steps %g: expected [0, 1)", o->sel.lssr);
    if (o->compress == SCV_COMPRESS_TOPK && !(o->cf > 1))
        return scv_err_set(err, SCV_EINVAL, "compression factor %g: expected more than 1 (1 is dense)", o->cf);
    if (K < 1 || K > SCV_MAX_WORKERS) return scv_err_set(err, SCV_EINVAL, "exchange: %d workers", K);
    if (np > UINT32_MAX) return scv_err_set(err, SCV_ERANGE, "exchange: %zu parameters", np);
    scv_exchange *x = calloc(1, sizeof *x);
    if (!x) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    x->o = *o, x->K = K, x->rank = rank, x->np = np, x->in_sync = 1, x->last_gain = NAN;
    x->alpha = x->beta = NAN;
    x->coll = o->collective == SCV_COLL_ARTOPK ? SCV_SPARSE_AR_RING : SCV_SPARSE_ALLGATHER;
    scv_gravac_init(&x->gv, &o->gravac);
    scv_selsync_init(&x->ss, &o->sel);
    /* the factor as it travels between ranks (a float), so every k matches kmax below */
    x->cf = (float)(o->compress == SCV_COMPRESS_TOPK ? o->cf : o->compress == SCV_COMPRESS_GRAVAC ? x->gv.cf : 1);
    if (o->compress != SCV_COMPRESS_NONE) {
        const size_t nctl = scv_exchange_ctl(K) + SCV_GRAD_EXTRA;
        x->e = calloc(np ? np : 1, sizeof *x->e);
        x->val = malloc((np + nctl) * sizeof *x->val);
        x->idx = malloc((np ? np : 1) * sizeof *x->idx);
        x->work = malloc((np + 1) * sizeof *x->work);
        /* the allgather's: per rank k indices, k values, the scalars; all ranks' and this one's
         * (k is largest at the smallest factor that is ever sent) */
        const size_t kmax = scv_topk_count(np, o->compress == SCV_COMPRESS_TOPK ? x->cf : (float)o->gravac.cf_min);
        if (o->collective != SCV_COLL_ARTOPK) x->pack = malloc((size_t)(K + 1) * (2 * kmax + nctl) * sizeof *x->pack);
        if (!x->e || !x->val || !x->idx || !x->work || (o->collective != SCV_COLL_ARTOPK && !x->pack)) {
            scv_exchange_free(x);
            return scv_err_set(err, SCV_ENOMEM, "out of memory for the compression buffers (%zu parameters)", np);
        }
    }
    *out = x;
    return SCV_OK;
}

void scv_exchange_free(scv_exchange *x)
{
    if (!x) return;
    free(x->e), free(x->val), free(x->pack), free(x->idx), free(x->work);
    free(x);
}

int scv_exchange_sync(scv_exchange *x, scv_comm *comm, float *w, float *mom, scv_err *err)
{
    if (!x || x->in_sync) return SCV_OK;
    x->in_sync = 1;
    return scv_exchange_average(x, comm, w, mom, NULL, err);
}

void scv_exchange_alpha_beta(const scv_exchange *x, double *alpha, double *beta)
{
    *alpha = x->alpha, *beta = x->beta;
}

/* One measured exchange: t = a alpha + b beta; refits when the equations determine both. */
static void fit_add(scv_exchange *x, double a, double b, double t)
{
    if (!(t > 0) || x->K < 2) return;
    x->saa = FORGET * x->saa + a * a, x->sab = FORGET * x->sab + a * b, x->sbb = FORGET * x->sbb + b * b;
    x->sat = FORGET * x->sat + a * t, x->sbt = FORGET * x->sbt + b * t;
    double det = x->saa * x->sbb - x->sab * x->sab;
    if (!(det > 1e-9 * x->saa * x->sbb)) return; /* one kind of equation so far: not determined */
    double al = (x->sat * x->sbb - x->sab * x->sbt) / det, be = (x->saa * x->sbt - x->sab * x->sat) / det;
    x->alpha = al > 0 ? al : 0, x->beta = be > 0 ? be : 1e-12;
}

static double lg2(int K) { return log2((double)(K > 1 ? K : 1)); }

/* Rank 0: the collective for the next step at factor cf (the preference, or the model's). */
static scv_sparse_coll choose(const scv_exchange *x, double cf)
{
    if (x->o.collective == SCV_COLL_ALLGATHER) return SCV_SPARSE_ALLGATHER;
    const double M = 4.0 * (double)x->np, c = 1.0 / cf;
    if (x->o.collective == SCV_COLL_ARTOPK) /* AR-Topk: its ring or tree form, by the model */
        return isnan(x->alpha) || scv_sparse_cost(SCV_SPARSE_AR_RING, x->alpha, x->beta, M, c, x->K) <=
                                      scv_sparse_cost(SCV_SPARSE_AR_TREE, x->alpha, x->beta, M, c, x->K)
                   ? SCV_SPARSE_AR_RING
                   : SCV_SPARSE_AR_TREE;
    if (isnan(x->alpha)) return x->coll;
    scv_sparse_coll best = scv_sparse_choose(x->alpha, x->beta, M, c, x->K);
    double now = scv_sparse_cost(x->coll, x->alpha, x->beta, M, c, x->K);
    return scv_sparse_cost(best, x->alpha, x->beta, M, c, x->K) <= SWITCH * now ? best : x->coll;
}

/* Rank 0's decisions for the next step, into the exchange's control floats. */
static void decide(scv_exchange *x, float *mine, double t_prev, double b_prev)
{
    if (x->rank != 0) return;
    double cf = x->cf;
    if (x->o.compress == SCV_COMPRESS_GRAVAC && x->steps > x->o.dense_steps && isfinite(x->last_gain)) {
        scv_gravac_step(&x->gv, x->last_cf, x->last_gain, t_prev, b_prev);
        cf = x->gv.cf;
    }
    mine[C_CF] = (float)cf;
    mine[C_COLL] = (float)choose(x, cf > 1 ? cf : x->o.gravac.cf_min); /* dense: for the next sparse step */
}

/* Sums n floats of `all` (K blocks of stride floats, at offset) into dst: every rank adds in
 * rank order, so all get the same sums. */
static void sum_blocks(float *dst, const float *all, int K, size_t stride, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        float s = 0;
        for (int r = 0; r < K; r++) s += all[(size_t)r * stride + j];
        dst[j] = s;
    }
}

int scv_exchange_run(scv_exchange *x, scv_comm *comm, float *buf, size_t n_caller, double own_scale, double grad_sq,
                     double t_prev, double b_prev, scv_exchange_step *out, scv_err *err)
{
    const int K = x->K;
    const size_t np = x->np, nmine = scv_exchange_ctl(K), nctl = n_caller + nmine;
    float *grad = buf, *ctl = buf + np, *mine = ctl + n_caller;
    memset(out, 0, sizeof *out);
    out->gain = out->probe_gain = NAN, out->cf = 1, out->collective = "allreduce";
    memset(mine, 0, nmine * sizeof *mine);
    int rc;
    double tx = 0;
    const double lg = lg2(K);

    if (x->o.selsync) { /* the flags first, with the caller's scalars; the gradient only to synchronise */
        const double change = scv_selsync_change(&x->ss, grad_sq * own_scale * own_scale); /* of |g_k|^2 */
        const int target = x->o.sel.lssr > 0;
        mine[C_SYNC] = change >= x->o.sel.delta;
        if (target) mine[C_NORM + x->rank] = (float)change; /* every rank sees every change (the first
                                                                step's INFINITY too: none) */
        tx = scv_now();
        if ((rc = scv_comm_allreduce_f32(comm, ctl, nctl, err))) return rc;
        out->t_exchange = scv_now() - tx, out->bytes = 4.0 * (double)nctl;
        fit_add(x, 2.0 * (K - 1), 2.0 * (K - 1) / K * 4.0 * (double)nctl, out->t_exchange);
        x->steps++;
        const int sync = target ? scv_selsync_decide(&x->ss, mine + C_NORM, K) : mine[C_SYNC] > 0;
        if (!sync) { /* nobody's gradient changed enough: a local step */
            for (size_t i = 0; i < np; i++) grad[i] = (float)(grad[i] * own_scale);
            x->ss.local_steps++, x->in_sync = 0;
            out->local = 1, out->collective = "none";
        } else if (x->in_sync) { /* the replicas agree: synchronous SGD, exactly */
            tx = scv_now();
            if ((rc = scv_comm_allreduce_f32(comm, grad, np, err))) return rc;
            double t = scv_now() - tx;
            out->t_exchange += t, out->bytes += 4.0 * (double)np, out->dense = 1;
            fit_add(x, 2.0 * (K - 1), 2.0 * (K - 1) / K * 4.0 * (double)np, t);
            x->ss.sync_steps++;
        } else { /* after local steps: a local step, then the parameters' average */
            for (size_t i = 0; i < np; i++) grad[i] = (float)(grad[i] * own_scale);
            x->ss.sync_steps++, x->in_sync = 1;
            out->average_params = 1, out->collective = "average";
        }
        out->lssr = scv_selsync_lssr(&x->ss);
        return SCV_OK;
    }

    const int dense = x->cf <= 1 || x->steps < x->o.dense_steps;
    if (dense) {
        if (x->o.compress == SCV_COMPRESS_GRAVAC && x->cf <= 1 && x->steps >= x->o.dense_steps) {
            /* GraVAC's probe: cf_min's gain on this gradient, not sent */
            double tc = scv_now(), all = grad_sq;
            size_t k = scv_topk_count(np, x->o.gravac.cf_min);
            scv_topk_indices(grad, np, k, x->idx, x->work);
            double top = 0;
            for (size_t i = 0; i < k; i++) top += (double)grad[x->idx[i]] * grad[x->idx[i]];
            mine[C_GAIN] = (float)(all > 0 ? top / all : 0);
            out->t_compress += scv_now() - tc;
        }
        int flushed = 0;
        if (x->e && x->e_dirty) { /* the residual goes out with this step: no mass lost leaving
                                   * compression, but the step is not the batch's mean gradient */
            for (size_t i = 0; i < np; i++) grad[i] += x->e[i], x->e[i] = 0;
            x->e_dirty = 0, flushed = 1;
        }
        decide(x, mine, t_prev, b_prev);
        tx = scv_now();
        if ((rc = scv_comm_allreduce_f32(comm, buf, np + nctl, err))) return rc;
        out->t_exchange = scv_now() - tx, out->bytes = 4.0 * (double)(np + nctl), out->dense = !flushed;
        fit_add(x, 2.0 * (K - 1), 2.0 * (K - 1) / K * out->bytes, out->t_exchange);
        if (x->o.compress == SCV_COMPRESS_GRAVAC && x->cf <= 1 && x->steps >= x->o.dense_steps)
            out->probe_gain = x->last_gain = mine[C_GAIN] / K, x->last_cf = 1;
    } else {
        const size_t k = scv_topk_count(np, x->cf);
        double tc = scv_now();
        int root = -1; /* AR-Topk: the worker whose indices everybody uses */
        if (x->coll != SCV_SPARSE_ALLGATHER) {
            root = (int)(x->steps % K);
            if (x->o.var_root) {
                root = 0;
                for (int r = 1; r < K; r++)
                    if (x->prev_norm[r] > x->prev_norm[root]) root = r;
            }
        }
        /* the error feedback, and the selection where this worker makes one, in one pass */
        double sq_ef = x->coll == SCV_SPARSE_ALLGATHER || x->rank == root
                           ? scv_ef_accumulate_topk(x->e, grad, np, k, &x->guess, x->idx, x->work)
                           : scv_ef_accumulate(x->e, grad, np);
        x->e_dirty = 1;
        mine[C_NORM + x->rank] = (float)sq_ef;
        out->cf = x->cf;
        if (x->coll == SCV_SPARSE_ALLGATHER) {
            double sq_sent = scv_ef_take(x->e, x->idx, k, x->val);
            mine[C_GAIN] = (float)(sq_ef > 0 ? sq_sent / sq_ef : 1);
            decide(x, mine, t_prev, b_prev);
            /* one rank's block: k indices (as uint32 bits), k values, the scalars */
            const size_t stride = 2 * k + nctl;
            float *blk = x->pack + (size_t)K * stride; /* this rank's, after the K gathered */
            memcpy(blk, x->idx, k * sizeof(uint32_t));
            memcpy(blk + k, x->val, k * sizeof(float));
            memcpy(blk + 2 * k, ctl, nctl * sizeof(float));
            out->t_compress += scv_now() - tc;
            tx = scv_now();
            if ((rc = scv_comm_allgather(comm, blk, stride * sizeof(float), x->pack, err))) return rc;
            out->t_exchange = scv_now() - tx, out->bytes = 4.0 * (double)stride;
            fit_add(x, lg, (K - 1) * out->bytes, out->t_exchange);
            tc = scv_now(); /* grad is zero: scv_ef_accumulate_topk cleared it */
            for (int r = 0; r < K; r++) {
                const float *b = x->pack + (size_t)r * stride;
                uint32_t ix;
                for (size_t j = 0; j < k; j++) {
                    memcpy(&ix, b + j, sizeof ix);
                    if (ix < np) grad[ix] += b[k + j];
                }
            }
            sum_blocks(ctl, x->pack + 2 * k, K, stride, nctl);
            out->t_compress += scv_now() - tc;
            out->collective = "allgather";
        } else { /* AR-Topk: one worker's indices (selected above), everybody's values there */
            out->t_compress += scv_now() - tc;
            tx = scv_now();
            if ((rc = scv_comm_bcast(comm, x->idx, k * sizeof(uint32_t), root, err))) return rc;
            double t_b = scv_now() - tx;
            tc = scv_now();
            double sq_sent = scv_ef_take(x->e, x->idx, k, x->val);
            mine[C_GAIN] = (float)(sq_ef > 0 ? sq_sent / sq_ef : 1);
            decide(x, mine, t_prev, b_prev);
            memcpy(x->val + k, ctl, nctl * sizeof(float));
            out->t_compress += scv_now() - tc;
            tx = scv_now();
            if ((rc = scv_comm_allreduce_f32(comm, x->val, k + nctl, err))) return rc;
            double t_r = scv_now() - tx;
            out->t_exchange = t_b + t_r, out->bytes = 4.0 * (double)((x->rank == root ? k : 0) + k + nctl);
            fit_add(x, lg + 2.0 * (K - 1), 4.0 * (double)k * lg + 2.0 * (K - 1) / K * 4.0 * (double)(k + nctl),
                    out->t_exchange);
            tc = scv_now();
            memset(grad, 0, np * sizeof *grad);
            for (size_t j = 0; j < k; j++) grad[x->idx[j]] = x->val[j];
            memcpy(ctl, x->val + k, nctl * sizeof(float));
            out->t_compress += scv_now() - tc;
            out->collective = scv_sparse_name(x->coll);
        }
        out->gain = x->last_gain = mine[C_GAIN] / K, x->last_cf = out->cf;
    }
    for (int r = 0; r < K; r++) x->prev_norm[r] = mine[C_NORM + r];
    /* rank 0's decisions, the same on every rank, from the next step on */
    if (x->o.compress != SCV_COMPRESS_NONE) {
        if (mine[C_CF] >= 1) x->cf = mine[C_CF];
        int c = (int)lrintf(mine[C_COLL]);
        if (c >= SCV_SPARSE_ALLGATHER && c <= SCV_SPARSE_AR_TREE) x->coll = (scv_sparse_coll)c;
    }
    x->steps++;
    return SCV_OK;
}

int scv_exchange_average(scv_exchange *x, scv_comm *comm, float *w, float *mom, double *secs, scv_err *err)
{
    double t0 = scv_now();
    const float inv = 1.0f / (float)x->K;
    for (int pass = 0; pass < (mom ? 2 : 1); pass++) { /* the momenta too: one optimiser state */
        float *v = pass ? mom : w;
        int rc = scv_comm_allreduce_f32(comm, v, x->np, err);
        if (rc) return rc;
        for (size_t i = 0; i < x->np; i++) v[i] *= inv;
    }
    if (secs) *secs = scv_now() - t0;
    return SCV_OK;
}
