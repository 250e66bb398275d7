/*
 * ef_kernel.c - the compression kernels of one Top-k step, alone: error feedback and
 * selection (scv_ef_accumulate_topk), taking the k values out of the residual
 * (scv_ef_take) and the reassembly of K workers' blocks into a dense gradient, on the MLP's
 * 235,146 parameters at 100x (k = 2,351) and K = 4, random gradients (1% of entries ten
 * times larger), 300 steps after 20 of warm-up. Prints the mean microseconds per step of
 * each part and of a plain copy of the gradient (the memory's pace) beside them.
 *
 *   cc -std=c11 -O3 -Iinclude -Isrc bench/ef_kernel.c build/libscv.a -lm -o build/ef_kernel
 *   build/ef_kernel
 *
 * With -DSEPARATE_CLEAR the reassembly clears the gradient itself first (what the exchange
 * did before scv_ef_accumulate_topk cleared it in its pass: for building against an older
 * src/train/compress.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "train/compress.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void)
{
    enum { K = 4, WARM = 20, STEPS = 300, VARIANTS = 8 };
    const size_t n = 235146, k = scv_topk_count(n, 100);
    float *e = calloc(n, sizeof *e), *g = malloc(n * sizeof *g), *src = malloc(VARIANTS * n * sizeof *src),
          *val = malloc(k * sizeof *val);
    uint32_t *idx = malloc(k * sizeof *idx), *work = malloc((n + 1) * sizeof *work);
    if (!e || !g || !src || !val || !idx || !work) return 1;
    srand(1);
    for (size_t i = 0; i < VARIANTS * n; i++)
        src[i] = (float)(rand() / (double)RAND_MAX - 0.5) * ((i % n) % 97 == 0 ? 10.0f : 1.0f);
    scv_topk_guess guess = {0, 0};
    double t_copy = 0, t_sel = 0, t_take = 0, t_re = 0;
    for (int s = 0; s < WARM + STEPS; s++) {
        const int on = s >= WARM;
        double t0 = now();
        memcpy(g, src + (size_t)(s % VARIANTS) * n, n * sizeof *g);
        double t1 = now();
        scv_ef_accumulate_topk(e, g, n, k, &guess, idx, work);
        double t2 = now();
        scv_ef_take(e, idx, k, val);
        double t3 = now();
#ifdef SEPARATE_CLEAR
        memset(g, 0, n * sizeof *g);
#endif
        for (int r = 0; r < K; r++) /* the K blocks: here one worker's, at rotated places */
            for (size_t j = 0; j < k; j++) g[idx[(j * 7 + (size_t)r) % k]] += val[j];
        double t4 = now();
        if (on) t_copy += t1 - t0, t_sel += t2 - t1, t_take += t3 - t2, t_re += t4 - t3;
    }
    printf("per step, us (n = %zu, k = %zu, K = %d, %d steps): error feedback and selection %.1f, take %.1f, "
           "reassembly %.1f, all %.1f; a copy of the gradient %.1f\n",
           n, k, K, STEPS, 1e6 * t_sel / STEPS, 1e6 * t_take / STEPS, 1e6 * t_re / STEPS,
           1e6 * (t_sel + t_take + t_re) / STEPS, 1e6 * t_copy / STEPS);
    free(e), free(g), free(src), free(val), free(idx), free(work);
    return 0;
}
