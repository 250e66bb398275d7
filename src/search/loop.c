/*
 * loop.c - the Scavenger loop as an explicit state machine (see scv_run in scv.h):
 *
 *   WARMUP  train at the start configuration until the gradient-noise estimate is stable
 *           (B_simple of two consecutive windows agree; at most policy.warmup_max_iters);
 *   SEARCH  profile configurations (partial: the corners of the space; full: all of it)
 *           until each mean iteration time is known within policy.profile_rse (search.c);
 *   PLAN    fit the parallel and statistical models to what was measured, price every
 *           configuration, choose by the objective and bounds (place.c, the target's
 *           estimators: target.c);
 *   TRAIN   train at the choice in segments of a share of the predicted rest;
 *   REPLAN  after a segment whose iteration time drifted more than policy.drift_tol from
 *           the plan: re-fit, re-plan, and switch only when the predicted saving exceeds
 *           switch_idle_factor x the measured switch idle + switch_remaining_share x the
 *           remaining time;
 *   DONE    the target is reached (or max epochs); outcome and learnt target stored.
 *
 * The loop trains only through the job driver and speaks only through the observer; every
 * step, measurement, evaluation and decision goes to the store as it happens (record.c), so a
 * run that was interrupted resumes in the state it stopped in. This file holds the states and
 * the events; the other files of src/search/ hold one concern each (loop_internal.h lists them).
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

void loop_emit(loop *l, scv_run_event ev)
{
    int observed = l->obs && l->obs->on_event;
    if (!observed && ev.kind != SCV_EV_EVAL) return;
    ev.state = l->state;
    ev.elapsed_s = loop_elapsed(l);
    ev.spent_usd = loop_spend_usd(l);
    loop_time_left(l, &ev);
    if (ev.kind == SCV_EV_EVAL) loop_store_eta(l, &ev, 0);
    if (observed) l->obs->on_event(l->obs->ctx, &ev);
}

static int set_state(loop *l, scv_run_state s, scv_err *err)
{
    l->state = s;
    loop_emit(l, (scv_run_event){.kind = SCV_EV_STATE, .workers = l->K, .batch = l->B});
    return scv_store_run_state(l->p->store, l->r->run_id, scv_run_state_name(s), err);
}

void loop_start_config(const scv_run_params *p, int *K, int *B)
{
    *K = p->workers[0], *B = p->batches[0];
    for (size_t i = 0; i < p->n_workers; i++)
        if (p->workers[i] >= 2) {
            *K = p->workers[i];
            break;
        }
    if (p->start_workers) *K = p->start_workers, *B = p->start_batch;
    if (*B < *K) *B = *K;
}

/* The latest plan replaces the previous one (the decision's plan is kept). */
static void set_plan(scv_run_result *r, scv_plan_result *res)
{
    if (r->plan != r->decision && r->plan != r->first_absolute) scv_plan_result_free(r->plan);
    r->plan = res;
}

/* Keeps the run's first plan with absolute times, and when it was made. */
static void note_absolute(loop *l)
{
    scv_run_result *r = l->r;
    if (r->first_absolute || r->relative || !r->plan) return;
    r->first_absolute = r->plan;
    const scv_plan_point *pt = loop_find_point(r->plan, l->K, l->B, l->comm);
    r->absolute_time_s = pt ? pt->time_s : NAN;
    r->absolute_at_s = loop_elapsed(l);
    r->absolute_at_epochs = l->job.n_train > 0 ? l->samples / l->job.n_train : NAN;
}

/* A nominal plan's target forecast at last, during a training segment (issue 37 item 5: an
 * --exec run's few evaluations, a nominal segment long): the plan is made again with the
 * estimate at this evaluation, so the time left and the forecasts are absolute from here on;
 * the configuration stays until the segment's end, where a re-plan decides
 * (probe.retarget_replan). */
void loop_reforecast(loop *l)
{
    scv_run_result *r = l->r;
    scv_plan_result *res = NULL;
    scv_perf_model pf;
    scv_stat_model sm;
    if (loop_plan(l, &res, &pf, &sm, NULL) != SCV_OK) return;
    if (r->relative) { /* (the estimators still give no target: as it was) */
        scv_plan_result_free(res);
        return;
    }
    set_plan(r, res);
    r->perf = pf, r->stat = sm;
    scv_err e = {0};
    loop_store_plan(l, res, &e); /* (a failed write fails nothing here: the segment's end stores again) */
    note_absolute(l);
    loop_predict_progress(l);
    loop_record_forecast(l, 1);
    l->probe.retarget_replan = 1;
    loop_note(l, SCV_EV_NOTE, SCV_NOTE_CURVE_ABSOLUTE, "the learning curve now forecasts the target: times are absolute "
              "from this evaluation, %.3g epochs at B=%d; re-plan at the segment's end", r->target_epochs,
              r->target_batch);
    loop_emit(l, (scv_run_event){.kind = SCV_EV_PLAN, .workers = l->K, .batch = l->B, .plan = res, .relative = 0});
}

