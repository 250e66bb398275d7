/*
 * dynbatch.c - the dynamic-batching controller (see dynbatch.h). Units: seconds, samples.
 *
 * Over each window of `every` iterations, worker k's compute seconds per sample is
 * tau_k = sum t_k / sum b_k. At the window's end, with b_k = share_k B the current batches and
 * t_k = tau_k b_k their predicted times, the paper's proportional rule (Eq. 4-5)
 *     delta b_k = -(b_k / t_k) (t_k - t_mean),  b_k <- b_k + delta b_k  =  t_mean / tau_k
 * gives every worker the batch it computes in the mean time, i.e. shares proportional to
 * throughput 1/tau_k. That assumes t_k = tau_k b_k; a worker also has costs that do not scale
 * with its batch, and on the emulated cluster a throttled VM's time per sample grows with its
 * batch (a burst shorter than its CPU quota per period runs at full speed: 0.29 ms a sample at
 * b = 17, 0.75 ms at b = 64, measured at 0.125 core), so the proportional step overshoots and
 * the shares swing. Where a worker has two used windows whose mean batches differ by 20% or
 * more, its time is modelled by the secant through them, t_k(b) = a_k + c_k b (slope c_k kept
 * within [tau_k / 4, 4 tau_k]); otherwise a_k = 0, c_k = tau_k. The target batches give every
 * worker the same time T and sum to B:
 *     T = (B + sum_k a_k / c_k) / sum_k (1 / c_k),   b*_k = (T - a_k) / c_k
 * (all proportional, the paper's rule, when some b*_k <= 0). The step b_k <- b_k + g (b*_k - b_k)
 * is the full one (g = 1) while some worker's time is more than full_step_above (25%) from
 * the mean, so a start from even shares settles in one or two adjustments; nearer, g = gain
 * (0.5) damps what noise is left. No step at all unless some worker's mean time differs from
 * the workers' mean by more than noise_z (2) standard errors of its window mean: differences
 * the window's noise explains are not acted on. The new batches are clamped to [min_share, max_share] of B (the
 * clamped excess spread over the others), scaled back to sum to B, and applied only when
 * some worker's batch moves by more than the dead-band (5%): the controller holds still once
 * the workers finish within it. Per-sample time, not iteration time, keeps the estimate
 * meaningful across adjustments (a worker's t_k jumps when its b_k does); the first window
 * after a start is not used (the kernels' first calls made one worker look 6x slower than
 * it was, and the shares moved the wrong way); a window of 20
 * iterations, not the EWMA of 0.3 tried first, keeps equal workers from chasing noise (29
 * adjustments in a run at H = 1 with the EWMA and windows of 10).
 *
 * What the shares cannot absorb: the balanced share of worker k is
 *     s*_k = (1 / tau_k) / sum_j (1 / tau_j).
 * When s*_k < min_share / absorb_margin (1.25) for absorb_windows (2) windows in a row (the
 * floor is at most 0.9 of an even share, 0.9 / K, whatever the policy says), the floor keeps worker k's
 * compute at tau_k min_share B, longer than the others' (the slowdown reported is that over
 * the others' mean time at their balanced shares): the worker is too slow for rebalancing, and the
 * trainer reports it like a straggler (the elastic driver can replace it).
 */
#include "dynbatch.h"
#include "../core/util.h"
#include "train.h"

#include <math.h>
#include <string.h>

scv_dynbatch_policy scv_dynbatch_policy_default(void)
{
    return (scv_dynbatch_policy){.dead_band = 0.05, .every = 20, .gain = 0.5, .min_share = 0.02, .max_share = 0.98,
                                 .full_step_above = 0.25, .noise_z = 2, .absorb_windows = 2,
                                 .absorb_margin = 1.25};
}

