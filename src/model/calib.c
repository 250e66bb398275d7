/*
 * calib.c - calibrated forecasts of when a learning curve reaches its target.
 *
 * (Being written: the corpus's memory is released here.)
 */
#include "scv.h"
#include "model.h"

#include <stdlib.h>
#include <string.h>

void scv_lcurve_set_free(scv_lcurve_set *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->c[i].samples);
        free(s->c[i].accuracy);
        free(s->c[i].loss);
    }
    free(s->c);
    memset(s, 0, sizeof *s);
}