/* PLAN: fit, plan, decide (or, resuming, take the stored decision). */
/* The probe: when the decision trains at the batch the curve was measured at (the
 * warm-up's) and the best configuration at another batch could be faster within the carry's
 * band (its time at the band's bottom under the choice's), the first training segment trains
 * there instead (policy.carry_probe_epochs), then the run goes back to the choice; once its
 * curve there resumes, the run reads its own carry (try_run_carry) and re-plans with it. A
 * choice at another batch than the warm-up's is not probed. NULL: none. */
static const scv_plan_point *probe_point(const loop *l, const scv_plan_result *res, const scv_plan_point *ch)
{
    int K0, B0;
    loop_start_config(l->p, &K0, &B0);
    if (!(l->pol->carry_probe_epochs > 0) || ch->batch != B0 || l->probe.carry_run || l->r->relative ||
        l->r->target_source != SCV_TARGET_CURVE)
        return NULL;
    const scv_plan_point *alt = NULL;
    for (size_t i = 0; i < res->n_points; i++) {
        const scv_plan_point *pt = &res->points[i];
        if (pt->batch != ch->batch && pt->vm == ch->vm && pt->comm == ch->comm && pt->mix < 0 &&
            (!alt || pt->time_s < alt->time_s))
            alt = pt;
    }
    double ql, qh;
    if (!alt) return NULL;
    scv_carry_quantiles(loop_carry_in_force(l), ch->batch, alt->batch, &ql, &qh);
    return isfinite(ql) && alt->time_s * exp(ql) < ch->time_s ? alt : NULL;
}

static int do_plan(loop *l, scv_err *err)
{
    scv_run_result *r = l->r;
    scv_plan_result *res = NULL;
    int rc = loop_plan(l, &res, &r->perf, &r->stat, err);
    if (rc) return rc;
    set_plan(r, res);
    if (!r->decision) r->decision = res, r->decision_relative = r->relative;
    const scv_plan_point *ch = &res->points[res->chosen];
    loop_emit(l, (scv_run_event){.kind = SCV_EV_PLAN, .workers = ch->workers, .batch = ch->batch, .plan = res,
                            .relative = r->relative});
    char ct[96];
    if (!l->decided) {
        l->K = ch->workers, l->B = ch->batch, l->comm = ch->comm;
        loop_comm_text(l, l->comm, ch->comm_coll, ct, sizeof ct);
        snprintf(r->why, sizeof r->why, "%s", res->why);
        char sw[400]; /* the stored decision names the option */
        snprintf(sw, sizeof sw, "%s%s%s", ct[0] ? ct + 1 : "", ct[0] ? ": " : "", res->why);
        if ((rc = scv_store_decision(l->p->store, r->run_id, "plan", l->K, l->B, l->p->catalog->vms[l->place.train_vm].name,
                                     ch->time_s, ch->cost,
                                     sw, err)))
            return rc;
    } else {
        /* the stored decision keeps K and B; its option is the plan's when the plan chooses
         * the same K and B, else dense */
        l->comm = ch->workers == l->K && ch->batch == l->B ? ch->comm : l->dense;
        snprintf(r->why, sizeof r->why, "resumed at the stored decision");
        const scv_plan_point *pt = loop_find_point(res, l->K, l->B, l->comm);
        if (pt) ch = pt;
        loop_comm_text(l, l->comm, ch->comm_coll, ct, sizeof ct);
    }
    const scv_plan_point *probe = l->decided ? NULL : probe_point(l, res, ch);
    l->decided = 1;
    note_absolute(l); /* at the configuration decided */
    r->predicted_time_s = ch->time_s, r->predicted_cost = ch->cost, r->predicted_band = ch->err_rel;
    r->predicted_lo_s = r->predicted_hi_s = NAN;
    if (ch->time_lo_s > 0) r->predicted_lo_s = ch->time_lo_s, r->predicted_hi_s = ch->time_hi_s; /* (plan) */
    loop_predict_progress(l);
    loop_note(l, SCV_EV_NOTE, SCV_NOTE_TARGET, "target: %s", r->target_note);
    if (l->ledger.eval_n && ch->time_s > 0)
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_EVAL_PRICED, "evaluations priced: %.0f ms each (mean of %d), one every %g epochs: %.1f%% of the chosen "
             "configuration's time", 1e3 * l->ledger.eval_s_sum / l->ledger.eval_n, l->ledger.eval_n, l->pol->eval_every_epochs,
             100 * ch->iterations * ch->batch * loop_eval_s_per_sample(l) / ch->time_s);
    if (r->relative && (l->p->deadline_s > 0 || l->p->budget > 0))
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_BOUND_LATER, "the %s applies from the first plan with absolute times (the target's epochs are not "
             "known yet)", l->p->deadline_s > 0 ? "deadline" : "budget");
    loop_note(l, SCV_EV_DECISION, SCV_NOTE_DECISION, "K=%d, B=%d%s (%s)", l->K, l->B, ct, r->why);
    if (probe) {
        double ql, qh;
        scv_carry_quantiles(loop_carry_in_force(l), ch->batch, probe->batch, &ql, &qh);
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_PROBE, "probe: the first training segment at K=%d, B=%d, predicted %.3g s to the target (%.3g s at "
             "the bottom of the batch carry-over's band) against the choice's %.3g s: its evaluations, and the choice's "
             "after it, tell the run's own carry", probe->workers, probe->batch, probe->time_s, probe->time_s * exp(ql),
             ch->time_s);
        l->K = probe->workers, l->B = probe->batch, l->comm = probe->comm, l->probe.probing = 1;
        /* enough evaluations for the run's own carry, evaluated as the search is */
        l->probe.probe_end = (double)l->iteration + ceil(fmax((double)l->pol->segment_min_iters,
                                                        l->pol->carry_probe_epochs * l->job.n_train / l->B));
    }
    loop_record_forecast(l, 1); /* (through the probe, when there is one: probe_left) */
    rc = loop_store_models(l, err);
    return rc ? rc : loop_store_plan(l, res, err);
}

