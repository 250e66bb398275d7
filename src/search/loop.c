/*
 * loop.c - the Scavenger loop as an explicit state machine (see scv_run in scv.h):
 *
 *   WARMUP  train at the start configuration until the gradient-noise estimate is stable
 *           (B_simple of two consecutive windows agree; at most policy.warmup_max_iters);
 *   SEARCH  profile configurations (partial: the corners of the space; full: all of it)
 *           until each mean iteration time is known within policy.profile_rse; every
 *           profiled iteration is training, at the same data position;
 *   PLAN    fit the parallel and statistical models to what was measured, price every
 *           configuration, choose by the objective and bounds;
 *   TRAIN   train at the choice in segments of a share of the predicted rest;
 *   REPLAN  after a segment whose iteration time drifted more than policy.drift_tol from
 *           the plan: re-fit, re-plan, and switch only when the predicted saving exceeds
 *           switch_idle_factor x the measured switch idle + switch_remaining_share x the
 *           remaining time;
 *   DONE    the target is reached (or max epochs); outcome and learnt target stored.
 *
 * The loop trains only through the job driver and speaks only through the observer; every
 * step, measurement, evaluation and decision goes to the store as it happens, so a run
 * that was interrupted resumes in the state it stopped in.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "../model/model.h"
#include "../io/io.h"
#include "../store/store.h"
#include "progress.h"
#include "../core/util.h"
#include "../model/stoprule.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The stored targets of the job a run looks at to carry one to its own value (the newest). */
#define SCV_STORED_TARGETS_MAX 16

/* A stored run's samples up to its crossing by batch: its epochs count those at other
 * batches than its target's through a carry, whose band they take on (mix_band). */
#define STORED_MIX_MAX 8
typedef struct stored_mix {
    int batch[STORED_MIX_MAX];
    double samples[STORED_MIX_MAX];
    int n;                          /* 0: not known */
} stored_mix;

/* The target as the stored runs of the job give it. */
typedef struct stored_est {
    int done;
    scv_target_source src;          /* NOMINAL: no stored run informs this target */
    double e0, lo, hi;              /* epochs at b0 and their band (NaN: none) */
    int b0;
    double rerun_lo, rerun_hi;      /* the reruns' spread as ratios to e0 (NaN: none) */
    stored_mix mix;                 /* the stored run's samples by batch (LEARNT, CARRIED) */
    char note[sizeof ((scv_run_result *)0)->target_note];
} stored_est;

typedef struct loop {
    const scv_run_params *p;
    const scv_job_driver *d;
    const scv_run_observer *obs;
    scv_run_result *r;
    const scv_run_policy *pol;
    scv_job_info job;
    const scv_vm_type *vm;
    int vm_index;
    int train_vm;                   /* the VM type (catalog index) training segments go on: the
                                       run's own, or the decision's choice where the driver holds
                                       K VMs of it (`run --vm`, vm_place); re-plans keep it */
    int seg_vm;                     /* ... the current (or last) segment's: warm-up and search
                                       measure on the run's own */
    double rate_cpu, rate_gib;      /* memory pricing */
    scv_config_stats *cs;           /* the measurements the models are fitted to */
    size_t ncs, cs_cap, steps_cap;
    scv_run_state state;
    int K, B;                       /* the configuration trained at */
    int comm;                       /* ... its communication option (index into comms;
                                       -1: no options, dense) */
    int dense;                      /* the dense option's index (-1: no options) */
    scv_plan_comm comms[SCV_PLAN_MAX_COMMS + 1]; /* p->comms, the loop's copy: each option's
                                       t_iter_scale, measured / predicted where it trained */
    int seg_compressed;             /* the current segment trains compressed: its times are
                                       not dense measurements (the models are fitted on dense) */
    int trained_compressed;         /* some segment of this invocation did */
    int cfg_K, cfg_B;               /* ... the driver is configured for */
    int retries, rounds, decided, resumed_decision;
    int64_t retry_it;               /* the checkpoint's iteration at the last failure */
    /* progress: predicted from the plan once there is one */
    double need_iters, pred_t_iter;
    double pred_iter_factor;        /* ... its iterations relative to dense */
    int64_t iteration;              /* the latest the driver reported */
    double samples;                 /* ... and samples seen */
    double last_accuracy;
    progress prog;                  /* the learning curve, online */
    progress_pred pred;             /* its latest prediction */
    int pred_fitted;                /* ... made from pred_nev evaluations, pred_nseg segments */
    size_t pred_nev, pred_nseg;     /*   (the last ending at pred_s1 samples) and the carry */
    double pred_s1;                 /*   pred_law */
    scv_carry_law pred_law;
    double planned_x_star;          /* the prediction the plan used (re-plan when it moves) */
    double history[SCV_TARGET_WINDOW_MAX]; /* the latest target values, oldest first (a window's worth) */
    int n_history;
    scv_err sink_err;               /* a store write that failed inside the sink */
    double seg_t0, seg_t1;          /* wall clock of the current segment's first and latest iteration */
    double seg_short_ws;            /* worker-seconds the segment under way ran below its K (an
                                       elastic drop: a preemption's notice, a dropped straggler) */
    int seg_shrunk;                 /* ... it ran an iteration below its K */
    double short_usd, short_search_usd; /* what the recorded steps' K x seconds over-count for
                                       those (all, search steps'): taken off the cost; not stored,
                                       so a resumed run prices its earlier steps at their K */
    int profiling;                  /* the current segment is a search profile: its evaluations
                                       are stored but not points of the learning curve (a few
                                       dozen iterations at another batch, carried to the
                                       reference batch by the noise scale, bend the fitted
                                       slope more than they inform it) */
    int universal;                  /* --search none on a job never stored: warm-up, then the prior */
    int bs[2 * SCV_MAX_SPACE];      /* the batches planned over: the space's, and with Or et al.'s */
    size_t n_bs;                    /*   scaling the B = b K it trains at */
    int settled_K, settled_B;       /* Or et al.'s scaling: where it settled (0: not yet) */
    char settled_why[200];
    scv_perf_model prior;           /* the universal prior: medians over other jobs' models */
    int n_prior;                    /* ... over this many stored runs (0: none) */
    stored_est stored;              /* the target from stored runs of the job (stored_target:
                                       found once, the store's targets do not change while
                                       this run trains) */
    scv_calib calib;                /* the band's calibration: the corpus's curves and the
                                       store's finished runs (load_calib) */
    scv_carry carry;                /* the batch carry-over learnt from the corpus's curves of
                                       this job under its learning-rate rule, else its rule's
                                       exponent from other jobs' (NaN: none) */
    double eval_s_sum;              /* the evaluations' own times, summed, and how many: the */
    int eval_n;                     /*   plan prices them per training sample */
    int budget_warned;              /* the budget's warning share was passed (noted once) */
    int budget_stop;                /* the next segment does not fit the budget: the run stops */
    double eta_stored;              /* when the forecast was last stored (scv_now; 0: never) */
    int eval_widened;               /* the warm-up's evaluation period was widened (noted once) */
    int carry_run;                  /* carry was read from a probe, this run's or a stored
                                       run's (take_run_carry) */
    long long carry_from;           /* ... that stored run (0: this run's, read at carry_until
                                       samples) */
    double carry_until;
    int probing;                    /* the first training segment probes another batch (the
                                       decision's choice's carry is inside its band) */
    double probe_end;               /* ... until this iteration (policy.carry_probe_epochs on) */
    double plan_deadline_s, plan_budget; /* the bounds the latest plan kept (plan_bounded) */
    int probed_b;                   /* the batch probed, until the run's own carry is learnt */
    int carry_replan;               /* ... learnt since the segment's start: re-plan at its end */
    scv_straggler_rule strag_rule;  /* the current training segment's (hetero_rule) */
} loop;

/* ---- events ---- */

/* The run's time so far: the recorded steps, the idle before the current segment and its
 * iterations up to the latest (wall-clock stamps from the driver). */
static double elapsed(const loop *l)
{
    const scv_run_result *r = l->r;
    double t = r->n_steps ? r->actual_time_s : 0;
    if (isfinite(l->seg_t0) && l->seg_t1 >= l->seg_t0) {
        double prev = r->n_steps ? r->steps[r->n_steps - 1].last_end : NAN;
        t += l->seg_t1 - l->seg_t0 + (isfinite(prev) && l->seg_t0 > prev && !l->resumed_decision ? l->seg_t0 - prev : 0);
    }
    return t;
}

static double rule_lag(const loop *l);
static const scv_plan_point *find_point(const scv_plan_result *r, int K, int B, int comm);
static void carry_band(const loop *l, int B, int b0, double *lo, double *hi);
static int mix_band(const loop *l, const stored_mix *m, int B, double *cl, double *ch);
static double done_share(const loop *l, const scv_stat_model *sm);
static double switch_idle(const loop *l);

/* The plan's band of the whole target at point pt (the target's band carried to its batch),
 * less the work done: with `rest` of its pt->iterations still to go, the band's ends in
 * iterations to go (*lo <= 0: none, "up to"; *hi not finite: never). */
static void rest_band(const scv_plan_point *pt, double rest, double *lo, double *hi)
{
    *lo = rest - (1 - pt->time_lo_s / pt->time_s) * pt->iterations;
    *hi = rest + (pt->time_hi_s / pt->time_s - 1) * pt->iterations;
}

/* The time left while a probe trains (or is decided), into ev: the probe's iterations left
 * at its point's time, a switch back, and the choice's iterations for the share of the
 * target the run will not have done by the probe's end,
 *   probe_left t_probe + idle + (1 - share_done - probe_left / I_probe) I_choice t_choice
 * (I: a point's iterations to the target; its band the choice's, less that work). 0: no probe
 * (or no plan to price it). */
static int probe_left(const loop *l, scv_run_event *ev)
{
    const scv_plan_result *res = l->r->plan;
    if (!l->probing || !(l->probe_end > 0) || !res || res->chosen < 0 || l->r->relative) return 0;
    const scv_plan_point *pt = find_point(res, l->K, l->B, l->comm), *ch = &res->points[res->chosen];
    if (!pt || !(pt->iterations > 0) || !(ch->iterations > 0)) return 0;
    double left = fmax(0, l->probe_end - (double)l->iteration), T = ch->iterations, t = ch->time_s / T;
    double rest = fmax(0, 1 - done_share(l, &l->r->stat) - left / pt->iterations) * T;
    double head = left * pt->time_s / pt->iterations + switch_idle(l);
    ev->remaining_s = head + rest * t;
    if (ch->time_lo_s > 0) { /* (a top of never: none) */
        double lo, hi;
        rest_band(ch, rest, &lo, &hi);
        ev->remaining_lo_s = head + fmax(0, lo) * t;
        if (isfinite(hi)) ev->remaining_hi_s = head + fmax(0, hi) * t;
    }
    return 1;
}

/* The plan's iterations to the target at the configuration trained at are done (while
 * training goes on: the target was not reached at the predicted time). */
static int overdue(const loop *l)
{
    return l->need_iters > 0 && l->pred_t_iter > 0 && l->need_iters - (double)l->iteration <= 0;
}

/* The predicted time left to the target, into ev: the plan's (its iterations still to go at
 * the configuration trained at, the curve's band when the target came from it); once those
 * are done and training goes on, ev->overdue and the learning curve's re-estimate from this
 * point (refitted at every evaluation: on_eval), or none (NaN) until it predicts one. Never
 * zero or less while training goes on. */
static void time_left(const loop *l, scv_run_event *ev)
{
    ev->remaining_s = ev->remaining_lo_s = ev->remaining_hi_s = NAN;
    ev->overdue = 0;
    ev->relative = l->r->relative; /* a nominal plan's time left is nominal too */
    if (probe_left(l, ev)) return;
    if (!(l->need_iters > 0 && l->pred_t_iter > 0)) return;
    const progress_pred *pr = &l->pred;
    const scv_plan_point *pt;
    double rest = l->need_iters - (double)l->iteration;
    if (rest > 0) {
        ev->remaining_s = rest * l->pred_t_iter;
        if (l->r->target_source == SCV_TARGET_CURVE && pr->ok && pr->x_star > pr->x_now) {
            /* the band of the reference samples still to go, carried to the batch trained at */
            double r = pr->x_star - pr->x_now, lo = (pr->lo - pr->x_now) / r, hi = fmax(0, pr->hi - pr->x_now) / r;
            carry_band(l, l->B, pr->b_ref, &lo, &hi); /* (lo <= 0 stays: the log is not finite) */
            if (lo > 0) ev->remaining_lo_s = ev->remaining_s * lo; /* else none: "up to" */
            ev->remaining_hi_s = ev->remaining_s * hi;
        } else if ((pt = find_point(l->r->plan, l->K, l->B, l->comm)) && pt->time_s > 0 && pt->time_lo_s > 0 &&
                   pt->iterations > 0) {
            double lo, hi;
            rest_band(pt, rest, &lo, &hi);
            if (lo > 0) ev->remaining_lo_s = lo * l->pred_t_iter; /* else none: "up to" */
            if (isfinite(hi) && hi > 0) ev->remaining_hi_s = hi * l->pred_t_iter;
        }
        return;
    }
    ev->overdue = 1;
    if (!(pr->ok && pr->reachable && scv_carry_law_known(pr->law) && isfinite(pr->x_star) && l->B > 0)) return;
    double x_now = progress_ref_samples(&l->prog, l->samples, pr->b_ref, pr->law);
    /* samples still to go at the batch trained at: to the curve's crossing, plus the lag of
     * the smoothed rule behind it (the plan adds it too) */
    double per_ref = scv_carry_samples(pr->law, 1, pr->b_ref, l->B), lag = rule_lag(l);
    double rest_s = (pr->x_star - x_now) * per_ref + lag;
    if (!(rest_s > 0)) return; /* the crossing and the lag are passed too: none until the curve moves */
    double t_sample = l->pred_iter_factor * l->pred_t_iter / l->B; /* seconds a sample costs there */
    ev->remaining_s = rest_s * t_sample;
    double lo_s = (pr->lo - x_now) * per_ref + lag, hi_s = (pr->hi - x_now) * per_ref + lag;
    if (lo_s > 0) ev->remaining_lo_s = lo_s * t_sample; /* else none: "up to" hi */
    if (isfinite(hi_s) && hi_s > 0) ev->remaining_hi_s = hi_s * t_sample;
}

static double spend_usd(const loop *l);

/* The store keeps a running run's latest forecast (the runs list, the dashboard): at each
 * plan and segment's end (force), else at an evaluation at most every ETA_STORE_MIN_S; with
 * P(reach) the latest curve's; cleared while there is none. A failed write fails nothing. */
#define ETA_STORE_MIN_S 1.0
static void store_eta(loop *l, const scv_run_event *ev, int force)
{
    double now = scv_now();
    int none = !isfinite(ev->remaining_s) && !ev->overdue;
    if ((!force && now - l->eta_stored < ETA_STORE_MIN_S) || (none && !l->eta_stored)) return;
    l->eta_stored = now;
    int curve = l->r->target_source == SCV_TARGET_CURVE && l->pred.ok;
    struct scv_run_eta e = {.remaining_s = ev->remaining_s, .remaining_lo_s = ev->remaining_lo_s,
                            .remaining_hi_s = ev->remaining_hi_s, .p_reach = curve ? l->pred.p_reach : NAN,
                            .overdue = ev->overdue, .nominal = ev->relative};
    scv_store_run_eta(l->p->store, l->r->run_id, none ? NULL : &e, NULL);
}

static void emit(loop *l, scv_run_event ev)
{
    int observed = l->obs && l->obs->on_event;
    if (!observed && ev.kind != SCV_EV_EVAL) return;
    ev.state = l->state;
    ev.elapsed_s = elapsed(l);
    ev.spent_usd = spend_usd(l);
    time_left(l, &ev);
    if (ev.kind == SCV_EV_EVAL) store_eta(l, &ev, 0);
    if (observed) l->obs->on_event(l->obs->ctx, &ev);
}

