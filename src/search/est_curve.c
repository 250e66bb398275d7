/*
 * est_curve.c - the target's estimator CURVE: this run's learning curve (its evaluations,
 * carried to the reference batch: progress.c), fitted and forecast to the target with its
 * calibrated band and P(reached within the epoch bound). Out of reach within the bound
 * (its median beyond it), it plans to the bound and says so with the value likely reached
 * there. The run's smoothed rule trails the curve's crossing: its lag is the estimate's.
 */
#include "loop_internal.h"

#include <math.h>
#include <stdio.h>

int loop_est_curve(loop *l, scv_estimate *e, char *note, size_t cap)
{
    const scv_run_params *p = l->p;
    double n = l->job.n_train, lo, hi;
    loop_predict_target(l);
    const progress_pred *pr = &l->curve.pred;
    if (!(pr->ok && n > 0)) {
        snprintf(note, cap, "%s", pr->ok ? "the learning curve does not reach the target" : pr->why);
        return 0;
    }
    e->source = SCV_TARGET_CURVE, e->batch = pr->b_ref, e->lag_epochs = loop_rule_lag(l) / n;
    loop_curve_epochs(pr, n, &e->epochs, &lo, &hi);
    e->band = scv_band_of(e->epochs, lo, hi), e->p_reach = pr->p_reach, e->nearest = pr->nearest;
    e->n_calib = pr->calibrated ? pr->n_examples : 0;
    snprintf(e->curve, sizeof e->curve, "%s", pr->curve);
    l->curve.planned_x_star = pr->x_star;
    char band[80], cal[48];
    snprintf(band, sizeof band, isfinite(hi) ? "%.3g-%.3g" : "%.3g-never", lo, hi);
    snprintf(cal, sizeof cal, pr->calibrated ? "%.0f%% band" : "uncalibrated band", 100 * l->pol->band_coverage);
    if (pr->reachable)
        snprintf(note, cap, "learning curve (%.48s), %d evaluations: %.3g epochs at B=%d (%.20s %.24s), P(within %g "
                 "epochs) %.2f, + %.2g the smoothed rule trails", pr->curve, pr->n_evals, e->epochs, e->batch, cal, band,
                 p->max_epochs, pr->p_reach, e->lag_epochs);
    else
        snprintf(note, cap, "likely out of reach: P(within %g epochs) %.2f (learning curve %.48s, %d evaluations, "
                 "%.20s %.24s epochs); by then %.4g is predicted; planned to the epoch bound", p->max_epochs, pr->p_reach,
                 pr->curve, pr->n_evals, cal, band, pr->nearest);
    return 1;
}