/* TRAIN: one segment of a share of the predicted rest; says whether to re-plan. */
static int do_train(loop *l, int *drifted, scv_err *err)
{
    const scv_run_policy *pol = l->pol;
    *drifted = 0;
    double rest = loop_rest_iters(l, &l->r->stat, l->B);
    double chunk = fmax(fmax((double)pol->segment_min_iters, l->job.n_train / l->B), pol->segment_share * rest);
    if (l->r->relative) /* the target unknown: re-plan soon, once the curve may predict it */
        chunk = fmax((double)pol->segment_min_iters, pol->unknown_segment_epochs * l->job.n_train / l->B);
    double by = pol->out_of_reach_by * l->p->max_epochs * l->job.n_train; /* (a curve's reach said by then) */
    if (!pol->out_of_reach && pol->out_of_reach_p > 0 && l->r->target_source == SCV_TARGET_CURVE && l->samples < by &&
        by - l->samples < chunk * l->B)
        chunk = fmax(1, ceil((by - l->samples) / l->B));
    if (l->probe.probing) /* a probe: evaluated as the search is, enough for the run's own carry */
        chunk = fmax(1, l->probe.probe_end - (double)l->iteration);
    /* no evaluation of the whole test set when a segment ends (2.4 s of LeNet on a
     * 0.25-core VM, a few % of the run over its segments): the trainer makes one where the
     * run ends (the target, the epoch bound) */
    /* never past the epoch bound (nor unbounded: a rest the models cannot bound is infinite) */
    double bound = l->job.n_train > 0 ? ceil((l->p->max_epochs * l->job.n_train - l->samples) / l->B) : NAN;
    if (bound >= 1 && !(chunk <= bound)) chunk = bound;
    if (!(chunk <= 1e15)) chunk = pol->segment_min_iters;
    scv_segment_spec spec = {.until_iterations = l->iteration + (int64_t)ceil(chunk)};
    scv_run_step *t;
    int rc = loop_segment(l, "train", l->K, l->B, spec, &t, err);
    if (rc) {
        l->probe.probing = 0, l->probe.probe_end = 0; /* (the run ends: its last time left is not a probe's) */
        return rc;
    }
    int probed = l->probe.probing;
    l->probe.probing = 0, l->probe.probe_end = 0;
    if (t->reached || t->iterations == 0 || l->r->epochs >= l->p->max_epochs - 1e-9 ||
        ++l->rounds >= pol->max_segments)
        return SCV_OK;
    if (probed) { /* back to the choice (the plan's, made just before): its curve resumes on the probe's other side */
        const scv_plan_point *ch = &l->r->plan->points[l->r->plan->chosen];
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_PROBE_DONE, "probe at K=%d, B=%d done: back to K=%d, B=%d; the run's own batch carry-over is "
             "learnt once the curve there resumes", l->K, l->B, ch->workers, ch->batch);
        l->probe.probed_b = l->B, l->K = ch->workers, l->B = ch->batch, l->comm = ch->comm;
        loop_predict_progress(l); /* the choice's rest, the probe's samples counted at their batch */
        loop_record_forecast(l, 1);
        return SCV_OK;
    }
    loop_try_run_carry(l, 1);
    if (l->probe.retarget_replan) { /* the target forecast during the segment: re-plan on it */
        l->probe.retarget_replan = 0;
        *drifted = 1;
        return SCV_OK;
    }
    if (l->probe.carry_replan) { /* re-plan with the run's own carry */
        l->probe.carry_replan = 0;
        *drifted = 1;
        return SCV_OK;
    }
    /* (a segment that trained some iterations below its K, a preemption's shrink, measured
     * no iteration at K: on bench spot's K = 3 job, 7 re-plans a run, each at "-28% off") */
    const scv_plan_point *pp = loop_find_point(l->r->plan, l->K, l->B, l->comm);
    *drifted = !l->ledger.seg_shrunk && pp && isfinite(t->t_iter) && fabs(t->t_iter / pp->t_iter - 1) > pol->drift_tol;
    if (*drifted && l->place.seg_vm != l->place.vm_index) {
        /* another type's iteration, against the plan's extrapolation: a re-plan refits the
         * run's own type's measurements and would extrapolate the same again; said, not re-planned */
        *drifted = 0;
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_DRIFT_OTHER_VM, "iteration time %.2f ms on %s is %.0f%% off the plan's %.2f ms (extrapolated from %s's "
             "measurements): not re-planned (the models are fitted on %s)", 1e3 * t->t_iter,
             l->p->catalog->vms[l->place.seg_vm].name, 100 * (t->t_iter / pp->t_iter - 1), 1e3 * pp->t_iter, l->place.vm->name,
             l->place.vm->name);
    }
    if (*drifted && l->seg_compressed) {
        /* the option's iteration is measured now: its points are the model's x measured /
         * model (a compressed step corrects no dense fit, so without this every such segment
         * would re-plan on the same drift) */
        scv_plan_comm *o = &l->comms[l->comm];
        const double model = pp->t_iter / (o->t_iter_scale > 0 ? o->t_iter_scale : 1);
        o->t_iter_scale = t->t_iter / model;
        char name[64];
        scv_plan_comm_format(o, name, sizeof name);
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_DRIFT_OPTION, "iteration time %.2f ms with %s is %.0f%% off the plan's %.2f ms: its times are "
             "scaled by %.2f (measured / model), re-plan", 1e3 * t->t_iter, name, 100 * (t->t_iter / pp->t_iter - 1),
             1e3 * pp->t_iter, o->t_iter_scale);
        return SCV_OK;
    }
    if (*drifted) {
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_DRIFT, "iteration time %.2f ms is %.0f%% off the plan's %.2f ms: re-plan", 1e3 * t->t_iter,
             100 * (t->t_iter / pp->t_iter - 1), 1e3 * pp->t_iter);
        return SCV_OK;
    }
    scv_target_source src = l->r->target_source;
    if (src == SCV_TARGET_CURVE || src == SCV_TARGET_NOMINAL) { /* the statistical prediction, refitted */
        loop_predict_target(l);
        int now = l->curve.pred.ok;
        double was = l->curve.planned_x_star, is = l->curve.pred.x_star, moved = is / was - 1;
        if (src == SCV_TARGET_NOMINAL && now) {
            *drifted = 1;
            loop_note(l, SCV_EV_NOTE, SCV_NOTE_CURVE_ABSOLUTE, "the learning curve now forecasts the target: re-plan with absolute times");
        } else if (src == SCV_TARGET_CURVE && now && isfinite(was) != isfinite(is)) {
            *drifted = 1;
            loop_note(l, SCV_EV_NOTE, SCV_NOTE_CURVE_REACH, "the target now looks %s the epoch bound: re-plan",
                 isfinite(is) ? "within reach of" : "out of reach within");
        } else if (src == SCV_TARGET_CURVE && now && fabs(moved) > pol->stat_drift_tol) {
            *drifted = 1;
            loop_note(l, SCV_EV_NOTE, SCV_NOTE_CURVE_MOVED, "the predicted samples to the target moved %+.0f%%: re-plan", 100 * moved);
        } else {
            loop_predict_progress(l);
        }
    }
    if (!*drifted) loop_record_forecast(l, 1);
    return SCV_OK;
}

