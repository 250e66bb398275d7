/*
 * sched.h - the pure bookkeeping of data-parallel SGD: how a global batch is split over
 * ranks, the per-epoch sample order, and the learning-rate schedule. No I/O, no MPI.
 */
#ifndef SCV_SCHED_H
#define SCV_SCHED_H
#include <stdint.h>
#include "scv.h"

/* scv_split_batch (the split of B over ranks) is public: include/scv.h. */

/* perm[0..n) = the sample order of epoch `epoch` for `seed` (Fisher-Yates). The same
 * (seed, epoch) gives the same order whatever K and B are, so a run resumed with another
 * configuration continues the epoch at the same position. */
void scv_epoch_order(uint64_t seed, uint64_t epoch, int64_t n, int32_t *perm);

/* Learning rate before the step that takes `samples_seen` to samples_seen + batch:
 *   lr = base * s(B) * warm(e) * decay(e),  e = samples_seen / n_train (epochs, fractional)
 *   s(B)   = 1, B/B0 or sqrt(B/B0) for none, linear, sqrt scaling (B0 = base_batch); 1 for
 *            adascale (its gain multiplies it: scv_adascale_gain)
 *   warm   = min(1, (samples_seen + batch) / (warmup_epochs * n_train))
 *   decay  = gamma^floor(e / step_epochs) (step) or (1 + cos(pi * min(e / H, 1))) / 2
 *            (cosine over H = lr_horizon_epochs, else p->epochs) or 1. */
double scv_lr_at(const scv_train_params *p, int64_t batch, int64_t samples_seen, int64_t n_train);

/* AdaScale (Johnson et al. 2020, the rule Pollux's goodput model holds under): at B = S B0 the
 * learning rate is scv_lr_at's (s(B) = 1) times the gain ratio
 *   r = (sigma^2 + |G|^2) / (sigma^2 / S + |G|^2) = (1 + Bn / B0) / (1 + Bn / B)
 * (sigma^2 = tr(Sigma) / B0 the base batch's gradient variance, |G|^2 the true gradient's
 * squared norm, Bn = tr(Sigma) / |G|^2 the gradient noise scale), between 1 and S. Each step
 * estimates tr(Sigma) and |G|^2 from the squared norms of a slice's mean gradient (b samples:
 * a worker's, or at K = 1 each half of the batch) and of the batch's (B), unbiased
 * (McCandlish et al. 2018):
 *   |G|^2 = (B |g_B|^2 - b |g_b|^2) / (B - b),   tr(Sigma) = (|g_b|^2 - |g_B|^2) / (1/b - 1/B)
 * each smoothed by a bias-corrected moving average (SCV_ADASCALE_THETA a step); a step's gain
 * is the averages' before it (1 until there are some). A step then makes r base steps of
 * progress, so the samples to a target at B are those at B0 times (B + Bn) / (B0 + Bn): the
 * noise-scale law the loop carries by (model/carry.c), by construction. The schedule
 * (warm-up, decay) stays indexed by samples, not by AdaScale's scale-invariant iterations. */
#define SCV_ADASCALE_THETA 0.95
typedef struct scv_adascale {
    double tr, g2, w; /* the moving sums of tr(Sigma) and |G|^2, and of their weights */
} scv_adascale;
/* One step's statistics: sq_slice the mean over slices of b samples of |g_b|^2, sq_batch
 * |g_B|^2 (b < B; not finite: ignored). */
void scv_adascale_observe(scv_adascale *a, double sq_slice, double b, double sq_batch, double B);
/* The gain ratio at B against B0 from the averages so far (1 without them). */
double scv_adascale_gain(const scv_adascale *a, double B, double B0);
/* The averages' noise scale Bn = tr(Sigma) / |G|^2 (NaN without them; +inf: no signal). */
double scv_adascale_noise_scale(const scv_adascale *a);

/* The built-in trainer's learning recipe by default, written once: scv_train_params_default
 * (runtime/trainer.c) starts from it, and a job's recipe fills what its settings do not give
 * from it (io/recipe.c). */
#define SCV_RECIPE_LR 0.05
#define SCV_RECIPE_MOMENTUM 0.9
#define SCV_RECIPE_WEIGHT_DECAY 5e-4
#define SCV_RECIPE_BASE_BATCH 64
#define SCV_RECIPE_LR_GAMMA 0.1
#endif
