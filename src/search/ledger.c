/*
 * ledger.c - what the run has spent: each step's seconds and dollars at its VM type's price,
 * the run's time so far, the idle of a switch, the evaluations' seconds per sample, and the
 * budget's check before a segment (a segment that does not fit stops the run).
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

/* The run's time so far: the recorded steps, the idle before the current segment and its
 * iterations up to the latest (wall-clock stamps from the driver). */
double loop_elapsed(const loop *l)
{
    const scv_run_result *r = l->r;
    double t = r->n_steps ? r->actual_time_s : 0;
    if (isfinite(l->seg_t0) && l->seg_t1 >= l->seg_t0) {
        double prev = r->n_steps ? r->steps[r->n_steps - 1].last_end : NAN;
        t += l->seg_t1 - l->seg_t0 + (isfinite(prev) && l->seg_t0 > prev && !l->resumed_decision ? l->seg_t0 - prev : 0);
    }
    return t;
}

/* The hourly price of one VM of type vm (a catalog index) at (K, B) under the run's pricing
 * (memory pricing at the run's provider's rates, as the plan prices every type). */
double loop_price_at(const loop *l, int vm, int K, int B)
{
    return scv_vm_price(&l->p->catalog->vms[vm], l->p->pricing, scv_worker_mem_bytes(&l->job, (double)B / K),
                        l->ledger.rate_cpu, l->ledger.rate_gib);
}

/* The catalog index of the type a step trained on (its vm; "" or not in the catalog: the run's). */
static int step_vm(const loop *l, const scv_run_step *t)
{
    const scv_vm_type *v = t->vm[0] ? scv_catalog_find(l->p->catalog, t->vm) : NULL;
    return v ? (int)(v - l->p->catalog->vms) : l->place.vm_index;
}

/* A recorded step's seconds (its iterations' span and the idle before it) and cost. */
static double step_seconds(const scv_run_step *t)
{
    return (t->iterations ? t->last_end - t->first_start : 0) + (isfinite(t->idle_before) ? t->idle_before : 0);
}

static double step_cost(const loop *l, const scv_run_step *t)
{
    return scv_cost_usd(t->workers, step_seconds(t), loop_price_at(l, step_vm(l, t), t->workers, t->batch));
}

/* Outcome figures of the steps so far: one source for the progress, the store and the report. */
void loop_tally(loop *l)
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
    r->actual_cost -= l->ledger.short_usd, r->search_cost -= l->ledger.short_search_usd; /* the workers an elastic drop took */
    r->idle_median_s = nid ? idles[nid / 2] : NAN;
    r->idle_worst_s = nid ? idles[nid - 1] : NAN;
    r->price_hr = l->K ? loop_price_at(l, l->place.seg_vm, l->K, l->B) : NAN;
}

/* The idle before a training segment that goes on at the same configuration (a relaunched
 * job's start-up; the elastic job's pause): the mean measured before such steps, else before
 * any step (a switch's idle holds the start-up too); 0 when none was measured. */
static double segment_idle(const loop *l)
{
    double sum[2] = {0, 0};
    int n[2] = {0, 0};
    for (size_t i = 1; i < l->r->n_steps; i++) {
        const scv_run_step *t = &l->r->steps[i], *prev = t - 1;
        if (!isfinite(t->idle_before)) continue;
        int same = t->workers == prev->workers && t->batch == prev->batch && !strcmp(t->vm, prev->vm);
        sum[same] += t->idle_before, n[same]++;
    }
    return n[1] ? sum[1] / n[1] : n[0] ? sum[0] / n[0] : 0;
}

void loop_segments_priced(const loop *l, scv_plan_request *req)
{
    req->job = &l->job;
    req->segment_idle_s = segment_idle(l);
    req->segment_share = l->pol->segment_share;
    req->segment_min_iters = (double)l->pol->segment_min_iters;
}

/* The idle a switch costs: the mean measured between steps, else the policy's default. */
double loop_switch_idle(const loop *l)
{
    double sum = 0;
    int n = 0;
    for (size_t i = 1; i < l->r->n_steps; i++)
        if (isfinite(l->r->steps[i].idle_before)) sum += l->r->steps[i].idle_before, n++;
    return n ? sum / n : l->pol->switch_idle_default_s;
}

