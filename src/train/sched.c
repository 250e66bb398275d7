/*
 * sched.c - batch split, epoch order and learning-rate schedule (see sched.h).
 */
#include "sched.h"
#include "../core/util.h"
#include "../core/invariant.h"

#include <math.h>

void scv_split_batch(int64_t B, int K, const double *weights, int64_t *counts, int64_t *offsets)
{
    /* the callers' invariants (K and the weights are checked where they are read: --workers,
     * --batch-split, the dynamic shares); before, a K over 1024 silently left ranks out of
     * the remainders and weights summing to 0 split by NaN */
    SCV_ASSERT(K >= 1 && K <= SCV_MAX_WORKERS && B >= 0);
    double wsum = 0, rem[SCV_MAX_WORKERS];
    for (int k = 0; k < K; k++) wsum += weights ? weights[k] : 1.0;
    SCV_ASSERT(wsum > 0 && isfinite(wsum));
    int64_t given = 0;
    for (int k = 0; k < K; k++) {
        double share = (double)B * (weights ? weights[k] : 1.0) / wsum;
        counts[k] = (int64_t)floor(share);
        rem[k] = share - (double)counts[k];
        given += counts[k];
    }
    /* hand the leftover samples to the largest remainders, lowest rank first on ties */
    while (given < B) {
        int best = 0;
        for (int k = 1; k < K; k++)
            if (rem[k] > rem[best] + 1e-12) best = k;
        counts[best]++;
        rem[best] = -1;
        given++;
    }
    int64_t off = 0;
    for (int k = 0; k < K; k++) {
        offsets[k] = off;
        off += counts[k];
    }
}

void scv_epoch_order(uint64_t seed, uint64_t epoch, int64_t n, int32_t *perm)
{
    scv_rng r;
    scv_rng_seed(&r, scv_hash64(seed) ^ scv_hash64(epoch + 0x5ca1ab1eULL));
    for (int64_t i = 0; i < n; i++) perm[i] = (int32_t)i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)scv_rng_below(&r, (uint64_t)i + 1);
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

double scv_lr_at(const scv_train_params *p, int64_t batch, int64_t samples_seen, int64_t n_train)
{
    double lr = p->lr * scv_lr_scale_factor(p->lr_scaling, (double)batch, p->base_batch);
    double e = (double)samples_seen / (double)n_train;
    if (p->warmup_epochs > 0) {
        double w = (double)(samples_seen + batch) / (p->warmup_epochs * (double)n_train);
        if (w < 1) lr *= w;
    }
    if (p->lr_decay == SCV_LR_STEP && p->lr_step_epochs > 0)
        lr *= pow(p->lr_gamma, floor(e / p->lr_step_epochs));
    if (p->lr_decay == SCV_LR_COSINE) {
        double h = p->lr_horizon_epochs > 0 ? p->lr_horizon_epochs : p->epochs;
        if (h > 0) lr *= 0.5 * (1 + cos(3.141592653589793 * fmin(e / h, 1.0)));
    }
    return lr;
}

void scv_adascale_observe(scv_adascale *a, double sq_slice, double b, double sq_batch, double B)
{
    if (!(b > 0 && B > b) || !isfinite(sq_slice) || !isfinite(sq_batch)) return;
    double g2 = (B * sq_batch - b * sq_slice) / (B - b), tr = (sq_slice - sq_batch) / (1 / b - 1 / B);
    const double th = SCV_ADASCALE_THETA;
    a->g2 = th * a->g2 + (1 - th) * g2, a->tr = th * a->tr + (1 - th) * tr, a->w = th * a->w + (1 - th);
}

double scv_adascale_noise_scale(const scv_adascale *a)
{
    if (!(a->w > 0)) return NAN;
    double tr = a->tr / a->w, g2 = a->g2 / a->w;
    if (!(tr > 0)) return 0;            /* no noise measured: every batch is as good */
    return g2 > 0 ? tr / g2 : INFINITY; /* no signal measured: all noise */
}

double scv_adascale_gain(const scv_adascale *a, double B, double B0)
{
    double bn = scv_adascale_noise_scale(a), S = B / B0;
    if (isnan(bn) || !(B0 > 0)) return 1;
    double r = isinf(bn) ? S : (1 + bn / B0) / (1 + bn / B);
    return fmin(fmax(r, fmin(1, S)), fmax(1, S));
}