/* REPLAN: re-fit with the drifted measurement; switch only when the switch pays for itself
 * at the plan's point, as the plan's choice is made: its cost (the switch's idle and a share
 * of the time left) is the hysteresis. A switch of batch judged at the top of the carry's
 * band, or on average over it, was never made once the band was wide (a carry read ahead of
 * the evaluations spans the corpus rule's band): bench decide's MLP first runs stayed at
 * B=64 with B=256 1.6 s faster at the point, and never reached their target; a ResNet first
 * run stayed at B=256 with B=64 52.8 s faster at the point, -12.0 s on average. */
static int do_replan(loop *l, scv_err *err)
{
    scv_run_result *r = l->r;
    scv_plan_result *res = NULL;
    scv_perf_model pf;
    scv_stat_model sm;
    scv_err pe = {0};
    if (loop_plan(l, &res, &pf, &sm, &pe) != SCV_OK) {
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_REPLAN_FAILED, "re-plan failed (%.300s); staying at K=%d, B=%d", pe.msg, l->K, l->B);
        return SCV_OK;
    }
    const scv_plan_point *nc = &res->points[res->chosen], *cur = loop_find_point(res, l->K, l->B, l->comm);
    double rem_cur = cur ? loop_rest_iters(l, &sm, l->B) * loop_iter_factor(cur) * cur->t_iter : 0;
    double rem_new = loop_rest_iters(l, &sm, nc->batch) * loop_iter_factor(nc) * nc->t_iter;
    double cost = l->pol->switch_idle_factor * loop_switch_idle(l) + l->pol->switch_remaining_share * rem_cur;
    /* a bound in force (the plan is absolute): when the current configuration misses it and
     * the plan's choice meets it (as the planner judges bounds: the run's end there, what it
     * spent and the rest of the target at the configuration), the switch is made whether or
     * not it pays for itself in time */
    int bounded = !r->relative && (l->place.plan_deadline_s > 0 || l->place.plan_budget > 0); /* (those the plan kept) */
    int moved = nc->workers != l->K || nc->batch != l->B || nc->comm != l->comm;
    char nt[96], ot[96];
    loop_comm_text(l, nc->comm, nc->comm_coll, nt, sizeof nt);
    scv_plan_request rb = {.deadline_s = l->place.plan_deadline_s,
                           .budget = l->place.plan_budget,
                           .spent_s = loop_elapsed(l),
                           .spent_cost = loop_spend_usd(l),
                           .done_share = loop_done_share(l, &sm)};
    loop_segments_priced(l, &rb);
    int cur_meets = cur && scv_plan_meets(&rb, cur), new_meets = scv_plan_meets(&rb, nc);
    char why[256];
    if (l->p->scaling == SCV_SCALING_THROUGHPUT) {
        snprintf(why, sizeof why, "stay at K=%d, B=%d: Or et al.'s throughput scaling settled here", l->K, l->B);
    } else if (moved && !cur) { /* the job runs outside the space (shrunk in place by a preemption) */
        snprintf(why, sizeof why, "switch to K=%d, B=%d%s: the job runs at K=%d, outside the space planned (a "
                 "preemption shrank it)", nc->workers, nc->batch, nt, l->K);
        l->K = nc->workers, l->B = nc->batch, l->comm = nc->comm;
    } else if (bounded && moved && !cur_meets && new_meets) {
        snprintf(why, sizeof why, "switch to K=%d, B=%d%s: staying would miss the %s, the switch meets it", nc->workers,
                 nc->batch, nt, l->place.plan_deadline_s > 0 ? "deadline" : "budget");
        l->K = nc->workers, l->B = nc->batch, l->comm = nc->comm;
    } else if (moved && rem_cur - rem_new > cost) {
        snprintf(why, sizeof why, "switch to K=%d, B=%d%s: saves %.1f s > its cost %.1f s", nc->workers, nc->batch, nt,
                 rem_cur - rem_new, cost);
        l->K = nc->workers, l->B = nc->batch, l->comm = nc->comm;
    } else {
        snprintf(why, sizeof why, "stay at K=%d, B=%d%s: no switch pays for itself (best saves %.1f s, costs %.1f s)",
                 l->K, l->B, loop_comm_text(l, l->comm, cur ? cur->comm_coll : SCV_SPARSE_ALLGATHER, ot, sizeof ot),
                 rem_cur - rem_new, cost);
    }
    if (r->relative) { /* its times are nominal, and its reason says so (the dashboard reads it) */
        char w[sizeof why];
        snprintf(w, sizeof w, "%s", why);
        snprintf(why, sizeof why, "nominal times (%.3g epochs assumed): %.200s", r->target_epochs, w);
    }
    const scv_plan_point *at = loop_find_point(res, l->K, l->B, l->comm);
    int rc = scv_store_decision(l->p->store, r->run_id, "replan", l->K, l->B, l->p->catalog->vms[l->place.train_vm].name,
                                at ? at->time_s : NAN,
                                at ? at->cost : NAN, why, err);
    set_plan(r, res);
    if (!rc) rc = loop_store_plan(l, res, err);
    note_absolute(l);
    r->perf = pf, r->stat = sm;
    loop_predict_progress(l);
    loop_record_forecast(l, 1);
    loop_emit(l, (scv_run_event){.kind = SCV_EV_PLAN, .workers = l->K, .batch = l->B, .plan = res,
                            .relative = r->relative});
    loop_note(l, SCV_EV_DECISION, SCV_NOTE_REPLAN, "re-plan: %s", why);
    return rc;
}

