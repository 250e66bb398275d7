/*
 * noniid.h - non-IID data streams and the data-injection remedy (SelSync, Tyagi & Swany,
 * IEEE CLUSTER 2023; ScaDLES, IEEE BigData 2022): which samples of a step's global batch
 * each worker trains on. Pure bookkeeping over sample indices and labels; no I/O, no MPI.
 * Every rank computes the same answer from the same seed, so no communication is needed.
 * noniid.c states the rules.
 */
#ifndef SCV_NONIID_H
#define SCV_NONIID_H
#include <stdint.h>
#include "scv.h"

/* 1 when class `label` is one of worker k's home classes among K workers and n_classes
 * classes: label = k (mod G), G = min(K, n_classes) (G = 1 when either is < 1). With K <= the
 * classes, the classes are dealt round-robin (class c is home to worker c mod K); with more
 * workers than classes, worker k's only home class is k mod n_classes (shared with the
 * workers k +- n_classes, ...). */
int scv_noniid_home(int label, int k, int K, int n_classes);

/* Re-orders a step's window of sample indices window[0..n) into out[0..n) (a permutation of
 * it; out may be window itself) whose consecutive slices of counts[0], counts[1], ...,
 * counts[K-1] samples (sum n) are the workers' local batches: worker k's slice holds
 * round(skew counts[k]) samples of its home classes as far as the window has them, the rest
 * drawn at random from what the window has left (noniid.c: the rule). labels[s] is sample s's
 * class. skew <= 0 or K <= 1: out = window unchanged. scratch: n int32, not aliasing window
 * or out. Deterministic in (window, counts, skew, seed). */
void scv_noniid_assign(const int32_t *window, int64_t n, const uint8_t *labels, int n_classes, int K,
                       const int64_t *counts, double skew, uint64_t seed, int32_t *out, int32_t *scratch);

/* Data injection (alpha, beta) for one step: m = ceil(alpha K) workers, chosen at random
 * from the seed, share a fraction beta of their own samples with every other worker; worker
 * k keeps its total b_k (noniid.c: the rule and its rounding). */
typedef struct scv_inject_plan {
    int K, m;
    int chosen[SCV_MAX_WORKERS];      /* the m sharing workers, ascending */
    int64_t nominal[SCV_MAX_WORKERS]; /* b'_k = round(b_k / (1 + alpha beta K)) */
    int64_t share[SCV_MAX_WORKERS];   /* s_j = round(beta b'_j) for a chosen j, else 0: the
                                         first s_j samples of j's own slice */
    int64_t recv[SCV_MAX_WORKERS];    /* I_k = min(sum of s_j over chosen j != k, b_k - b'_k):
                                         the copies worker k trains on */
    int64_t own[SCV_MAX_WORKERS];     /* b_k - I_k (>= b'_k >= s_k): its own samples */
    int64_t injected;                 /* sum of I_k: the copies sent this step */
} scv_inject_plan;
/* b[0..K): the workers' totals; alpha, beta in (0, 1]. */
void scv_inject_make(scv_inject_plan *pl, const int64_t *b, int K, double alpha, double beta, uint64_t seed);
/* r[i] (i < pl->m): the samples worker k receives from pl->chosen[i], the first r[i] of that
 * worker's own slice (0 from k itself); sum r[i] = pl->recv[k]. */
void scv_inject_from(const scv_inject_plan *pl, int k, int64_t *r);

/* Worker k's local batch of a step: its own slice of the window (own[k] samples from
 * off[k], the slices' offsets), then the copies it receives under pl (NULL: no injection):
 * the first r[i] samples of each chosen worker's own slice (scv_inject_from). Writes the
 * sample indices to idx and returns their count, own[k] + pl->recv[k]. */
int64_t scv_worker_batch(const int32_t *window, const int64_t *own, const int64_t *off, const scv_inject_plan *pl,
                         int k, int32_t *idx);
#endif
