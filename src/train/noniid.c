/*
 * noniid.c - non-IID streams and data injection (see noniid.h). Pure: sample indices,
 * labels and a seed in, sample indices out.
 *
 * The window. A step's global batch is a window of the epoch's sample order (the trainer's
 * perm[pos, pos + n)), cut into consecutive per-worker slices of counts[0..K) samples. Both
 * rules below only re-order and re-use that window, so every sample of the epoch is still
 * taken exactly once per epoch (as a worker's own sample), whatever the skew.
 *
 * Home classes. Class c is home to worker k iff c = k (mod G), G = min(K, classes): the
 * classes dealt round-robin to the workers (10 classes, K = 3: worker 0 has {0,3,6,9},
 * worker 1 {1,4,7}, worker 2 {2,5,8}); with more workers than classes, worker k's only home
 * class is k mod classes, and the workers sharing a class share its samples.
 *
 * Non-IID assignment (skew s in [0, 1]). s = 0, or K = 1: the window is unchanged (IID, as
 * without the option). Otherwise, from the seed:
 *   1. the window is shuffled (Fisher-Yates);
 *   2. worker k wants q_k = floor(s counts_k + 1/2) samples of its home classes; the workers
 *      of a class group g (those k = g mod G) get their q_k when the window has that many
 *      samples of group g, else the group's samples split in proportion to the q_k (largest
 *      remainder, ties to the lower k): h_k <= q_k home samples each;
 *   3. walking the shuffled window, a sample of group g goes to the first worker of the
 *      group still short of its h_k, else to the leftovers (in shuffled order);
 *   4. each worker's slice is completed from the leftovers in turn (worker 0 first): the
 *      rest of its batch is drawn at random from what the window has left (home classes
 *      included, so with s < 1 the expected home share with evenly spread classes and
 *      K <= classes is about s + (1 - s)/K);
 *   5. each slice is shuffled (so any prefix of it is a random subset).
 *
 * Data injection (alpha, beta in (0, 1]; the rule of SelSync's non-IID remedy, used by
 * ScaDLES). Worker k's batch total b_k is kept. From the seed, m = ceil(alpha K) distinct
 * workers are chosen (partial Fisher-Yates); with f = 1 + alpha beta K:
 *   b'_k = floor(b_k / f + 1/2)           the paper's own batch, b' = b / (1 + alpha beta N)
 *   s_j  = floor(beta b'_j + 1/2)         a chosen worker j shares the first s_j samples of
 *                                         its own (shuffled) slice with every other worker
 *   I_k  = min(sum_{chosen j != k} s_j, b_k - b'_k)   the copies worker k receives
 *   own_k = b_k - I_k                     its own samples, so own_k + I_k = b_k exactly
 * When the offers exceed the room b_k - b'_k (e.g. m > alpha K after the ceiling, or uneven
 * b_k), worker k takes from each chosen j a part of I_k in proportion to s_j (largest
 * remainder, ties to the lower index), at most s_j. own_k >= b'_k >= s_k, so a chosen worker
 * always holds what it shares. The step's window holds sum own_k samples (the epoch moves by
 * that many); the global batch the gradient averages over stays sum b_k.
 */
#include "noniid.h"
#include "../core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int groups(int K, int n_classes)
{
    int G = K < n_classes ? K : n_classes;
    return G < 1 ? 1 : G;
}

int scv_noniid_home(int label, int k, int K, int n_classes)
{
    const int G = groups(K, n_classes);
    return label % G == k % G;
}

typedef struct {
    int64_t rem;
    int idx;
} rem_t;

static int by_rem(const void *a, const void *b)
{
    const rem_t *x = a, *y = b;
    if (x->rem != y->rem) return x->rem < y->rem ? 1 : -1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Splits total (<= sum w) over n parts in proportion to the weights w >= 0, by largest
 * remainder in exact integer arithmetic, ties to the lower index: part_j <= w_j, a weight of
 * 0 gets 0. tmp: n entries. */
static void split_int(int64_t total, int n, const int64_t *w, int64_t *part, rem_t *tmp)
{
    int64_t W = 0, given = 0;
    for (int j = 0; j < n; j++) W += w[j];
    if (W <= 0 || total <= 0) {
        for (int j = 0; j < n; j++) part[j] = 0;
        return;
    }
    if (total > W) total = W;
    for (int j = 0; j < n; j++) {
        part[j] = total * w[j] / W;
        tmp[j] = (rem_t){total * w[j] % W, j};
        given += part[j];
    }
    qsort(tmp, (size_t)n, sizeof *tmp, by_rem);
    for (int i = 0; given < total && i < n; i++, given++) part[tmp[i].idx]++;
}

static void shuffle(int32_t *a, int64_t n, scv_rng *r)
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)scv_rng_below(r, (uint64_t)i + 1);
        int32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

