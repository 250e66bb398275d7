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
/* The median of x[0..n) (x is sorted in place; the mean of the middle two when n is even;
 * NaN when n = 0). */
double scv_median(double *x, size_t n);
/* lr(batch) / lr(base_batch) under a fixed rule: batch / base_batch (linear), its square root
 * (sqrt), 1 (none, and AdaScale, whose gain the trainer measures); base_batch <= 0: 1. The one
 * statement of the rule: the trainer's rate (train/sched.c) and the noise floor's carry
 * (model/floor.c) take it. */
double scv_lr_scale_factor(scv_lr_scaling rule, double batch, double base_batch);
/* qsort's comparison of doubles, ascending. */
int scv_cmp_double(const void *a, const void *b);
/* The q-quantile of sorted v[0, n) (n >= 1), linear between order statistics; +inf when it
 * touches +inf. */
double scv_quantile_sorted(const double *v, size_t n, double q);

/* "Did you mean": the optimal-string-alignment distance between a and b (insertions,
 * deletions, substitutions and swaps of two neighbours, ASCII case ignored), and the name
 * of names[0..n) nearest to word when it is near enough (SCV_NEAR_MAX edits, and fewer
 * than half of word's length; ties: the first), else NULL. The name list variant takes
 * "a|b|c" or "a, b, c" and writes the name into out. */
#define SCV_NEAR_MAX 2
int scv_edit_distance(const char *a, const char *b);
const char *scv_nearest_name(const char *word, const char *const *names, size_t n);
const char *scv_nearest_in_list(const char *word, const char *list, char *out, size_t cap);

/* Writes the n parts to path atomically: path.tmp, fsync, rename, fsync of the directory. */
typedef struct scv_iov {
    const void *p;
    size_t n;
} scv_iov;
int scv_write_atomic(const char *path, const scv_iov *parts, int n_parts, scv_err *err);

/* Strict number parsing for option values: the whole string must be a number, a double
 * a finite decimal one (scv_is_decimal: digits, sign, point, exponent; never hex, inf or
 * nan). */
int scv_parse_i64(const char *s, int64_t *out);
int scv_parse_f64(const char *s, double *out);
int scv_is_decimal(const char *s);
/* A list or range ("1,2,8", "1..64", "64..1024:64") into a malloc'ed array; pow2: a range
 * without a step doubles. Returns the count, or -1 with err set. Values lie in [lo, hi],
 * each at most once (a repeated value, "8,8" or "1..8,4", is refused naming it); at most
 * SCV_INT_SET_MAX of them. */
#define SCV_INT_SET_MAX (1 << 20)
long scv_parse_int_set(const char *s, int pow2, long lo, long hi, int **out, scv_err *err);
/* Seconds from "S", "Ns", "Nm", "Nh" (S, N decimal and > 0); -1 when malformed. */
double scv_parse_duration(const char *s);

#endif