static int open_run(loop *l, scv_err *err)
{
    const scv_run_params *p = l->p;
    scv_run_result *r = l->r;
    int rc;
    if (p->resume_run) {
        char job[65536], status[64];
        if ((rc = scv_store_run_get(p->store, p->resume_run, job, sizeof job, status, sizeof status, err))) return rc;
        if (!strcmp(status, "done")) return scv_err_set(err, SCV_EINVAL, "run %lld is already done", p->resume_run);
        r->run_id = p->resume_run;
        if ((rc = scv_store_load_steps(p->store, r->run_id, &r->steps, &r->n_steps, err))) return rc;
        if ((rc = scv_store_load_stragglers(p->store, r->run_id, &r->stragglers, &r->n_stragglers, err))) return rc;
        l->steps_cap = r->n_steps;
        scv_config_stats *cs;
        size_t n;
        if ((rc = scv_store_run_measurements(p->store, r->run_id, &cs, &n, err))) return rc;
        l->cs = cs, l->ncs = l->cs_cap = n;
        for (size_t i = 0; i < r->n_steps; i++) r->reached |= r->steps[i].reached;
        scv_eval_sample *ev;
        if ((rc = loop_stored_curve(l, r->run_id, r->steps, r->n_steps, &l->curve.prog, &ev, &n, err))) return rc;
        for (size_t i = 0; i < n; i++) loop_history_push(l, loop_target_y(l, &ev[i]));
        free(ev);
    } else if ((rc = scv_store_run_new(p->store, p->job_key, p->job_json ? p->job_json : "{}", &r->run_id, err))) {
        return rc;
    }
    if ((rc = scv_run_dir_path(p->state_dir, r->run_id, NULL, r->run_dir, sizeof r->run_dir, err))) return rc;
    if (mkdir(p->state_dir, 0755) && errno != EEXIST)
        return scv_err_set(err, SCV_EIO, "%s: cannot create the state directory: %s", p->state_dir, strerror(errno));
    if (mkdir(r->run_dir, 0755) && errno != EEXIST)
        return scv_err_set(err, SCV_EIO, "%s: cannot create the run directory: %s", r->run_dir, strerror(errno));
    return scv_store_run_status(p->store, r->run_id, "running", err);
}

