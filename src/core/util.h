/*
 * util.h - small shared helpers: monotonic clock, a seeded PRNG (xoshiro256**),
 * CRC-32 over buffers, and atomic file replacement (temp file, fsync, rename, fsync dir).
 * libc only (CRC via zlib); no module state.
 */
#ifndef SCV_UTIL_H
#define SCV_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include "scv.h"

double scv_now(void); /* seconds, CLOCK_MONOTONIC */
double scv_wall_clock(void); /* seconds since the epoch, CLOCK_REALTIME */

typedef struct scv_rng {
    uint64_t s[4];
} scv_rng;
void scv_rng_seed(scv_rng *r, uint64_t seed);
uint64_t scv_rng_next(scv_rng *r);
double scv_rng_uniform(scv_rng *r);  /* [0,1) */
double scv_rng_normal(scv_rng *r);   /* N(0,1), Box-Muller */
uint64_t scv_rng_below(scv_rng *r, uint64_t n); /* [0,n), unbiased */
uint64_t scv_hash64(uint64_t x);     /* splitmix64 finaliser */

/* Writes the n parts to path atomically: path.tmp, fsync, rename, fsync of the directory. */
typedef struct scv_iov {
    const void *p;
    size_t n;
} scv_iov;
int scv_write_atomic(const char *path, const scv_iov *parts, int n_parts, scv_err *err);

/* Strict number parsing for option values: the whole string must be a number. */
int scv_parse_i64(const char *s, int64_t *out);
int scv_parse_f64(const char *s, double *out);

#endif
