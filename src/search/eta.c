/*
 * eta.c - the time left and its band: the plan's iterations still to go at the configuration
 * trained at, the share of the target done (each segment at its batch), a probe's part, the
 * learning curve's re-estimate once the plan's iterations are done; the forecasts kept in the
 * result and the store. Every band here is an operation of model/estimate.h (less the work
 * done, widened by the carry).
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

/* A plan point's band of its time to the whole target (scv_plan prices it: time_lo_s 0 is
 * none there). */
static scv_band point_band(const scv_plan_point *pt)
{
    return pt->time_lo_s > 0 ? scv_band_of(pt->time_s, pt->time_lo_s, pt->time_hi_s) : scv_band_none();
}

/* The time left while a probe trains (or is decided), into ev: the probe's iterations left
 * at its point's time, a switch back, and the choice's iterations for the share of the
 * target the run will not have done by the probe's end,
 *   probe_left t_probe + idle + (1 - share_done - probe_left / I_probe) I_choice t_choice
 * (I: a point's iterations to the target; its band the choice's, less that work). 0: no probe
 * (or no plan to price it). */
int loop_probe_left(const loop *l, scv_run_event *ev)
{
    const scv_plan_result *res = l->r->plan;
    if (!l->probe.probing || !(l->probe.probe_end > 0) || !res || res->chosen < 0 || l->r->relative) return 0;
    const scv_plan_point *pt = loop_find_point(res, l->K, l->B, l->comm), *ch = &res->points[res->chosen];
    if (!pt || !(pt->iterations > 0) || !(ch->iterations > 0)) return 0;
    double left = fmax(0, l->probe.probe_end - (double)l->iteration), T = ch->iterations, t = ch->time_s / T;
    double rest = fmax(0, 1 - loop_done_share(l, &l->r->stat) - left / pt->iterations) * T;
    double head = left * pt->time_s / pt->iterations + loop_switch_idle(l);
    ev->remaining_s = head + rest * t;
    scv_band b = scv_band_less_done(point_band(ch), T, rest);
    if (scv_band_known(b)) { /* (a top of never: none) */
        double lo, hi;
        scv_band_ends(b, rest, &lo, &hi);
        ev->remaining_lo_s = head + lo * t;
        if (isfinite(hi)) ev->remaining_hi_s = head + hi * t;
    }
    return 1;
}

/* The plan's iterations to the target at the configuration trained at are done (while
 * training goes on: the target was not reached at the predicted time). */
int loop_overdue(const loop *l)
{
    return l->eta.need_iters > 0 && l->eta.pred_t_iter > 0 && l->eta.need_iters - (double)l->iteration <= 0;
}

/* The predicted time left to the target, into ev: the plan's (its iterations still to go at
 * the configuration trained at, the curve's band when the target came from it); once those
 * are done and training goes on, ev->overdue and the learning curve's re-estimate from this
 * point (refitted at every evaluation: on_eval), or none (NaN) until it predicts one. Never
 * zero or less while training goes on. */