static void predict_target(loop *l);
static void note(loop *l, scv_run_event_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(loop *l, scv_run_event_kind kind, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    emit(l, (scv_run_event){.kind = kind, .workers = l->K, .batch = l->B, .text = text});
}

static int set_state(loop *l, scv_run_state s, scv_err *err)
{
    l->state = s;
    emit(l, (scv_run_event){.kind = SCV_EV_STATE, .workers = l->K, .batch = l->B});
    return scv_store_run_state(l->p->store, l->r->run_id, scv_run_state_name(s), err);
}

/* ---- the target ---- */

static scv_metric metric_of(const scv_run_params *p)
{
    return p->target_loss > 0 ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY;
}

static double target_value(const scv_run_params *p)
{
    return p->target_loss > 0 ? p->target_loss : p->target_accuracy;
}

/* An evaluation's value of the target's metric (NaN: not measured), and where on the
 * learning curve it stands: a test accuracy where it was evaluated, a period-mean training
 * loss at its period's middle. */
static double target_y(const loop *l, const scv_eval_sample *e)
{
    return metric_of(l->p) == SCV_METRIC_LOSS ? e->train_loss : e->accuracy;
}

static double target_x(const loop *l, const scv_eval_sample *e)
{
    return metric_of(l->p) == SCV_METRIC_LOSS ? e->samples_seen - 0.5 * e->train_loss_samples : e->samples_seen;
}

/* Samples by which the smoothed target rule trails the learning curve's crossing while
 * training: the rule is checked every eval period D (samples) on the mean of the last W
 * values, which stands about (W - 1) D / 2 behind the last evaluation (accuracy) or W D / 2
 * (period-mean losses, each D / 2 behind its evaluation), and the crossing falls on average
 * D / 2 before the evaluation that sees it. */
static double rule_lag(const loop *l)
{
    double D = l->pol->eval_every_epochs * l->job.n_train, W = l->pol->target_window > 1 ? l->pol->target_window : 1;
    if (!(D > 0)) return 0;
    return metric_of(l->p) == SCV_METRIC_LOSS ? (W + 1) * D / 2 : W * D / 2;
}

/* The target's epochs are a learning curve's own crossing, which this run's smoothed rule
 * trails by rule_lag: this run's curve fitted, a stored run's fitted and extrapolated, or read
 * off its evaluations where the rule fired (window_crossing). Not a given target (the
 * user's epochs are the rule's) nor a nominal one. */
static int curve_crossing(scv_target_source s)
{
    return s != SCV_TARGET_GIVEN && s != SCV_TARGET_NOMINAL;
}

/* Where a learning curve crossed the target, read off evaluations ev whose smoothed rule
 * (window W) fired at evaluation i, in that run's own samples (scv_stoprule_crossing, on the
 * places of the values the rule held: the finite ones). A stored run evaluates more densely
 * while it searches or probes, so its rule fired closer to its curve than this run's will at
 * its training period (bench decide: LeNet's accuracy crossed in a probe evaluated every
 * 0.1 epochs, 0.15 epochs behind, where the period of 0.25 trails by 0.375). Never past the
 * evaluation that saw it (evaluations out of order after a retry's rewind). */
static double window_crossing(const loop *l, const scv_eval_sample *ev, size_t i, int W)
{
    double place[SCV_TARGET_WINDOW_MAX + 1];
    int n = 0;
    for (size_t k = i + 1; k-- > 0 && n <= W && n <= SCV_TARGET_WINDOW_MAX;)
        if (isfinite(target_y(l, &ev[k]))) place[n++] = target_x(l, &ev[k]);
    double x = scv_stoprule_crossing(place, n, W);
    return isfinite(x) ? fmin(x, ev[i].samples_seen) : ev[i].samples_seen;
}

static void history_push(loop *l, double y)
{
    if (!isfinite(y)) return;
    if (l->n_history == (int)(sizeof l->history / sizeof l->history[0]))
        memmove(l->history, l->history + 1, sizeof l->history - sizeof l->history[0]), l->n_history--;
    l->history[l->n_history++] = y;
}

/* The learning curve of a stored run (this one resumed, or an earlier run of the job): its
 * steps' segments, and its evaluations as points of g (a search profile's are not curve
 * points); every evaluation, oldest first, in *ev (malloc'ed; the target rule sees them all). */
static int stored_curve(const loop *l, long long run, const scv_run_step *steps, size_t n_steps, progress *g,
                        scv_eval_sample **ev, size_t *n, scv_err *err)
{
    double samples = 0;
    int rc;
    for (size_t i = 0; i < n_steps; i++) {
        if ((rc = progress_segment(g, samples, steps[i].batch))) return scv_err_set(err, rc, "out of memory");
        samples += (double)steps[i].iterations * steps[i].batch;
        progress_advance(g, samples);
    }
    if ((rc = scv_store_load_evals(l->p->store, run, ev, n, err))) return rc;
    for (size_t i = 0, k = 0; i < *n; i++) {
        double end = 0; /* the step this evaluation fell in */
        for (k = 0; k < n_steps; k++) {
            end += (double)steps[k].iterations * steps[k].batch;
            if ((*ev)[i].samples_seen <= end + 0.5) break;
        }
        if (k == n_steps || strcmp(steps[k].phase, "search"))
            progress_eval_add(g, target_x(l, &(*ev)[i]), target_y(l, &(*ev)[i]));
    }
    return SCV_OK;
}

/* ---- measurements ---- */

static int keep_measurement(loop *l, const scv_config_stats *s, scv_err *err)
{
    for (size_t i = 0; i < l->ncs; i++)
        if (l->cs[i].workers == s->workers && l->cs[i].batch == s->batch) {
            l->cs[i] = *s; /* the latest measurement of a configuration replaces the older */
            return SCV_OK;
        }
    if (l->ncs == l->cs_cap) {
        size_t cap = l->cs_cap ? 2 * l->cs_cap : 16;
        scv_config_stats *n = realloc(l->cs, cap * sizeof *n);
        if (!n) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        l->cs = n, l->cs_cap = cap;
    }
    l->cs[l->ncs++] = *s;
    return SCV_OK;
}

static int measured(const loop *l, int K, int B)
{
    for (size_t i = 0; i < l->ncs; i++)
        if (l->cs[i].workers == K && l->cs[i].batch == B) return 1;
    return 0;
}

/* The hourly price of one VM of type vm (a catalog index) at (K, B) under the run's pricing
 * (memory pricing at the run's provider's rates, as the plan prices every type). */
static double price_at(const loop *l, int vm, int K, int B)
{
    return scv_vm_price(&l->p->catalog->vms[vm], l->p->pricing, scv_worker_mem_bytes(&l->job, (double)B / K),
                        l->rate_cpu, l->rate_gib);
}

/* The catalog index of the type a step trained on (its vm; "" or not in the catalog: the run's). */
static int step_vm(const loop *l, const scv_run_step *t)
{
    const scv_vm_type *v = t->vm[0] ? scv_catalog_find(l->p->catalog, t->vm) : NULL;
    return v ? (int)(v - l->p->catalog->vms) : l->vm_index;
}

/* A recorded step's seconds (its iterations' span and the idle before it) and cost. */
static double step_seconds(const scv_run_step *t)
{
    return (t->iterations ? t->last_end - t->first_start : 0) + (isfinite(t->idle_before) ? t->idle_before : 0);
}

static double step_cost(const loop *l, const scv_run_step *t)
{
    return scv_cost_usd(t->workers, step_seconds(t), price_at(l, step_vm(l, t), t->workers, t->batch));
}

/* Outcome figures of the steps so far: one source for the progress, the store and the report. */
static void tally(loop *l)
{
    scv_run_result *r = l->r;
    double idles[1024];
    int nid = 0;
    r->actual_time_s = r->actual_cost = r->search_time_s = r->search_cost = 0;
    r->switches = 0;
    r->relaunches = r->n_steps ? (int)r->n_steps - 1 : 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        const scv_run_step *t = &r->steps[i];
        double secs = step_seconds(t), c = step_cost(l, t);
        r->actual_time_s += secs;
        r->actual_cost += c;
        if (strcmp(t->phase, "train")) r->search_time_s += secs, r->search_cost += c;
        if (i > 0 && (t->workers != r->steps[i - 1].workers || t->batch != r->steps[i - 1].batch ||
                      step_vm(l, t) != step_vm(l, &r->steps[i - 1]))) {
            r->switches++;
            if (isfinite(t->idle_before) && nid < 1024) idles[nid++] = t->idle_before;
        }
    }
    for (int i = 1; i < nid; i++) /* insertion sort: a handful of values */
        for (int j = i; j > 0 && idles[j] < idles[j - 1]; j--) {
            double x = idles[j];
            idles[j] = idles[j - 1], idles[j - 1] = x;
        }
    /* the overhead: search steps at what the final configuration would have taken for their
     * samples, and every idle between steps that is not the first's */
    const scv_run_step *fin = NULL;
    for (size_t i = r->n_steps; i-- > 0 && !fin;)
        if (!strcmp(r->steps[i].phase, "train") && isfinite(r->steps[i].t_iter) && r->steps[i].batch > 0) fin = &r->steps[i];
    r->overhead_s = fin ? 0 : NAN;
    for (size_t i = 0; fin && i < r->n_steps; i++) {
        const scv_run_step *t = &r->steps[i];
        if (i > 0 && isfinite(t->idle_before)) r->overhead_s += t->idle_before;
        if (strcmp(t->phase, "train") && t->iterations)
            r->overhead_s += t->last_end - t->first_start - (double)t->iterations * t->batch * fin->t_iter / fin->batch;
    }
    r->actual_cost -= l->short_usd, r->search_cost -= l->short_search_usd; /* the workers an elastic drop took */
    r->idle_median_s = nid ? idles[nid / 2] : NAN;
    r->idle_worst_s = nid ? idles[nid - 1] : NAN;
    r->price_hr = l->K ? price_at(l, l->seg_vm, l->K, l->B) : NAN;
}

/* The idle a switch costs: the mean measured between steps, else the policy's default. */
static double switch_idle(const loop *l)
{
    double sum = 0;
    int n = 0;
    for (size_t i = 1; i < l->r->n_steps; i++)
        if (isfinite(l->r->steps[i].idle_before)) sum += l->r->steps[i].idle_before, n++;
    return n ? sum / n : l->pol->switch_idle_default_s;
}

/* ---- the sink: measurements as the driver delivers them ---- */

/* Prices the segment under way at the K each iteration ran at: the time since the previous
 * iteration's end (the first: its own t_iter) at fewer workers than configured is counted in
 * seg_short_ws; at the segment's end shortfall_to_steps moves it into the cost taken off. */
static void shortfall_iter(loop *l, const scv_iter_sample *s)
{
    double from = isfinite(l->seg_t1) ? l->seg_t1 : s->wall_end - s->t_iter;
    if (s->workers > 0 && s->workers < l->K) {
        l->seg_shrunk = 1;
        if (s->wall_end > from) l->seg_short_ws += (l->K - s->workers) * (s->wall_end - from);
    }
}

/* The ended segment's shortfall, priced at its VM's rate, moved to the recorded steps'. */
static void shortfall_to_steps(loop *l, const char *phase, int K, int B)
{
    double usd = scv_cost_usd(1, l->seg_short_ws, price_at(l, l->seg_vm, K, B));
    if (isfinite(usd) && usd > 0) {
        l->short_usd += usd;
        if (strcmp(phase, "train")) l->short_search_usd += usd;
    }
    l->seg_short_ws = 0;
}

static void on_iter(void *ctx, const scv_iter_sample *s)
{
    loop *l = ctx;
    l->iteration = s->iteration;
    l->samples = s->samples_seen;
    shortfall_iter(l, s);
    if (!isfinite(l->seg_t0)) l->seg_t0 = s->wall_end - s->t_iter;
    l->seg_t1 = s->wall_end;
    progress_advance(&l->prog, s->samples_seen);
    emit(l, (scv_run_event){.kind = SCV_EV_ITER, .workers = s->workers, .batch = s->batch, .iter = s});
}

static void predict_progress(loop *l);
static void record_forecast(loop *l, int force_store);
static void try_run_carry(loop *l, int final);

/* A training segment's evaluation refits the learning curve and re-forecasts the time left
 * when the target came from this run's curve (the progress line, the runs list, the
 * dashboard and the result's forecasts follow every evaluation, not only each plan); not in
 * a probe, whose configuration the run leaves at its end, nor after it until the run has
 * read its carry from it (the curve back at the choice's batch jumps by the probe's level
 * meanwhile: LeNet's loss forecast 81, 30 and 110 s there, the run took 50 s). */
static int live_forecast(const loop *l)
{
    return l->decided && !l->probing && !l->probed_b && l->r->plan && l->r->target_source == SCV_TARGET_CURVE;
}

static void on_eval(void *ctx, const scv_eval_sample *e)
{
    loop *l = ctx;
    l->last_accuracy = e->accuracy;
    if (e->seconds > 0 && isfinite(e->seconds)) l->eval_s_sum += e->seconds, l->eval_n++;
    if (!l->profiling) progress_eval_add(&l->prog, target_x(l, e), target_y(l, e)); /* out of order or NaN: ignored */
    history_push(l, target_y(l, e));
    if (!l->profiling) {
        if (!l->probing) try_run_carry(l, 0);
        if (live_forecast(l)) { /* the curve refitted: the time left follows it */
            predict_target(l);
            predict_progress(l);
            record_forecast(l, 0); /* the store's copy rate-limited (store_eta) */
        } else if (overdue(l)) {
            predict_target(l); /* the time left, re-estimated (emit) */
        }
    }
    if (!l->sink_err.code) /* the sink cannot fail the segment: it is failed when it returns */
        scv_store_eval(l->p->store, l->r->run_id, l->K, l->B, e, &l->sink_err);
    emit(l, (scv_run_event){.kind = SCV_EV_EVAL, .workers = l->K, .batch = l->B, .eval = e});
}

/* Records a segment the driver trained: the step, its measurement, the switch before it. */
/* Closes a memory stream of JSON (open_memstream(buf, ...)) and stores it as the run's model
 * row of this kind; a failed stream is SCV_ENOMEM. Frees *buf. */
static int store_memstream(loop *l, const char *kind, FILE *f, char **buf, scv_err *err)
{
    int bad = ferror(f);
    if (fclose(f) || bad || !*buf) {
        free(*buf);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    int rc = scv_store_model(l->p->store, l->r->run_id, kind, *buf, err);
    free(*buf);
    return rc;
}

/* Dynamic batching: a segment's adjustments and final shares, into the report and the store
 * (models kind "dynbatch": {"step", "workers", "batch", "rebalances", "shares"}). */
static int record_shares(loop *l, int step, int K, int B, const scv_segment_result *res, scv_err *err)
{
    scv_run_result *r = l->r;
    r->rebalances += res->rebalances;
    r->n_shares = res->n_shares;
    memcpy(r->shares, res->shares, sizeof(double) * (size_t)res->n_shares);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    fprintf(f, "{\"step\":%d,\"workers\":%d,\"batch\":%d,\"rebalances\":%d,\"shares\":[", step, K, B,
            res->rebalances);
    for (int k = 0; k < res->n_shares; k++) fprintf(f, "%s%.5f", k ? "," : "", res->shares[k]);
    fputs("]}", f);
    return store_memstream(l, "dynbatch", f, &buf, err);
}

static int record_step(loop *l, const char *phase, int K, int B, const scv_segment_result *rs, scv_run_step **out,
                       scv_err *err)
{
    scv_run_result *r = l->r;
    const scv_segment_result res = *rs;
    int rc;
    if (r->n_steps == l->steps_cap) {
        size_t cap = l->steps_cap ? 2 * l->steps_cap : 16;
        scv_run_step *n = realloc(r->steps, cap * sizeof *n);
        if (!n) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        r->steps = n, l->steps_cap = cap;
    }
    scv_run_step *t = &r->steps[r->n_steps];
    memset(t, 0, sizeof *t);
    snprintf(t->phase, sizeof t->phase, "%s", phase);
    snprintf(t->vm, sizeof t->vm, "%s", l->p->catalog->vms[l->seg_vm].name);
    t->workers = K, t->batch = B, t->iterations = res.iterations;
    t->first_start = res.first_start, t->last_end = res.last_end;
    t->t_iter = res.stats.workers ? res.stats.t_iter : NAN;
    t->accuracy = res.accuracy, t->reached = res.reached;
    t->idle_before = 0;
    if (r->n_steps) {
        const scv_run_step *prev = &r->steps[r->n_steps - 1];
        t->idle_before = res.iterations && prev->iterations ? t->first_start - prev->last_end : NAN;
        if (l->resumed_decision || (t->idle_before < 0)) t->idle_before = NAN; /* across a resume:
                                                    not the loop's idle */
        l->resumed_decision = 0;
    }
    r->n_steps++;
    shortfall_to_steps(l, phase, K, B);
    l->seg_t0 = l->seg_t1 = NAN;
    l->iteration = res.total_iterations;
    l->samples = res.samples_seen;
    progress_advance(&l->prog, res.samples_seen);
    r->epochs = l->job.n_train > 0 ? res.samples_seen / l->job.n_train : NAN;
    if (isfinite(res.accuracy)) r->accuracy = res.accuracy;
    tally(l);
    if ((rc = scv_store_step(l->p->store, r->run_id, (int)r->n_steps - 1, t, err))) return rc;
    int mixed = 0; /* the segment trained more than one cluster or K */
    for (int i = 0; i < res.n_stragglers; i++) {
        const scv_straggler_event *e = &res.stragglers[i];
        scv_straggler_event *n = realloc(r->stragglers, (r->n_stragglers + 1) * sizeof *n);
        if (!n) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        r->stragglers = n;
        r->stragglers[r->n_stragglers++] = *e;
        mixed |= e->replaced || e->dropped; /* a drop too: K and K - 1 in one segment */
        if ((rc = scv_store_straggler(l->p->store, r->run_id, e, err))) return rc;
    }
    if (res.n_preemptions > 0) { /* survived in place: the segment trained at more than one K */
        scv_survive_event *n = realloc(r->preemptions, (r->n_preemptions + (size_t)res.n_preemptions) * sizeof *n);
        if (!n) return scv_err_set(err, SCV_ENOMEM, "out of memory");
        r->preemptions = n;
        memcpy(r->preemptions + r->n_preemptions, res.preemptions, (size_t)res.n_preemptions * sizeof *n);
        r->n_preemptions += (size_t)res.n_preemptions;
        mixed = 1;
    }
    if (res.n_shares > 0 && (rc = record_shares(l, (int)r->n_steps - 1, K, B, &res, err))) return rc;
    /* a segment whose straggler was replaced or dropped, or that shrank or grew at a
     * preemption, mixed clusters: its times stand for none of them; one on another VM type
     * than the run's is not a measurement of the type the models are fitted on */
    if (res.stats.workers && !mixed && !l->seg_compressed && l->seg_vm == l->vm_index) {
        if ((rc = scv_store_measurement(l->p->store, r->run_id, phase, &res.stats, err))) return rc;
        if ((rc = keep_measurement(l, &res.stats, err))) return rc;
    }
    if (r->n_steps > 1) {
        const scv_run_step *prev = &r->steps[r->n_steps - 2];
        if ((prev->workers != K || prev->batch != B) &&
            (rc = scv_store_switch(l->p->store, r->run_id, prev->workers, prev->batch, K, B, t->idle_before, err)))
            return rc;
    }
    if (res.reached) r->reached = 1;
    if (out) *out = t;
    return SCV_OK;
}

/* ---- one segment ---- */


/* The run's cost so far: the recorded steps (with their idle) and the segment under way. */
static double spend_usd(const loop *l)
{
    double c = 0;
    for (size_t i = 0; i < l->r->n_steps; i++) c += step_cost(l, &l->r->steps[i]);
    c -= l->short_usd;
    if (isfinite(l->seg_t0) && l->seg_t1 > l->seg_t0 && l->K > 0)
        c += scv_cost_usd(1, l->K * (l->seg_t1 - l->seg_t0) - l->seg_short_ws, price_at(l, l->seg_vm, l->K, l->B));
    return c;
}

static double est_t_iter(const loop *l, int K, int B);
static double eval_s_per_sample(const loop *l);

/* The evaluation period of a warm-up or search segment at (K, B) [epochs]: the policy's,
 * widened so that the evaluations cost at most search_eval_share of the segment's time once
 * one is measured (a subset's evaluation takes the same at any period; with e seconds an
 * evaluation and s seconds a training sample, D samples apart cost e / (e + D s) <= share):
 *   D >= e (1 - share) / (share s)
 * noted when it widens. */
static double search_eval_every(loop *l, int K, int B)
{
    double every = l->pol->search_eval_every_epochs, share = l->pol->search_eval_share, t = est_t_iter(l, K, B);
    if (!(share > 0) || !l->eval_n || !(t > 0) || !(l->job.n_train > 0)) return every;
    double e = l->eval_s_sum / l->eval_n, d = e * (1 - share) / (share * t / B) / l->job.n_train;
    if (d > every && !l->eval_widened) {
        l->eval_widened = 1;
        note(l, SCV_EV_NOTE, "warm-up and search evaluate every %.3g epochs, not %.3g: an evaluation takes %.3g s, "
             "kept to %.0f%% of the time", d, every, e, 100 * share);
    }
    return fmax(every, d);
}

/* The budget as a cap: the next segment at (K, B) is shortened to what the budget left
 * affords at its predicted cost (iteration time with the evaluations' share, and a switch's
 * idle), or, when not even segment_min_iters fit, not trained: the job is checkpointed and
 * the run stops (budget_stop), resumable with a larger budget. A segment whose cost cannot
 * be predicted yet (no iteration measured) trains as asked: the warm-up, bounded by
 * warmup_max_iters. Returns 1 to stop. */
static int budget_check(loop *l, const char *phase, int K, int B, scv_segment_spec *spec)
{
    const scv_run_params *p = l->p;
    double left = p->budget - spend_usd(l), price = price_at(l, l->seg_vm, K, B);
    if (!l->budget_warned && p->budget - left >= l->pol->budget_warn_share * p->budget) {
        l->budget_warned = 1;
        note(l, SCV_EV_NOTE, "budget: $%.4g spent, %.0f%% of the $%.4g cap", p->budget - left,
             100 * (p->budget - left) / p->budget, p->budget);
    }
    double t_iter = est_t_iter(l, K, B), idle = K != l->cfg_K || B != l->cfg_B ? switch_idle(l) : 0;
    if (l->seg_vm != l->vm_index) { /* another type: the plan's (extrapolated) iteration there */
        const scv_plan_point *pt = find_point(l->r->plan, K, B, l->comm);
        t_iter = pt ? pt->t_iter : NAN;
    }
    if (!(t_iter > 0) || !(price > 0)) return 0;
    t_iter += B * eval_s_per_sample(l);
    double per_iter = scv_cost_usd(K, t_iter, price), fixed = scv_cost_usd(K, idle, price);
    int64_t want = spec->until_iterations > l->iteration ? spec->until_iterations - l->iteration : 0;
    double afford = (left - fixed) / per_iter;
    if (want && afford >= (double)want) return 0;
    int64_t min_iters = l->pol->segment_min_iters > 0 ? l->pol->segment_min_iters : 1;
    if (afford >= (double)min_iters) {
        spec->until_iterations = l->iteration + (int64_t)floor(afford);
        note(l, SCV_EV_NOTE, "budget: the %s segment at K=%d, B=%d shortened to %lld iterations ($%.4g left of the "
             "$%.4g cap)", phase, K, B, (long long)floor(afford), left, p->budget);
        return 0;
    }
    l->budget_stop = 1;
    l->r->budget_next_cost = fixed + per_iter * (double)(want ? want : min_iters);
    note(l, SCV_EV_NOTE, "budget: $%.4g of the $%.4g cap spent; the next %s segment (K=%d, B=%d) would cost $%.4g: "
         "stopped, checkpointed, resumable with a larger --budget", p->budget - left, p->budget, phase, K, B,
         l->r->budget_next_cost);
    return 1;
}

/* ---- a slow worker while training: absorbed, dropped or replaced (model/hetero.c) ---- */

static double rest_iters(const loop *l, const scv_stat_model *sm, int B);

/* The measured idle of the run's stragglers dropped (dropped 1) or replaced (0): their mean,
 * NaN when none was (the model's default then). */
static double strag_idle(const loop *l, int dropped)
{
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < l->r->n_stragglers; i++) {
        const scv_straggler_event *e = &l->r->stragglers[i];
        if ((dropped ? e->dropped : e->replaced) && isfinite(e->idle_s) && e->idle_s >= 0) sum += e->idle_s, n++;
    }
    return n ? sum / n : NAN;
}

