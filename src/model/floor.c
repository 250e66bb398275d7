/*
 * floor.c - the batch carry-over under a fixed learning-rate rule, from the gradient noise the
 * run measures: the noise floor (scv_carry_floor).
 *
 * SGD at learning rate lr, momentum mu and batch B settles where the gradient noise holds the
 * training loss above its noise-free value: for a quadratic about the minimum, each direction's
 * excess settles at lr_eff sigma_i^2 / (4 B), so in all
 *   F(B) = lr_eff(B) tr(Sigma) / (4 B)        [loss]
 *   lr_eff = lr(B) / (1 - mu)                 (momentum's effective rate)
 *   tr(Sigma)                                 the per-sample gradient covariance's trace, which
 *                                             the trainer measures with K >= 2 (stat.c)
 * and the excess above the floor shrinks at a rate per step proportional to lr, per sample to
 * lr / B. A fixed rule moves both: from b0 to b the floor moves by d = F(b) - F(b0) and the
 * progress per sample by s = (lr(b) / b) / (lr(b0) / b0) (1/2 from 64 to 256 under sqrt
 * scaling, where F halves as well; scv_floor_in.rate, a rate measured from the start, in its
 * place where the caller has one). A run at b from its start is then b0's curve f0 of the
 * training loss at s times the samples, moved by d:
 *   f_b(u) = f0(s u) + d
 * so it reaches a loss target L at f0^-1(L - d) / s samples, where b0 reaches it at f0^-1(L):
 * the larger batch's lower floor helps a target near b0's plateau (the MLP and logistic
 * regression of bench decide reach theirs sooner at B=256), and its slower progress per
 * sample delays one far from it (LeNet). The crossings f0^-1 are the run's forecast of its
 * curve at b0 (scv_floor_in.cross), or read on the evaluations given.
 * Measured (Fashion-MNIST, K=2, B=64 and 256 at sqrt scaling, 3-4 epochs each, tr(Sigma) from
 * the later half at B=64): the floor gap predicted -0.058 (MLP 128) and -0.040 (logistic
 * regression) against -0.055 and -0.036 measured; LeNet, not at its floor by 4 epochs, stays
 * behind at B=256 as s predicts (its rate per sample 0.4-0.5 of B=64's).
 * An accuracy target's level is d times the accuracy's change per unit of training loss at b0
 * (per_loss, measured by the caller over its evaluations at b0): the run's own curve says how much
 * of the loss's floor shows in its accuracy. (Read instead as the loss b0 holds where its
 * accuracy crosses, it erred in sign on logistic regression's, +0.50 against -0.32, and
 * LeNet's accuracy at B=256 needed a lower loss than at 64.)
 * The band: the rate between s^kappa_hi and s^kappa_lo and the level within a relative error
 * (policy), each combination's exponent
 *   gamma = ln((f0^-1(L - d) / r) / f0^-1(L)) / ln(b / b0)
 * the band's ends the least and largest about the point (r = s, the level as measured). The
 * policy's s^0.2..s^1.5 and 50% are bench floor's (the rates read there spanned s^0.3..s^1.3,
 * and a trace measured early is up to 1.5x the later one): over 44 targets of LeNet, the MLP
 * and logistic regression (2 seeds, both metrics, crossings on whole curves at B=64), the
 * band held 38 (86%); with s^0.3..s^1.3 and 35%, 30 (68%).
 */
#include "scv.h"
#include "model.h"
#include "../core/util.h"

#include <math.h>
#include <string.h>

scv_floor_policy scv_floor_policy_default(void)
{
    return (scv_floor_policy){.kappa_lo = 0.2, .kappa_hi = 1.5, .level_err = 0.5, .min_evals = 4};
}

double scv_floor_level(const scv_floor_in *in, double batch)
{
    double lr = in->lr * scv_lr_scale_factor(in->lr_scaling, batch, in->base_batch);
    return in->momentum < 1 && batch > 0 ? lr / (1 - in->momentum) * in->trace / (4 * batch) : NAN;
}