void loop_time_left(const loop *l, scv_run_event *ev)
{
    ev->remaining_s = ev->remaining_lo_s = ev->remaining_hi_s = NAN;
    ev->overdue = 0;
    ev->relative = l->r->relative; /* a nominal plan's time left is nominal too */
    if (loop_probe_left(l, ev)) return;
    if (!(l->eta.need_iters > 0 && l->eta.pred_t_iter > 0)) return;
    const progress_pred *pr = &l->curve.pred;
    const scv_plan_point *pt;
    double rest = l->eta.need_iters - (double)l->iteration;
    if (rest > 0) {
        ev->remaining_s = rest * l->eta.pred_t_iter;
        if (l->r->target_source == SCV_TARGET_CURVE && pr->ok && pr->x_star > pr->x_now) {
            /* the band of the reference samples still to go, carried to the batch trained at */
            double ql, qh;
            scv_carry_err ce = loop_carry_err(l);
            scv_carry_err_at(&ce, pr->b_ref, l->B, &ql, &qh);
            scv_band b = scv_band_less_done(scv_band_of(pr->x_star, pr->lo, pr->hi), pr->x_star, pr->x_star - pr->x_now);
            b = scv_band_widen(b, ql, qh);
            if (isfinite(b.lo)) ev->remaining_lo_s = ev->remaining_s * exp(b.lo); /* else none: "up to" */
            if (scv_band_known(b)) ev->remaining_hi_s = ev->remaining_s * exp(b.hi); /* (+inf: never) */
        } else if ((pt = loop_find_point(l->r->plan, l->K, l->B, l->comm)) && pt->time_s > 0 && pt->time_lo_s > 0 &&
                   pt->iterations > 0) {
            double lo, hi;
            scv_band_ends(scv_band_less_done(point_band(pt), pt->iterations, rest), rest, &lo, &hi);
            if (lo > 0) ev->remaining_lo_s = lo * l->eta.pred_t_iter; /* else none: "up to" */
            if (isfinite(hi) && hi > 0) ev->remaining_hi_s = hi * l->eta.pred_t_iter;
        }
        return;
    }
    ev->overdue = 1;
    if (!(pr->ok && pr->reachable && scv_carry_law_known(pr->law) && isfinite(pr->x_star) && l->B > 0)) return;
    double x_now = progress_ref_samples(&l->curve.prog, l->samples, pr->b_ref, pr->law);
    /* samples still to go at the batch trained at: to the curve's crossing, plus the lag of
     * the smoothed rule behind it (the plan adds it too) */
    double per_ref = scv_carry_samples(pr->law, 1, pr->b_ref, l->B), lag = loop_rule_lag(l);
    double rest_s = (pr->x_star - x_now) * per_ref + lag;
    if (!(rest_s > 0)) return; /* the crossing and the lag are passed too: none until the curve moves */
    double t_sample = l->eta.pred_iter_factor * l->eta.pred_t_iter / l->B; /* seconds a sample costs there */
    ev->remaining_s = rest_s * t_sample;
    double lo_s = (pr->lo - x_now) * per_ref + lag, hi_s = (pr->hi - x_now) * per_ref + lag;
    if (lo_s > 0) ev->remaining_lo_s = lo_s * t_sample; /* else none: "up to" hi */
    if (isfinite(hi_s) && hi_s > 0) ev->remaining_hi_s = hi_s * t_sample;
}

/* The store keeps a running run's latest forecast (the runs list, the dashboard): at each
 * plan and segment's end (force), else at an evaluation at most every ETA_STORE_MIN_S; with
 * P(reach) the latest curve's; cleared while there is none. A failed write fails nothing. */
#define ETA_STORE_MIN_S 1.0

void loop_store_eta(loop *l, const scv_run_event *ev, int force)
{
    double now = scv_now();
    int none = !isfinite(ev->remaining_s) && !ev->overdue;
    if ((!force && now - l->eta.eta_stored < ETA_STORE_MIN_S) || (none && !l->eta.eta_stored)) return;
    l->eta.eta_stored = now;
    int curve = l->r->target_source == SCV_TARGET_CURVE && l->curve.pred.ok;
    struct scv_run_eta e = {.remaining_s = ev->remaining_s, .remaining_lo_s = ev->remaining_lo_s,
                            .remaining_hi_s = ev->remaining_hi_s, .p_reach = curve ? l->curve.pred.p_reach : NAN,
                            .overdue = ev->overdue, .nominal = ev->relative};
    scv_store_run_eta(l->p->store, l->r->run_id, none ? NULL : &e, NULL);
}

/* The point of K, B and option comm on the type the run trains on: the chosen point's (loop_plan()
 * keeps the choice on the run's type when the plan compares several, `run --vm`). */
const scv_plan_point *loop_find_point(const scv_plan_result *r, int K, int B, int comm)
{
    int vm = r && r->chosen >= 0 && (size_t)r->chosen < r->n_points ? r->points[r->chosen].vm : -1;
    for (size_t i = 0; r && i < r->n_points; i++)
        if (r->points[i].workers == K && r->points[i].batch == B && r->points[i].comm == comm &&
            (vm < 0 || r->points[i].vm == vm))
            return &r->points[i];
    return NULL;
}

/* The share of the target's work the run has done under the statistical model sm: each
 * segment's samples over the samples sm needs at its batch,
 *   share = sum_s n_s / (iterations_sm(b_s) b_s),
 * samples the progress has no segment for (a run resumed without its history) at the batch
 * trained at. */