/* The model's case for a slow worker among K at B found at iteration `at` (its speed r left
 * at 1): 0 without a plan (no fitted performance model) or an estimate of the work left. */
static int hetero_case_at(const loop *l, int K, int B, int64_t at, scv_hetero_case *hc)
{
    const scv_run_result *r = l->r;
    if (K < 2 || !r->plan || r->perf.n_points < 1) return 0;
    double left = rest_iters(l, &r->stat, B) - (double)(at - l->iteration);
    if (!isfinite(left)) return 0;
    int kept = 0; /* K - 1 not under the space's smallest K: the user's bound holds for a drop too */
    for (size_t i = 0; i < l->p->n_workers; i++) kept |= l->p->workers[i] <= K - 1;
    *hc = (scv_hetero_case){.perf = &r->perf, .K = K, .B = B, .r = 1, .iters_left = fmax(0, left), .spare = 1,
                            .no_drop = !kept,
                            .balanced = l->pol->dynamic_batching, .drop_idle_s = strag_idle(l, 1),
                            .replace_idle_s = strag_idle(l, 0)};
    return 1;
}

/* A training segment's straggler rule: the run's, with the speeds under which the model
 * predicts dropping (drop_below) or, where the job has a spare VM, replacing (replace_below)
 * a slow worker finishes the work left sooner than keeping it (by_model 1); without a plan
 * the run's rule as it is (replaced whenever a spare exists, never dropped). */
static const scv_straggler_rule *hetero_rule(loop *l, int K, int B)
{
    l->strag_rule = l->pol->straggler;
    scv_hetero_case hc;
    const scv_hetero_policy pol = scv_hetero_policy_default();
    double drop, rep;
    if (hetero_case_at(l, K, B, l->iteration, &hc) && scv_hetero_thresholds(&hc, &pol, &drop, &rep, NULL) == SCV_OK)
        l->strag_rule.by_model = 1, l->strag_rule.drop_below = drop, l->strag_rule.replace_below = rep;
    return &l->strag_rule;
}

/* The model's predicted times to finish, appended to the note of each straggler the job
 * decided on by the model (at the speed it was found at, from its iteration). */
static void hetero_annotate(const loop *l, int K, int B, scv_segment_result *res)
{
    const scv_hetero_policy pol = scv_hetero_policy_default();
    for (int i = 0; i < res->n_stragglers; i++) {
        scv_straggler_event *e = &res->stragglers[i];
        scv_hetero_case hc;
        scv_hetero_pred pr;
        if (!strstr(e->note, "the model's choice") || !hetero_case_at(l, K, B, e->iteration, &hc)) continue;
        hc.r = fmin(1, scv_hetero_speed_of_ratio(e->ratio, K));
        if (scv_hetero_predict(&hc, &pol, &pr, NULL) != SCV_OK) continue;
        size_t n = strlen(e->note);
        snprintf(e->note + n, sizeof e->note - n, "; predicted to finish: absorb %.3g s, drop %.3g s, replace %.3g s",
                 pr.absorb_s, pr.drop_s, pr.replace_s);
    }
}

static int segment(loop *l, const char *phase, int K, int B, scv_segment_spec spec, scv_run_step **out,
                   scv_err *err)
{
    int rc, was_vm = l->seg_vm;
    /* the VM type: training segments at the decision's (vm_place), warm-up and search on the
     * run's own (they measure the type the models are fitted on); the driver is told it */
    l->seg_vm = !strcmp(phase, "train") ? l->train_vm : l->vm_index;
    const char *vm = l->p->catalog->vms[l->seg_vm].name;
    spec.vm_type = vm;
    if (l->p->budget > 0 && budget_check(l, phase, K, B, &spec)) {
        if ((rc = l->d->checkpoint(l->d->ctx, err))) return rc;
        return SCV_EINTR; /* unwinds to scv_run, which stops the run (budget_stop) */
    }
    if (l->obs && l->obs->stop_requested && l->obs->stop_requested(l->obs->ctx)) { /* a stop between segments */
        if ((rc = l->d->checkpoint(l->d->ctx, err))) return rc;
        return SCV_EINTR;
    }
    if (K != l->cfg_K || B != l->cfg_B || l->seg_vm != was_vm) {
        if ((K != l->cfg_K || B != l->cfg_B) && (rc = l->d->configure(l->d->ctx, K, B, NULL, err))) return rc;
        if (l->cfg_K)
            emit(l, (scv_run_event){.kind = SCV_EV_SWITCH, .phase = phase, .workers = K, .batch = B, .vm = vm});
        l->cfg_K = K, l->cfg_B = B;
    }
    l->K = K, l->B = B;
    l->profiling = !strcmp(phase, "search");
    spec.phase = phase;
    spec.target_accuracy = l->p->target_accuracy;
    spec.target_loss = l->p->target_loss;
    spec.max_epochs = l->p->max_epochs;
    int dense_evals = strcmp(phase, "train") || l->probing; /* the curve needs points early, or a probe's */
    spec.eval_every_epochs = dense_evals ? search_eval_every(l, K, B) : l->pol->eval_every_epochs;
    spec.checkpoint_every = l->pol->checkpoint_every;
    spec.eval_subset = l->pol->eval_subset;
    /* an external trainer keeps the warm-up's and the search's evaluations to their share
     * itself, before the loop has measured one (search_eval_every widens the period after) */
    spec.eval_max_share = dense_evals ? l->pol->search_eval_share : 0;
    spec.target_window = l->pol->target_window > 1 ? l->pol->target_window : 0;
    /* stragglers are looked for while training (a replacement in the middle of a profile
     * would mix two clusters in one measurement) */
    spec.straggler = !strcmp(phase, "train") && l->pol->straggler.fraction > 0 ? hetero_rule(l, K, B) : NULL;
    spec.dynamic_batching = l->pol->dynamic_batching;
    /* the chosen communication option on training segments only: warm-up and search
     * measure dense steps, which the performance model is fitted on */
    spec.comm = NULL, spec.comm_collective = SCV_COLL_AUTO;
    if (!strcmp(phase, "train") && l->comm >= 0 && l->comm != l->dense && (size_t)l->comm < l->p->n_comms &&
        l->comms[l->comm].kind != SCV_PLAN_DENSE) {
        const scv_plan_point *pt = find_point(l->r->plan, K, B, l->comm);
        scv_coll_pref c = l->comms[l->comm].collective;
        if (c == SCV_COLL_AUTO) /* the collective the plan priced (Top-k's; SelSync has none) */
            c = pt && pt->comm_coll != SCV_SPARSE_ALLGATHER ? SCV_COLL_ARTOPK : SCV_COLL_ALLGATHER;
        spec.comm = &l->comms[l->comm], spec.comm_collective = c;
    }
    l->seg_compressed = spec.comm != NULL;
    l->trained_compressed |= l->seg_compressed;
    l->seg_t0 = l->seg_t1 = NAN, l->seg_short_ws = 0;
    emit(l, (scv_run_event){.kind = SCV_EV_SEGMENT_START, .phase = phase, .workers = K, .batch = B, .vm = vm});
    scv_measure_sink sink = {.ctx = l, .on_iter = on_iter, .on_eval = on_eval};
    scv_segment_result res;
    for (;;) {
        int keep = spec.target_window > 1 ? spec.target_window - 1 : 0;
        if (keep > l->n_history) keep = l->n_history;
        spec.history = l->history + l->n_history - keep, spec.n_history = keep;
        if ((rc = progress_segment(&l->prog, l->samples, B))) return scv_err_set(err, rc, "out of memory");
        l->seg_shrunk = 0; /* (this attempt's) */
        rc = l->d->train(l->d->ctx, &spec, &sink, &res, err);
        /* SCV_EIO: the job's files cannot be written (a full disk); SCV_EINVAL: the job refused
         * the segment (its options): a retry cannot help */
        if (!rc || rc == SCV_EINTR || rc == SCV_EIO || rc == SCV_EINVAL) break;
        int64_t it;
        if (l->d->progress(l->d->ctx, &it, &l->samples, NULL) == SCV_OK) { /* redone from the checkpoint */
            /* the checkpoint moved since the last failure: those retries made progress, and
             * max_retries counts failures in a row without it */
            if (it > l->retry_it) l->retries = 0;
            l->retry_it = it;
            l->iteration = it;
            progress_rewind(&l->prog, l->samples);
        }
        if (++l->retries > l->pol->max_retries) {
            if (err) {
                char m[SCV_ERR_LEN];
                snprintf(m, sizeof m, "%s", err->msg);
                scv_err_set(err, rc, "%s (the run's %d retries are spent)", m, l->pol->max_retries);
            }
            return rc;
        }
        note(l, SCV_EV_RETRY, "%s: a worker died or the job failed; resuming from the last checkpoint (retry %d of %d)",
             err ? err->msg : "a segment failed", l->retries, l->pol->max_retries);
    }
    if (rc) return rc;
    if (l->sink_err.code) return scv_err_set(err, l->sink_err.code, "%.400s", l->sink_err.msg);
    hetero_annotate(l, K, B, &res);
    if ((rc = record_step(l, phase, K, B, &res, out, err))) return rc;
    emit(l, (scv_run_event){.kind = SCV_EV_SEGMENT_END, .phase = phase, .workers = K, .batch = B, .vm = vm,
                            .segment = &res});
    for (int i = 0; i < res.n_stragglers; i++) {
        const scv_straggler_event *e = &res.stragglers[i];
        char by[96] = "";
        if (e->replaced) snprintf(by, sizeof by, " by %s, %.2f s idle", e->by_host[0] ? e->by_host : "a spare", e->idle_s);
        note(l, SCV_EV_NOTE, "straggler: worker %d%s%s at iteration %lld, %.2f of the median's throughput: %s%s", e->worker,
             e->host[0] ? " on " : "", e->host, (long long)e->iteration, e->ratio, e->note, by);
    }
    for (int i = 0; i < res.n_preemptions; i++) {
        const scv_survive_event *e = &res.preemptions[i];
        note(l, SCV_EV_NOTE, "preemption: process %d %s at iteration %lld; training went on in place with K=%d "
             "(%.3f s idle)", e->process, e->restored ? "is back" : "had a notice", (long long)e->iteration, e->workers,
             e->idle_s);
    }
    return SCV_OK;
}

/* ---- planning ---- */

/* The stored runs whose curves calibrate the band: the newest finished ones. */
#define SCV_CALIB_STORED_RUNS 64

/* The batch carry-over of this job under its learning-rate rule, learnt from the corpus's
 * curves of it at several batches (carry.c), stated in a note; none: the measured noise
 * scale carries (carry_scale). */
static void learn_carry(loop *l, const scv_lcurve_set *set)
{
    char key[64];
    const scv_job_info *j = &l->job;
    scv_carry_job cj = {.lr = j->lr, .base_batch = j->base_batch, .lr_scaling = j->lr_scaling};
    if (!(j->lr > 0)) return;
    scv_calib_key(j->model, j->dataset, key, sizeof key);
    if (scv_carry_learn(set, key, &cj, metric_of(l->p), NULL, l->pol->band_coverage, &l->carry) != SCV_OK) {
        if (scv_carry_learn_rule(set, key, &cj, metric_of(l->p), NULL, l->pol->band_coverage, &l->carry) == SCV_OK)
            note(l, SCV_EV_NOTE, "batch carry-over: the corpus holds no curves of this job at several batches; "
                 "samples to the target carry by the measured noise scale (until one is measured, as (B/b0)^%.2f, its "
                 "learning-rate rule's exponent learnt from %d other jobs' curves); the band of the carry is that "
                 "exponent's spread over the jobs, each left out: %.0f%% band %+.2f..%+.2f, x%.2f-x%.2f at 4x the "
                 "batch", l->carry.gamma, l->carry.n_jobs, 100 * l->pol->band_coverage, l->carry.q_lo, l->carry.q_hi,
                 pow(4, l->carry.q_lo), pow(4, l->carry.q_hi));
        return;
    }
    note(l, SCV_EV_NOTE, "batch carry-over learnt from the corpus's curves of this job at %d batches under its "
         "learning-rate rule: noise scale %.0f; carried to another batch it erred %.0f%% (median, each batch left "
         "out), %.0f%% band x%.2f-x%.2f", l->carry.n_batches, l->carry.b_noise, 100 * (exp(l->carry.med_abs) - 1),
         100 * l->pol->band_coverage, exp(l->carry.q_lo), exp(l->carry.q_hi));
}

/* The band's calibration: the corpus's curves (p->curve_corpus, default the shipped
 * data/curves.jsonl, "none": none) and the finished runs of the store, each a labelled
 * example of prediction against outcome (scv_calib_add). A corpus that cannot be read is
 * an error: the run would otherwise state bands calibrated on nothing. */