/* Where the target's metric reaches v [samples]: on the evaluations' running best (least
 * loss, highest accuracy), linearly between the two it falls between (the first evaluation's
 * x where that one is there already), else where the run's forecast (in->cross) or the curve
 * f fitted to the evaluations does (no earlier than the last evaluation), 2 H past the
 * horizon H or never. */
static double crossing(const scv_floor_in *in, const scv_curve *f, double v, int *ahead)
{
    const double *x = in->x, *y = in->y, sg = in->metric == SCV_METRIC_LOSS ? 1 : -1; /* sg y falls */
    double best = y[0];
    if (sg * (best - v) <= 0) return x[0];
    for (size_t i = 1; i < in->n; i++) {
        if (sg * (y[i] - v) <= 0) return x[i - 1] + (x[i] - x[i - 1]) * (best - v) / (best - y[i]);
        best = sg > 0 ? fmin(best, y[i]) : fmax(best, y[i]);
    }
    *ahead = 1;
    double c = in->cross ? in->cross(in->ctx, v) : scv_curve_crossing(f, v);
    return isfinite(c) && c <= in->horizon ? fmax(c, x[in->n - 1]) : 2 * in->horizon;
}

int scv_carry_floor(const scv_floor_in *in, const scv_floor_policy *pol, scv_carry *out)
{
    scv_floor_policy dp = scv_floor_policy_default();
    if (!pol) pol = &dp;
    memset(out, 0, sizeof *out);
    out->b_noise = out->gamma = out->q_lo = out->q_hi = out->med_abs = out->gamma_scratch = NAN;
    out->run_cross0 = NAN;
    double per_loss = in->metric == SCV_METRIC_LOSS ? 1 : in->per_loss;
    if (in->lr_scaling == SCV_LR_SCALE_ADASCALE || !(in->lr > 0) || !(in->trace > 0) || !(in->b0 > 0) || !(in->b > 0) ||
        in->b == in->b0 || !(in->horizon > 0) || !(in->momentum >= 0 && in->momentum < 1) ||
        in->n < (size_t)pol->min_evals || !(in->metric == SCV_METRIC_LOSS || per_loss < 0))
        return SCV_ENOTFOUND;
    scv_curve f0;
    scv_curve_policy whole = scv_curve_policy_default();
    whole.loss_tail = 0; /* the whole curve: b's crossing may lie before the tail */
    if (!in->cross && scv_curve_fit(in->metric, in->x, in->y, in->n, &whole, &f0, NULL) != SCV_OK) return SCV_ENOTFOUND;
    int ahead = 0;
    double A = in->target, u0 = crossing(in, &f0, A, &ahead);
    if (!(u0 <= in->horizon)) return SCV_ENOTFOUND; /* b0 does not reach it: nothing to carry */
    double s = in->rate > 0 ? in->rate
                            : scv_lr_scale_factor(in->lr_scaling, in->b, in->base_batch) /
                                  scv_lr_scale_factor(in->lr_scaling, in->b0, in->base_batch) * in->b0 / in->b;
    double d = scv_floor_level(in, in->b) - scv_floor_level(in, in->b0), lb = log(in->b / in->b0);
    double lo = INFINITY, hi = -INFINITY;
    const double kap[3] = {pol->kappa_lo, 1, pol->kappa_hi}, lev[3] = {1 - pol->level_err, 1, 1 + pol->level_err};
    double cb[3]; /* b0's crossings of the target less each level (the rate does not move them) */
    for (int j = 0; j < 3; j++) cb[j] = crossing(in, &f0, A - d * per_loss * lev[j], &ahead);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double g = log(cb[j] / pow(s, kap[i]) / u0) / lb;
            if (!isfinite(g)) continue;
            if (i == 1 && j == 1) out->gamma = g;
            lo = fmin(lo, g), hi = fmax(hi, g);
        }
    if (!isfinite(out->gamma)) return SCV_ENOTFOUND;
    out->q_lo = fmin(lo - out->gamma, 0), out->q_hi = fmax(hi - out->gamma, 0);
    out->per_log = 1, out->run_rate = s, out->run_level = d * per_loss, out->run_b0 = in->b0, out->run_b = in->b;
    out->n_evals = in->n, out->read_ahead = ahead;
    return SCV_OK;
}
