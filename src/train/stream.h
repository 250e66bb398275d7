/*
 * stream.h - streaming data-parallel training (ScaDLES, Tyagi & Swany, IEEE BigData 2022):
 * the per-worker stream buffers and the batch each step takes from them. Pure bookkeeping
 * over the arrival rates (scv_stream_rates, scv.h) and the stream clock; no I/O, no MPI.
 * The policy is scv_stream_policy (scv.h); stream.c states the model.
 */
#ifndef SCV_STREAM_H
#define SCV_STREAM_H
#include <stdint.h>
#include "scv.h"

typedef struct scv_stream_state {
    const scv_stream_rates *rates;      /* borrowed: outlives the state */
    int K;
    scv_stream_buffer mode;
    double tau;                         /* stream time of the last consume (s) */
    int64_t b_min[SCV_MAX_WORKERS];     /* worker k's bounds (samples): the policy's, or its */
    int64_t b_max[SCV_MAX_WORKERS];     /*   share of B for the full-batch baseline */
    int64_t consumed[SCV_MAX_WORKERS];  /* samples worker k has taken so far */
    int64_t dropped[SCV_MAX_WORKERS];   /* ... and its truncated buffer dropped (up to tau) */
} scv_stream_state;

/* Starts K = scv_stream_rates_workers(r) empty buffers at tau = 0. B: the global batch the
 * full-batch baseline splits evenly (not used otherwise). */
void scv_stream_init(scv_stream_state *s, const scv_stream_rates *r, const scv_stream_policy *pol, int64_t B);
/* Worker k's buffer at tau >= s->tau (samples): floor(arrived_k(tau)) - consumed_k -
 * dropped_k(tau), the drops of truncation up to tau included; *dropped (if not NULL) gets
 * dropped_k(tau). */
int64_t scv_stream_level(const scv_stream_state *s, int k, double tau, int64_t *dropped);
/* The earliest tau' >= tau0 at which arrived_k(tau') >= n (exact up to the last bit:
 * floor(arrived_k(tau')) >= n holds); INFINITY when the stream never delivers n. */
double scv_stream_reach(const scv_stream_rates *r, int k, double tau0, double n);
/* The next step at stream time tau (clamped to >= s->tau): returns the time it can start,
 * tau itself when every buffer holds b_min_k, else the earliest tau' at which all do (the
 * workers wait until then); b[k] = min(buffer_k(start), b_max_k). INFINITY when some
 * stream does not fill before 1e9 s (b untouched). Changes nothing. */
double scv_stream_plan(const scv_stream_state *s, double tau, int64_t *b);
/* Worker k takes c[k] samples (clamped to [0, buffer_k(tau)]) at tau (the plan's start). */
void scv_stream_consume(scv_stream_state *s, double tau, const int64_t *c);
#endif
