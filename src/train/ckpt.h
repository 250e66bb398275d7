/*
 * ckpt.h - training checkpoints: model parameters, momentum, the data position and the
 * RNG seed, in one file DIR/checkpoint.scv written atomically (temp, fsync, rename).
 *
 * Format v1 (little-endian): "SCVCKPT\n", u32 version, u32 header length, header fields,
 * u64 n, float params[n], float momentum[n], u32 CRC-32 of every byte before it.
 * A wrong magic, version, length or checksum is refused with SCV_ECORRUPT, and so is a
 * header field out of its range, a parameter count above SCV_NET_MAX_PARAMS or a file
 * whose length is not the one the count implies (checked before allocating).
 */
#ifndef SCV_CKPT_H
#define SCV_CKPT_H
#include <stddef.h>
#include <stdint.h>
#include "scv.h"

#define SCV_CKPT_VERSION 1u
#define SCV_CKPT_FILE "checkpoint.scv"
/* The lock file a trainer holds (flock) in its checkpoint directory while it runs. */
#define SCV_CKPT_LOCK_FILE "lock"
/* Ranges a loaded header must lie in (anything else is SCV_ECORRUPT): */
#define SCV_CKPT_MAX_SAMPLES (1ull << 32) /* n_train */
#define SCV_CKPT_MAX_EPOCHS (1ull << 24)  /* epoch */

typedef struct scv_ckpt_state {
    char arch[128];        /* scv_net_arch() of the model */
    uint64_t seed;         /* data-order and init seed */
    uint64_t n_train;      /* training-set size the position refers to */
    uint64_t iteration;    /* iterations done */
    uint64_t epoch;        /* current epoch (0-based) */
    uint64_t pos;          /* samples of this epoch already consumed */
    uint64_t samples_seen; /* over all epochs */
    int32_t workers, batch; /* the configuration that wrote it */
    double wall_seconds;   /* training time so far */
} scv_ckpt_state;

int scv_ckpt_save(const char *dir, const scv_ckpt_state *st, const float *params,
                  const float *momentum, size_t n, scv_err *err);
/* Allocates *params and *momentum (caller frees). */
int scv_ckpt_load(const char *dir, scv_ckpt_state *st, float **params, float **momentum,
                  size_t *n, scv_err *err);
#endif
