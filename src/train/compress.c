/*
 * compress.c - communication efficiency, the pure parts (see compress.h). Units: seconds,
 * bytes, samples; gradients are float32 vectors of n values.
 *
 * Top-k with error feedback (Stich et al.; GraVAC, AR-Topk): each worker keeps a residual e,
 * adds its gradient to it, g_ef = e + g, sends the k entries of largest magnitude and keeps
 * the rest, e <- g_ef - sent. Nothing is lost: over any steps, sum sent + e = sum g. The
 * compression gain of a step is |sent|^2 / |g_ef|^2 in (0, 1].
 *
 * GraVAC's factor (the paper's Alg. 1, simplified to one factor at a time): starting at
 * cf_min, each factor runs `window` steps; its mean gain G and compression throughput
 * CT = (samples / seconds) x G are measured. A factor with G < eps is infeasible. While
 * feasible and CT beats the best so far by more than omega, the next factor (x growth, up to
 * cf_max) is tried; then the best one is kept. Holding a factor, a window with G < eps steps
 * down (cf / growth, dense below cf_min); dense training probes cf_min's gain (the trainer
 * computes it without sending) and explores again once it reaches eps.
 *
 * SelSync: Delta_i = (E|g_i|^2 - E|g_{i-1}|^2) / E|g_{i-1}|^2 with E an EWMA of the worker's
 * squared gradient norm, alpha = 2 / (window + 1); |Delta| >= delta asks for a
 * synchronisation (delta = 0: always, synchronous SGD). With a target share of local steps R,
 * the step synchronises when the workers' largest |Delta| is at or above the q-quantile of
 * the last `history` steps' largest, q = R + (R - the share of local steps so far).
 */
#include "compress.h"
#include "train.h"

#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

scv_gravac_policy scv_gravac_policy_default(void)
{
    return (scv_gravac_policy){.eps = 0.7, .omega = 0.01, .window = 40, .cf_min = 10, .cf_max = 1000, .growth = 2};
}

scv_selsync_policy scv_selsync_policy_default(void)
{
    return (scv_selsync_policy){.delta = 0.3, .window = 25, .lssr = 0, .history = 50};
}

size_t scv_topk_count(size_t n, double cf)
{
    if (!(cf > 1) || n == 0) return n;
    double k = floor((double)n / cf + 0.5);
    return k < 1 ? 1 : k > (double)n ? n : (size_t)k;
}

/* The order of selection: larger magnitude first, a NaN as the largest, ties to the lower index. */
static inline float mag(const float *x, uint32_t i)
{
    float m = fabsf(x[i]);
    return m == m ? m : INFINITY;
}
static inline int before(const float *x, uint32_t a, uint32_t b)
{
    float ma = mag(x, a), mb = mag(x, b);
    return ma > mb || (ma == mb && a < b);
}

/* The magnitude's bits as a key that orders like mag (a non-negative float's bits ascend with
 * its value; NaN is INFINITY's). */
static inline uint32_t mag_key(const float *x, uint32_t i)
{
    const float m = mag(x, i);
    uint32_t b;
    memcpy(&b, &m, sizeof b);
    return b;
}

/* The key that would stand at position k (0-based) of a[0..n) sorted in descending order
 * (quickselect; a is reordered). */
static uint32_t kth_key_desc(uint32_t *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        const uint32_t pivot = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] > pivot) i++;
            while (a[j] < pivot) j--;
            if (i <= j) {
                const uint32_t t = a[i];
                a[i] = a[j], a[j] = t, i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j && j < hi) hi = j;
        else if (k >= i) lo = i;
        else break;
    }
    return a[k];
}