/* The state to start in: a new run warms up; a resumed one continues where it stopped. */
static int first_state(loop *l, scv_run_state *s, scv_err *err)
{
    const scv_run_params *p = l->p;
    int K, B;
    char vm[96] = "";
    int rd = p->resume_run ? scv_store_last_decision(p->store, p->resume_run, &K, &B, vm, sizeof vm, err) : SCV_ENOTFOUND;
    if (rd && rd != SCV_ENOTFOUND) return rd; /* (a damaged store is no "not decided yet") */
    if (!rd) {
        l->decided = 1, l->K = K, l->B = B, l->resumed_decision = 1;
        /* the type the decision trains on, where the driver still holds K VMs of it */
        const scv_vm_type *v = vm[0] ? scv_catalog_find(p->catalog, vm) : NULL;
        int vi = v ? (int)(v - p->catalog->vms) : l->place.vm_index;
        if (vi != l->place.vm_index && loop_vm_held(l, vi) >= K) l->place.train_vm = vi;
        else if (vi != l->place.vm_index)
            loop_note(l, SCV_EV_NOTE, SCV_NOTE_VM_STORED, "VM type: the stored decision trains on %s; the driver holds %d VMs of it now, K=%d "
                 "needs %d: the run trains on %s", vm, loop_vm_held(l, vi), K, K, l->place.vm->name);
        *s = l->r->reached ? SCV_STATE_DONE : SCV_STATE_PLAN;
        if (!l->ncs) { /* planned from an earlier run's measurements (--search none) */
            long long from;
            free(l->cs);
            l->cs = NULL;
            int rc = scv_store_load_measurements(p->store, p->job_key, -1, &l->cs, &l->ncs, &from, err);
            l->cs_cap = l->ncs;
            return rc;
        }
        return SCV_OK;
    }
    int warmed = 0;
    for (size_t i = 0; i < l->r->n_steps; i++) warmed |= !strcmp(l->r->steps[i].phase, "warmup");
    if (p->search == SCV_SEARCH_NONE) {
        long long from;
        scv_config_stats *cs;
        size_t n;
        int rc = scv_store_load_measurements(p->store, p->job_key, l->r->run_id, &cs, &n, &from, err);
        if (rc == SCV_ENOTFOUND) { /* a job never seen: the universal model */
            l->universal = 1;
            loop_note(l, SCV_EV_NOTE, SCV_NOTE_UNIVERSAL, "no stored run of this job: the universal model (a warm-up, then the shapes "
                                 "of %d stored run(s) of other jobs on %s)", l->in.n_prior, p->vm_type);
            *s = warmed ? SCV_STATE_PLAN : SCV_STATE_WARMUP;
            return SCV_OK;
        }
        if (rc) return rc;
        free(l->cs);
        l->cs = cs, l->ncs = l->cs_cap = n;
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_STORED_MEASUREMENTS, "planning from %zu stored measurements of this job (the newest from run %lld)", n, from);
        *s = SCV_STATE_PLAN;
        return SCV_OK;
    }
    if (l->r->n_steps) l->resumed_decision = 1; /* the next step's idle spans the interruption */
    *s = l->r->reached ? SCV_STATE_PLAN : warmed ? SCV_STATE_SEARCH : SCV_STATE_WARMUP;
    return SCV_OK;
}

int loop_finish(loop *l, scv_err *err)
{
    scv_run_result *r = l->r;
    loop_tally(l);
    r->workers = l->K, r->batch = l->B, r->comm = l->comm;
    int rc = scv_store_outcome(l->p->store, r->run_id, r->actual_time_s, r->actual_cost, r->accuracy, r->reached, err);
    if (!rc && !r->reached && l->curve.prog.nev && !l->trained_compressed) {
        /* not reached: the target is stored without epochs, so that a later run to it
         * reads how far this one came from its evaluations (est_stored.c) */
        rc = scv_store_set_target(l->p->store, r->run_id, loop_metric_of(l->p), loop_target_value(l->p), NAN, l->p->batches[0], err);
    } else if (!rc && r->reached && isfinite(r->epochs) && !l->trained_compressed) {
        /* the epochs it took (dense training only: a later run's plan takes them as
         * dense epochs), at one batch: samples at other batches carried to the
         * smallest by the noise scale (as the learning curve counts them) */
        scv_carry_law law = l->probe.carry_run && !l->probe.carry_from ? loop_read_law(l, INFINITY) : loop_carry_law(l);
        double e = r->epochs;
        int b = l->B;
        if (scv_carry_law_known(law) && l->job.n_train > 0)
            e = progress_crossing_samples(&l->curve.prog, l->samples, l->p->batches[0], law) / l->job.n_train,
            b = l->p->batches[0];
        rc = scv_store_set_target(l->p->store, r->run_id, loop_metric_of(l->p), loop_target_value(l->p), e, b, err);
    }
    return rc;
}

