/*
 * place.c - the plan: the models fitted to the measurements, the target's estimate (target.c)
 * handed to the planner, which prices every point's time and cost with its band; under the
 * run's bounds (the nearest it can come when none meets them), and across VM types (`run --vm`:
 * where a segment runs, by the VMs the driver holds).
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

static int plan_bounded(loop *l, scv_plan_request *req, scv_plan_result **res, scv_err *err);

/* How many VMs of catalog type vm the driver can place a segment on (scv_job_info.types, from
 * its open): 0 when it holds none of it. */
int loop_vm_held(const loop *l, int vm)
{
    const char *name = l->p->catalog->vms[vm].name;
    for (int i = 0; i < l->job.n_types && i < SCV_JOB_MAX_TYPES; i++)
        if (!strcmp(l->job.types[i], name)) return l->job.type_vms[i];
    return 0;
}

/* The type training goes on, from the plan's choice `other` (vm_place): at the decision the
 * choice's type where the driver holds K VMs of it, else the run's own, with why (cap bytes,
 * "" when it is the choice's); re-plans keep the decision's type. */
int loop_vm_place(const loop *l, const scv_plan_point *other, char *why, size_t cap)
{
    const char *name = l->p->catalog->vms[other->vm].name;
    int held = loop_vm_held(l, other->vm);
    why[0] = 0;
    if (other->vm == l->place.vm_index) return l->decided ? l->place.train_vm : l->place.vm_index;
    if (held >= other->workers) {
        if (!l->decided || other->vm == l->place.train_vm) return other->vm;
        snprintf(why, cap, "a re-plan keeps the VM type the run decided on, %s", l->p->catalog->vms[l->place.train_vm].name);
        return l->place.train_vm;
    }
    if (held)
        snprintf(why, cap, "the driver holds %d VM%s of %s, K=%d needs %d", held, held == 1 ? "" : "s", name,
                 other->workers, other->workers);
    else
        snprintf(why, cap, "the driver holds no VM of %s (only an emulated cluster with VMs of that type does: "
                 "`scavenger cluster up --vm %s:N`, then --cluster)", name, name);
    return l->decided ? l->place.train_vm : l->place.vm_index;
}