/* Reorders a[0..m) so that a[0..k) are the first k of the order (quickselect, median of three). */
static void select_first(const float *x, uint32_t *a, size_t m, size_t k)
{
    if (k == 0 || k >= m) return;
    long long lo = 0, hi = (long long)m - 1, target = (long long)k - 1;
    while (lo < hi) {
        long long mid = lo + (hi - lo) / 2;
        uint32_t t;
        if (before(x, a[mid], a[lo])) t = a[mid], a[mid] = a[lo], a[lo] = t;
        if (before(x, a[hi], a[lo])) t = a[hi], a[hi] = a[lo], a[lo] = t;
        if (before(x, a[hi], a[mid])) t = a[hi], a[hi] = a[mid], a[mid] = t;
        const uint32_t pivot = a[mid];
        long long i = lo, j = hi;
        while (i <= j) {
            while (before(x, a[i], pivot)) i++;
            while (before(x, pivot, a[j])) j--;
            if (i <= j) t = a[i], a[i] = a[j], a[j] = t, i++, j--;
        }
        if (target <= j) hi = j;
        else if (target >= i) lo = i;
        else break;
    }
}

/* How the k largest are found fast: a threshold from a strided sample of 4096 magnitudes
 * (the sample's entry at 1.5 k/n of its length, from the top) keeps, in one pass over x,
 * about 1.5 k candidates (every entry not below it, NaN included); if fewer than k pass, the
 * sample position doubles and the pass is made again. The exact order then runs on the
 * candidates only. Small or dense selections quickselect the whole vector. */
#define TOPK_SAMPLE 4096

static void ascending(uint32_t *work, size_t n, size_t k, uint32_t *idx);

/* idx <- the first k of the order (mag descending, ties to the lower index) among the m
 * candidates work[0..m), which ascend, in ascending order. With room in work for two more
 * copies (3 m <= n): the k-th largest key T is found in a copy of the keys, then one pass in
 * index order takes those above T and the lowest-indexed of those equal to it; else a
 * quickselect on the candidates and the bitmap sort. work is overwritten. */
static void first_k(const float *x, uint32_t *work, size_t m, size_t n, size_t k, uint32_t *idx)
{
    if (3 * m > n) {
        select_first(x, work, m, k);
        ascending(work, n, k, idx);
        return;
    }
    uint32_t *key = work + m, *sel = work + 2 * m; /* the candidates' keys, in order; a copy to select in */
    for (size_t j = 0; j < m; j++) key[j] = sel[j] = mag_key(x, work[j]);
    const uint32_t T = kth_key_desc(sel, m, k - 1);
    size_t above = 0, c = 0;
    for (size_t j = 0; j < m; j++) above += key[j] > T;
    size_t ties = k - above; /* those equal to T: the lowest indices (the candidates ascend) */
    for (size_t j = 0; j < m && c < k; j++) {
        if (key[j] > T) idx[c++] = work[j];
        else if (key[j] == T && ties) idx[c++] = work[j], ties--;
    }
}

void scv_topk_indices(const float *x, size_t n, size_t k, uint32_t *idx, uint32_t *work)
{
    if (k > n) k = n;
    if (k == 0) return;
    size_t m = 0;
    if (k < n && n >= 4 * TOPK_SAMPLE && k <= n / 8) {
        uint32_t samp[TOPK_SAMPLE];
        const size_t stride = n / TOPK_SAMPLE;
        for (size_t i = 0; i < TOPK_SAMPLE; i++) samp[i] = mag_key(x, (uint32_t)(i * stride));
        for (double pos = 1.5 * (double)k / (double)n * TOPK_SAMPLE + 1; m < k; pos *= 2) {
            if (pos >= TOPK_SAMPLE) {
                m = 0; /* the sample cannot place it: the whole vector */
                break;
            }
            const uint32_t tk = kth_key_desc(samp, TOPK_SAMPLE, (size_t)pos);
            float tau;
            memcpy(&tau, &tk, sizeof tau);
            m = 0;
            for (size_t i = 0; i < n; i++) { /* branch-free: write always, advance on a pass */
                work[m] = (uint32_t)i;
                m += !(fabsf(x[i]) < tau);
            }
        }
    }
    if (m < k) { /* the whole vector */
        for (size_t i = 0; i < n; i++) work[i] = (uint32_t)i;
        m = n;
    }
    first_k(x, work, m, n, k, idx);
}