static int load_calib(loop *l, scv_err *err)
{
    const scv_run_params *p = l->p;
    char buf[4096];
    const char *path = p->curve_corpus ? p->curve_corpus : scv_data_file("curves.jsonl", buf, sizeof buf);
    scv_calib_policy cp = scv_calib_policy_default();
    cp.coverage = l->pol->band_coverage;
    int rc;
    l->calib.pol = cp; /* (the build sets it too) */
    l->carry.b_noise = l->carry.gamma = l->carry.q_lo = l->carry.q_hi = NAN;
    if (strcmp(path, "none")) {
        scv_lcurve_set set = {0};
        if ((rc = scv_lcurves_load(path, &set, err))) return rc;
        rc = scv_calib_build(&set, &cp, &l->calib, err);
        if (!rc) learn_carry(l, &set);
        scv_lcurve_set_free(&set);
        if (rc) return rc;
    }
    size_t corpus[2] = {l->calib.n_curves[0], l->calib.n_curves[1]}, n_runs = 0;
    scv_run_summary *runs;
    size_t n;
    long long total;
    if (scv_store_runs_page(p->store, NULL, "done", SCV_CALIB_STORED_RUNS, 0, &runs, &n, &total, NULL) == SCV_OK) {
        for (size_t i = 0; i < n; i++) {
            scv_run_step *steps;
            size_t n_steps, n_ev;
            scv_eval_sample *ev = NULL;
            progress g = {0};
            if (runs[i].id == l->r->run_id || scv_store_load_steps(p->store, runs[i].id, &steps, &n_steps, NULL))
                continue;
            if (stored_curve(l, runs[i].id, steps, n_steps, &g, &ev, &n_ev, NULL) == SCV_OK && g.nev) {
                double *x = malloc(sizeof(double) * g.nev), *y = malloc(sizeof(double) * g.nev);
                if (x && y) {
                    for (size_t k = 0; k < g.nev; k++) x[k] = g.ev[k].samples, y[k] = g.ev[k].y;
                    size_t before = l->calib.n_examples[metric_of(p) == SCV_METRIC_LOSS];
                    scv_calib_add(&l->calib, metric_of(p), x, y, g.nev, l->job.n_train, NULL, -1, &cp, NULL);
                    n_runs += l->calib.n_examples[metric_of(p) == SCV_METRIC_LOSS] > before;
                }
                free(x), free(y);
            }
            free(ev), free(steps);
            progress_free(&g);
        }
        free(runs);
    }
    int m = metric_of(p) == SCV_METRIC_LOSS;
    note(l, SCV_EV_NOTE, "the target's band is calibrated on %zu examples: %zu curves of %s and %zu finished runs of "
         "the store", l->calib.n_examples[m], corpus[m], strcmp(path, "none") ? path : "no corpus", n_runs);
    return SCV_OK;
}

/* The universal prior: the median of each parallel-model parameter over the stored runs of
 * other jobs on this VM type (none stored: n_prior = 0). */
static void load_prior(loop *l)
{
    scv_perf_model *m;
    size_t n;
    l->n_prior = 0;
    if (scv_store_perf_models(l->p->store, l->p->vm_type, l->p->job_key, &m, &n, NULL) || !n) return;
    double *v = malloc(sizeof(double) * n);
    if (!v) {
        free(m);
        return;
    }
    double *fields[] = {&l->prior.c0, &l->prior.c1, &l->prior.alpha, &l->prior.beta};
    for (int f = 0; f < 4; f++) {
        for (size_t i = 0; i < n; i++) v[i] = f == 0 ? m[i].c0 : f == 1 ? m[i].c1 : f == 2 ? m[i].alpha : m[i].beta;
        *fields[f] = scv_median(v, n);
    }
    l->prior.topology = l->p->topology;
    l->n_prior = (int)n;
    free(v);
    free(m);
}

/* The gradient noise scale of the measurements so far (NaN without one). */
static double noise_scale(const loop *l)
{
    scv_stat_model sm;
    if (scv_stat_fit(SCV_STAT_GNS, l->cs, l->ncs, l->job.n_train, 1, l->p->batches[0], &sm, NULL)) return NAN;
    return sm.b_simple > 0 ? sm.b_simple : NAN;
}

/* How samples carry across batches: the run's own read (try_run_carry: its exponent, and
 * for the samples trained so far its rate and level), else the noise
 * scale learnt from the job's curves, else the measured one, else the rule's exponent learnt
 * from other jobs (b_noise and gamma NaN: none).
 * The measured noise scale is the run's own evidence on the job; on the decision benchmark
 * the rule's median exponent (the population's) chose worse (bench/bench.py decide). */
static scv_carry_law read_law(const loop *l, double until);

static scv_carry_law carry_law(const loop *l)
{
    const scv_carry *c = &l->carry;
    if (l->carry_run) return read_law(l, l->carry_from ? 0 : l->carry_until);
    if (isfinite(c->b_noise)) return (scv_carry_law){.b_noise = c->b_noise, .gamma = NAN};
    double bn = noise_scale(l);
    return isfinite(bn) ? (scv_carry_law){.b_noise = bn, .gamma = NAN}
                        : (scv_carry_law){.b_noise = NAN, .gamma = c->gamma};
}

/* The run's own read as a law: the exponent, and the read as measured for the samples the
 * read's run trained up to `until` (0: none; a stored run's read carries this run by its
 * exponent alone, and counts that stored run's own samples, until INFINITY). */
static scv_carry_law read_law(const loop *l, double until)
{
    const scv_carry *c = &l->carry;
    scv_carry_law law = {.b_noise = NAN, .gamma = c->gamma};
    if (until > 0)
        law.run_b0 = c->run_b0, law.run_b = c->run_b, law.run_rate = c->run_rate, law.run_level = c->run_level,
        law.run_cross0 = c->run_cross0, law.run_until = until;
    return law;
}

/* A band relative to its point (lo <= 1 <= hi, from the target's prediction at batch b0),
 * carried to batch B: widened by the carry's band from b0 to B, the two log widths added in
 * quadrature (independent errors). Unchanged without a carry whose error is measured. */
static void carry_band(const loop *l, int B, int b0, double *lo, double *hi)
{
    double ql, qh;
    scv_carry_quantiles(&l->carry, b0, B, &ql, &qh);
    if (B == b0 || !isfinite(ql) || !isfinite(qh)) return;
    double wl = log(*lo), wh = log(*hi);
    if (isfinite(wl)) *lo = exp(-sqrt(wl * wl + ql * ql * (ql < 0)));
    if (isfinite(wh)) *hi = exp(sqrt(wh * wh + qh * qh * (qh > 0)));
}

/* The band (ratios *lo, *hi to the point, the target's at b0 on entry) at batch B: for a
 * target from a stored run whose samples by batch are known, the reruns' spread with the
 * carry of its samples from their batches to B (mix_band: those at B need none, so a batch
 * it trained at is not carried twice, through b0 and back); else carry_band. */
static void stored_band(const loop *l, scv_target_source src, int B, int b0, double *lo, double *hi)
{
    const stored_est *c = &l->stored;
    double cl, ch;
    int stored = src == SCV_TARGET_LEARNT || src == SCV_TARGET_CARRIED, rerun = isfinite(c->rerun_lo);
    if (!stored || !c->mix.n || !mix_band(l, &c->mix, B, &cl, &ch)) {
        if (stored && rerun) *lo = c->rerun_lo, *hi = c->rerun_hi; /* (the target's carries its own mix) */
        carry_band(l, B, b0, lo, hi);
        return;
    }
    if (!rerun && cl == 0 && ch == 0) { /* nothing known of its spread at B: no band (not a zero one) */
        *lo = *hi = NAN;
        return;
    }
    double wl = rerun ? log(c->rerun_lo) : 0, wh = rerun ? log(c->rerun_hi) : 0;
    *lo = exp(-sqrt(wl * wl + cl * cl)), *hi = exp(sqrt(wh * wh + ch * ch));
}

/* Reference samples of the run's epoch bound: the horizon of the target's forecast. */
static double horizon(const loop *l)
{
    return l->p->max_epochs * l->job.n_train;
}

/* The carry read from a curve g (this run's, or a stored run's of the job) at batch b (a
 * probe's) against the curve of its evaluations at the batch it holds most of, b0
 * (scv_carry_shift), once that batch's curve has policy.run_min_evals evaluations after the
 * probe as well: the probe sits between them (compared with an extrapolation of the
 * warm-up's curve alone, the MLP's B=256 looked 0.07 worse in loss, where it is 0.04
 * better). 1: read into *c (*b0, *n0, *nb: the batch and the evaluations read); 0: not yet;
 * -1: the curve does not tell. */
static int carry_from_curve(const loop *l, const progress *g, int b, scv_carry *c, int *b0_out, size_t *n0_out,
                            size_t *nb_out)
{
    const scv_carry_policy cp = scv_carry_policy_default();
    /* each evaluation's batch; the curve compared against: the batch other than b with most */
    int *eb = calloc(g->nev + 1, sizeof *eb), b0 = 0, learnt = -1;
    size_t *count = calloc(g->nev + 1, sizeof *count);
    double *x0 = malloc(sizeof(double) * (4 * (g->nev + 1) + 3 * (g->nseg + 1)));
    if (!eb || !count || !x0) goto out;
    size_t best = 0;
    for (size_t i = 0; i < g->nev; i++) {
        size_t j = 0;
        eb[i] = progress_batch_at(g, g->ev[i].samples);
        while (j < i && eb[j] != eb[i]) j++; /* count[j]: the evaluations at eb[j], its first */
        if (eb[i] && eb[i] != b && ++count[j] > best) best = count[j], b0 = eb[i];
    }
    double *y0 = x0 + g->nev + 1, *xb = y0 + g->nev + 1, *yb = xb + g->nev + 1;
    size_t n0 = 0, nb = 0, after = 0;
    /* the probe: the last segment at b with policy.run_min_evals evaluations at b0 after it (a
     * search's before it is not read, nor a later stretch at b after a switch); the segments'
     * rates relative to b0: at b the one read, at another batch the carry in force */
    double start = NAN, end = NAN, *s0 = yb + g->nev + 1, *s1 = s0 + g->nseg + 1, *rate = s1 + g->nseg + 1;
    scv_carry_law law = carry_law(l);
    for (size_t k = 0; k < g->nseg; k++) {
        int sb = g->seg[k].batch;
        size_t later = 0;
        for (size_t i = 0; sb == b && i < g->nev; i++) later += eb[i] == b0 && g->ev[i].samples > g->seg[k].s1;
        if (sb == b && later >= (size_t)cp.run_min_evals) start = g->seg[k].s0, end = g->seg[k].s1, after = later;
        s0[k] = g->seg[k].s0, s1[k] = g->seg[k].s1;
        double f = sb == b0 ? 1 : 1 / scv_carry_samples(law, 1, b0, sb);
        rate[k] = sb == b ? NAN : isfinite(f) && f > 0 ? f : 1;
    }
    for (size_t i = 0; i < g->nev; i++) {
        if (eb[i] == b0) x0[n0] = g->ev[i].samples, y0[n0++] = g->ev[i].y;
        else if (g->ev[i].samples > start && g->ev[i].samples <= end) xb[nb] = g->ev[i].samples, yb[nb++] = g->ev[i].y;
    }
    if (!b0 || !isfinite(start) || after < (size_t)cp.run_min_evals) {
        learnt = 0;
        goto out;
    }
    scv_carry_run run = {.metric = metric_of(l->p), .x0 = x0, .y0 = y0, .n0 = n0, .xb = xb, .yb = yb, .nb = nb,
                         .seg_s0 = s0, .seg_s1 = s1, .seg_rate = rate, .nseg = g->nseg, .b0 = b0, .b = b,
                         .start = start, .target = target_value(l->p), .horizon = horizon(l)};
    if (scv_carry_shift(&run, &cp, l->pol->band_coverage, c) == SCV_OK) learnt = 1, *b0_out = b0, *n0_out = n0, *nb_out = nb;
out:
    free(eb);
    free(count);
    free(x0);
    return learnt;
}

/* Takes the carry read from a curve (carry_from_curve) for the rest of the run, in place of
 * the corpus's (and its band), and says so; `from`: whose curve. */
static void take_run_carry(loop *l, const scv_carry *c, int b, int b0, size_t n0, size_t nb, long long run,
                           const char *from)
{
    l->carry = *c, l->carry_run = 1, l->carry_from = run, l->carry_until = l->samples;
    note(l, SCV_EV_NOTE, "batch carry-over learnt from %s (%zu evaluations at B=%d read against the curve of %zu at "
         "B=%d: its progress at %.2fx the rate per sample, %+.4g from it): samples to the target carry as (B/b0)^%.2f, "
         "%.0f%% band of the exponent %+.2f..%+.2f (x%.2f-x%.2f at 4x the batch)", from, nb, b, n0, b0, c->run_rate,
         c->run_level, c->gamma, 100 * l->pol->band_coverage, c->q_lo, c->q_hi, pow(4, c->q_lo), pow(4, c->q_hi));
}

/* After a probe, the carry learnt from this run's own curve (carry_from_curve) once it tells:
 * tried at each evaluation and segment's end, whichever reads it first (the live forecast
 * waits for it); that it does not tell is said at a segment's end (`final`: the segment's
 * evaluations all in); a read calls for a re-plan at the segment's end (carry_replan). */
static void try_run_carry(loop *l, int final)
{
    if (!l->probed_b) return;
    scv_carry c;
    int b0 = 0, b = l->probed_b;
    size_t n0 = 0, nb = 0;
    int learnt = carry_from_curve(l, &l->prog, b, &c, &b0, &n0, &nb);
    if (!learnt || (learnt < 0 && !final)) return;
    if (learnt > 0) take_run_carry(l, &c, b, b0, n0, nb, 0, "this run's own curve");
    else note(l, SCV_EV_NOTE, "the run's curve at B=%d and around it does not tell the batch carry-over: it stays as "
              "it was", b);
    l->probed_b = 0, l->carry_replan = learnt > 0;
}

/* Refits the learning curve (this run's evaluations, carried to the reference batch),
 * unless nothing it depends on moved since the last fit (a re-plan right after the check
 * that called for it would bootstrap the same curve again). */
static void predict_target(loop *l)
{
    const progress *g = &l->prog;
    scv_carry_law law = carry_law(l);
    double s1 = g->nseg ? g->seg[g->nseg - 1].s1 : 0;
    if (l->pred_fitted && l->pred_nev == g->nev && l->pred_nseg == g->nseg && l->pred_s1 == s1 &&
        scv_carry_law_same(l->pred_law, law))
        return;
    char key[64];
    progress_predict(g, metric_of(l->p), target_value(l->p), l->p->batches[0], law, l->pol->seed, &l->calib,
                     l->job.n_train, scv_calib_key(l->job.model, l->job.dataset, key, sizeof key), horizon(l), &l->pred);
    l->pred_fitted = 1, l->pred_nev = g->nev, l->pred_nseg = g->nseg, l->pred_s1 = s1, l->pred_law = law;
}

/* The gradient noise scale of a stored run's measurements (the latest of each
 * configuration, as noise_scale fits this run's; NaN without one). */
static double stored_noise_scale(const loop *l, long long run)
{
    scv_config_stats *cs;
    size_t n, m = 0;
    if (scv_store_run_measurements(l->p->store, run, &cs, &n, NULL)) return NAN;
    for (size_t i = 0; i < n; i++) { /* rows oldest first: a later one replaces an earlier */
        size_t j = 0;
        while (j < m && !(cs[j].workers == cs[i].workers && cs[j].batch == cs[i].batch)) j++;
        cs[j] = cs[i];
        if (j == m) m++;
    }
    scv_stat_model sm;
    int rc = m ? scv_stat_fit(SCV_STAT_GNS, cs, m, l->job.n_train, 1, l->p->batches[0], &sm, NULL) : SCV_EINVAL;
    free(cs);
    return !rc && sm.b_simple > 0 ? sm.b_simple : NAN;
}

static void stored_mix_of(const progress *g, double seen, stored_mix *m)
{
    *m = (stored_mix){0};
    for (size_t i = 0; i < g->nseg; i++) {
        double n = fmin(seen, g->seg[i].s1) - g->seg[i].s0;
        int k = 0;
        if (!(n > 0)) continue;
        while (k < m->n && m->batch[k] != g->seg[i].batch) k++;
        if (k == STORED_MIX_MAX) { /* more batches than kept: not known */
            m->n = 0;
            return;
        }
        if (k == m->n) m->batch[m->n++] = g->seg[i].batch;
        m->samples[k] += n;
    }
}

/* The band, as log ratios, that carrying a stored run's samples (m) to batch B adds to its
 * epochs there: with a share w_s at batch b_s, the ratio sum_s w_s exp(q_s) at the carry's
 * quantiles q_s from b_s to B (0 at B itself), each side kept on its side of the point (as
 * carry_band). 0 when m or a quantile is not known. */
static int mix_band(const loop *l, const stored_mix *m, int B, double *cl, double *ch)
{
    double all = 0, lo = 0, hi = 0;
    *cl = *ch = 0;
    for (int k = 0; k < m->n; k++) all += m->samples[k];
    if (!(all > 0)) return 0;
    for (int k = 0; k < m->n; k++) {
        double ql, qh, w = m->samples[k] / all;
        scv_carry_quantiles(&l->carry, m->batch[k], B, &ql, &qh);
        if (!isfinite(ql) || !isfinite(qh)) return 0;
        lo += w * exp(ql), hi += w * exp(qh);
    }
    *cl = fmin(0, log(lo)), *ch = fmax(0, log(hi));
    return 1;
}

/* The share of m's samples at batches other than B (0..1). */
static double mix_carried(const stored_mix *m, int B)
{
    double all = 0, at = 0;
    for (int k = 0; k < m->n; k++) all += m->samples[k], at += m->batch[k] == B ? m->samples[k] : 0;
    return all > 0 ? 1 - at / all : 0;
}

