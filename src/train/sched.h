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
 *   s(B)   = 1, B/B0 or sqrt(B/B0) for none, linear, sqrt scaling (B0 = base_batch)
 *   warm   = min(1, (samples_seen + batch) / (warmup_epochs * n_train))
 *   decay  = gamma^floor(e / step_epochs) (step) or (1 + cos(pi * min(e / H, 1))) / 2
 *            (cosine over H = lr_horizon_epochs, else p->epochs) or 1. */
double scv_lr_at(const scv_train_params *p, int64_t batch, int64_t samples_seen, int64_t n_train);

/* The built-in trainer's learning recipe by default, written once: scv_train_params_default
 * (runtime/trainer.c) starts from it, and a job's recipe fills what its settings do not give
 * from it (io/recipe.c). */
#define SCV_RECIPE_LR 0.05
#define SCV_RECIPE_MOMENTUM 0.9
#define SCV_RECIPE_WEIGHT_DECAY 5e-4
#define SCV_RECIPE_BASE_BATCH 64
#define SCV_RECIPE_LR_GAMMA 0.1
#endif