/* idx <- the k indices in work[0..k), ascending: a bitmap over the first n/32 + 1 words of
 * work (which it overwrites). */
static void ascending(uint32_t *work, size_t n, size_t k, uint32_t *idx)
{
    memcpy(idx, work, k * sizeof *idx);
    const size_t words = n / 32 + 1;
    memset(work, 0, words * sizeof *work);
    for (size_t i = 0; i < k; i++) work[idx[i] / 32] |= 1u << (idx[i] % 32);
    size_t c = 0;
    for (size_t w = 0; w < words && c < k; w++)
        for (uint32_t bits = work[w]; bits; bits &= bits - 1) idx[c++] = (uint32_t)(w * 32 + (size_t)__builtin_ctz(bits));
}

/* e <- e + g, returning |e|^2 summed in float lanes per block of 1024 (one double sum would
 * chain every add), each block's lanes added into a double; gz (g itself, or NULL) is zeroed
 * on the way. With work (not NULL), the indices of the entries with |e_i| >= h (NaN included)
 * are gathered into it, *m of them. With SSE2 (every x86-64), groups of 16: four vectors
 * added, stored and squared, their largest magnitude compared once against h; a group that
 * passes gives its indices from the compares' bit masks (about one group in three at 100x).
 * maxps drops a NaN, whose square makes the block's sum NaN: such a block is gathered again
 * entry by entry. The compiler does not vectorise the portable form (its compare-and-gather
 * stays scalar): 1.1 ns an entry against 0.6 measured. */
static double accumulate(float *e, const float *g, float *gz, size_t n, float h, uint32_t *work, size_t *m)
{
    double sq = 0;
    size_t i = 0, got = 0;
    while (i < n) {
        const size_t start = i, got0 = got, end = n - i > 1024 ? i + 1024 : n;
        float lane[8] = {0};
#if defined(__SSE2__)
        const __m128 hv = _mm_set1_ps(h), sign = _mm_set1_ps(-0.0f), zero = _mm_setzero_ps();
        __m128 s0 = zero, s1 = zero, s2 = zero, s3 = zero;
        for (; i + 16 <= end; i += 16) {
            const __m128 v0 = _mm_add_ps(_mm_loadu_ps(e + i), _mm_loadu_ps(g + i));
            const __m128 v1 = _mm_add_ps(_mm_loadu_ps(e + i + 4), _mm_loadu_ps(g + i + 4));
            const __m128 v2 = _mm_add_ps(_mm_loadu_ps(e + i + 8), _mm_loadu_ps(g + i + 8));
            const __m128 v3 = _mm_add_ps(_mm_loadu_ps(e + i + 12), _mm_loadu_ps(g + i + 12));
            _mm_storeu_ps(e + i, v0), _mm_storeu_ps(e + i + 4, v1);
            _mm_storeu_ps(e + i + 8, v2), _mm_storeu_ps(e + i + 12, v3);
            if (gz) {
                _mm_storeu_ps(gz + i, zero), _mm_storeu_ps(gz + i + 4, zero);
                _mm_storeu_ps(gz + i + 8, zero), _mm_storeu_ps(gz + i + 12, zero);
            }
            s0 = _mm_add_ps(s0, _mm_mul_ps(v0, v0)), s1 = _mm_add_ps(s1, _mm_mul_ps(v1, v1));
            s2 = _mm_add_ps(s2, _mm_mul_ps(v2, v2)), s3 = _mm_add_ps(s3, _mm_mul_ps(v3, v3));
            if (!work) continue;
            const __m128 a0 = _mm_andnot_ps(sign, v0), a1 = _mm_andnot_ps(sign, v1);
            const __m128 a2 = _mm_andnot_ps(sign, v2), a3 = _mm_andnot_ps(sign, v3);
            if (!_mm_movemask_ps(_mm_cmpnlt_ps(_mm_max_ps(_mm_max_ps(a0, a1), _mm_max_ps(a2, a3)), hv))) continue;
            unsigned hits = (unsigned)_mm_movemask_ps(_mm_cmpnlt_ps(a0, hv)) |
                            (unsigned)_mm_movemask_ps(_mm_cmpnlt_ps(a1, hv)) << 4 |
                            (unsigned)_mm_movemask_ps(_mm_cmpnlt_ps(a2, hv)) << 8 |
                            (unsigned)_mm_movemask_ps(_mm_cmpnlt_ps(a3, hv)) << 12;
            for (; hits; hits &= hits - 1) work[got++] = (uint32_t)(i + (size_t)__builtin_ctz(hits));
        }
        _mm_storeu_ps(lane, _mm_add_ps(s0, s1)), _mm_storeu_ps(lane + 4, _mm_add_ps(s2, s3));
#else
        for (; i + 8 <= end; i += 8) {
            int hit = 0;
            for (int j = 0; j < 8; j++) {
                const float v = e[i + j] + g[i + j];
                e[i + j] = v;
                lane[j] += v * v;
                hit |= !(fabsf(v) < h);
            }
            if (gz) memset(gz + i, 0, 8 * sizeof *gz);
            if (hit && work)
                for (int j = 0; j < 8; j++) work[got] = (uint32_t)(i + j), got += !(fabsf(e[i + j]) < h);
        }
#endif
        for (; i < end; i++) {
            e[i] += g[i];
            if (gz) gz[i] = 0;
            lane[0] += e[i] * e[i];
            if (work) work[got] = (uint32_t)i, got += !(fabsf(e[i]) < h);
        }
        const double block = (double)lane[0] + lane[1] + lane[2] + lane[3] + lane[4] + lane[5] + lane[6] + lane[7];
        if (work && isnan(block)) { /* a NaN the maximum may have dropped: the block entry by entry */
            got = got0;
            for (size_t j = start; j < end; j++) work[got] = (uint32_t)j, got += !(fabsf(e[j]) < h);
        }
        sq += block;
    }
    if (m) *m = got;
    return sq;
}