void scv_run_result_free(scv_run_result *r)
{
    if (!r) return;
    set_plan(r, NULL);
    if (r->first_absolute != r->decision) scv_plan_result_free(r->first_absolute);
    scv_plan_result_free(r->decision);
    r->first_absolute = NULL;
    free(r->steps);
    free(r->stragglers);
    free(r->preemptions);
    r->decision = NULL, r->steps = NULL, r->n_steps = 0, r->stragglers = NULL, r->n_stragglers = 0;
    r->preemptions = NULL, r->n_preemptions = 0;
}

/* Where the job stands when the run opens it (its checkpoint; a resumed run's interrupted
 * segment's checkpointed part), and on resume the segment that was training when the run
 * was killed, recovered as a step. */
static int resume_progress(loop *l, scv_err *err)
{
    const scv_run_params *p = l->p;
    const scv_job_driver *d = l->d;
    scv_run_result *out = l->r;
    int64_t it0;
    double s0;
    int rc = d->progress(d->ctx, &it0, &s0, err);
    if (rc) return rc;
    l->iteration = it0;
    l->samples = s0;
    /* an interrupted segment's checkpointed part: at the last stored step's batch, unless the
     * segment is recovered below (its own batch then, from where the stored steps end: the
     * stored evaluations already stretched the last segment over it) */
    double stored_end = 0;
    for (size_t i = 0; i < out->n_steps; i++) stored_end += (double)out->steps[i].iterations * out->steps[i].batch;
    progress_advance(&l->curve.prog, s0);
    if (!p->resume_run || !d->recover) return SCV_OK;
    scv_segment_result res;
    char phase[16];
    int K, B;
    rc = d->recover(d->ctx, (int)out->n_steps, &res, phase, sizeof phase, &K, &B, err);
    if (rc == SCV_ENOTFOUND) return SCV_OK;
    if (rc || res.iterations <= 0) return rc;
    if (res.iterations < l->pol->profile_min_iters) res.stats.workers = 0; /* too short to stand for
                                                                               the configuration */
    loop_note(l, SCV_EV_NOTE, SCV_NOTE_RECOVERED, "recovered the %s segment (K=%d, B=%d, %lld iterations) the run was in when it stopped",
         phase, K, B, (long long)res.iterations);
    l->resumed_decision = 0; /* its idle before is the loop's */
    if (s0 > stored_end && (!l->curve.prog.nseg || l->curve.prog.seg[l->curve.prog.nseg - 1].batch != B)) {
        if (l->curve.prog.nseg && l->curve.prog.seg[l->curve.prog.nseg - 1].s1 > stored_end)
            l->curve.prog.seg[l->curve.prog.nseg - 1].s1 = stored_end; /* (its evaluations kept) */
        if ((rc = progress_segment(&l->curve.prog, stored_end, B))) return scv_err_set(err, rc, "out of memory");
        progress_advance(&l->curve.prog, s0);
    }
    rc = loop_record_step(l, phase, K, B, &res, NULL, err);
    l->resumed_decision = 1; /* the next one's spans the interruption */
    l->iteration = it0, l->samples = s0;
    return rc;
}