/* What one stored run says about this run's target: where its curve crossed it
 * (window_crossing, at the evaluation where this run's target rule fired on its evaluations
 * in order as the run saw them), in reference samples at its target's batch (as
 * scv_store_set_target counted its own: samples at other batches carried by its noise
 * scale); else, with extrapolate, its learning curve fitted and extrapolated to this target
 * (pr). *x is NaN when its evaluations do not cross. */
static int stored_crossing(loop *l, const scv_stored_target *t, int extrapolate, double *x, progress_pred *pr,
                           stored_mix *mix)
{
    const scv_run_params *p = l->p;
    *x = NAN;
    if (mix) *mix = (stored_mix){0};
    memset(pr, 0, sizeof *pr);
    snprintf(pr->why, sizeof pr->why, "no evaluations stored");
    scv_run_step *steps;
    size_t n_steps, n_ev;
    scv_eval_sample *ev = NULL;
    progress g = {0};
    if (scv_store_load_steps(p->store, t->run, &steps, &n_steps, NULL)) return SCV_EIO;
    int rc = stored_curve(l, t->run, steps, n_steps, &g, &ev, &n_ev, NULL);
    free(steps);
    if (!rc) {
        /* as carry_law (the carry read from a probe first), the stored run's own noise scale
         * before this run's */
        scv_carry_law law = !l->carry_run ? (scv_carry_law){.b_noise = l->carry.b_noise, .gamma = NAN}
                            : read_law(l, l->carry_from == t->run ? INFINITY : 0);
        if (!scv_carry_law_known(law)) law.b_noise = stored_noise_scale(l, t->run);
        if (!scv_carry_law_known(law)) law = carry_law(l);
        if (!scv_carry_law_known(law)) law.b_noise = INFINITY; /* none: samples count the same at any batch */
        scv_stoprule_spec rs = {.window = l->pol->target_window};
        if (metric_of(p) == SCV_METRIC_LOSS) rs.target_loss = target_value(p);
        else rs.target_accuracy = target_value(p);
        scv_stoprule rule;
        scv_stoprule_init(&rule, &rs);
        double seen = g.nseg ? g.seg[g.nseg - 1].s1 : 0; /* (the crossing's, or the run's end) */
        for (size_t i = 0; i < n_ev && isnan(*x); i++)
            if (scv_stoprule_on_evaluation(&rule, target_y(l, &ev[i])) == SCV_STOP_TARGET) {
                seen = window_crossing(l, ev, i, rule.W);
                *x = progress_crossing_samples(&g, seen, t->batch, law);
            }
        if (mix) stored_mix_of(&g, seen, mix);
        if (isnan(*x) && extrapolate) {
            char key[64];
            progress_predict(&g, metric_of(p), target_value(p), t->batch, law, l->pol->seed, &l->calib, l->job.n_train,
                             scv_calib_key(l->job.model, l->job.dataset, key, sizeof key), horizon(l), pr);
        }
    }
    free(ev);
    progress_free(&g);
    return rc;
}

/* A stored run's read, for a run that trains from its start: the exponent from the start
 * (gamma_scratch) in place of the probe's from its own point, its band widened to span the
 * probe's and, where the corpus's rule exponent is known (prior), the corpus's band too: a
 * probe reads the larger batch mid-run, and from the start its early progress differs
 * (bench decide: LeNet's loss read -0.46 from the probe, -0.33 from the start, where the
 * runs from the start measure +0.28). */
static void from_start(scv_carry *c, const scv_carry *prior)
{
    if (!isfinite(c->gamma_scratch)) return;
    double lo = fmin(c->gamma + c->q_lo, c->gamma_scratch), hi = fmax(c->gamma + c->q_hi, c->gamma_scratch);
    if (isfinite(prior->gamma) && isfinite(prior->q_lo) && isfinite(prior->q_hi))
        lo = fmin(lo, prior->gamma + prior->q_lo), hi = fmax(hi, prior->gamma + prior->q_hi);
    const double step = scv_carry_policy_default().run_gamma_step; /* the read's least half-width */
    c->gamma = c->gamma_scratch, c->q_lo = fmin(lo - c->gamma, -step), c->q_hi = fmax(hi - c->gamma, step);
}

/* The carry read from the newest stored run of the job (t: n, newest first) whose curve holds
 * a probe, a batch other than its warm-up's between two stretches at that one
 * (carry_from_curve, at this run's target): a second run plans with what the first measured
 * from its first plan on, and does not probe again. */
static void learn_stored_carry(loop *l, const scv_stored_target *t, size_t n)
{
    for (size_t i = 0; i < n && !l->carry_run; i++) {
        scv_run_step *steps;
        size_t n_steps, n_ev;
        scv_eval_sample *ev = NULL;
        progress g = {0};
        if (scv_store_load_steps(l->p->store, t[i].run, &steps, &n_steps, NULL)) continue;
        int rc = stored_curve(l, t[i].run, steps, n_steps, &g, &ev, &n_ev, NULL);
        free(steps);
        for (size_t k = 1; !rc && k < g.nseg && !l->carry_run; k++) {
            int b = g.seg[k].batch, seen = b == g.seg[0].batch;
            for (size_t j = 1; j < k; j++) seen |= g.seg[j].batch == b;
            scv_carry c;
            int b0 = 0;
            size_t n0 = 0, nb = 0;
            char from[64];
            snprintf(from, sizeof from, "stored run %lld's probe", t[i].run);
            if (!seen && carry_from_curve(l, &g, b, &c, &b0, &n0, &nb) > 0) {
                from_start(&c, &l->carry);
                take_run_carry(l, &c, b, b0, n0, nb, t[i].run, from);
            }
        }
        free(ev);
        progress_free(&g);
    }
}

/* The target from the stored runs of the job in this metric (a run to a loss target says
 * nothing of an accuracy one's epochs, nor the reverse), found once:
 *   one to the same value: its epochs (LEARNT);
 *   else the nearest value whose evaluations crossed this one: the epochs where they did
 *     (CARRIED; a run to a harder target passed this one on its way);
 *   else the nearest value's learning curve (this value's, of a run that did not reach
 *     it, first), forecast to this target when it reaches it within the epoch bound
 *     (CARRIED_CURVE);
 *   else none (NOMINAL): the stored runs do not inform this target, and a note says so
 *     (this run's own curve then; a stored curve's forecast out of reach would be fixed for
 *     the run's life, where this run's own is re-read at every evaluation).
 * A stored run's epochs to another value are never taken as they are. */
static scv_target_source stored_target(loop *l, double *e0, int *b0, double *lo, double *hi, char *text, size_t cap)
{
    const scv_run_params *p = l->p;
    stored_est *c = &l->stored;
    if (!c->done) {
        c->done = 1, c->src = SCV_TARGET_NOMINAL, c->lo = c->hi = c->rerun_lo = c->rerun_hi = NAN;
        scv_stored_target t[SCV_STORED_TARGETS_MAX];
        size_t n = 0;
        double target = target_value(p), n_train = l->job.n_train, lag = n_train > 0 ? rule_lag(l) / n_train : 0;
        scv_store_targets(p->store, p->job_key, metric_of(p), l->r->run_id, t, SCV_STORED_TARGETS_MAX, &n, NULL);
        learn_stored_carry(l, t, n);
        for (size_t i = 0; i < n && c->src == SCV_TARGET_NOMINAL; i++) /* newest first */
            if (fabs(t[i].value - target) <= 1e-9 && isfinite(t[i].epochs)) {
                c->src = SCV_TARGET_LEARNT, c->b0 = t[i].batch;
                /* its curve's crossing, counted by this run's carry (a carry read from a probe
                 * counts the run's samples at its batches anew); where its evaluations do not
                 * tell, its stored epochs (where its rule fired, by the carry it had when it
                 * finished) less this run's lag, and no less than half of them */
                double x, fired = t[i].epochs;
                progress_pred pr;
                if (!stored_crossing(l, &t[i], 0, &x, &pr, &c->mix) && n_train > 0 && x > 0) c->e0 = x / n_train;
                else c->e0 = fmax(fired - lag, 0.5 * fired);
                snprintf(c->note, sizeof c->note, "learnt from stored run %lld of the job: %.3g epochs at B=%d, + %.2g "
                         "the smoothed rule trails", t[i].run, c->e0, c->b0, lag);
            }
        const scv_stored_target *far = NULL; /* the nearest whose evaluations do not cross */
        double best = INFINITY;
        for (size_t i = 0; i < n && c->src != SCV_TARGET_LEARNT && n_train > 0; i++) {
            double x, d = fabs(t[i].value - target);
            progress_pred pr;
            stored_mix mix;
            if (d >= best || stored_crossing(l, &t[i], 0, &x, &pr, &mix)) continue;
            if (isnan(x)) {
                if (!far || d < fabs(far->value - target)) far = &t[i];
                continue;
            }
            if (!(x > 0)) continue;
            best = d, c->src = SCV_TARGET_CARRIED, c->e0 = x / n_train, c->b0 = t[i].batch, c->mix = mix;
            char own[48] = "it did not reach its own";
            if (isfinite(t[i].epochs)) snprintf(own, sizeof own, "it took %.3g to its own", t[i].epochs);
            snprintf(c->note, sizeof c->note, "stored run %lld (target %g) carried to %g through its evaluations: "
                     "%.3g epochs at B=%d, + %.2g the smoothed rule trails (%s)", t[i].run, t[i].value, target, c->e0,
                     c->b0, lag, own);
        }
        if (c->src == SCV_TARGET_NOMINAL && far) {
            double x;
            progress_pred pr;
            stored_crossing(l, far, 1, &x, &pr, NULL);
            if (pr.ok && pr.reachable) {
                c->src = SCV_TARGET_CARRIED_CURVE, c->b0 = far->batch;
                c->e0 = pr.x_star / n_train, c->lo = pr.lo / n_train, c->hi = pr.hi / n_train;
                snprintf(c->note, sizeof c->note, "stored run %lld (target %g) never reached %g: its curve (%.20s) "
                         "extrapolated, %.3g epochs at B=%d (band %.3g-%.3g)", far->run, far->value, target, pr.curve,
                         c->e0, c->b0, c->lo, c->hi);
            } else {
                note(l, SCV_EV_NOTE, "stored run %lld (target %g) does not inform target %g: its evaluations never "
                     "reached it and its curve %s", far->run, far->value, target,
                     !pr.ok ? pr.why : "does not reach it within the epoch bound");
            }
        }
    }
    if (c->src == SCV_TARGET_NOMINAL) return c->src;
    if ((c->src == SCV_TARGET_LEARNT || c->src == SCV_TARGET_CARRIED) && !isfinite(c->lo)) {
        /* a stored run's epochs stand for a new run's as a rerun's do: the corpus's spread;
         * and those of its samples trained at other batches count through the carry, whose
         * band they take on (mix_band; combined in quadrature, as carry_band) */
        size_t n = 0, len = strlen(c->note);
        double cl, ch, rl = NAN, rh = NAN;
        if (scv_calib_rerun_band(&l->calib, metric_of(p), c->e0, &c->lo, &c->hi, &n) == SCV_OK)
            c->rerun_lo = c->lo / c->e0, c->rerun_hi = c->hi / c->e0;
        stored_band(l, c->src, c->b0, c->b0, &rl, &rh); /* (the band any plan batch gets, at its own) */
        c->lo = c->e0 * rl, c->hi = c->e0 * rh;
        int rerun = n > 0, carried = mix_carried(&c->mix, c->b0) > 0 && mix_band(l, &c->mix, c->b0, &cl, &ch);
        char why[2][96] = {"", ""};
        if (rerun) snprintf(why[0], sizeof why[0], "the spread of %zu reruns of corpus jobs", n);
        if (carried)
            snprintf(why[1], sizeof why[1], "%s%.0f%% of its samples at other batches, carried", rerun ? ", and " : "",
                     100 * mix_carried(&c->mix, c->b0));
        if (rerun || carried)
            snprintf(c->note + len, sizeof c->note - len, " (%.0f%% band %.3g-%.3g: %s%s)", 100 * l->pol->band_coverage,
                     c->lo, c->hi, why[0], why[1]);
    }
    *e0 = c->e0, *b0 = c->b0, *lo = c->lo, *hi = c->hi;
    snprintf(text, cap, "%s", c->note);
    return c->src;
}

/* The target's epochs (at the curve's reference batch) and band from the curve's prediction
 * pr (n: samples an epoch): out of reach within the epoch bound (the median beyond it),
 * planned to the bound. */
static void curve_epochs(const progress_pred *pr, double n, double *e, double *lo, double *hi)
{
    *e = (pr->reachable ? fmin(pr->x_star, pr->horizon) : pr->horizon) / n, *lo = pr->lo / n, *hi = pr->hi / n;
}

/* The target's epochs at a batch: given, else from the stored runs of the job (learnt,
 * carried), else this run's learning curve, else nominal (a relative plan). */
static scv_target_source target_of(loop *l, double *e0, int *b0, double *lo, double *hi, char *note, size_t cap)
{
    const scv_run_params *p = l->p;
    double n = l->job.n_train;
    *lo = *hi = NAN;
    note[0] = 0;
    if (p->target_epochs > 0) {
        *e0 = p->target_epochs, *b0 = p->target_batch ? p->target_batch : p->batches[0];
        snprintf(note, cap, "given: %.3g epochs at B=%d", *e0, *b0);
        return SCV_TARGET_GIVEN;
    }
    scv_target_source src = stored_target(l, e0, b0, lo, hi, note, cap);
    if (src != SCV_TARGET_NOMINAL) return src;
    predict_target(l);
    const progress_pred *pr = &l->pred;
    if (pr->ok && n > 0) {
        curve_epochs(pr, n, e0, lo, hi);
        *b0 = pr->b_ref;
        l->planned_x_star = pr->x_star;
        char band[80], cal[48];
        snprintf(band, sizeof band, isfinite(*hi) ? "%.3g-%.3g" : "%.3g-never", *lo, *hi);
        snprintf(cal, sizeof cal, pr->calibrated ? "%.0f%% band" : "uncalibrated band", 100 * l->pol->band_coverage);
        if (pr->reachable)
            snprintf(note, cap, "learning curve (%.48s), %d evaluations: %.3g epochs at B=%d (%.20s %.24s), P(within %g "
                     "epochs) %.2f, + %.2g the smoothed rule trails", pr->curve, pr->n_evals, *e0, *b0, cal, band,
                     p->max_epochs, pr->p_reach, rule_lag(l) / n);
        else
            snprintf(note, cap, "likely out of reach: P(within %g epochs) %.2f (learning curve %.48s, %d evaluations, "
                     "%.20s %.24s epochs); by then %.4g is predicted; planned to the epoch bound", p->max_epochs, pr->p_reach,
                     pr->curve, pr->n_evals, cal, band, pr->nearest);
        return SCV_TARGET_CURVE;
    }
    *e0 = l->pol->nominal_epochs, *b0 = p->batches[0];
    snprintf(note, cap, "unknown (%.100s): times are nominal, %.3g epochs at B=%d",
             pr->ok ? "the learning curve does not reach the target" : pr->why, *e0, *b0);
    return SCV_TARGET_NOMINAL;
}

/* The periodic evaluations' seconds per training sample: their mean time as measured, one
 * every eval_every_epochs (0: none measured). */
static double eval_s_per_sample(const loop *l)
{
    double per = l->pol->eval_every_epochs * l->job.n_train;
    return l->eval_n && per > 0 ? l->eval_s_sum / l->eval_n / per : 0;
}

/* How many VMs of catalog type vm the driver can place a segment on (scv_job_info.types, from
 * its open): 0 when it holds none of it. */
static int vm_held(const loop *l, int vm)
{
    const char *name = l->p->catalog->vms[vm].name;
    for (int i = 0; i < l->job.n_types && i < SCV_JOB_MAX_TYPES; i++)
        if (!strcmp(l->job.types[i], name)) return l->job.type_vms[i];
    return 0;
}

/* The type training goes on, from the plan's choice `other` (vm_place): at the decision the
 * choice's type where the driver holds K VMs of it, else the run's own, with why (cap bytes,
 * "" when it is the choice's); re-plans keep the decision's type. */
static int vm_place(const loop *l, const scv_plan_point *other, char *why, size_t cap)
{
    const char *name = l->p->catalog->vms[other->vm].name;
    int held = vm_held(l, other->vm);
    why[0] = 0;
    if (other->vm == l->vm_index) return l->decided ? l->train_vm : l->vm_index;
    if (held >= other->workers) {
        if (!l->decided || other->vm == l->train_vm) return other->vm;
        snprintf(why, cap, "a re-plan keeps the VM type the run decided on, %s", l->p->catalog->vms[l->train_vm].name);
        return l->train_vm;
    }
    if (held)
        snprintf(why, cap, "the driver holds %d VM%s of %s, K=%d needs %d", held, held == 1 ? "" : "s", name,
                 other->workers, other->workers);
    else
        snprintf(why, cap, "the driver holds no VM of %s (only an emulated cluster with VMs of that type does: "
                 "`scavenger cluster up --vm %s:N`, then --cluster)", name, name);
    return l->decided ? l->train_vm : l->vm_index;
}

/* `run --vm`: the plan res compares the run's type (the request's first, measured) with
 * others carried from its measurements. At the decision the run moves to the chosen type
 * where the driver holds K VMs of it (its segments name the type; the models stay fitted on
 * the run's own type's measurements, which warm-up and search make); elsewhere, and at every
 * re-plan for any type but the decided one, the choice is the best of the type trained on
 * (the same request over that type alone); the reason and, at the decision, a note say which
 * type the plan chose and where the run trains. The reason counts the types compared. */
static int plan_bounded(loop *l, scv_plan_request *req, scv_plan_result **res, scv_err *err);