void scv_dynbatch_init(scv_dynbatch_state *s, const scv_dynbatch_policy *pol, int K, int64_t B, const double *weights)
{
    memset(s, 0, sizeof *s);
    s->pol = *pol;
    s->K = K < 1 ? 1 : K > SCV_MAX_WORKERS ? SCV_MAX_WORKERS : K;
    /* the floor stays under an even share (at most 0.9 of it: the default 0.02 is that at
     * K = 45), a report needs a window */
    s->pol.min_share = fmin(s->pol.min_share, 0.9 / s->K);
    if (s->pol.absorb_windows < 1) s->pol.absorb_windows = 1;
    if (!(s->pol.absorb_margin >= 1)) s->pol.absorb_margin = 1;
    s->B = B;
    double sum = 0;
    for (int k = 0; k < s->K; k++) sum += weights ? weights[k] : 1;
    for (int k = 0; k < s->K; k++) {
        s->share[k] = (weights ? weights[k] : 1) / sum;
        s->tau[k] = s->balanced[k] = s->prev_b[k] = s->prev_t[k] = NAN;
    }
    s->unabsorbed = -1;
}

/* Clamps shares that sum to 1 to [lo, hi], moving what was cut to (or taken from) the
 * unclamped ones in proportion, until none is out of bounds (at most K rounds). When every
 * share is at a bound (one under lo and one over hi at K = 2), what is still missing or over
 * goes to the shares with room, in proportion to their room, so that the sum is 1 and the
 * bounds hold (K lo <= 1 <= K hi). A NaN share is left as it is. */
static void clamp_shares(double *sh, int K, double lo, double hi)
{
    for (int round = 0; round < K; round++) {
        double excess = 0, free_sum = 0;
        int fixed[SCV_MAX_WORKERS] = {0}, any = 0;
        for (int k = 0; k < K; k++) {
            if (sh[k] < lo) excess -= lo - sh[k], sh[k] = lo, fixed[k] = 1, any = 1;
            else if (sh[k] > hi) excess += sh[k] - hi, sh[k] = hi, fixed[k] = 1, any = 1;
        }
        if (!any) return;
        for (int k = 0; k < K; k++)
            if (!fixed[k]) free_sum += sh[k];
        if (!(free_sum > 0)) break;
        for (int k = 0; k < K; k++)
            if (!fixed[k]) sh[k] += excess * sh[k] / free_sum;
    }
    double sum = 0, room = 0;
    for (int k = 0; k < K; k++) sum += sh[k];
    const double diff = 1 - sum;
    for (int k = 0; k < K; k++) room += diff > 0 ? hi - sh[k] : sh[k] - lo;
    if (!(room > 0) || !(fabs(diff) > 1e-12)) return;
    for (int k = 0; k < K; k++) sh[k] += diff * (diff > 0 ? hi - sh[k] : sh[k] - lo) / room;
}

/* The balanced shares of the last window, and a worker they cannot absorb (see above). */
static void check_absorbable(scv_dynbatch_state *s)
{
    const int K = s->K;
    double inv = 0;
    for (int k = 0; k < K; k++) inv += 1 / s->tau[k];
    for (int k = 0; k < K; k++) {
        s->balanced[k] = (1 / s->tau[k]) / inv;
        s->low[k] = s->balanced[k] * s->pol.absorb_margin < s->pol.min_share ? s->low[k] + 1 : 0;
    }
    int worst = -1;
    for (int k = 0; k < K; k++)
        if (!s->reported[k] && s->low[k] >= s->pol.absorb_windows && (worst < 0 || s->balanced[k] < s->balanced[worst]))
            worst = k;
    if (worst < 0) return;
    double others = 0;
    for (int k = 0; k < K; k++)
        if (k != worst) others += s->tau[k] * s->balanced[k] * (double)s->B / (K - 1);
    double tp[SCV_MAX_WORKERS];
    for (int k = 0; k < K; k++) tp[k] = 1 / s->tau[k];
    s->reported[worst] = 1;
    s->unabsorbed = worst;
    s->unabsorbed_ratio = (1 / s->tau[worst]) / scv_median(tp, (size_t)K);
    s->floor_slowdown = s->tau[worst] * s->pol.min_share * (double)s->B / others;
}

