/*
 * seeds.c - a target's crossing by the corpus's curves of one job under one recipe: where
 * each seed's curve reached it, read by the run's own target rule (scv_stoprule_reached with
 * the run's window), at the batch the curves hold most seeds of. Runs of one recipe differ by
 * their seed alone, so these crossings are the spread a new run's crossing has around them
 * (each curve read at the run's evaluation spacing, as its rule will read its own):
 * near the curves' plateau it is wide (LeNet on Fashion-MNIST at B=64 reaches a subset
 * accuracy of 0.89 at 4.3 and 9.7 epochs by seed), and no curve fit narrows it.
 *   x_s      the seed's crossing [samples at the batch], +inf where its curve did not reach
 *            the target within its end_s samples
 *   best     the best window mean any of them reached (the plateau's height)
 */
#include "scv.h"
#include "model.h"
#include "stoprule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The batch to read at: the one with most curves, the nearest to b0 in ln B among ties. */
static int batch_of(const scv_lcurve *const *c, size_t n, int b0)
{
    int best = 0, most = 0;
    for (size_t i = 0; i < n; i++) {
        int k = 0;
        for (size_t j = 0; j < n; j++) k += c[j]->batch == c[i]->batch;
        double d = fabs(log((double)c[i]->batch / b0)), db = best ? fabs(log((double)best / b0)) : INFINITY;
        if (k > most || (k == most && d < db)) most = k, best = c[i]->batch;
    }
    return best;
}

/* x, y [0, k) thinned in place to one point a spacing (see model.h); the new count. */
static size_t thin(double *x, double *y, size_t k, int mi, double spacing)
{
    if (!(spacing > 0) || !k) return k;
    size_t out = 0, from = 0;
    double edge = spacing;
    for (size_t j = 0; j < k; j++) {
        if (x[j] < edge - 1e-9 * spacing && j + 1 < k) continue;
        double sum = 0;
        for (size_t i = from; i <= j; i++) sum += y[i];
        x[out] = x[j], y[out++] = mi ? sum / (double)(j + 1 - from) : y[j];
        from = j + 1;
        while (edge <= x[j] + 1e-9 * spacing) edge += spacing;
    }
    return out;
}

int scv_seed_crossings_of(const scv_lcurve *const *c, size_t n, scv_metric metric, double target, int window, int b0,
                          double spacing, scv_seed_crossings *out)
{
    memset(out, 0, sizeof *out);
    out->best = NAN;
    if (!n || !(b0 > 0)) return SCV_ENOTFOUND;
    out->batch = batch_of(c, n, b0);
    int mi = metric == SCV_METRIC_LOSS, dir = mi ? -1 : 1;
    for (size_t i = 0; i < n && out->n < SCV_SEEDS_MAX; i++) {
        if (c[i]->batch != out->batch) continue;
        double *w = malloc(sizeof(double) * 3 * (c[i]->n + 1)), cross = NAN;
        if (!w) return SCV_ENOMEM;
        double *x = w, *y = x + c[i]->n + 1, *m = y + c[i]->n + 1;
        size_t k = thin(x, y, scv_lcurve_smoothed(c[i], mi, x, y, m), mi, spacing);
        scv_stoprule_means(y, k, window, m);
        for (size_t j = 0; j < k; j++)
            if (isfinite(m[j]) && (isnan(out->best) || dir * (m[j] - out->best) > 0)) out->best = m[j];
        long hit = k ? scv_stoprule_reached(x, y, k, dir, target, window, &cross) : -1;
        out->x[out->n] = hit >= 0 && cross > 0 ? cross : INFINITY;
        out->end[out->n] = k ? x[k - 1] : 0;
        out->seed[out->n++] = c[i]->seed;
        free(w);
    }
    return out->n ? SCV_OK : SCV_ENOTFOUND;
}
