/*
 * dynbatch.h - dynamic batching for heterogeneous workers (Tyagi & Sharma, ACSOS 2020): a
 * proportional controller over each worker's share of the global batch. Pure bookkeeping
 * over per-worker compute times; no I/O, no MPI. The policy is scv_dynbatch_policy (scv.h).
 */
#ifndef SCV_DYNBATCH_H
#define SCV_DYNBATCH_H
#include <stdint.h>
#include "scv.h"

typedef struct scv_dynbatch_state {
    scv_dynbatch_policy pol;
    int K;
    int64_t B;                        /* the global batch the shares split */
    double share[SCV_MAX_WORKERS];    /* worker k's share of B (sum 1) */
    double tau[SCV_MAX_WORKERS];      /* its compute seconds per sample over the last window
                                         (NaN: none yet) */
    double sum_t[SCV_MAX_WORKERS], sum_b[SCV_MAX_WORKERS]; /* the window so far */
    double sum_t2[SCV_MAX_WORKERS];   /* ... the squares of the times */
    int n[SCV_MAX_WORKERS];           /* ... its iterations with samples */
    double prev_b[SCV_MAX_WORKERS], prev_t[SCV_MAX_WORKERS]; /* the last used window's mean
                                         batch and compute time (NaN: none) */
    int since;                        /* iterations since the last adjustment */
    int windows;                      /* windows measured (the first is not used) */
    int adjustments;                  /* made so far */
    double balanced[SCV_MAX_WORKERS]; /* the last window's throughput-proportional shares,
                                         before the bounds (NaN: none yet) */
    int low[SCV_MAX_WORKERS];         /* windows in a row worker k's balanced share < min_share */
    char reported[SCV_MAX_WORKERS];   /* already found unabsorbable */
    int unabsorbed;                   /* the worker the last update found unabsorbable, or -1 */
    double unabsorbed_ratio;          /* ... its throughput over the median worker's */
    double floor_slowdown;            /* ... its compute time at the floor share over the
                                         others' at their balanced shares (> absorb_margin) */
} scv_dynbatch_state;

/* Starts with the given shares (K weights, any positive scale; NULL = even). */
void scv_dynbatch_init(scv_dynbatch_state *s, const scv_dynbatch_policy *pol, int K, int64_t B, const double *weights);
/* One iteration: worker k took t[k] seconds of compute for b[k] samples. Every pol.every
 * iterations the shares are adjusted unless every worker is within the dead-band; returns 1
 * when they changed (s->share holds the new ones), else 0. s->unabsorbed is set (>= 0) on
 * the update that finds a worker the shares cannot absorb (each found once). */
int scv_dynbatch_update(scv_dynbatch_state *s, const double *t, const int64_t *b);
#endif
