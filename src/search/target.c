/*
 * target.c - the target's estimate: the list of estimators tried in order (given, learnt,
 * carried, carried-curve, corpus, curve, nominal), each in its own file, answering a scv_estimate or no
 * opinion with its reason; and what they share: the target's metric and value, where an
 * evaluation stands on the curve, the smoothed rule's lag behind the curve's crossing.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

scv_metric loop_metric_of(const scv_run_params *p)
{
    return p->target_loss > 0 ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY;
}

double loop_target_value(const scv_run_params *p)
{
    return p->target_loss > 0 ? p->target_loss : p->target_accuracy;
}

/* An evaluation's value of the target's metric (NaN: not measured), and where on the
 * learning curve it stands: a test accuracy where it was evaluated, a period-mean training
 * loss at its period's middle. */
double loop_target_y(const loop *l, const scv_eval_sample *e)
{
    return loop_metric_of(l->p) == SCV_METRIC_LOSS ? e->train_loss : e->accuracy;
}

double loop_target_x(const loop *l, const scv_eval_sample *e)
{
    return loop_metric_of(l->p) == SCV_METRIC_LOSS ? e->samples_seen - 0.5 * e->train_loss_samples : e->samples_seen;
}

int loop_progress_eval(const loop *l, progress *g, const scv_eval_sample *e)
{
    return progress_eval_add(g, loop_target_x(l, e), loop_target_y(l, e), e->samples_seen - 0.5 * e->train_loss_samples,
                             e->train_loss);
}

/* Samples by which the smoothed target rule trails the learning curve's crossing while
 * training: the rule is checked every eval period D (samples) on the mean of the last W
 * values, which stands about (W - 1) D / 2 behind the last evaluation (accuracy) or W D / 2
 * (period-mean losses, each D / 2 behind its evaluation), and the crossing falls on average
 * D / 2 before the evaluation that sees it. */
double loop_rule_lag(const loop *l)
{
    double D = l->pol->eval_every_epochs * l->job.n_train, W = l->pol->target_window > 1 ? l->pol->target_window : 1;
    if (!(D > 0)) return 0;
    return loop_metric_of(l->p) == SCV_METRIC_LOSS ? (W + 1) * D / 2 : W * D / 2;
}

/* Refits the learning curve (this run's evaluations, carried to the reference batch),
 * unless nothing it depends on moved since the last fit (a re-plan right after the check
 * that called for it would bootstrap the same curve again). */
void loop_predict_target(loop *l)
{
    const progress *g = &l->curve.prog;
    loop_refresh_floor(l);
    scv_carry_law law = loop_carry_law(l);
    double s1 = g->nseg ? g->seg[g->nseg - 1].s1 : 0;
    if (l->curve.pred_fitted && l->curve.pred_nev == g->nev && l->curve.pred_nseg == g->nseg && l->curve.pred_s1 == s1 &&
        scv_carry_law_same(l->curve.pred_law, law))
        return;
    char key[64];
    progress_predict(g, loop_metric_of(l->p), loop_target_value(l->p), l->p->batches[0], law, l->pol->seed, &l->in.calib,
                     l->job.n_train, scv_calib_key(l->job.model, l->job.dataset, key, sizeof key), loop_horizon(l), &l->curve.pred);
    l->curve.pred_fitted = 1, l->curve.pred_nev = g->nev, l->curve.pred_nseg = g->nseg, l->curve.pred_s1 = s1, l->curve.pred_law = law;
}

/* The target's epochs (at the curve's reference batch) and band from the curve's prediction
 * pr (n: samples an epoch): out of reach within the epoch bound (the median beyond it),
 * planned to the bound. */
void loop_curve_epochs(const progress_pred *pr, double n, double *e, double *lo, double *hi)
{
    *e = (pr->reachable ? fmin(pr->x_star, pr->horizon) : pr->horizon) / n, *lo = pr->lo / n, *hi = pr->hi / n;
}