int scv_run(const scv_run_params *p, const scv_job_driver *d, const scv_run_observer *obs, scv_run_result *out,
            scv_err *err)
{
    const double t0 = scv_now(); /* (the invocation's wall clock: out->wall_s) */
    memset(out, 0, sizeof *out);
    out->accuracy = out->epochs = out->predicted_time_s = out->predicted_cost = out->predicted_band = NAN;
    out->predicted_lo_s = out->predicted_hi_s = out->search_budget_s = NAN;
    out->absolute_at_s = out->absolute_at_epochs = out->absolute_time_s = NAN;
    out->target_p_reach = out->target_nearest = NAN;
    out->carry_noise_scale = out->carry_gamma = out->carry_q_lo = out->carry_q_hi = out->carry_err = NAN;
    out->state = SCV_STATE_FAILED;
    int rc = scv_run_params_check(p, err);
    if (rc) return rc;
    loop L = {.p = p, .d = d, .obs = obs, .r = out, .pol = &p->policy, .last_accuracy = NAN, .seg_t0 = NAN,
              .seg_t1 = NAN};
    loop *l = &L;
    l->dense = -1; /* dense until a plan chooses an option */
    memcpy(l->comms, p->comms, sizeof l->comms);
    for (size_t i = 0; i < p->n_comms && l->dense < 0; i++)
        if (l->comms[i].kind == SCV_PLAN_DENSE) l->dense = (int)i;
    l->comm = l->dense;
    out->comm = l->dense;
    /* the batches planned over: the space's, and those Or et al.'s batch rule trains at */
    for (size_t i = 0; i < p->n_batches; i++) l->bs[l->n_bs++] = p->batches[i];
    for (size_t i = 0; p->scaling == SCV_SCALING_THROUGHPUT && i < p->n_workers; i++) {
        int B = loop_scaled_batch(p, p->workers[i]), at = 0;
        while (at < (int)l->n_bs && l->bs[at] < B) at++;
        if (at < (int)l->n_bs && l->bs[at] == B) continue;
        memmove(l->bs + at + 1, l->bs + at, sizeof(int) * (l->n_bs - (size_t)at));
        l->bs[at] = B, l->n_bs++;
    }
    loop_floor_init(l);
    l->place.vm = scv_catalog_find(p->catalog, p->vm_type);
    l->place.vm_index = l->place.train_vm = l->place.seg_vm = (int)(l->place.vm - p->catalog->vms);
    if (p->pricing == SCV_PRICE_MEMORY &&
        (rc = scv_memory_rates(p->catalog, l->place.vm->provider, &l->ledger.rate_cpu, &l->ledger.rate_gib, err)))
        return rc;
    if ((rc = open_run(l, err))) {
        if (out->run_id) goto failed;
        goto out;
    }
    if ((rc = d->open(d->ctx, out->run_dir, &l->job, err))) {
        if (rc != SCV_EINTR) goto failed;
        /* stopped while the job started (the probe got the Ctrl-C): resumable, like later */
        out->state = l->state = SCV_STATE_INTERRUPTED;
        scv_store_run_end(p->store, out->run_id, "interrupted", "interrupted",
                          "interrupted while the job started (SIGINT or SIGTERM); resumable", NULL);
        goto out;
    }
    if ((rc = resume_progress(l, err))) goto failed_open;
    scv_run_state s;
    if ((rc = loop_load_prior(l, err)) || (rc = loop_load_calib(l, err))) goto failed_open;
    out->n_prior_runs = l->in.n_prior;
    if ((rc = first_state(l, &s, err))) goto failed_open;
    out->universal = l->universal;
    for (;;) {
        if ((rc = set_state(l, s, err))) break;
        int drifted = 0;
        switch (s) {
        case SCV_STATE_WARMUP:
            rc = loop_do_warmup(l, err);
            s = out->reached || l->universal ? SCV_STATE_PLAN : SCV_STATE_SEARCH;
            break;
        case SCV_STATE_SEARCH:
            rc = loop_do_search(l, err);
            s = SCV_STATE_PLAN;
            break;
        case SCV_STATE_PLAN:
            rc = do_plan(l, err);
            if (rc && out->reached) { /* reached while searching: the plan is only for the report */
                loop_note(l, SCV_EV_NOTE, SCV_NOTE_REACHED_SEARCHING, "the target was reached while searching; no plan: %s", err ? err->msg : "");
                rc = SCV_OK;
                snprintf(out->why, sizeof out->why, "no plan: the target was reached while searching");
            }
            s = out->reached || loop_spent(l) ? SCV_STATE_DONE : SCV_STATE_TRAIN;
            break;
        case SCV_STATE_TRAIN:
            rc = do_train(l, &drifted, err);
            if (out->reached || loop_spent(l) || l->rounds >= l->pol->max_segments ||
                (out->n_steps && out->steps[out->n_steps - 1].iterations == 0))
                s = SCV_STATE_DONE;
            else s = drifted ? SCV_STATE_REPLAN : SCV_STATE_TRAIN;
            break;
        case SCV_STATE_REPLAN:
            rc = do_replan(l, err);
            s = SCV_STATE_TRAIN;
            break;
        default: break;
        }
        if (rc || s == SCV_STATE_DONE) break;
    }
    if (rc == SCV_EINTR && l->ledger.budget_stop) { /* not an error: the run stopped at its cap */
        out->budget_stopped = 1;
        char cap[32];
        scv_fmt_usd(p->budget, cap, sizeof cap);
        snprintf(out->why, sizeof out->why, "stopped by the budget's cap (%s): resumable with a larger budget", cap);
    }
    if (rc == SCV_EINTR) {
        l->state = out->state = SCV_STATE_INTERRUPTED;
        loop_tally(l);
        scv_store_run_spent(p->store, out->run_id, out->actual_time_s, out->actual_cost, NULL);
        scv_store_run_end(p->store, out->run_id, "interrupted", "interrupted",
                          out->budget_stopped || out->reach_stopped
                              ? out->why
                              : "interrupted (SIGINT or SIGTERM); the checkpoint is kept: resumable",
                          NULL);
        loop_emit(l, (scv_run_event){.kind = SCV_EV_STATE, .workers = l->K, .batch = l->B});
        d->close(d->ctx);
        goto out;
    }
    if (rc) goto failed_open;
    if ((rc = loop_finish(l, err))) goto failed_open;
    d->close(d->ctx);
    out->state = SCV_STATE_DONE;
    set_state(l, SCV_STATE_DONE, NULL);
    goto out;
failed_open:
    d->close(d->ctx);
failed:
    loop_tally(l);
    out->state = l->state = SCV_STATE_FAILED;
    if (out->run_id) scv_store_run_spent(p->store, out->run_id, out->actual_time_s, out->actual_cost, NULL);
    scv_store_run_end(p->store, out->run_id, "failed", "failed", err && err->msg[0] ? err->msg : scv_strerror(rc), NULL);
    loop_emit(l, (scv_run_event){.kind = SCV_EV_STATE, .workers = l->K, .batch = l->B});
out:
    out->wall_s = scv_now() - t0;
    free(l->cs);
    progress_free(&l->curve.prog);
    scv_calib_free(&l->in.calib);
    return rc;
}