static int plan_types(loop *l, const scv_plan_request *req, scv_plan_result *res, scv_err *err)
{
    const scv_catalog *cat = l->p->catalog;
    const scv_plan_point other = res->points[res->chosen];
    char stay[320];
    int want = loop_vm_place(l, &other, stay, sizeof stay);
    if (!l->decided) l->place.train_vm = want;
    /* on another type than the run's, K up to the VMs the driver holds of it (a re-plan may
     * choose more than the decision's) */
    int ks[SCV_MAX_SPACE], nk = 0, cap_k = want != l->place.vm_index ? loop_vm_held(l, want) : INT_MAX;
    for (size_t i = 0; i < req->n_workers && nk < SCV_MAX_SPACE; i++)
        if (req->workers[i] <= cap_k) ks[nk++] = req->workers[i];
    if (other.vm == want && other.workers > cap_k)
        snprintf(stay, sizeof stay, "the driver holds %d VM%s of it", cap_k, cap_k == 1 ? "" : "s");
    if (other.vm != want || other.workers > cap_k) {
        scv_plan_request own = *req;
        own.vms = &want, own.n_vms = 1; /* (measured_vm stays the run's: the others are carried from it) */
        if (want != l->place.vm_index) own.workers = ks, own.n_workers = (size_t)nk;
        scv_plan_result *o = NULL;
        int rc = plan_bounded(l, &own, &o, err); /* (its bounds may be out of reach where the others' are not) */
        if (rc) return rc;
        const scv_plan_point *oc = &o->points[o->chosen], *od = o->chosen_dense >= 0 ? &o->points[o->chosen_dense] : NULL;
        res->chosen_dense = -1;
        for (size_t i = 0; i < res->n_points; i++) {
            const scv_plan_point *q = &res->points[i];
            if (q->vm != want) continue;
            if (q->workers == oc->workers && q->batch == oc->batch && q->comm == oc->comm) res->chosen = (long)i;
            if (od && q->workers == od->workers && q->batch == od->batch && q->comm == od->comm)
                res->chosen_dense = (long)i;
        }
        if (res->points[res->chosen].vm != want) { /* the same request: never */
            scv_plan_result_free(o);
            return scv_err_set(err, SCV_EINVAL, "plan: %s's choice K=%d, B=%d is not among the points of the plan over "
                               "its VM types", cat->vms[want].name, oc->workers, oc->batch);
        }
        char ot[32], oc_[32], mt[32], mc[32], w[1200];
        const scv_plan_point *mine = &res->points[res->chosen];
        scv_fmt_time(other.time_s, ot, sizeof ot), scv_fmt_usd(other.cost, oc_, sizeof oc_);
        scv_fmt_time(mine->time_s, mt, sizeof mt), scv_fmt_usd(mine->cost, mc, sizeof mc);
        snprintf(w, sizeof w, "the plan chose %.64s (K=%d, B=%d%s); the run stays on %.64s (%.300s): %.256s",
                 cat->vms[other.vm].name, other.workers, other.batch,
                 other.extrap != SCV_EXTRAP_NONE ? ", extrapolated" : "", cat->vms[want].name, stay, o->why);
        w[sizeof res->why - 1] = 0;
        memcpy(res->why, w, sizeof res->why);
        if (!l->decided)
            loop_note(l, SCV_EV_NOTE, SCV_NOTE_VM_CHOSEN_ELSEWHERE, "VM type: the plan chose %s at K=%d, B=%d (%s, %s; %s) over %s's best, K=%d, B=%d "
                 "(%s, %s); the run trains on %s: %s",
                 cat->vms[other.vm].name, other.workers, other.batch, ot, oc_, scv_extrap_desc(other.extrap),
                 cat->vms[want].name, mine->workers, mine->batch, mt, mc, cat->vms[want].name, stay);
        scv_plan_result_free(o);
    } else if (want != l->place.vm_index && !l->decided) {
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_VM_CHOSEN, "VM type: the plan chose %s at K=%d, B=%d (%s); the run trains there: the driver holds "
             "%d VM%s of it (warm-up and search measured %s, which the models stay fitted on; its segments on %s are "
             "priced at %s's rate)", cat->vms[want].name, other.workers, other.batch, scv_extrap_desc(other.extrap),
             loop_vm_held(l, want), loop_vm_held(l, want) == 1 ? "" : "s", l->place.vm->name, cat->vms[want].name, cat->vms[want].name);
    }
    /* the types the plan holds points of, by how they were predicted */
    char *seen = calloc(cat->n, 1);
    if (!seen) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int n_types = 0, n_extrap = 0;
    char list[768] = "";
    size_t len = 0;
    for (int e = SCV_EXTRAP_NONE; e <= SCV_EXTRAP_GPU_AS_MEASURED; e++) {
        int shown = 0, more = 0;
        for (size_t i = 0; i < res->n_points; i++) {
            const scv_plan_point *q = &res->points[i];
            if ((int)q->extrap != e || q->vm < 0 || (size_t)q->vm >= cat->n || seen[q->vm]) continue;
            seen[q->vm] = 1, n_types++, n_extrap += e != SCV_EXTRAP_NONE;
            if (shown < 6 && len < sizeof list - 1)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", shown ? ", " : len ? "; " : "",
                                        cat->vms[q->vm].name);
            else more++;
            shown++;
        }
        if (more && len < sizeof list - 1)
            len += (size_t)snprintf(list + len, sizeof list - len, " and %d more", more);
        if (shown && len < sizeof list - 1)
            len += (size_t)snprintf(list + len, sizeof list - len, " (%s%s)", scv_extrap_desc((scv_extrap)e),
                                    e != SCV_EXTRAP_NONE            ? ""
                                    : l->place.train_vm == l->place.vm_index ? ": the run trains on it"
                                                                 : ": the run measures it");
    }
    free(seen);
    size_t n = strlen(res->why);
    if (n_types > 1 && n + 48 < sizeof res->why)
        snprintf(res->why + n, sizeof res->why - n, "; over %d VM types (%d extrapolated)", n_types, n_extrap);
    if (!l->decided)
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_VM_TYPES, "VM types (--vm): %d planned: %s%s", n_types, list,
             res->n_excluded_gpu ? "; GPU types left out (not predicted from CPU measurements)" : "");
    return SCV_OK;
}

/* scv_plan under the run's bounds; where no configuration ends the run within them, the
 * nearest it can come, said in a note: within the deadline alone when only the budget is out
 * of reach, else the earliest end (a deadline) or the least cost (a budget alone). Without
 * this a run past reach of its deadline stayed where it was and re-planned on nothing.
 * *req keeps the bounds and objective planned with (plan_types plans the same). */
