/*
 * est_corpus.c - the target's estimator CORPUS: the curve corpus's curves of the job itself
 * (its network as the trainer states it, its dataset and training-set size) under the run's
 * recipe (scv_job_recipe: learning rate, rule, base batch, momentum and weight decay, the
 * built-in defaults the corpus trains with for the rest), their crossings of the target read by the run's own rule at the
 * batch they hold most seeds of (scv_seed_crossings_of). The point is the seeds' median
 * crossing (the geometric mean of the middle two); the band spans the seeds and the corpus's
 * reruns' spread: the seed spread is the band's floor, which no fit of one run's curve
 * narrows (near the plateau it is wide: LeNet's 0.89 at 4.3 and 9.7 epochs by seed). A seed
 * that did not reach the target within its curve leaves the band open above; a median beyond
 * the curves is no opinion (the run's own curve forecasts it). Asked once: the corpus does
 * not change while the run trains.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A corpus curve's recipe in the form scv_job_recipe gives a run's. */
static int curve_recipe(const scv_lcurve *c, char *buf, size_t cap)
{
    char json[320];
    snprintf(json, sizeof json,
             "{\"lr\":%.17g,\"lr-scaling\":\"%s\",\"base-batch\":%d,\"momentum\":%.17g,\"weight-decay\":%.17g}", c->lr,
             scv_lr_scaling_name(c->lr_scaling), c->base_batch, c->momentum, c->weight_decay);
    return scv_job_recipe(json, buf, cap);
}

void loop_corpus_seeds(loop *l, const scv_lcurve_set *set)
{
    scv_seed_crossings *s = &l->in.seeds;
    const scv_lcurve **mine = malloc(sizeof *mine * (set->n + 1));
    char recipe[512], theirs[512];
    size_t n = 0;
    memset(s, 0, sizeof *s);
    l->in.seeds_other = 0;
    if (!mine || scv_job_recipe(l->p->job_json, recipe, sizeof recipe) != SCV_OK || !l->job.arch[0]) {
        free(mine);
        return;
    }
    for (size_t i = 0; i < set->n; i++) {
        const scv_lcurve *c = &set->c[i];
        if (!c->arch[0] || strcmp(c->arch, l->job.arch) || strcmp(c->dataset, l->job.dataset) ||
            c->n_train != l->job.n_train)
            continue;
        if (curve_recipe(c, theirs, sizeof theirs) != SCV_OK || strcmp(theirs, recipe)) l->in.seeds_other++;
        else mine[n++] = c;
    }
    /* (read at the training segments' evaluation spacing, as the run's rule reads its own) */
    if (scv_seed_crossings_of(mine, n, loop_metric_of(l->p), loop_target_value(l->p), l->pol->target_window,
                              l->p->batches[0], l->pol->eval_every_epochs * l->job.n_train, s) != SCV_OK)
        memset(s, 0, sizeof *s);
    free(mine);
}

/* The seeds' crossings in epochs, sorted, as "4.3, 9.7" (never: "beyond 10"). */
static void seeds_text(const scv_seed_crossings *s, const double *x, double n_train, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < s->n && len < cap; i++) {
        int w = isfinite(x[i])
                    ? snprintf(buf + len, cap - len, "%s%.3g", i ? ", " : "", x[i] / n_train)
                    : snprintf(buf + len, cap - len, "%snot within %.3g", i ? ", " : "", s->end[i] / n_train);
        if (w > 0) len += (size_t)w;
    }
}

int loop_est_corpus(loop *l, scv_estimate *e, char *note, size_t cap)
{
    const scv_seed_crossings *s = &l->in.seeds;
    double n_train = l->job.n_train, target = loop_target_value(l->p), x[SCV_SEEDS_MAX];
    if (!s->n || !(n_train > 0)) {
        snprintf(note, cap, "the corpus holds no curves of the job under its recipe (%d under another recipe)",
                 l->in.seeds_other);
        return 0;
    }
    memcpy(x, s->x, sizeof(double) * (size_t)s->n);
    qsort(x, (size_t)s->n, sizeof(double), scv_cmp_double);
    double mid = s->n % 2 ? x[s->n / 2] : sqrt(x[s->n / 2 - 1] * x[s->n / 2]);
    char seeds[160];
    seeds_text(s, x, n_train, seeds, sizeof seeds);
    if (!isfinite(mid)) {
        snprintf(note, cap,
                 "the corpus's %d curve%s of the job under its recipe at B=%d do not reach %g (epochs: %s; "
                 "best window mean %.4g)",
                 s->n, s->n == 1 ? "" : "s", s->batch, target, seeds, s->best);
        return 0;
    }
    e->source = SCV_TARGET_CORPUS, e->batch = s->batch, e->epochs = mid / n_train;
    e->lag_epochs = l->job.n_train > 0 ? loop_rule_lag(l) / n_train : 0;
    size_t reruns = scv_estimate_rerun_band(e, &l->in.calib, loop_metric_of(l->p));
    scv_band span = s->n > 1 ? scv_band_of(mid, x[0], x[s->n - 1]) : scv_band_none();
    e->band = !scv_band_known(e->band) ? span : scv_band_known(span) ? scv_band_union(e->band, span) : e->band;
    e->band = scv_band_nonzero(e->band);
    double lo, hi;
    scv_band_ends(e->band, e->epochs, &lo, &hi);
    snprintf(note, cap,
             "the corpus's %d curve%s of the job under its recipe at B=%d reach %g at %s epochs (best "
             "window mean %.4g): %.3g epochs, + %.2g the smoothed rule trails; %.0f%% band %.3g-%.3g (the seeds' "
             "span and the spread of %zu reruns of corpus jobs)",
             s->n, s->n == 1 ? "" : "s", s->batch, target, seeds, s->best, e->epochs, e->lag_epochs,
             100 * l->pol->band_coverage, lo, hi, reruns);
    return 1;
}
