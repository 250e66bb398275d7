/*
 * compress.h - communication efficiency, the pure parts (src/train/compress.c states the
 * equations): Top-k selection with error feedback, the compression gain, GraVAC's adaptive
 * compression factor, SelSync's relative gradient change, and the alpha-beta choice between
 * Allgather Top-k and AR-Topk. No MPI and no I/O: the runtime moves the bytes; the policies
 * are scv_gravac_policy and scv_selsync_policy (scv.h).
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
/* The values of e at idx go to val and leave the residual (e[idx] = 0); returns |val|^2. */
double scv_ef_take(float *e, const uint32_t *idx, size_t k, float *val);

/* ---- choosing the sparse collective by the alpha-beta model ---- */
/* Seconds to exchange a Top-k of density c (k = c n) of a gradient of M bytes over N workers,
 * alpha seconds per message and beta seconds per byte (AR-Topk paper, Table I and Eq. 4):
 *   Allgather Top-k (values and indices):  alpha log2 N + 2 M c beta (N - 1)
 *   AR-Topk, ring allreduce of the values: alpha (2(N-1) + log2 N) + M c beta (2(N-1)/N + log2 N)
 *   AR-Topk, tree allreduce:               3 alpha log2 N + 3 M c beta log2 N
 * (the log2 N terms of AR-Topk are the broadcast of the chosen worker's indices). */
typedef enum { SCV_SPARSE_ALLGATHER = 0, SCV_SPARSE_AR_RING, SCV_SPARSE_AR_TREE } scv_sparse_coll;
double scv_sparse_cost(scv_sparse_coll how, double alpha, double beta, double M, double c, int N);
/* The cheapest of the three (ties to the lower enum). */
scv_sparse_coll scv_sparse_choose(double alpha, double beta, double M, double c, int N);
const char *scv_sparse_name(scv_sparse_coll how);

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
typedef struct scv_selsync_state {
    scv_selsync_policy pol;
    double ewma, prev;          /* the EWMA of |g_k|^2 now and at the previous step (NaN: none) */
    int64_t local_steps, sync_steps;
} scv_selsync_state;
void scv_selsync_init(scv_selsync_state *s, const scv_selsync_policy *pol);
/* This worker's |g_k|^2 of a step: 1 when its relative change
 *   Delta = (E|g_i|^2 - E|g_{i-1}|^2) / E|g_{i-1}|^2   (E: the EWMA)
 * has |Delta| >= delta (this worker asks for a synchronisation), else 0. The first step
 * always asks (no previous value). */
int scv_selsync_flag(scv_selsync_state *s, double sq);
/* The share of local steps so far, LSSR = local / (local + sync) (0 when none). */
double scv_selsync_lssr(const scv_selsync_state *s);
#endif