void scv_noniid_assign(const int32_t *window, int64_t n, const uint8_t *labels, int n_classes, int K,
                       const int64_t *counts, double skew, uint64_t seed, int32_t *out, int32_t *scratch)
{
    if (n <= 0) return;
    if (!(skew > 0) || K <= 1) {
        if (out != window) memmove(out, window, sizeof(int32_t) * (size_t)n);
        return;
    }
    if (skew > 1) skew = 1;
    if (K > SCV_MAX_WORKERS) K = SCV_MAX_WORKERS;
    const int G = groups(K, n_classes);
    /* per worker: offset, home target, filled; per group: available, cursor (a worker) */
    int64_t off[SCV_MAX_WORKERS], home[SCV_MAX_WORKERS], fill[SCV_MAX_WORKERS], avail[SCV_MAX_WORKERS];
    int64_t wq[SCV_MAX_WORKERS], part[SCV_MAX_WORKERS];
    int cur[SCV_MAX_WORKERS], member[SCV_MAX_WORKERS];
    rem_t tmp[SCV_MAX_WORKERS];
    scv_rng r;
    scv_rng_seed(&r, seed);
    memcpy(scratch, window, sizeof(int32_t) * (size_t)n);
    shuffle(scratch, n, &r);
    int64_t o = 0;
    for (int k = 0; k < K; k++) {
        off[k] = o, o += counts[k], fill[k] = 0;
        int64_t q = (int64_t)floor(skew * (double)counts[k] + 0.5);
        home[k] = q < counts[k] ? q : counts[k];
    }
    for (int g = 0; g < G; g++) avail[g] = 0, cur[g] = g;
    for (int64_t i = 0; i < n; i++) avail[labels[scratch[i]] % G]++;
    for (int g = 0; g < G; g++) { /* cut the group's targets to what the window holds */
        int nw = 0;
        int64_t want = 0;
        for (int k = g; k < K; k += G) member[nw] = k, wq[nw++] = home[k], want += home[k];
        if (want <= avail[g]) continue;
        split_int(avail[g], nw, wq, part, tmp);
        for (int i = 0; i < nw; i++) home[member[i]] = part[i];
    }
    int64_t nl = 0; /* leftovers, compacted at the front of scratch in shuffled order */
    for (int64_t i = 0; i < n; i++) {
        int32_t s = scratch[i];
        int g = labels[s] % G, k = cur[g];
        while (k < K && fill[k] == home[k]) k += G;
        cur[g] = k;
        if (k < K) out[off[k] + fill[k]++] = s;
        else scratch[nl++] = s;
    }
    int64_t li = 0;
    for (int k = 0; k < K; k++)
        while (fill[k] < counts[k] && li < nl) out[off[k] + fill[k]++] = scratch[li++];
    for (int k = 0; k < K; k++) shuffle(out + off[k], counts[k], &r);
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void scv_inject_make(scv_inject_plan *pl, const int64_t *b, int K, double alpha, double beta, uint64_t seed)
{
    if (K > SCV_MAX_WORKERS) K = SCV_MAX_WORKERS;
    if (K < 1) K = 1;
    if (!(alpha > 0)) alpha = 0;
    if (!(beta > 0)) beta = 0;
    if (alpha > 1) alpha = 1;
    if (beta > 1) beta = 1;
    int m = (int)ceil(alpha * K - 1e-9);
    m = m < 1 ? 1 : m > K ? K : m;
    pl->K = K, pl->injected = 0;
    int idx[SCV_MAX_WORKERS];
    for (int k = 0; k < K; k++) idx[k] = k;
    scv_rng r;
    scv_rng_seed(&r, seed);
    for (int i = 0; i < m; i++) {
        int j = i + (int)scv_rng_below(&r, (uint64_t)(K - i)), t = idx[i];
        idx[i] = idx[j], idx[j] = t;
    }
    qsort(idx, (size_t)m, sizeof *idx, by_int);
    memcpy(pl->chosen, idx, sizeof(int) * (size_t)m);
    const double f = 1 + alpha * beta * K;
    int64_t offered = 0;
    for (int k = 0; k < K; k++) {
        int64_t bk = b[k] > 0 ? b[k] : 0, nk = (int64_t)floor((double)bk / f + 0.5);
        pl->nominal[k] = nk < bk ? nk : bk;
        pl->share[k] = 0;
    }
    if (!(alpha > 0 && beta > 0)) m = 0; /* nothing shared */
    pl->m = m;
    for (int i = 0; i < m; i++) {
        int j = pl->chosen[i];
        int64_t s = (int64_t)floor(beta * (double)pl->nominal[j] + 0.5);
        pl->share[j] = s < pl->nominal[j] ? s : pl->nominal[j];
        offered += pl->share[j];
    }
    for (int k = 0; k < K; k++) {
        int64_t bk = b[k] > 0 ? b[k] : 0, mine = offered - pl->share[k], room = bk - pl->nominal[k];
        pl->recv[k] = mine < room ? mine : room;
        pl->own[k] = bk - pl->recv[k];
        pl->injected += pl->recv[k];
    }
}

void scv_inject_from(const scv_inject_plan *pl, int k, int64_t *r)
{
    int64_t w[SCV_MAX_WORKERS], offered = 0;
    rem_t tmp[SCV_MAX_WORKERS];
    for (int i = 0; i < pl->m; i++) {
        int j = pl->chosen[i];
        w[i] = j == k ? 0 : pl->share[j];
        offered += w[i];
    }
    if (k < 0 || k >= pl->K) {
        for (int i = 0; i < pl->m; i++) r[i] = 0;
    } else if (pl->recv[k] >= offered) {
        for (int i = 0; i < pl->m; i++) r[i] = w[i];
    } else {
        split_int(pl->recv[k], pl->m, w, r, tmp);
    }
}

int64_t scv_worker_batch(const int32_t *window, const int64_t *own, const int64_t *off, const scv_inject_plan *pl,
                         int k, int32_t *idx)
{
    int64_t n = 0;
    for (int64_t i = 0; i < own[k]; i++) idx[n++] = window[off[k] + i];
    if (pl) {
        int64_t r[SCV_MAX_WORKERS];
        scv_inject_from(pl, k, r);
        for (int i = 0; i < pl->m; i++)
            for (int64_t t = 0; t < r[i]; t++) idx[n++] = window[off[pl->chosen[i]] + t];
    }
    return n;
}
