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
 * synchronisation (delta = 0: always, synchronous SGD).
 */
#include "compress.h"

#include <math.h>
#include <string.h>

scv_gravac_policy scv_gravac_policy_default(void)
{
    return (scv_gravac_policy){.eps = 0.7, .omega = 0.01, .window = 40, .cf_min = 10, .cf_max = 1000, .growth = 2};
}

scv_selsync_policy scv_selsync_policy_default(void)
{
    return (scv_selsync_policy){.delta = 0.3, .window = 25};
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

/* The entry that would stand at position k (0-based) of a[0..n) sorted in descending order
 * (quickselect; a is reordered). */
static float kth_desc(float *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        const float pivot = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] > pivot) i++;
            while (a[j] < pivot) j--;
            if (i <= j) {
                float t = a[i];
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

static void ascending(uint32_t *work, size_t n, size_t k, uint32_t *idx);

void scv_topk_indices(const float *x, size_t n, size_t k, uint32_t *idx, uint32_t *work)
{
    if (k > n) k = n;
    if (k == 0) return;
    size_t m = 0;
    if (k < n && n >= 4 * TOPK_SAMPLE && k <= n / 8) {
        float samp[TOPK_SAMPLE];
        const size_t stride = n / TOPK_SAMPLE;
        for (size_t i = 0; i < TOPK_SAMPLE; i++) {
            float v = fabsf(x[i * stride]);
            samp[i] = v == v ? v : INFINITY;
        }
        for (double pos = 1.5 * (double)k / (double)n * TOPK_SAMPLE + 1; m < k; pos *= 2) {
            if (pos >= TOPK_SAMPLE) {
                m = 0; /* the sample cannot place it: the whole vector */
                break;
            }
            const float tau = kth_desc(samp, TOPK_SAMPLE, (size_t)pos);
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
    select_first(x, work, m, k);
    ascending(work, n, k, idx);
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

/* e <- e + g, returning |e|^2 in eight independent float lanes per block of 1024 (the
 * compiler vectorises them; one double sum would chain every add), each block's lanes added
 * into a double. With work (not NULL), the indices of the entries with |e_i| >= h (NaN
 * included) are gathered into it, *m of them: one group of eight in ~10 at 100x has one. */
static double accumulate(float *e, const float *g, size_t n, float h, uint32_t *work, size_t *m)
{
    double sq = 0;
    size_t i = 0, got = 0;
    while (i < n) {
        const size_t end = n - i > 1024 ? i + 1024 : n;
        float lane[8] = {0};
        for (; i + 8 <= end; i += 8) {
            int hit = 0;
            for (int j = 0; j < 8; j++) {
                const float v = e[i + j] + g[i + j];
                e[i + j] = v;
                lane[j] += v * v;
                hit |= !(fabsf(v) < h);
            }
            if (hit && work)
                for (int j = 0; j < 8; j++) work[got] = (uint32_t)(i + j), got += !(fabsf(e[i + j]) < h);
        }
        for (; i < end; i++) {
            e[i] += g[i];
            lane[0] += e[i] * e[i];
            if (work) work[got] = (uint32_t)i, got += !(fabsf(e[i]) < h);
        }
        sq += (double)lane[0] + lane[1] + lane[2] + lane[3] + lane[4] + lane[5] + lane[6] + lane[7];
    }
    if (m) *m = got;
    return sq;
}

double scv_ef_accumulate(float *e, const float *g, size_t n)
{
    return accumulate(e, g, n, INFINITY, NULL, NULL);
}

double scv_ef_accumulate_topk(float *e, const float *g, size_t n, size_t k, scv_topk_guess *guess, uint32_t *idx,
                              uint32_t *work)
{
    if (k > n) k = n;
    const float h = guess->tau > 0 ? guess->tau : INFINITY; /* no guess: gather nothing but a NaN */
    size_t m = 0;
    const double sq = accumulate(e, g, n, h, work, &m);
    if (k == 0) return sq;
    if (m >= k && m <= 16 * k) {
        select_first(e, work, m, k);
        ascending(work, n, k, idx);
    } else {
        scv_topk_indices(e, n, k, idx, work);
    }
    float kth = INFINITY; /* the smallest magnitude taken */
    for (size_t j = 0; j < k; j++) kth = fminf(kth, mag(e, idx[j]));
    /* f towards 1 when too many passed (the select costs), down when too few (a second pass) */
    float f = guess->f > 0 && guess->f < 1 ? guess->f : 0.9f;
    if (h < INFINITY && m < k + k / 5) f = f * f;
    else if (h < INFINITY && m > 3 * k) f = sqrtf(f);
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

int scv_selsync_flag(scv_selsync_state *s, double sq)
{
    const double a = 2.0 / ((s->pol.window > 0 ? s->pol.window : 1) + 1.0);
    s->prev = s->ewma;
    s->ewma = isnan(s->ewma) ? sq : (1 - a) * s->ewma + a * sq;
    if (!(s->prev > 0)) return 1;
    return fabs((s->ewma - s->prev) / s->prev) >= s->pol.delta;
}

double scv_selsync_lssr(const scv_selsync_state *s)
{
    int64_t n = s->local_steps + s->sync_steps;
    return n ? (double)s->local_steps / (double)n : 0;
}