static int plan_types(loop *l, const scv_plan_request *req, scv_plan_result *res, scv_err *err)
{
    const scv_catalog *cat = l->p->catalog;
    const scv_plan_point other = res->points[res->chosen];
    char stay[320];
    int want = vm_place(l, &other, stay, sizeof stay);
    if (!l->decided) l->train_vm = want;
    /* on another type than the run's, K up to the VMs the driver holds of it (a re-plan may
     * choose more than the decision's) */
    int ks[SCV_MAX_SPACE], nk = 0, cap_k = want != l->vm_index ? vm_held(l, want) : INT_MAX;
    for (size_t i = 0; i < req->n_workers && nk < SCV_MAX_SPACE; i++)
        if (req->workers[i] <= cap_k) ks[nk++] = req->workers[i];
    if (other.vm == want && other.workers > cap_k)
        snprintf(stay, sizeof stay, "the driver holds %d VM%s of it", cap_k, cap_k == 1 ? "" : "s");
    if (other.vm != want || other.workers > cap_k) {
        scv_plan_request own = *req;
        own.vms = &want, own.n_vms = 1; /* (measured_vm stays the run's: the others are carried from it) */
        if (want != l->vm_index) own.workers = ks, own.n_workers = (size_t)nk;
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
            note(l, SCV_EV_NOTE, "VM type: the plan chose %s at K=%d, B=%d (%s, %s; %s) over %s's best, K=%d, B=%d "
                 "(%s, %s); the run trains on %s: %s",
                 cat->vms[other.vm].name, other.workers, other.batch, ot, oc_, scv_extrap_desc(other.extrap),
                 cat->vms[want].name, mine->workers, mine->batch, mt, mc, cat->vms[want].name, stay);
        scv_plan_result_free(o);
    } else if (want != l->vm_index && !l->decided) {
        note(l, SCV_EV_NOTE, "VM type: the plan chose %s at K=%d, B=%d (%s); the run trains there: the driver holds "
             "%d VM%s of it (warm-up and search measured %s, which the models stay fitted on; its segments on %s are "
             "priced at %s's rate)", cat->vms[want].name, other.workers, other.batch, scv_extrap_desc(other.extrap),
             vm_held(l, want), vm_held(l, want) == 1 ? "" : "s", l->vm->name, cat->vms[want].name, cat->vms[want].name);
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
                                    : l->train_vm == l->vm_index ? ": the run trains on it"
                                                                 : ": the run measures it");
    }
    free(seen);
    size_t n = strlen(res->why);
    if (n_types > 1 && n + 48 < sizeof res->why)
        snprintf(res->why + n, sizeof res->why - n, "; over %d VM types (%d extrapolated)", n_types, n_extrap);
    if (!l->decided)
        note(l, SCV_EV_NOTE, "VM types (--vm): %d planned: %s%s", n_types, list,
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
    note(l, SCV_EV_NOTE, "%s: planned %s", be.msg, what);
    return SCV_OK;
}

static int plan(loop *l, scv_plan_result **res, scv_perf_model *perf, scv_stat_model *sm, scv_err *err)
{
    const scv_run_params *p = l->p;
    scv_run_result *r = l->r;
    int rc = scv_perf_fit(l->cs, l->ncs, p->topology, 4 * l->job.n_params, perf, err);
    if (rc) return rc;
    if (l->n_prior) scv_perf_apply_prior(perf, &l->prior, l->cs, l->ncs);
    /* the target as predicted now: into the result only when the plan succeeds (a failed
     * re-plan leaves the run at its plan, and the curve's trigger armed) */
    double e0, lo, hi, planned = l->planned_x_star;
    int b0;
    char tnote[sizeof r->target_note];
    scv_target_source src = target_of(l, &e0, &b0, &lo, &hi, tnote, sizeof tnote);
    int relative = src == SCV_TARGET_NOMINAL;
    if ((rc = scv_stat_fit(p->stat, l->cs, l->ncs, l->job.n_train, e0, b0, sm, err))) {
        l->planned_x_star = planned;
        return rc;
    }
    if (curve_crossing(src)) sm->lag_epochs = rule_lag(l) / l->job.n_train;
    if (l->carry_run) /* the run's own carry, not the measured noise scale's law, across batches */
        sm->by_exponent = 1, sm->exponent = l->carry.gamma;
    /* the VM types planned: the run's own first (measured, trained on), then the others of
     * `run --vm`, carried from its measurements by the planner's stated method (docs/MODEL.md
     * "VM types without measurements"; each point says how) */
    int *vms = malloc(sizeof(int) * (p->n_vms + 1));
    size_t nv = 0;
    if (!vms) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    vms[nv++] = l->vm_index;
    for (size_t i = 0; p->vms && i < p->n_vms; i++)
        if (p->vms[i] != l->vm_index) vms[nv++] = p->vms[i];
    /* spot priced with the risk of preemption: the default rates by provider, recovery by
     * checkpoint-restart (model/spot.c; `plan` takes the user's rates) */
    scv_spot_risk risk = {.pol = NULL, .rates = NULL, .recovery = SCV_SPOT_RESTART};
    scv_plan_request req = {.catalog = p->catalog, .vms = vms, .n_vms = nv, .measured_vm = l->vm_index,
                            .workers = p->workers, .n_workers = p->n_workers, .batches = l->bs,
                            .n_batches = l->n_bs, .perf = perf, .stat = sm, .job = &l->job,
                            /* bounds on nominal times would be arbitrary: they apply from the
                             * first plan with absolute times (a re-plan once the curve knows) */
                            .deadline_s = relative ? 0 : p->deadline_s, .budget = relative ? 0 : p->budget,
                            .spent_s = elapsed(l), .spent_cost = spend_usd(l), .done_share = done_share(l, sm),
                            .eval_s_per_sample = eval_s_per_sample(l),
                            .objective = p->objective, .value_per_hour = p->value_per_hour,
                            .pricing = p->pricing, .mem_rate_cpu = l->rate_cpu, .mem_rate_gib = l->rate_gib,
                            .measured_threads = l->job.threads, .worker_threads = l->job.threads,
                            .parallel_fraction = -1, .measured = l->cs, .n_measured = l->ncs,
                            .comms = p->n_comms ? l->comms : NULL, .n_comms = p->n_comms,
                            .spot_risk = p->pricing == SCV_PRICE_SPOT ? &risk : NULL};
    rc = plan_bounded(l, &req, res, err);
    if (!rc) l->plan_deadline_s = req.deadline_s, l->plan_budget = req.budget;
    if (!rc && nv > 1 && (rc = plan_types(l, &req, *res, err))) {
        scv_plan_result_free(*res);
        *res = NULL;
    }
    free(vms);
    if (rc) {
        l->planned_x_star = planned;
        return rc;
    }
    r->target_source = src, r->relative = relative;
    snprintf(r->target_note, sizeof r->target_note, "%s", tnote);
    r->target_epochs = e0, r->target_batch = b0, r->target_epochs_lo = lo, r->target_epochs_hi = hi;
    r->target_p_reach = src == SCV_TARGET_CURVE && l->pred.ok ? l->pred.p_reach : NAN;
    r->target_nearest = src == SCV_TARGET_CURVE && l->pred.ok ? l->pred.nearest : NAN;
    scv_carry_law law = carry_law(l);
    r->carry_learnt = l->carry_run ? 3 : isfinite(l->carry.b_noise) ? 1 : isfinite(l->carry.gamma) ? 2 : 0;
    r->carry_noise_scale = law.b_noise, r->carry_gamma = l->carry.gamma;
    r->carry_q_lo = l->carry.q_lo, r->carry_q_hi = l->carry.q_hi, r->carry_err = l->carry.med_abs;
    for (size_t i = 0; !relative && e0 > 0 && isfinite(lo) && i < (*res)->n_points; i++) {
        scv_plan_point *pt = &(*res)->points[i]; /* time is proportional to the samples */
        double plo = lo / e0, phi = hi / e0;
        stored_band(l, src, pt->batch, b0, &plo, &phi);
        pt->time_lo_s = pt->time_s * plo, pt->time_hi_s = pt->time_s * phi;
    }
    const scv_plan_point *cp = &(*res)->points[(*res)->chosen], *dp;
    if (cp->workers == 1 && cp->comm != l->dense && (dp = find_point(*res, 1, cp->batch, l->dense))) {
        /* one worker exchanges nothing: its compressed point ties with the dense one (less
         * the compression kernels, not priced without a measurement); train it dense */
        (*res)->chosen = (long)(dp - (*res)->points);
        size_t n = strlen((*res)->why);
        snprintf((*res)->why + n, sizeof (*res)->why - n, "; dense: one worker exchanges nothing");
    }
    if (p->scaling == SCV_SCALING_THROUGHPUT && l->settled_K) { /* the policy chose, the plan predicts */
        const scv_plan_point *pt = find_point(*res, l->settled_K, l->settled_B, l->dense);
        if (pt) {
            (*res)->chosen = (size_t)(pt - (*res)->points);
            snprintf((*res)->why, sizeof (*res)->why, "Or et al.'s throughput scaling settled here: %s", l->settled_why);
        }
    }
    return SCV_OK;
}

/* The point of K, B and option comm on the type the run trains on: the chosen point's (plan()
 * keeps the choice on the run's type when the plan compares several, `run --vm`). */
static const scv_plan_point *find_point(const scv_plan_result *r, int K, int B, int comm)
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
static double done_share(const loop *l, const scv_stat_model *sm)
{
    int B = l->B;
    double share = 0, covered = 0;
    for (size_t i = 0; i < l->prog.nseg; i++) {
        const progress_seg *s = &l->prog.seg[i];
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
static double rest_iters(const loop *l, const scv_stat_model *sm, int B)
{
    const progress_pred *pr = &l->pred;
    if (l->r->target_source == SCV_TARGET_CURVE && pr->ok && pr->reachable) { /* from the samples trained now
                                                       (a probe's since the curve's fit among them) */
        double x_now = progress_ref_samples(&l->prog, l->samples, pr->b_ref, pr->law);
        return scv_carry_samples(pr->law, fmax(0, pr->x_star - x_now), pr->b_ref, B) / B;
    }
    return fmax(0, 1 - done_share(l, sm)) * scv_stat_iterations(sm, B);
}

/* A point's iterations relative to dense (the user's assumption for a compressed option). */
static double iter_factor(const scv_plan_point *pt)
{
    return pt && pt->comm_opt.kind != SCV_PLAN_DENSE && pt->comm_opt.iter_factor > 0 ? pt->comm_opt.iter_factor : 1;
}

/* "" dense, else " with topk:100 (allgather)" or " with selsync:0.9": the option a
 * configuration trains with. */
static const char *comm_text(const loop *l, int comm, scv_sparse_coll coll, char *buf, size_t cap)
{
    buf[0] = 0;
    if (comm < 0 || comm == l->dense || (size_t)comm >= l->p->n_comms) return buf;
    char o[64];
    scv_plan_comm_format(&l->comms[comm], o, sizeof o);
    if (l->comms[comm].kind != SCV_PLAN_TOPK || l->comms[comm].collective != SCV_COLL_AUTO)
        snprintf(buf, cap, " with %s", o);
    else snprintf(buf, cap, " with %s (%s)", o, coll == SCV_SPARSE_ALLGATHER ? "allgather" : "artopk");
    return buf;
}

/* Progress predictions for the configuration trained at. */
static void predict_progress(loop *l)
{
    const scv_plan_point *pt = find_point(l->r->plan, l->K, l->B, l->comm);
    /* an iteration's time with its share of the periodic evaluations (the plan prices them) */
    l->pred_t_iter = pt ? (pt->iterations > 0 ? pt->time_s / pt->iterations : pt->t_iter) : NAN;
    l->pred_iter_factor = iter_factor(pt);
    l->need_iters = pt ? (double)l->iteration + rest_iters(l, &l->r->stat, l->B) * iter_factor(pt) : NAN;
}

/* Keeps the forecast of now in the result (scv_run_result.forecasts) and the store's copy
 * (now when force_store, else rate-limited). */
static void record_forecast(loop *l, int force_store)
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
    time_left(l, &ev);
    store_eta(l, &ev, force_store);
    int band = !r->relative && isfinite(r->target_epochs_lo);
    double e = r->target_epochs, lo = r->target_epochs_lo, hi = r->target_epochs_hi, p = r->target_p_reach;
    const progress_pred *pr = &l->pred; /* refitted since the plan (live_forecast): the curve's now */
    if (live_forecast(l) && pr->ok && pr->reachable && l->job.n_train > 0)
        curve_epochs(pr, l->job.n_train, &e, &lo, &hi), p = pr->p_reach;
    r->forecasts[r->n_forecasts++] = (struct scv_run_forecast){
        .at_s = elapsed(l), .at_epochs = l->job.n_train > 0 ? l->samples / l->job.n_train : NAN,
        .remaining_s = r->relative ? NAN : ev.remaining_s, .remaining_lo_s = ev.remaining_lo_s,
        .remaining_hi_s = ev.remaining_hi_s, .epochs = r->relative ? NAN : e, .epochs_lo = band ? lo : NAN,
        .epochs_hi = band ? hi : NAN, .p_reach = p, .workers = l->K, .batch = l->B};
}

static int store_models(loop *l, scv_err *err)
{
    const scv_perf_model *pf = &l->r->perf;
    const scv_stat_model *sm = &l->r->stat;
    char pj[512];
    snprintf(pj, sizeof pj, "{\"c0\":%.6g,\"c1\":%.6g,\"alpha\":%.6g,\"beta\":%.6g,\"mare\":%.4g}", pf->c0, pf->c1,
             pf->alpha, pf->beta, pf->mare);
    int rc = scv_store_model(l->p->store, l->r->run_id, "perf", pj, err);
    snprintf(pj, sizeof pj, "{\"b_simple\":%.6g,\"s_min\":%.6g,\"gamma_a\":%.6g,\"gamma_s\":%.6g,\"theta\":%.6g}",
             sm->b_simple, sm->s_min, sm->gamma_a, sm->gamma_s, sm->theta);
    if (!rc) rc = scv_store_model(l->p->store, l->r->run_id, "stat", pj, err);
    const scv_run_result *r = l->r; /* the target's prediction with its band (NaN -> null) */
    char lo[32] = "null", hi[32] = "null";
    if (isfinite(r->target_epochs_lo)) snprintf(lo, sizeof lo, "%.6g", r->target_epochs_lo);
    if (isfinite(r->target_epochs_hi)) snprintf(hi, sizeof hi, "%.6g", r->target_epochs_hi);
    snprintf(pj, sizeof pj, "{\"source\":\"%s\",\"epochs\":%.6g,\"epochs_lo\":%s,\"epochs_hi\":%s,\"batch\":%d}",
             scv_target_source_name(r->target_source), r->target_epochs, lo, hi, r->target_batch);
    return rc ? rc : scv_store_model(l->p->store, l->r->run_id, "target", pj, err);
}

/* The plan's points as a models row of kind "plan" (a service draws the live trade-off from
 * it): whether times are relative, the point at the configuration trained at with its time
 * band when the learning curve gave the target, and every point (scv_plan_point_json). */
static int store_plan(loop *l, const scv_plan_result *res, scv_err *err)
{
    const scv_run_result *r = l->r;
    const scv_plan_point *ch = find_point(res, l->K, l->B, l->comm);
    if (!ch) ch = &res->points[res->chosen];
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    fprintf(f, "{\"relative\":%s", r->relative ? "true" : "false"); /* first: the runs list reads it */
    if (r->relative) fprintf(f, ",\"nominal_epochs\":%.6g,\"nominal_batch\":%d", r->target_epochs, r->target_batch);
    fputs(",\"chosen\":", f);
    scv_plan_point_json(f, l->p->catalog, ch);
    if (ch->time_lo_s > 0 && isfinite(ch->time_hi_s)) /* its band (plan) */
        fprintf(f, ",\"time_lo_s\":%.6g,\"time_hi_s\":%.6g", ch->time_lo_s, ch->time_hi_s);
    fputs(",\"points\":[", f);
    for (size_t i = 0; i < res->n_points; i++) {
        if (i) fputc(',', f);
        scv_plan_point_json(f, l->p->catalog, &res->points[i]);
    }
    fputs("]}", f);
    return store_memstream(l, "plan", f, &buf, err);
}

/* ---- the states ---- */

static void start_config(const scv_run_params *p, int *K, int *B)
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

static int spent(const loop *l);

static int do_warmup(loop *l, scv_err *err)
{
    int K, B;
    start_config(l->p, &K, &B);
    const scv_run_policy *pol = l->pol;
    scv_segment_spec spec = {.until_iterations = l->iteration + pol->warmup_max_iters,
                             .noise_window = pol->noise_window, .noise_tol = pol->noise_tol};
    int rc = segment(l, "warmup", K, B, spec, NULL, err);
    /* a warm-up that shrank or grew (a preemption survived in place) or lost a worker is no
     * measurement of (K, B): it is measured again, at most twice more */
    for (int again = 0; again < 2 && !rc && !l->r->reached && !spent(l) && !measured(l, K, B); again++) {
        note(l, SCV_EV_NOTE, "warm-up: its segment is no measurement of K=%d, B=%d (the job changed size in it); "
             "measured again", K, B);
        spec.until_iterations = l->iteration + pol->warmup_max_iters;
        rc = segment(l, "warmup", K, B, spec, NULL, err);
    }
    int need = pol->warmup_min_evals - (int)l->prog.nev;
    if (rc || l->r->reached || need <= 0 || l->p->target_epochs > 0 || !(l->job.n_train > 0) || spent(l)) return rc;
    /* the noise settled before the curve had its points: on, at the same configuration */
    double iters = ceil(need * search_eval_every(l, K, B) * l->job.n_train / B) + 1;
    if (!(iters <= pol->warmup_max_iters)) return rc; /* not within the warm-up's bound */
    scv_segment_spec more = {.until_iterations = l->iteration + (int64_t)iters};
    return segment(l, "warmup", K, B, more, NULL, err);
}

/* The configurations the search profiles, in order: those at the warm-up's K first, then
 * by K, so that K changes (the costly part of a switch for a driver that resizes in place)
 * are few; B ascending within a K. */
static size_t search_list(const scv_run_params *p, int K0, int (*cfg)[2], size_t cap)
{
    size_t n = 0;
    if (p->search == SCV_SEARCH_FULL) {
        for (size_t a = 0; a < p->n_workers; a++)
            for (size_t b = 0; b < p->n_batches && n < cap; b++) cfg[n][0] = p->workers[a], cfg[n++][1] = p->batches[b];
    } else {
        int ks[2] = {p->workers[0], p->workers[p->n_workers - 1]}, bs[2] = {p->batches[0], p->batches[p->n_batches - 1]};
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                int dup = 0;
                for (size_t q = 0; q < n; q++) dup |= cfg[q][0] == ks[a] && cfg[q][1] == bs[b];
                if (!dup && n < cap) cfg[n][0] = ks[a], cfg[n++][1] = bs[b];
            }
    }
    for (size_t i = 1; i < n; i++) /* insertion sort, stable: K0 first, then K, then B */
        for (size_t j = i; j > 0; j--) {
            int *x = cfg[j - 1], *y = cfg[j];
            int kx = x[0] != K0, ky = y[0] != K0;
            if (kx < ky || (kx == ky && (x[0] < y[0] || (x[0] == y[0] && x[1] <= y[1])))) break;
            int t0 = x[0], t1 = x[1];
            x[0] = y[0], x[1] = y[1], y[0] = t0, y[1] = t1;
        }
    return n;
}