double loop_done_share(const loop *l, const scv_stat_model *sm)
{
    int B = l->B;
    double share = 0, covered = 0;
    for (size_t i = 0; i < l->curve.prog.nseg; i++) {
        const progress_seg *s = &l->curve.prog.seg[i];
        double n = fmin(l->samples, s->s1) - s->s0, need = scv_stat_iterations(sm, s->batch) * s->batch;
        if (n > 0 && need > 0) share += n / need, covered += n;
    }
    double need = scv_stat_iterations(sm, B) * B;
    if (l->samples > covered && need > 0) share += (l->samples - covered) / need;
    return share;
}

/* Iterations still needed at batch B under the statistical model sm: from the learning
 * curve's remaining reference samples when the target came from it, else the model's
 * iterations at B for the share of the target not yet done (samples trained at another
 * batch count at theirs: not iterations at B). */
double loop_rest_iters(const loop *l, const scv_stat_model *sm, int B)
{
    const progress_pred *pr = &l->curve.pred;
    if (l->r->target_source == SCV_TARGET_CURVE && pr->ok && pr->reachable) { /* from the samples trained now
                                                       (a probe's since the curve's fit among them) */
        double x_now = progress_ref_samples(&l->curve.prog, l->samples, pr->b_ref, pr->law);
        return scv_carry_samples(pr->law, fmax(0, pr->x_star - x_now), pr->b_ref, B) / B;
    }
    return fmax(0, 1 - loop_done_share(l, sm)) * scv_stat_iterations(sm, B);
}

/* A point's iterations relative to dense (the user's assumption for a compressed option). */
double loop_iter_factor(const scv_plan_point *pt)
{
    return pt && pt->comm_opt.kind != SCV_PLAN_DENSE && pt->comm_opt.iter_factor > 0 ? pt->comm_opt.iter_factor : 1;
}

/* Progress predictions for the configuration trained at. */
void loop_predict_progress(loop *l)
{
    const scv_plan_point *pt = loop_find_point(l->r->plan, l->K, l->B, l->comm);
    /* an iteration's time with its share of the periodic evaluations (the plan prices them) */
    l->eta.pred_t_iter = pt ? (pt->iterations > 0 ? pt->time_s / pt->iterations : pt->t_iter) : NAN;
    l->eta.pred_iter_factor = loop_iter_factor(pt);
    l->eta.need_iters = pt ? (double)l->iteration + loop_rest_iters(l, &l->r->stat, l->B) * loop_iter_factor(pt) : NAN;
}

/* Keeps the forecast of now in the result (scv_run_result.forecasts) and the store's copy
 * (now when force_store, else rate-limited). */
void loop_record_forecast(loop *l, int force_store)
{
    scv_run_result *r = l->r;
    if (r->n_forecasts == SCV_RUN_FORECASTS_MAX) {
        /* full: the first, the first absolute one (the first plan's) and every other counted
         * back from the newest kept */
        int k = 0, last = r->n_forecasts - 1, n = 0;
        while (k < last && isnan(r->forecasts[k].epochs)) k++;
        for (int i = 0; i <= last; i++)
            if (i == 0 || i == k || (last - i) % 2 == 0) r->forecasts[n++] = r->forecasts[i];
        r->n_forecasts = n;
    }
    scv_run_event ev = {0};
    loop_time_left(l, &ev);
    loop_store_eta(l, &ev, force_store);
    int band = !r->relative && isfinite(r->target_epochs_lo);
    double e = r->target_epochs, lo = r->target_epochs_lo, hi = r->target_epochs_hi, p = r->target_p_reach;
    const progress_pred *pr = &l->curve.pred; /* refitted since the loop_plan (live_forecast): the curve's now */
    if (loop_live_forecast(l) && pr->ok && pr->reachable && l->job.n_train > 0)
        loop_curve_epochs(pr, l->job.n_train, &e, &lo, &hi), p = pr->p_reach;
    r->forecasts[r->n_forecasts++] = (struct scv_run_forecast){
        .at_s = loop_elapsed(l), .at_epochs = l->job.n_train > 0 ? l->samples / l->job.n_train : NAN,
        .remaining_s = r->relative ? NAN : ev.remaining_s, .remaining_lo_s = ev.remaining_lo_s,
        .remaining_hi_s = ev.remaining_hi_s, .epochs = r->relative ? NAN : e, .epochs_lo = band ? lo : NAN,
        .epochs_hi = band ? hi : NAN, .p_reach = p, .workers = l->K, .batch = l->B};
}