int scv_dynbatch_update(scv_dynbatch_state *s, const double *t, const int64_t *b)
{
    const int K = s->K;
    s->unabsorbed = -1;
    for (int k = 0; k < K; k++)
        if (b[k] > 0 && t[k] > 0) s->sum_t[k] += t[k], s->sum_t2[k] += t[k] * t[k], s->sum_b[k] += (double)b[k], s->n[k]++;
    if (K < 2 || ++s->since < s->pol.every) return 0;
    s->since = 0;
    double mb[SCV_MAX_WORKERS], mt[SCV_MAX_WORKERS], se[SCV_MAX_WORKERS]; /* the window's mean batch
                                                           and time, the time's standard error */
    for (int k = 0; k < K; k++) {
        const double n = s->n[k];
        s->tau[k] = s->sum_b[k] > 0 ? s->sum_t[k] / s->sum_b[k] : NAN;
        mb[k] = n ? s->sum_b[k] / n : NAN, mt[k] = n ? s->sum_t[k] / n : NAN;
        se[k] = n > 1 ? sqrt(fmax(0, s->sum_t2[k] - n * mt[k] * mt[k]) / (n - 1) / n) : 0;
        s->sum_t[k] = s->sum_t2[k] = s->sum_b[k] = 0, s->n[k] = 0;
    }
    if (s->windows++ == 0) return 0; /* the first window holds the kernels' first calls and the
                                         start: 6x a worker's later time per sample, seen */
    double bk[SCV_MAX_WORKERS], tk[SCV_MAX_WORKERS], tmean = 0, far = 0;
    for (int k = 0; k < K; k++) {
        if (!(s->tau[k] > 0)) return 0; /* a worker not measured yet */
        bk[k] = s->share[k] * (double)s->B;
        tk[k] = s->tau[k] * bk[k];
        tmean += tk[k] / K;
    }
    check_absorbable(s);
    /* each worker's time model: the secant through its last two windows, else proportional */
    double a[SCV_MAX_WORKERS], c[SCV_MAX_WORKERS], inv = 0, lift = 0;
    for (int k = 0; k < K; k++) {
        a[k] = 0, c[k] = s->tau[k];
        if (fabs(mb[k] - s->prev_b[k]) >= 0.2 * mb[k]) { /* false while prev_b is NaN */
            double slope = (mt[k] - s->prev_t[k]) / (mb[k] - s->prev_b[k]);
            if (slope >= s->tau[k] / 4 && slope <= 4 * s->tau[k]) c[k] = slope, a[k] = mt[k] - slope * mb[k];
        }
        s->prev_b[k] = mb[k], s->prev_t[k] = mt[k];
        inv += 1 / c[k], lift += a[k] / c[k];
    }
    const double T = ((double)s->B + lift) / inv;
    double target[SCV_MAX_WORKERS];
    int proportional = 0;
    for (int k = 0; k < K; k++) proportional |= !((target[k] = (T - a[k]) / c[k]) > 0);
    for (int k = 0; proportional && k < K; k++) target[k] = (double)s->B * s->balanced[k];
    /* a difference the window's noise can explain is no reason to move (a throttled VM's
     * compute is bimodal: 3 ms within its quota, 20-30 ms when a burst meets the period's end) */
    double mtbar = 0;
    int significant = 0;
    for (int k = 0; k < K; k++) mtbar += mt[k] / K;
    for (int k = 0; k < K; k++) significant |= fabs(mt[k] - mtbar) > s->pol.noise_z * se[k];
    if (!significant) return 0;
    for (int k = 0; k < K; k++) far = fmax(far, fabs(tk[k] / tmean - 1));
    const double gain = far > s->pol.full_step_above ? 1 : s->pol.gain;
    double sh[SCV_MAX_WORKERS], moved = 0;
    for (int k = 0; k < K; k++) sh[k] = (bk[k] + gain * (target[k] - bk[k])) / (double)s->B;
    clamp_shares(sh, K, s->pol.min_share, s->pol.max_share);
    double total = 0; /* exactly B again (a clamp with nothing left to spread on may not be) */
    for (int k = 0; k < K; k++) total += sh[k];
    for (int k = 0; k < K; k++) sh[k] /= total;
    for (int k = 0; k < K; k++) moved = fmax(moved, fabs(sh[k] - s->share[k]) / s->share[k]);
    if (!(moved > s->pol.dead_band)) return 0;
    memcpy(s->share, sh, sizeof(double) * (size_t)K);
    s->adjustments++;
    return 1;
}
