/*
 * compress.h - communication efficiency, the pure parts (src/train/compress.c states the
 * equations): Top-k selection with error feedback, the compression gain, GraVAC's adaptive
 * compression factor and SelSync's relative gradient change. The alpha-beta costs of the
 * sparse collectives (Allgather Top-k, AR-Topk) are the parallel model's (src/model/perf.c).
 * No MPI and no I/O: the runtime moves the bytes; the policies are scv_gravac_policy and
 * scv_selsync_policy (scv.h).
 */
#ifndef SCV_COMPRESS_H
#define SCV_COMPRESS_H
#include <stddef.h>
#include <stdint.h>
#include "scv.h"

/* ---- Top-k with error feedback ---- */

/* k for a compression factor cf over n values: round(n / cf), at least 1 (cf <= 1: n). */
size_t scv_topk_count(size_t n, double cf);
/* The indices of the k largest |x_i| (ties to the lower index), ascending, in idx[0..k);
 * work: n scratch indices. Deterministic: every rank gets the same answer on the same x. */
void scv_topk_indices(const float *x, size_t n, size_t k, uint32_t *idx, uint32_t *work);
/* Error feedback, e <- e + g: the error-fed gradient g_ef in e; returns |g_ef|^2. */
double scv_ef_accumulate(float *e, const float *g, size_t n);
/* The guess of the next step's selection threshold (zeroed at first): tau = f x the last
 * k-th largest |e_i|, f adapted so that about 1.1 k to 1.5 k entries pass it. */
typedef struct scv_topk_guess {
    float tau, f;
} scv_topk_guess;
/* scv_ef_accumulate then scv_topk_indices(e, n, k, idx, work), the same answer in one pass
 * over n when it can: the entries with |e_i| >= guess->tau are gathered while e is
 * accumulated, and when at least k (and at most 16 k) are, the k largest are among them;
 * otherwise the sampled selection runs (a residual changes little from one step to the next,
 * so the last step's threshold is a good guess). g is left zero (the exchange reassembles the
 * step's gradient into it: no separate clearing pass). Returns |g_ef|^2. */
double scv_ef_accumulate_topk(float *e, float *g, size_t n, size_t k, scv_topk_guess *guess, uint32_t *idx,
                              uint32_t *work);
/* The values of e at idx go to val and leave the residual (e[idx] = 0); returns |val|^2. */
double scv_ef_take(float *e, const uint32_t *idx, size_t k, float *val);

/* ---- the sparse collectives' alpha-beta costs: scv_sparse_cost, scv_sparse_choose and
 * scv_sparse_name live with the parallel model (scv.h, src/model/perf.c) ---- */

/* ---- GraVAC: the adaptive compression factor ---- */
typedef struct scv_gravac_state {
    scv_gravac_policy pol;
    double cf;                  /* the factor in use (1: dense) */
    int settled;                /* 0: exploring larger factors; 1: holding cf */
    int steps;                  /* steps of the current window */
    double sum_gain, sum_t, sum_b; /* the window so far */
    double best_cf, best_ct;    /* the best feasible factor explored and its throughput */
    double gain, ct;            /* the last window's mean gain and compression throughput */
    int changes;                /* factor changes so far */
} scv_gravac_state;
void scv_gravac_init(scv_gravac_state *s, const scv_gravac_policy *pol);
/* One step's measurements: the factor it ran at (cf; 1 = dense, its gain then cf_min's probe),
 * the compression gain (|g_c|^2 / |g_ef|^2, mean over the workers), its iteration seconds
 * and samples. A step at another factor than s->cf (one that ran before a change took
 * effect) is not counted. Returns 1 when s->cf changes for the next step. */
int scv_gravac_step(scv_gravac_state *s, double cf, double gain, double t_iter, double samples);

/* ---- SelSync: synchronise when the gradient changes ---- */
#define SCV_SELSYNC_HISTORY 256
typedef struct scv_selsync_state {
    scv_selsync_policy pol;
    double ewma, prev;          /* the EWMA of |g_k|^2 now and at the previous step (NaN: none) */
    int64_t local_steps, sync_steps;
    double hist[SCV_SELSYNC_HISTORY]; /* the target's: the last steps' largest changes (a ring) */
    int n_hist, at;
    int64_t decided, decided_local; /* the target's decisions so far, and the local ones */
} scv_selsync_state;
void scv_selsync_init(scv_selsync_state *s, const scv_selsync_policy *pol);
/* This worker's |g_k|^2 of a step: its relative change
 *   |Delta| = |E|g_i|^2 - E|g_{i-1}|^2| / E|g_{i-1}|^2   (E: the EWMA)
 * (INFINITY at the first step: no previous value). The delta rule: the worker asks for a
 * synchronisation when |Delta| >= delta (the exchange compares). */
double scv_selsync_change(scv_selsync_state *s, double sq);
/* The target rule, on every worker's change of this step (all ranks pass the same values, so
 * all decide alike): 1 (synchronise) when their largest is at or above the q-quantile of the
 * history, or while fewer than history/2 steps are in it; the largest then joins it. The
 * quantile corrects for a drift of the changes (they grow as |g|^2 falls) and for the first
 * steps, all synchronous: q = lssr + (lssr - the share of local steps so far), in [0, 1]. */
int scv_selsync_decide(scv_selsync_state *s, const float *changes, int K);
/* The share of local steps so far, LSSR = local / (local + sync) (0 when none). */
double scv_selsync_lssr(const scv_selsync_state *s);
#endif
