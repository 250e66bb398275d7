/*
 * est_nominal.c - the target's estimator NOMINAL, the last of the list: nothing informs the
 * target, so the plan is relative, at policy.nominal_epochs at the space's first batch,
 * with no band; its note says why the learning curve gives none yet.
 */
#include "loop_internal.h"

#include <stdio.h>

int loop_est_nominal(loop *l, scv_estimate *e, char *note, size_t cap)
{
    const progress_pred *pr = &l->curve.pred;
    e->source = SCV_TARGET_NOMINAL, e->epochs = l->pol->nominal_epochs, e->batch = l->p->batches[0];
    snprintf(note, cap, "unknown (%.100s): times are nominal, %.3g epochs at B=%d",
             pr->ok ? "the learning curve does not reach the target" : pr->why, e->epochs, e->batch);
    return 1;
}
