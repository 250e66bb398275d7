/*
 * est_given.c - the target's estimator GIVEN: the user's epochs to the target at a batch
 * (`--target-epochs`, `--target-batch`), as the run's smoothed rule counts them (no lag
 * added) and with no band: the user's number is taken as it is.
 */
#include "loop_internal.h"

#include <stdio.h>

int loop_est_given(loop *l, scv_estimate *e, char *note, size_t cap)
{
    const scv_run_params *p = l->p;
    if (!(p->target_epochs > 0)) {
        snprintf(note, cap, "no epochs given");
        return 0;
    }
    e->source = SCV_TARGET_GIVEN, e->epochs = p->target_epochs;
    e->batch = p->target_batch ? p->target_batch : p->batches[0];
    snprintf(note, cap, "given: %.3g epochs at B=%d", e->epochs, e->batch);
    return 1;
}