/* The run's cost so far: the recorded steps (with their idle) and the segment under way. */
double loop_spend_usd(const loop *l)
{
    double c = 0;
    for (size_t i = 0; i < l->r->n_steps; i++) c += step_cost(l, &l->r->steps[i]);
    c -= l->ledger.short_usd;
    if (isfinite(l->seg_t0) && l->seg_t1 > l->seg_t0 && l->K > 0)
        c += scv_cost_usd(1, l->K * (l->seg_t1 - l->seg_t0) - l->ledger.seg_short_ws, loop_price_at(l, l->place.seg_vm, l->K, l->B));
    return c;
}

/* The budget as a cap: the next segment at (K, B) is shortened to what the budget left
 * affords at its predicted cost (iteration time with the evaluations' share, and a switch's
 * idle), or, when not even segment_min_iters fit, not trained: the job is checkpointed and
 * the run stops (budget_stop), resumable with a larger budget. A segment whose cost cannot
 * be predicted yet (no iteration measured) trains as asked: the warm-up, bounded by
 * warmup_max_iters. Returns 1 to stop. */
int loop_budget_check(loop *l, const char *phase, int K, int B, scv_segment_spec *spec)
{
    const scv_run_params *p = l->p;
    double left = p->budget - loop_spend_usd(l), price = loop_price_at(l, l->place.seg_vm, K, B);
    char spent[32], cap[32], rest[32], next[32]; /* (every amount as every other: scv_fmt_usd) */
    scv_fmt_usd(p->budget - left, spent, sizeof spent), scv_fmt_usd(p->budget, cap, sizeof cap);
    scv_fmt_usd(left, rest, sizeof rest);
    if (!l->ledger.budget_warned && p->budget - left >= l->pol->budget_warn_share * p->budget) {
        l->ledger.budget_warned = 1;
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_BUDGET_SHARE, "budget: %s spent, %.0f%% of the %s cap", spent,
                  100 * (p->budget - left) / p->budget, cap);
    }
    double t_iter = loop_est_t_iter(l, K, B), idle = K != l->cfg_K || B != l->cfg_B ? loop_switch_idle(l) : 0;
    if (l->place.seg_vm != l->place.vm_index) { /* another type: the plan's (extrapolated) iteration there */
        const scv_plan_point *pt = loop_find_point(l->r->plan, K, B, l->comm);
        t_iter = pt ? pt->t_iter : NAN;
    }
    if (!(t_iter > 0) || !(price > 0)) return 0;
    t_iter += B * loop_eval_s_per_sample(l);
    double per_iter = scv_cost_usd(K, t_iter, price), fixed = scv_cost_usd(K, idle, price);
    int64_t want = spec->until_iterations > l->iteration ? spec->until_iterations - l->iteration : 0;
    double afford = (left - fixed) / per_iter;
    if (want && afford >= (double)want) return 0;
    int64_t min_iters = l->pol->segment_min_iters > 0 ? l->pol->segment_min_iters : 1;
    if (afford >= (double)min_iters) {
        spec->until_iterations = l->iteration + (int64_t)floor(afford);
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_BUDGET_SHORTENED, "budget: the %s segment at K=%d, B=%d shortened to %lld "
                  "iterations (%s left of the %s cap)", phase, K, B, (long long)floor(afford), rest, cap);
        return 0;
    }
    l->ledger.budget_stop = 1;
    l->r->budget_next_cost = fixed + per_iter * (double)(want ? want : min_iters);
    scv_fmt_usd(l->r->budget_next_cost, next, sizeof next);
    loop_note(l, SCV_EV_NOTE, SCV_NOTE_BUDGET_STOP, "budget: %s of the %s cap spent%s; the next %s segment (K=%d, B=%d) "
              "would cost %s: stopped, checkpointed, resumable with a larger --budget", spent, cap,
              left < 0 ? " (over it)" : "", phase, K, B, next);
    return 1;
}

/* The periodic evaluations' seconds per training sample: their mean time as measured, one
 * every eval_every_epochs (0: none measured). */
double loop_eval_s_per_sample(const loop *l)
{
    double per = l->pol->eval_every_epochs * l->job.n_train;
    return l->ledger.eval_n && per > 0 ? l->ledger.eval_s_sum / l->ledger.eval_n / per : 0;
}