double scv_ef_accumulate(float *e, const float *g, size_t n)
{
    return accumulate(e, g, NULL, n, INFINITY, NULL, NULL);
}

double scv_ef_accumulate_topk(float *e, float *g, size_t n, size_t k, scv_topk_guess *guess, uint32_t *idx,
                              uint32_t *work)
{
    if (k > n) k = n;
    const float h = guess->tau > 0 ? guess->tau : INFINITY; /* no guess: gather nothing but a NaN */
    size_t m = 0;
    const double sq = accumulate(e, g, g, n, h, work, &m);
    if (k == 0) return sq;
    if (m >= k && m <= 16 * k) first_k(e, work, m, n, k, idx);
    else scv_topk_indices(e, n, k, idx, work);
    float kth = INFINITY; /* the smallest magnitude taken */
    for (size_t j = 0; j < k; j++) kth = fminf(kth, mag(e, idx[j]));
    /* f towards 1 when too many passed (each costs in the gather and the select), down when
     * too few (a second pass); held while 1.1 k to 1.5 k pass (random gradients, 235k
     * entries at 100x: 190 us a step with 3% falling back, against 270 us for 1.2 k to 3 k) */
    float f = guess->f > 0 && guess->f < 1 ? guess->f : 0.9f;
    if (h < INFINITY && m < k + k / 10) f = f * f;
    else if (h < INFINITY && m > 3 * k / 2) f = sqrtf(f);
    guess->f = f;
    guess->tau = kth < INFINITY ? f * kth : 0;
    return sq;
}

double scv_ef_take(float *e, const uint32_t *idx, size_t k, float *val)
{
    double sq = 0;
    for (size_t i = 0; i < k; i++) {
        val[i] = e[idx[i]];
        e[idx[i]] = 0;
        sq += (double)val[i] * val[i];
    }
    return sq;
}

void scv_gravac_init(scv_gravac_state *s, const scv_gravac_policy *pol)
{
    memset(s, 0, sizeof *s);
    s->pol = *pol;
    s->cf = pol->cf_min > 1 ? pol->cf_min : 1;
    s->best_ct = -1;
    s->gain = s->ct = NAN;
}