/* The target's estimators, in the order they are tried: the first with an opinion gives the
 * target. Each answers an estimate with its note (1), or no opinion with its reason in the
 * note (0). `once`: its opinion does not change while the run trains (the store's runs
 * do not), so it is asked once and its answer kept (loop.est_kept). */
static const struct {
    scv_target_source source;
    int (*estimate)(loop *l, scv_estimate *e, char *note, size_t cap);
    int once;
} estimators[] = {
    {SCV_TARGET_GIVEN, loop_est_given, 0},                 /* the user's epochs (est_given.c) */
    {SCV_TARGET_LEARNT, loop_est_learnt, 1},               /* a stored run to the same value (est_stored.c) */
    {SCV_TARGET_CARRIED, loop_est_carried, 1},             /* ... to another value, crossed on the way */
    {SCV_TARGET_CARRIED_CURVE, loop_est_carried_curve, 1}, /* ... not crossed: its curve extrapolated */
    {SCV_TARGET_CORPUS, loop_est_corpus, 1},               /* the corpus's seeds of the recipe (est_corpus.c) */
    {SCV_TARGET_CURVE, loop_est_curve, 0},                 /* this run's learning curve (est_curve.c) */
    {SCV_TARGET_NOMINAL, loop_est_nominal, 0},             /* none: a relative plan (est_nominal.c) */
};

_Static_assert(sizeof estimators / sizeof estimators[0] == LOOP_ESTIMATORS, "loop.in.est_kept holds one per estimator");

/* The batch carry-over's error as the estimate carries it (the run's carry now). */
scv_carry_err loop_carry_err(const loop *l) { return scv_carry_err_of(loop_carry_in_force(l)); }

scv_estimate loop_target_of(loop *l, char *note, size_t cap)
{
    scv_estimate e = scv_estimate_none();
    size_t n = sizeof estimators / sizeof estimators[0];
    for (size_t i = 0; i < n; i++) {
        est_kept *k = &l->in.est_kept[i];
        int yes;
        if (estimators[i].once && k->asked) {
            yes = k->yes, e = k->est;
            snprintf(note, cap, "%s", k->note);
        } else {
            e = scv_estimate_none();
            note[0] = 0;
            yes = estimators[i].estimate(l, &e, note, cap);
            if (estimators[i].once) k->asked = 1, k->yes = yes, k->est = e, snprintf(k->note, sizeof k->note, "%s", note);
        }
        if (!yes) continue;
        e.carry = loop_carry_err(l); /* the carry in force carries every estimate */
        return e;
    }
    return e; /* (never: the nominal estimator always answers) */
}

int loop_out_of_reach(loop *l)
{
    const scv_run_params *p = l->p;
    double by = l->pol->out_of_reach_by * p->max_epochs * l->job.n_train; /* (the most evidence by then) */
    if (l->pol->out_of_reach || !(l->pol->out_of_reach_p > 0) || !l->decided || l->r->target_source != SCV_TARGET_CURVE ||
        l->samples < by * (1 - 1e-9))
        return 0;
    loop_predict_target(l);
    const progress_pred *pr = &l->curve.pred;
    if (!pr->ok || !pr->calibrated || !(pr->p_reach < l->pol->out_of_reach_p)) return 0; /* (a bootstrap's P: no) */
    l->r->reach_stopped = 1;
    snprintf(l->r->why, sizeof l->r->why,
             "stopped: target %g likely out of reach within %g epochs (P %.2f; %.4g "
             "predicted by then): resumable, --out-of-reach go-on trains on",
             loop_target_value(p), p->max_epochs, pr->p_reach, pr->nearest);
    loop_note(l, SCV_EV_NOTE, SCV_NOTE_OUT_OF_REACH, "target %g likely out of reach within %g epochs: P %.2f (under "
              "%.2f); by then %.4g is predicted, the nearest reachable; stopped at %.3g epochs, checkpointed, resumable "
              "(--out-of-reach go-on trains on to the bound)", loop_target_value(p), p->max_epochs, pr->p_reach,
              l->pol->out_of_reach_p, pr->nearest, l->job.n_train > 0 ? l->samples / l->job.n_train : NAN);
    return 1;
}