/* Iteration time at (K, B) before a plan: the perf model once two configurations are
 * measured, else the start configuration's, scaled by the per-worker batch. */
static double est_t_iter(const loop *l, int K, int B)
{
    scv_perf_model pf;
    if (l->ncs >= 2 && scv_perf_fit(l->cs, l->ncs, l->p->topology, 4 * l->job.n_params, &pf, NULL) == SCV_OK)
        return scv_perf_iter(&pf, K, B);
    if (!l->ncs) return NAN;
    const scv_config_stats *c = &l->cs[0];
    return c->t_iter * ((double)B / K) / ((double)c->batch / c->workers);
}

/* The target as the search needs it: samples to the target at batch b0 and the noise
 * scale that carries them to other batches. Found once per decision (the learning curve's
 * bootstrap is not cheap); samples is NaN while the target is unknown. */
typedef struct target_est {
    double samples;
    scv_carry_law law;
    int b0;
    double lag;                     /* samples the target rule trails the curve (at any B) */
} target_est;

static target_est target_now(loop *l)
{
    double e0, lo, hi;
    scv_carry_law law = carry_law(l);
    int b0;
    char note[sizeof ((scv_run_result *)0)->target_note];
    if (!scv_carry_law_known(law)) law.b_noise = INFINITY;
    target_est t = {NAN, law, 0, 0};
    scv_target_source src = target_of(l, &e0, &b0, &lo, &hi, note, sizeof note);
    if (src != SCV_TARGET_NOMINAL) t.samples = e0 * l->job.n_train, t.b0 = b0;
    if (curve_crossing(src)) t.lag = rule_lag(l);
    return t;
}

/* Predicted seconds to the target from the start at (K, B), NaN while the target is unknown. */
static double est_job_time(const loop *l, const target_est *t, int K, int B)
{
    if (!isfinite(t->samples)) return NAN;
    return (scv_carry_samples(t->law, t->samples, t->b0, B) + t->lag) / B * est_t_iter(l, K, B);
}

/* The run's epochs are spent (max_epochs): nothing more to train. */
static int spent(const loop *l)
{
    return l->r->epochs >= l->p->max_epochs - 1e-9;
}

/* SEARCH: profile the policy's configurations, within the search budget (a share of the
 * predicted job time), skipping those whose predicted time to target is out of the race. */
/* Or et al.'s batch rule: the global batch of K workers at the start's per-worker batch,
 * at most the space's largest B. */
static int scaled_batch(const scv_run_params *p, int K)
{
    int K0, B0;
    start_config(p, &K0, &B0);
    long B = (long)((double)B0 / K0 * K + 0.5);
    if (B > p->batches[p->n_batches - 1]) B = p->batches[p->n_batches - 1];
    return B < K ? K : (int)B;
}

/* SEARCH under Or et al.'s throughput scaling: the space's K in order at B = b K, each
 * profiled, until an added worker brings less than scaling_threshold of a worker's
 * throughput; settles at the last K worth adding. */
static int search_throughput(loop *l, scv_err *err)
{
    const scv_run_params *p = l->p;
    const scv_run_policy *pol = l->pol;
    int rc = SCV_OK, Kp = 0, Bp = 0;
    double Tp = NAN;
    for (size_t i = 0; i < p->n_workers && !rc && !l->r->reached && !spent(l); i++) {
        int K = p->workers[i], B = scaled_batch(p, K);
        if (!measured(l, K, B)) {
            scv_segment_spec spec = {.until_iterations = l->iteration + pol->profile_max_iters,
                                     .time_rse = pol->profile_rse, .time_min_iters = pol->profile_min_iters};
            if ((rc = segment(l, "search", K, B, spec, NULL, err))) break;
            l->r->n_profiled++;
        }
        double T = NAN;
        for (size_t q = 0; q < l->ncs; q++)
            if (l->cs[q].workers == K && l->cs[q].batch == B && l->cs[q].t_iter > 0) T = B / l->cs[q].t_iter;
        if (!isfinite(T)) continue; /* too few iterations to measure it */
        if (Kp) {
            double gain = (T - Tp) / ((double)(K - Kp) * Tp / Kp);
            note(l, SCV_EV_NOTE, "throughput scaling: K=%d -> %d (B=%d -> %d): %.0f -> %.0f samples/s, %.2f of a "
                 "worker's throughput per added worker (threshold %.2f)", Kp, K, Bp, B, Tp, T, gain,
                 pol->scaling_threshold);
            if (!(gain >= pol->scaling_threshold)) {
                snprintf(l->settled_why, sizeof l->settled_why, "adding workers beyond K=%d brings %.2f of a "
                         "worker's throughput each, under %.2f", Kp, gain, pol->scaling_threshold);
                break;
            }
        }
        Kp = K, Bp = B, Tp = T;
        snprintf(l->settled_why, sizeof l->settled_why, "every added worker up to K=%d brought at least %.2f of a "
                 "worker's throughput", K, pol->scaling_threshold);
    }
    l->settled_K = Kp, l->settled_B = Bp;
    return rc;
}

/* Profiling K would measure a second worker count, the first: the parallel model fits
 * communication only from two or more (with one, every other K's iteration time is the one
 * measured scaled by its per-worker batch). */
static int second_workers(const loop *l, int K)
{
    int k1 = 0;
    for (size_t i = 0; i < l->ncs; i++) {
        if (!(l->cs[i].t_iter > 0)) continue;
        if (k1 && l->cs[i].workers != k1) return 0; /* two are measured already */
        k1 = l->cs[i].workers;
    }
    return l->p->n_workers >= 2 && K != k1;
}

static int do_search(loop *l, scv_err *err)
{
    if (l->p->scaling == SCV_SCALING_THROUGHPUT) return search_throughput(l, err);
    static const size_t CAP = SCV_MAX_SPACE * SCV_MAX_SPACE;
    int(*cfg)[2] = malloc(sizeof(int[2]) * CAP);
    if (!cfg) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int K0 = l->r->n_steps ? l->r->steps[0].workers : l->p->workers[0];
    size_t n = search_list(l->p, K0, cfg, CAP);
    int rc = SCV_OK;
    const scv_run_policy *pol = l->pol;
    scv_run_result *r = l->r;
    target_est te = target_now(l);
    double job = l->ncs ? est_job_time(l, &te, l->cs[0].workers, l->cs[0].batch) : NAN;
    r->search_budget_s = pol->search_budget_share > 0 && isfinite(job) ? pol->search_budget_share * job : NAN;
    for (size_t q = 0; q < n && !rc && !r->reached && !spent(l); q++) {
        int K = cfg[q][0], B = cfg[q][1];
        if (B < K || measured(l, K, B)) continue;
        double cost = pol->profile_min_iters * est_t_iter(l, K, B) + switch_idle(l);
        int needed = second_workers(l, K);
        if (isfinite(r->search_budget_s) && r->search_time_s + cost > r->search_budget_s) {
            if (needed) {
                note(l, SCV_EV_NOTE, "search: K=%d, B=%d profiled beyond the budget (about %.2f s, %.2f s spent of a "
                     "%.2f s budget): the plan needs iteration times at two worker counts at least, or every other "
                     "K's is extrapolated from one with its communication unknown", K, B, cost, r->search_time_s,
                     r->search_budget_s);
            } else {
                r->n_skipped_budget++;
                note(l, SCV_EV_NOTE, "search: K=%d, B=%d skipped: profiling it (about %.2f s) would exceed the "
                     "budget (%.2f s spent of a %.2f s budget)", K, B, cost, r->search_time_s, r->search_budget_s);
                continue;
            }
        }
        te = target_now(l); /* the last profile added measurements and evaluations */
        double best = INFINITY, mine = est_job_time(l, &te, K, B);
        for (size_t i = 0; i < l->ncs; i++) best = fmin(best, est_job_time(l, &te, l->cs[i].workers, l->cs[i].batch));
        if (!needed && l->ncs >= 2 && mine > pol->search_rule_out * best) {
            r->n_skipped_ruled_out++;
            note(l, SCV_EV_NOTE, "search: K=%d, B=%d skipped: predicted %.1f s to the target, over %.1fx the best "
                 "measured (%.1f s)", K, B, mine, pol->search_rule_out, best);
            continue;
        }
        scv_segment_spec spec = {.until_iterations = l->iteration + pol->profile_max_iters,
                                 .time_rse = pol->profile_rse, .time_min_iters = pol->profile_min_iters};
        rc = segment(l, "search", K, B, spec, NULL, err);
        r->n_profiled++;
    }
    free(cfg);
    return rc;
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
    const scv_plan_point *pt = find_point(r->plan, l->K, l->B, l->comm);
    r->absolute_time_s = pt ? pt->time_s : NAN;
    r->absolute_at_s = elapsed(l);
    r->absolute_at_epochs = l->job.n_train > 0 ? l->samples / l->job.n_train : NAN;
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
    start_config(l->p, &K0, &B0);
    if (!(l->pol->carry_probe_epochs > 0) || ch->batch != B0 || l->carry_run || l->r->relative ||
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
    scv_carry_quantiles(&l->carry, ch->batch, alt->batch, &ql, &qh);
    return isfinite(ql) && alt->time_s * exp(ql) < ch->time_s ? alt : NULL;
}

static int do_plan(loop *l, scv_err *err)
{
    scv_run_result *r = l->r;
    scv_plan_result *res = NULL;
    int rc = plan(l, &res, &r->perf, &r->stat, err);
    if (rc) return rc;
    set_plan(r, res);
    if (!r->decision) r->decision = res, r->decision_relative = r->relative;
    const scv_plan_point *ch = &res->points[res->chosen];
    emit(l, (scv_run_event){.kind = SCV_EV_PLAN, .workers = ch->workers, .batch = ch->batch, .plan = res,
                            .relative = r->relative});
    char ct[96];
    if (!l->decided) {
        l->K = ch->workers, l->B = ch->batch, l->comm = ch->comm;
        comm_text(l, l->comm, ch->comm_coll, ct, sizeof ct);
        snprintf(r->why, sizeof r->why, "%s", res->why);
        char sw[400]; /* the stored decision names the option */
        snprintf(sw, sizeof sw, "%s%s%s", ct[0] ? ct + 1 : "", ct[0] ? ": " : "", res->why);
        if ((rc = scv_store_decision(l->p->store, r->run_id, "plan", l->K, l->B, l->p->catalog->vms[l->train_vm].name,
                                     ch->time_s, ch->cost,
                                     sw, err)))
            return rc;
    } else {
        /* the stored decision keeps K and B; its option is the plan's when the plan chooses
         * the same K and B, else dense */
        l->comm = ch->workers == l->K && ch->batch == l->B ? ch->comm : l->dense;
        snprintf(r->why, sizeof r->why, "resumed at the stored decision");
        const scv_plan_point *pt = find_point(res, l->K, l->B, l->comm);
        if (pt) ch = pt;
        comm_text(l, l->comm, ch->comm_coll, ct, sizeof ct);
    }
    const scv_plan_point *probe = l->decided ? NULL : probe_point(l, res, ch);
    l->decided = 1;
    note_absolute(l); /* at the configuration decided */
    r->predicted_time_s = ch->time_s, r->predicted_cost = ch->cost, r->predicted_band = ch->err_rel;
    r->predicted_lo_s = r->predicted_hi_s = NAN;
    if (ch->time_lo_s > 0) r->predicted_lo_s = ch->time_lo_s, r->predicted_hi_s = ch->time_hi_s; /* (plan) */
    predict_progress(l);
    note(l, SCV_EV_NOTE, "target: %s", r->target_note);
    if (l->eval_n && ch->time_s > 0)
        note(l, SCV_EV_NOTE, "evaluations priced: %.0f ms each (mean of %d), one every %g epochs: %.1f%% of the chosen "
             "configuration's time", 1e3 * l->eval_s_sum / l->eval_n, l->eval_n, l->pol->eval_every_epochs,
             100 * ch->iterations * ch->batch * eval_s_per_sample(l) / ch->time_s);
    if (r->relative && (l->p->deadline_s > 0 || l->p->budget > 0))
        note(l, SCV_EV_NOTE, "the %s applies from the first plan with absolute times (the target's epochs are not "
             "known yet)", l->p->deadline_s > 0 ? "deadline" : "budget");
    note(l, SCV_EV_DECISION, "K=%d, B=%d%s (%s)", l->K, l->B, ct, r->why);
    if (probe) {
        double ql, qh;
        scv_carry_quantiles(&l->carry, ch->batch, probe->batch, &ql, &qh);
        note(l, SCV_EV_NOTE, "probe: the first training segment at K=%d, B=%d, predicted %.3g s to the target (%.3g s at "
             "the bottom of the batch carry-over's band) against the choice's %.3g s: its evaluations, and the choice's "
             "after it, tell the run's own carry", probe->workers, probe->batch, probe->time_s, probe->time_s * exp(ql),
             ch->time_s);
        l->K = probe->workers, l->B = probe->batch, l->comm = probe->comm, l->probing = 1;
        /* enough evaluations for the run's own carry, evaluated as the search is */
        l->probe_end = (double)l->iteration + ceil(fmax((double)l->pol->segment_min_iters,
                                                        l->pol->carry_probe_epochs * l->job.n_train / l->B));
    }
    record_forecast(l, 1); /* (through the probe, when there is one: probe_left) */
    rc = store_models(l, err);
    return rc ? rc : store_plan(l, res, err);
}

/* TRAIN: one segment of a share of the predicted rest; says whether to re-plan. */
static int do_train(loop *l, int *drifted, scv_err *err)
{
    const scv_run_policy *pol = l->pol;
    *drifted = 0;
    double rest = rest_iters(l, &l->r->stat, l->B);
    double chunk = fmax(fmax((double)pol->segment_min_iters, l->job.n_train / l->B), pol->segment_share * rest);
    if (l->r->relative) /* the target unknown: re-plan soon, once the curve may predict it */
        chunk = fmax((double)pol->segment_min_iters, pol->unknown_segment_epochs * l->job.n_train / l->B);
    if (l->probing) /* a probe: evaluated as the search is, enough for the run's own carry */
        chunk = fmax(1, l->probe_end - (double)l->iteration);
    /* no evaluation of the whole test set when a segment ends (2.4 s of LeNet on a
     * 0.25-core VM, a few % of the run over its segments): the trainer makes one where the
     * run ends (the target, the epoch bound) */
    /* never past the epoch bound (nor unbounded: a rest the models cannot bound is infinite) */
    double bound = l->job.n_train > 0 ? ceil((l->p->max_epochs * l->job.n_train - l->samples) / l->B) : NAN;
    if (bound >= 1 && !(chunk <= bound)) chunk = bound;
    if (!(chunk <= 1e15)) chunk = pol->segment_min_iters;
    scv_segment_spec spec = {.until_iterations = l->iteration + (int64_t)ceil(chunk)};
    scv_run_step *t;
    int rc = segment(l, "train", l->K, l->B, spec, &t, err);
    if (rc) {
        l->probing = 0, l->probe_end = 0; /* (the run ends: its last time left is not a probe's) */
        return rc;
    }
    int probed = l->probing;
    l->probing = 0, l->probe_end = 0;
    if (t->reached || t->iterations == 0 || l->r->epochs >= l->p->max_epochs - 1e-9 ||
        ++l->rounds >= pol->max_segments)
        return SCV_OK;
    if (probed) { /* back to the choice (the plan's, made just before): its curve resumes on the probe's other side */
        const scv_plan_point *ch = &l->r->plan->points[l->r->plan->chosen];
        note(l, SCV_EV_NOTE, "probe at K=%d, B=%d done: back to K=%d, B=%d; the run's own batch carry-over is "
             "learnt once the curve there resumes", l->K, l->B, ch->workers, ch->batch);
        l->probed_b = l->B, l->K = ch->workers, l->B = ch->batch, l->comm = ch->comm;
        predict_progress(l); /* the choice's rest, the probe's samples counted at their batch */
        record_forecast(l, 1);
        return SCV_OK;
    }
    try_run_carry(l, 1);
    if (l->carry_replan) { /* re-plan with the run's own carry (its band's top guards a switch) */
        l->carry_replan = 0;
        *drifted = 1;
        return SCV_OK;
    }
    /* (a segment that trained some iterations below its K, a preemption's shrink, measured
     * no iteration at K: on bench spot's K = 3 job, 7 re-plans a run, each at "-28% off") */
    const scv_plan_point *pp = find_point(l->r->plan, l->K, l->B, l->comm);
    *drifted = !l->seg_shrunk && pp && isfinite(t->t_iter) && fabs(t->t_iter / pp->t_iter - 1) > pol->drift_tol;
    if (*drifted && l->seg_vm != l->vm_index) {
        /* another type's iteration, against the plan's extrapolation: a re-plan refits the
         * run's own type's measurements and would extrapolate the same again; said, not re-planned */
        *drifted = 0;
        note(l, SCV_EV_NOTE, "iteration time %.2f ms on %s is %.0f%% off the plan's %.2f ms (extrapolated from %s's "
             "measurements): not re-planned (the models are fitted on %s)", 1e3 * t->t_iter,
             l->p->catalog->vms[l->seg_vm].name, 100 * (t->t_iter / pp->t_iter - 1), 1e3 * pp->t_iter, l->vm->name,
             l->vm->name);
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
        note(l, SCV_EV_NOTE, "iteration time %.2f ms with %s is %.0f%% off the plan's %.2f ms: its times are "
             "scaled by %.2f (measured / model), re-plan", 1e3 * t->t_iter, name, 100 * (t->t_iter / pp->t_iter - 1),
             1e3 * pp->t_iter, o->t_iter_scale);
        return SCV_OK;
    }
    if (*drifted) {
        note(l, SCV_EV_NOTE, "iteration time %.2f ms is %.0f%% off the plan's %.2f ms: re-plan", 1e3 * t->t_iter,
             100 * (t->t_iter / pp->t_iter - 1), 1e3 * pp->t_iter);
        return SCV_OK;
    }
    scv_target_source src = l->r->target_source;
    if (src == SCV_TARGET_CURVE || src == SCV_TARGET_NOMINAL) { /* the statistical prediction, refitted */
        predict_target(l);
        int now = l->pred.ok;
        double was = l->planned_x_star, is = l->pred.x_star, moved = is / was - 1;
        if (src == SCV_TARGET_NOMINAL && now) {
            *drifted = 1;
            note(l, SCV_EV_NOTE, "the learning curve now forecasts the target: re-plan with absolute times");
        } else if (src == SCV_TARGET_CURVE && now && isfinite(was) != isfinite(is)) {
            *drifted = 1;
            note(l, SCV_EV_NOTE, "the target now looks %s the epoch bound: re-plan",
                 isfinite(is) ? "within reach of" : "out of reach within");
        } else if (src == SCV_TARGET_CURVE && now && fabs(moved) > pol->stat_drift_tol) {
            *drifted = 1;
            note(l, SCV_EV_NOTE, "the predicted samples to the target moved %+.0f%%: re-plan", 100 * moved);
        } else {
            predict_progress(l);
        }
    }
    if (!*drifted) record_forecast(l, 1);
    return SCV_OK;
}

/* A switch from batch B to B2 rests on the carry between them: whatever the run's curve,
 * the two predictions err by the same rule exponent (or noise scale), so their ratio errs by
 * the carry's band from B to B2. The factor on the remaining time at B2 at the band's top
 * (1: the same batch, or a carry whose error is not measured): a switch of batch is made
 * only when it pays there, with probability (1 + C)/2 under the carry's measured errors. */
static double carry_risk(const loop *l, int B, int B2)
{
    if (l->r->target_source != SCV_TARGET_CURVE) return 1; /* rest_iters does not carry by it */
    double ql, qh;
    scv_carry_quantiles(&l->carry, B, B2, &ql, &qh);
    return isfinite(qh) && qh > 0 ? exp(qh) : 1;
}

/* REPLAN: re-fit with the drifted measurement; switch only when the switch pays for itself
 * (a switch of batch, at the top of the carry's band: carry_risk). */
static int do_replan(loop *l, scv_err *err)
{
    scv_run_result *r = l->r;
    scv_plan_result *res = NULL;
    scv_perf_model pf;
    scv_stat_model sm;
    scv_err pe = {0};
    if (plan(l, &res, &pf, &sm, &pe) != SCV_OK) {
        note(l, SCV_EV_NOTE, "re-plan failed (%.300s); staying at K=%d, B=%d", pe.msg, l->K, l->B);
        return SCV_OK;
    }
    const scv_plan_point *nc = &res->points[res->chosen], *cur = find_point(res, l->K, l->B, l->comm);
    double rem_cur = cur ? rest_iters(l, &sm, l->B) * iter_factor(cur) * cur->t_iter : 0;
    double rem_new = rest_iters(l, &sm, nc->batch) * iter_factor(nc) * nc->t_iter;
    double risk = carry_risk(l, l->B, nc->batch), rem_new_top = rem_new * risk;
    double cost = l->pol->switch_idle_factor * switch_idle(l) + l->pol->switch_remaining_share * rem_cur;
    /* a bound in force (the plan is absolute): when the current configuration misses it and
     * the plan's choice meets it (as the planner judges bounds: the run's end there, what it
     * spent and the rest of the target at the configuration), the switch is made whether or
     * not it pays for itself in time */
    int bounded = !r->relative && (l->plan_deadline_s > 0 || l->plan_budget > 0); /* (those the plan kept) */
    int moved = nc->workers != l->K || nc->batch != l->B || nc->comm != l->comm;
    char nt[96], ot[96];
    comm_text(l, nc->comm, nc->comm_coll, nt, sizeof nt);
    scv_plan_request rb = {.deadline_s = l->plan_deadline_s, .budget = l->plan_budget, .spent_s = elapsed(l),
                           .spent_cost = spend_usd(l), .done_share = done_share(l, &sm)};
    int cur_meets = cur && scv_plan_meets(&rb, cur), new_meets = scv_plan_meets(&rb, nc);
    char why[256];
    if (l->p->scaling == SCV_SCALING_THROUGHPUT) {
        snprintf(why, sizeof why, "stay at K=%d, B=%d: Or et al.'s throughput scaling settled here", l->K, l->B);
    } else if (bounded && moved && !cur_meets && new_meets) {
        snprintf(why, sizeof why, "switch to K=%d, B=%d%s: staying would miss the %s, the switch meets it", nc->workers,
                 nc->batch, nt, l->plan_deadline_s > 0 ? "deadline" : "budget");
        l->K = nc->workers, l->B = nc->batch, l->comm = nc->comm;
    } else if (moved && rem_cur - rem_new_top > cost) {
        snprintf(why, sizeof why, "switch to K=%d, B=%d%s: saves %.1f s > its cost %.1f s%s", nc->workers, nc->batch,
                 nt, rem_cur - rem_new_top, cost, risk > 1 ? " (at the top of the batch carry-over's band)" : "");
        l->K = nc->workers, l->B = nc->batch, l->comm = nc->comm;
    } else {
        char top[96] = "";
        if (risk > 1) snprintf(top, sizeof top, " at the top of the batch carry-over's band, %.1f s at its point",
                               rem_cur - rem_new);
        snprintf(why, sizeof why, "stay at K=%d, B=%d%s: no switch pays for itself (best saves %.1f s%s, costs %.1f s)",
                 l->K, l->B, comm_text(l, l->comm, cur ? cur->comm_coll : SCV_SPARSE_ALLGATHER, ot, sizeof ot),
                 rem_cur - rem_new_top, top, cost);
    }
    if (r->relative) { /* its times are nominal, and its reason says so (the dashboard reads it) */
        char w[sizeof why];
        snprintf(w, sizeof w, "%s", why);
        snprintf(why, sizeof why, "nominal times (%.3g epochs assumed): %.200s", r->target_epochs, w);
    }
    const scv_plan_point *at = find_point(res, l->K, l->B, l->comm);
    int rc = scv_store_decision(l->p->store, r->run_id, "replan", l->K, l->B, l->p->catalog->vms[l->train_vm].name,
                                at ? at->time_s : NAN,
                                at ? at->cost : NAN, why, err);
    set_plan(r, res);
    if (!rc) rc = store_plan(l, res, err);
    note_absolute(l);
    r->perf = pf, r->stat = sm;
    predict_progress(l);
    record_forecast(l, 1);
    emit(l, (scv_run_event){.kind = SCV_EV_PLAN, .workers = l->K, .batch = l->B, .plan = res,
                            .relative = r->relative});
    note(l, SCV_EV_DECISION, "re-plan: %s", why);
    return rc;
}

/* ---- setting up and finishing ---- */

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
        if ((rc = stored_curve(l, r->run_id, r->steps, r->n_steps, &l->prog, &ev, &n, err))) return rc;
        for (size_t i = 0; i < n; i++) history_push(l, target_y(l, &ev[i]));
        free(ev);
    } else if ((rc = scv_store_run_new(p->store, p->job_key, p->job_json ? p->job_json : "{}", &r->run_id, err))) {
        return rc;
    }
    snprintf(r->run_dir, sizeof r->run_dir, "%s/%lld", p->state_dir, r->run_id);
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
    if (p->resume_run && scv_store_last_decision(p->store, p->resume_run, &K, &B, vm, sizeof vm, NULL) == SCV_OK) {
        l->decided = 1, l->K = K, l->B = B, l->resumed_decision = 1;
        /* the type the decision trains on, where the driver still holds K VMs of it */
        const scv_vm_type *v = vm[0] ? scv_catalog_find(p->catalog, vm) : NULL;
        int vi = v ? (int)(v - p->catalog->vms) : l->vm_index;
        if (vi != l->vm_index && vm_held(l, vi) >= K) l->train_vm = vi;
        else if (vi != l->vm_index)
            note(l, SCV_EV_NOTE, "VM type: the stored decision trains on %s; the driver holds %d VMs of it now, K=%d "
                 "needs %d: the run trains on %s", vm, vm_held(l, vi), K, K, l->vm->name);
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
            note(l, SCV_EV_NOTE, "no stored run of this job: the universal model (a warm-up, then the shapes "
                                 "of %d stored run(s) of other jobs on %s)", l->n_prior, p->vm_type);
            *s = warmed ? SCV_STATE_PLAN : SCV_STATE_WARMUP;
            return SCV_OK;
        }
        if (rc) return rc;
        free(l->cs);
        l->cs = cs, l->ncs = l->cs_cap = n;
        note(l, SCV_EV_NOTE, "planning from %zu stored measurements of this job (the newest from run %lld)", n, from);
        *s = SCV_STATE_PLAN;
        return SCV_OK;
    }
    if (l->r->n_steps) l->resumed_decision = 1; /* the next step's idle spans the interruption */
    *s = l->r->reached ? SCV_STATE_PLAN : warmed ? SCV_STATE_SEARCH : SCV_STATE_WARMUP;
    return SCV_OK;
}