static int plan_bounded(loop *l, scv_plan_request *req, scv_plan_result **res, scv_err *err)
{
    scv_err be = {0}, e2 = {0};
    int rc = scv_plan(req, res, &be);
    if (rc != SCV_EINFEASIBLE || !(req->deadline_s > 0 || req->budget > 0))
        return rc ? scv_err_set(err, rc, "%s", be.msg) : SCV_OK;
    const char *what = "within the deadline alone";
    if (req->deadline_s > 0 && req->budget > 0) req->budget = 0, rc = scv_plan(req, res, &e2);
    if (rc == SCV_EINFEASIBLE) {
        req->objective = req->deadline_s > 0 ? SCV_OBJ_TIME : SCV_OBJ_COST;
        what = req->deadline_s > 0 ? "for the earliest end" : "for the least cost";
        req->deadline_s = req->budget = 0;
        rc = scv_plan(req, res, &e2);
    }
    if (rc) return scv_err_set(err, rc, "%s", e2.msg);
    loop_note(l, SCV_EV_NOTE, SCV_NOTE_BOUND_MISSED, "%s: planned %s", be.msg, what);
    return SCV_OK;
}

int loop_plan(loop *l, scv_plan_result **res, scv_perf_model *perf, scv_stat_model *sm, scv_err *err)
{
    const scv_run_params *p = l->p;
    scv_run_result *r = l->r;
    int rc = scv_perf_fit(l->cs, l->ncs, p->topology, 4 * l->job.n_params, perf, err);
    if (rc) return rc;
    if (l->in.n_prior) scv_perf_apply_prior(perf, &l->in.prior, l->cs, l->ncs);
    /* the target as predicted now: into the result only when the plan succeeds (a failed
     * re-plan leaves the run at its plan, and the curve's trigger armed) */
    double planned = l->curve.planned_x_star;
    loop_refresh_floor(l);
    char tnote[sizeof r->target_note];
    scv_estimate est = loop_target_of(l, tnote, sizeof tnote);
    if (l->store_err.code) /* a store read failed on the way: the plan fails, naming it */
        return scv_err_set(err, l->store_err.code, "%s", l->store_err.msg);
    int relative = est.source == SCV_TARGET_NOMINAL;
    if ((rc = scv_stat_fit(p->stat, l->cs, l->ncs, l->job.n_train, est.epochs, est.batch, sm, err))) {
        l->curve.planned_x_star = planned;
        return rc;
    }
    sm->lag_epochs = est.lag_epochs;
    const scv_carry *cf = loop_carry_in_force(l);
    if (l->probe.carry_run || cf == &l->in.floor) /* the run's own carry, not the measured noise scale's law */
        sm->by_exponent = 1, sm->exponent = cf->gamma;
    /* the VM types planned: the run's own first (measured, trained on), then the others of
     * `run --vm`, carried from its measurements by the planner's stated method (docs/MODEL.md
     * "VM types without measurements"; each point says how) */
    int *vms = malloc(sizeof(int) * (p->n_vms + 1));
    size_t nv = 0;
    if (!vms) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    vms[nv++] = l->place.vm_index;
    for (size_t i = 0; p->vms && i < p->n_vms; i++)
        if (p->vms[i] != l->place.vm_index) vms[nv++] = p->vms[i];
    /* spot priced with the risk of preemption: the default rates by provider, recovery by
     * checkpoint-restart (model/spot.c; `plan` takes the user's rates) */
    scv_spot_risk risk = {.pol = NULL, .rates = NULL, .recovery = SCV_SPOT_RESTART};
    scv_plan_request req = {.catalog = p->catalog,
                            .vms = vms,
                            .n_vms = nv,
                            .measured_vm = l->place.vm_index,
                            .workers = p->workers,
                            .n_workers = p->n_workers,
                            .batches = l->bs,
                            .n_batches = l->n_bs,
                            .perf = perf,
                            .stat = sm,
                            .job = &l->job,
                            /* bounds on nominal times would be arbitrary: they apply from the
                             * first plan with absolute times (a re-plan once the curve knows) */
                            .deadline_s = relative ? 0 : p->deadline_s,
                            .budget = relative ? 0 : p->budget,
                            .spent_s = loop_elapsed(l),
                            .spent_cost = loop_spend_usd(l),
                            .done_share = loop_done_share(l, sm),
                            .eval_s_per_sample = loop_eval_s_per_sample(l),
                            .objective = p->objective,
                            .value_per_hour = p->value_per_hour,
                            .pricing = p->pricing,
                            .mem_rate_cpu = l->ledger.rate_cpu,
                            .mem_rate_gib = l->ledger.rate_gib,
                            .measured_threads = l->job.threads,
                            .worker_threads = l->job.threads,
                            .parallel_fraction = -1,
                            .measured = l->cs,
                            .n_measured = l->ncs,
                            .comms = p->n_comms ? l->comms : NULL,
                            .n_comms = p->n_comms,
                            .spot_risk = p->pricing == SCV_PRICE_SPOT ? &risk : NULL,
                            .estimate = &est};
    loop_segments_priced(l, &req);
    rc = plan_bounded(l, &req, res, err);
    if (!rc) l->place.plan_deadline_s = req.deadline_s, l->place.plan_budget = req.budget;
    if (!rc && nv > 1 && (rc = plan_types(l, &req, *res, err))) {
        scv_plan_result_free(*res);
        *res = NULL;
    }
    free(vms);
    if (rc) {
        l->curve.planned_x_star = planned;
        return rc;
    }
    r->target_source = est.source, r->relative = relative;
    snprintf(r->target_note, sizeof r->target_note, "%s", tnote);
    r->target_epochs = est.epochs, r->target_batch = est.batch;
    scv_band_ends(scv_estimate_band_at(&est, est.batch), est.epochs, &r->target_epochs_lo, &r->target_epochs_hi);
    r->target_p_reach = est.p_reach, r->target_nearest = est.nearest, r->target_from_run = est.from_run;
    r->target_n_calib = est.n_calib, r->target_carried_share = scv_estimate_mix_carried(&est.mix, est.batch);
    snprintf(r->target_curve, sizeof r->target_curve, "%s", est.curve);
    scv_carry_law law = loop_carry_law(l);
    const scv_carry *c = cf;
    r->carry_learnt = c == &l->in.floor               ? 5
                      : l->probe.carry_run            ? 3
                      : isfinite(l->in.carry.b_noise) ? 1
                      : isfinite(l->in.carry.gamma)   ? 2
                      : l->in.carry.per_log           ? 4
                                                      : 0;
    r->carry_noise_scale = law.b_noise, r->carry_gamma = c->gamma;
    r->carry_q_lo = c->q_lo, r->carry_q_hi = c->q_hi, r->carry_err = c->med_abs;
    if (r->carry_learnt == 5)
        loop_note(
            l, SCV_EV_NOTE, SCV_NOTE_CARRY_FLOOR,
            "batch carry-over from the noise floor of the training loss, which "
            "the gradient noise the run measures sets: at B=%g the target's metric %+.4g off B=%g's and the progress "
            "per "
            "sample x%.2f, so samples to the target carry as (B/b0)^%.2f, band %+.2f..%+.2f (x%.2f-x%.2f at 4x the "
            "batch)",
            c->run_b, c->run_level, c->run_b0, c->run_rate, c->gamma, c->q_lo, c->q_hi, pow(4, c->q_lo),
            pow(4, c->q_hi));
    const scv_plan_point *cp = &(*res)->points[(*res)->chosen], *dp;
    if (cp->workers == 1 && cp->comm != l->dense && (dp = loop_find_point(*res, 1, cp->batch, l->dense))) {
        /* one worker exchanges nothing: its compressed point ties with the dense one (less
         * the compression kernels, not priced without a measurement); train it dense */
        (*res)->chosen = (long)(dp - (*res)->points);
        size_t n = strlen((*res)->why);
        snprintf((*res)->why + n, sizeof (*res)->why - n, "; dense: one worker exchanges nothing");
    }
    if (p->scaling == SCV_SCALING_THROUGHPUT && l->settled_K) { /* the policy chose, the plan predicts */
        const scv_plan_point *pt = loop_find_point(*res, l->settled_K, l->settled_B, l->dense);
        if (pt) {
            (*res)->chosen = (size_t)(pt - (*res)->points);
            snprintf((*res)->why, sizeof (*res)->why, "Or et al.'s throughput scaling settled here: %s", l->settled_why);
        }
    }
    return SCV_OK;
}