int scv_gravac_step(scv_gravac_state *s, double cf, double gain, double t_iter, double samples)
{
    const scv_gravac_policy *p = &s->pol;
    if (cf != s->cf) return 0; /* measured at the previous factor: not this window's */
    s->sum_gain += gain >= 0 && gain <= 1 ? gain : 0;
    if (t_iter > 0 && samples > 0) s->sum_t += t_iter, s->sum_b += samples;
    if (++s->steps < (p->window > 0 ? p->window : 1)) return 0;
    s->gain = s->sum_gain / s->steps;
    s->ct = s->sum_t > 0 ? s->sum_b / s->sum_t * s->gain : 0;
    s->steps = 0, s->sum_gain = s->sum_t = s->sum_b = 0;
    const double old = s->cf, growth = p->growth > 1 ? p->growth : 2;
    const int feasible = s->gain >= p->eps;
    if (s->cf <= 1) { /* dense: the gain is cf_min's probe */
        if (feasible) s->cf = p->cf_min, s->settled = 0, s->best_cf = 0, s->best_ct = -1;
    } else if (s->settled) {
        if (!feasible) s->cf = s->cf / growth >= p->cf_min ? s->cf / growth : 1;
    } else if (!feasible) { /* the largest feasible factor was the last one */
        s->cf = s->best_cf > 0 ? s->best_cf : 1, s->settled = 1;
    } else if (s->best_cf == 0 || s->ct > s->best_ct * (1 + p->omega)) {
        s->best_cf = s->cf, s->best_ct = s->ct;
        if (s->cf * growth <= p->cf_max * (1 + 1e-9)) s->cf *= growth;
        else s->settled = 1;
    } else { /* no better than the best by omega: the lower factor */
        s->cf = s->best_cf, s->settled = 1;
    }
    if (s->cf != old) s->changes++;
    return s->cf != old;
}

void scv_selsync_init(scv_selsync_state *s, const scv_selsync_policy *pol)
{
    memset(s, 0, sizeof *s);
    s->pol = *pol;
    s->ewma = s->prev = NAN;
}

double scv_selsync_change(scv_selsync_state *s, double sq)
{
    const double a = 2.0 / ((s->pol.window > 0 ? s->pol.window : 1) + 1.0);
    s->prev = s->ewma;
    s->ewma = isnan(s->ewma) ? sq : (1 - a) * s->ewma + a * sq;
    if (!(s->prev > 0)) return INFINITY;
    return fabs((s->ewma - s->prev) / s->prev);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int scv_selsync_decide(scv_selsync_state *s, const float *changes, int K)
{
    const int H = s->pol.history < 2 ? 2 : s->pol.history > SCV_SELSYNC_HISTORY ? SCV_SELSYNC_HISTORY : s->pol.history;
    double top = 0;
    for (int k = 0; k < K; k++) top = fmax(top, (double)changes[k]); /* fmax: a NaN is passed over */
    int sync = 1;
    if (s->n_hist >= H / 2) {
        double q[SCV_SELSYNC_HISTORY];
        memcpy(q, s->hist, sizeof(double) * (size_t)s->n_hist);
        qsort(q, (size_t)s->n_hist, sizeof *q, cmp_double);
        const double so_far = (double)s->decided_local / (double)s->decided; /* decided >= H/2 > 0 */
        const double share = fmin(1, fmax(0, 2 * s->pol.lssr - so_far));
        const int i = (int)floor(share * s->n_hist); /* the first change above that share */
        sync = top >= q[i < s->n_hist ? i : s->n_hist - 1];
    }
    s->decided++, s->decided_local += !sync;
    if (isfinite(top)) { /* the first step's (no previous value) says nothing of the spread */
        s->hist[s->at] = top;
        s->at = (s->at + 1) % H;
        if (s->n_hist < H) s->n_hist++;
    }
    return sync;
}

double scv_selsync_lssr(const scv_selsync_state *s)
{
    int64_t n = s->local_steps + s->sync_steps;
    return n ? (double)s->local_steps / (double)n : 0;
}