static int finish(loop *l, scv_err *err)
{
    scv_run_result *r = l->r;
    tally(l);
    r->workers = l->K, r->batch = l->B, r->comm = l->comm;
    int rc = scv_store_outcome(l->p->store, r->run_id, r->actual_time_s, r->actual_cost, r->accuracy, r->reached, err);
    if (!rc && !r->reached && l->prog.nev && !l->trained_compressed) {
        /* not reached: the target is stored without epochs, so that a later run to it
         * reads how far this one came from its evaluations (stored_target) */
        rc = scv_store_set_target(l->p->store, r->run_id, metric_of(l->p), target_value(l->p), NAN, l->p->batches[0], err);
    } else if (!rc && r->reached && isfinite(r->epochs) && !l->trained_compressed) {
        /* the epochs it took (dense training only: a later run's plan takes them as
         * dense epochs), at one batch: samples at other batches carried to the
         * smallest by the noise scale (as the learning curve counts them) */
        scv_carry_law law = l->carry_run && !l->carry_from ? read_law(l, INFINITY) : carry_law(l);
        double e = r->epochs;
        int b = l->B;
        if (scv_carry_law_known(law) && l->job.n_train > 0)
            e = progress_crossing_samples(&l->prog, l->samples, l->p->batches[0], law) / l->job.n_train,
            b = l->p->batches[0];
        rc = scv_store_set_target(l->p->store, r->run_id, metric_of(l->p), target_value(l->p), e, b, err);
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
    progress_advance(&l->prog, s0);
    if (!p->resume_run || !d->recover) return SCV_OK;
    scv_segment_result res;
    char phase[16];
    int K, B;
    rc = d->recover(d->ctx, (int)out->n_steps, &res, phase, sizeof phase, &K, &B, err);
    if (rc == SCV_ENOTFOUND) return SCV_OK;
    if (rc || res.iterations <= 0) return rc;
    if (res.iterations < l->pol->profile_min_iters) res.stats.workers = 0; /* too short to stand for
                                                                               the configuration */
    note(l, SCV_EV_NOTE, "recovered the %s segment (K=%d, B=%d, %lld iterations) the run was in when it stopped",
         phase, K, B, (long long)res.iterations);
    l->resumed_decision = 0; /* its idle before is the loop's */
    if (s0 > stored_end && (!l->prog.nseg || l->prog.seg[l->prog.nseg - 1].batch != B)) {
        if (l->prog.nseg && l->prog.seg[l->prog.nseg - 1].s1 > stored_end)
            l->prog.seg[l->prog.nseg - 1].s1 = stored_end; /* (its evaluations kept) */
        if ((rc = progress_segment(&l->prog, stored_end, B))) return scv_err_set(err, rc, "out of memory");
        progress_advance(&l->prog, s0);
    }
    rc = record_step(l, phase, K, B, &res, NULL, err);
    l->resumed_decision = 1; /* the next one's spans the interruption */
    l->iteration = it0, l->samples = s0;
    return rc;
}

int scv_run(const scv_run_params *p, const scv_job_driver *d, const scv_run_observer *obs, scv_run_result *out,
            scv_err *err)
{
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
        int B = scaled_batch(p, p->workers[i]), at = 0;
        while (at < (int)l->n_bs && l->bs[at] < B) at++;
        if (at < (int)l->n_bs && l->bs[at] == B) continue;
        memmove(l->bs + at + 1, l->bs + at, sizeof(int) * (l->n_bs - (size_t)at));
        l->bs[at] = B, l->n_bs++;
    }
    l->vm = scv_catalog_find(p->catalog, p->vm_type);
    l->vm_index = l->train_vm = l->seg_vm = (int)(l->vm - p->catalog->vms);
    if (p->pricing == SCV_PRICE_MEMORY &&
        (rc = scv_memory_rates(p->catalog, l->vm->provider, &l->rate_cpu, &l->rate_gib, err)))
        return rc;
    if ((rc = open_run(l, err))) {
        if (out->run_id) goto failed;
        goto out;
    }
    if ((rc = d->open(d->ctx, out->run_dir, &l->job, err))) {
        if (rc != SCV_EINTR) goto failed;
        /* stopped while the job started (the probe got the Ctrl-C): resumable, like later */
        out->state = l->state = SCV_STATE_INTERRUPTED;
        scv_store_run_state(p->store, out->run_id, "interrupted", NULL);
        scv_store_run_status(p->store, out->run_id, "interrupted", NULL);
        goto out;
    }
    if ((rc = resume_progress(l, err))) goto failed_open;
    scv_run_state s;
    load_prior(l);
    if ((rc = load_calib(l, err))) goto failed_open;
    out->n_prior_runs = l->n_prior;
    if ((rc = first_state(l, &s, err))) goto failed_open;
    out->universal = l->universal;
    for (;;) {
        if ((rc = set_state(l, s, err))) break;
        int drifted = 0;
        switch (s) {
        case SCV_STATE_WARMUP:
            rc = do_warmup(l, err);
            s = out->reached || l->universal ? SCV_STATE_PLAN : SCV_STATE_SEARCH;
            break;
        case SCV_STATE_SEARCH:
            rc = do_search(l, err);
            s = SCV_STATE_PLAN;
            break;
        case SCV_STATE_PLAN:
            rc = do_plan(l, err);
            if (rc && out->reached) { /* reached while searching: the plan is only for the report */
                note(l, SCV_EV_NOTE, "the target was reached while searching; no plan: %s", err ? err->msg : "");
                rc = SCV_OK;
                snprintf(out->why, sizeof out->why, "no plan: the target was reached while searching");
            }
            s = out->reached || spent(l) ? SCV_STATE_DONE : SCV_STATE_TRAIN;
            break;
        case SCV_STATE_TRAIN:
            rc = do_train(l, &drifted, err);
            if (out->reached || spent(l) || l->rounds >= l->pol->max_segments ||
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
    if (rc == SCV_EINTR && l->budget_stop) { /* not an error: the run stopped at its cap */
        out->budget_stopped = 1;
        snprintf(out->why, sizeof out->why, "stopped before the budget's cap ($%.4g): resumable with a larger budget",
                 p->budget);
    }
    if (rc == SCV_EINTR) {
        l->state = out->state = SCV_STATE_INTERRUPTED;
        tally(l);
        scv_store_run_state(p->store, out->run_id, "interrupted", NULL);
        scv_store_run_status(p->store, out->run_id, "interrupted", NULL);
        emit(l, (scv_run_event){.kind = SCV_EV_STATE, .workers = l->K, .batch = l->B});
        d->close(d->ctx);
        goto out;
    }
    if (rc) goto failed_open;
    if ((rc = finish(l, err))) goto failed_open;
    d->close(d->ctx);
    out->state = SCV_STATE_DONE;
    set_state(l, SCV_STATE_DONE, NULL);
    goto out;
failed_open:
    d->close(d->ctx);
failed:
    tally(l);
    out->state = l->state = SCV_STATE_FAILED;
    scv_store_run_state(p->store, out->run_id, "failed", NULL);
    scv_store_run_status(p->store, out->run_id, "failed", NULL);
    emit(l, (scv_run_event){.kind = SCV_EV_STATE, .workers = l->K, .batch = l->B});
out:
    free(l->cs);
    progress_free(&l->prog);
    scv_calib_free(&l->calib);
    return rc;
}
