/*
 * segment.c - one training segment through the job driver, and the measurements it delivers
 * (the sink: iterations and evaluations as they come, the learning curve's points, a slow
 * worker absorbed, dropped or replaced: model/hetero.c).
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

void loop_history_push(loop *l, double y)
{
    if (!isfinite(y)) return;
    if (l->curve.n_history == (int)(sizeof l->curve.history / sizeof l->curve.history[0]))
        memmove(l->curve.history, l->curve.history + 1, sizeof l->curve.history - sizeof l->curve.history[0]), l->curve.n_history--;
    l->curve.history[l->curve.n_history++] = y;
}

int loop_keep_measurement(loop *l, const scv_config_stats *s, scv_err *err)
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

int loop_measured(const loop *l, int K, int B)
{
    for (size_t i = 0; i < l->ncs; i++)
        if (l->cs[i].workers == K && l->cs[i].batch == B) return 1;
    return 0;
}

/* Prices the segment under way at the K each iteration ran at: the time since the previous
 * iteration's end (the first: its own t_iter) at fewer workers than configured is counted in
 * seg_short_ws; at the segment's end shortfall_to_steps moves it into the cost taken off. */
static void shortfall_iter(loop *l, const scv_iter_sample *s)
{
    double from = isfinite(l->seg_t1) ? l->seg_t1 : s->wall_end - s->t_iter;
    if (s->workers > 0 && s->workers < l->K) {
        l->ledger.seg_shrunk = 1;
        if (s->wall_end > from) l->ledger.seg_short_ws += (l->K - s->workers) * (s->wall_end - from);
    }
}

/* The ended segment's shortfall, priced at its VM's rate, moved to the recorded steps'. */
void loop_shortfall_to_steps(loop *l, const char *phase, int K, int B)
{
    double usd = scv_cost_usd(1, l->ledger.seg_short_ws, loop_price_at(l, l->place.seg_vm, K, B));
    if (isfinite(usd) && usd > 0) {
        l->ledger.short_usd += usd;
        if (strcmp(phase, "train")) l->ledger.short_search_usd += usd;
    }
    l->ledger.seg_short_ws = 0;
}

static void on_iter(void *ctx, const scv_iter_sample *s)
{
    loop *l = ctx;
    l->iteration = s->iteration;
    l->samples = s->samples_seen;
    shortfall_iter(l, s);
    if (!isfinite(l->seg_t0)) l->seg_t0 = s->wall_end - s->t_iter;
    l->seg_t1 = s->wall_end;
    progress_advance(&l->curve.prog, s->samples_seen);
    loop_emit(l, (scv_run_event){.kind = SCV_EV_ITER, .workers = s->workers, .batch = s->batch, .iter = s});
}

/* A training segment's evaluation refits the learning curve and re-forecasts the time left
 * when the target came from this run's curve (the progress line, the runs list, the
 * dashboard and the result's forecasts follow every evaluation, not only each plan); not in
 * a probe, whose configuration the run leaves at its end, nor after it until the run has
 * read its carry from it (the curve back at the choice's batch jumps by the probe's level
 * meanwhile: LeNet's loss forecast 81, 30 and 110 s there, the run took 50 s). */
int loop_live_forecast(const loop *l)
{
    return l->decided && !l->probe.probing && !l->probe.probed_b && l->r->plan && l->r->target_source == SCV_TARGET_CURVE;
}

void loop_on_eval(void *ctx, const scv_eval_sample *e)
{
    loop *l = ctx;
    l->last_accuracy = e->accuracy;
    if (e->seconds > 0 && isfinite(e->seconds)) l->ledger.eval_s_sum += e->seconds, l->ledger.eval_n++;
    if (!l->profiling) loop_progress_eval(l, &l->curve.prog, e); /* out of order or NaN: ignored */
    loop_history_push(l, loop_target_y(l, e));
    if (!l->profiling) {
        if (!l->probe.probing) loop_try_run_carry(l, 0);
        if (loop_live_forecast(l)) { /* the curve refitted: the time left follows it */
            loop_predict_target(l);
            loop_predict_progress(l);
            loop_record_forecast(l, 0); /* the store's copy rate-limited (store_eta) */
        } else if (loop_overdue(l)) {
            loop_predict_target(l); /* the time left, re-estimated (emit) */
        } else if (l->decided && l->r->relative && !l->probe.probing && l->r->plan) {
            loop_predict_target(l); /* a nominal plan: absolute at the first evaluation that allows */
            if (l->curve.pred.ok) loop_reforecast(l);
        }
    }
    if (!l->sink_err.code) /* the sink cannot fail the segment: it is failed when it returns */
        scv_store_eval(l->p->store, l->r->run_id, l->K, l->B, e, &l->sink_err);
    loop_emit(l, (scv_run_event){.kind = SCV_EV_EVAL, .workers = l->K, .batch = l->B, .eval = e});
}

/* The evaluation period of a warm-up or search segment at (K, B) [epochs]: the policy's,
 * widened so that the evaluations cost at most search_eval_share of the segment's time once
 * one is loop_measured (a subset's evaluation takes the same at any period; with e seconds an
 * evaluation and s seconds a training sample, D samples apart cost e / (e + D s) <= share):
 *   D >= e (1 - share) / (share s)
 * noted when it widens. */
double loop_search_eval_every(loop *l, int K, int B)
{
    double every = l->pol->search_eval_every_epochs, share = l->pol->search_eval_share, t = loop_est_t_iter(l, K, B);
    if (!(share > 0) || !l->ledger.eval_n || !(t > 0) || !(l->job.n_train > 0)) return every;
    double e = l->ledger.eval_s_sum / l->ledger.eval_n, d = e * (1 - share) / (share * t / B) / l->job.n_train;
    if (d > every && !l->eval_widened) {
        l->eval_widened = 1;
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_EVAL_WIDENED, "warm-up and search evaluate every %.3g epochs, not %.3g: an evaluation takes %.3g s, "
             "kept to %.0f%% of the time", d, every, e, 100 * share);
    }
    return fmax(every, d);
}

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
 * at 1): 0 without a loop_plan (no fitted performance model) or an estimate of the work left. */
static int hetero_case_at(const loop *l, int K, int B, int64_t at, scv_hetero_case *hc)
{
    const scv_run_result *r = l->r;
    if (K < 2 || !r->plan || r->perf.n_points < 1) return 0;
    double left = loop_rest_iters(l, &r->stat, B) - (double)(at - l->iteration);
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

int loop_segment(loop *l, const char *phase, int K, int B, scv_segment_spec spec, scv_run_step **out,
                   scv_err *err)
{
    int rc, was_vm = l->place.seg_vm;
    /* the VM type: training segments at the decision's (vm_place), warm-up and search on the
     * run's own (they measure the type the models are fitted on); the driver is told it */
    l->place.seg_vm = !strcmp(phase, "train") ? l->place.train_vm : l->place.vm_index;
    const char *vm = l->p->catalog->vms[l->place.seg_vm].name;
    spec.vm_type = vm;
    if (l->p->budget > 0 && loop_budget_check(l, phase, K, B, &spec)) {
        if ((rc = l->d->checkpoint(l->d->ctx, err))) return rc;
        return SCV_EINTR; /* unwinds to scv_run, which stops the run (budget_stop) */
    }
    if (!strcmp(phase, "train") && !l->probe.probing && loop_out_of_reach(l)) {
        if ((rc = l->d->checkpoint(l->d->ctx, err))) return rc;
        return SCV_EINTR; /* unwinds to scv_run, which stops the run (reach_stopped) */
    }
    if (l->obs && l->obs->stop_requested && l->obs->stop_requested(l->obs->ctx)) { /* a stop between segments */
        if ((rc = l->d->checkpoint(l->d->ctx, err))) return rc;
        return SCV_EINTR;
    }
    if (K != l->cfg_K || B != l->cfg_B || l->place.seg_vm != was_vm) {
        if ((K != l->cfg_K || B != l->cfg_B) && (rc = l->d->configure(l->d->ctx, K, B, NULL, err))) return rc;
        if (l->cfg_K)
            loop_emit(l, (scv_run_event){.kind = SCV_EV_SWITCH, .phase = phase, .workers = K, .batch = B, .vm = vm});
        l->cfg_K = K, l->cfg_B = B;
    }
    l->K = K, l->B = B;
    l->profiling = !strcmp(phase, "search");
    spec.phase = phase;
    spec.target_accuracy = l->p->target_accuracy;
    spec.target_loss = l->p->target_loss;
    spec.max_epochs = l->p->max_epochs;
    int dense_evals = strcmp(phase, "train") || l->probe.probing; /* the curve needs points early, or a probe's */
    spec.eval_every_epochs = dense_evals ? loop_search_eval_every(l, K, B) : l->pol->eval_every_epochs;
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
        const scv_plan_point *pt = loop_find_point(l->r->plan, K, B, l->comm);
        scv_coll_pref c = l->comms[l->comm].collective;
        if (c == SCV_COLL_AUTO) /* the collective the plan priced (Top-k's; SelSync has none) */
            c = pt && pt->comm_coll != SCV_SPARSE_ALLGATHER ? SCV_COLL_ARTOPK : SCV_COLL_ALLGATHER;
        spec.comm = &l->comms[l->comm], spec.comm_collective = c;
    }
    l->seg_compressed = spec.comm != NULL;
    l->trained_compressed |= l->seg_compressed;
    l->seg_t0 = l->seg_t1 = NAN, l->ledger.seg_short_ws = 0;
    loop_emit(l, (scv_run_event){.kind = SCV_EV_SEGMENT_START, .phase = phase, .workers = K, .batch = B, .vm = vm});
    scv_measure_sink sink = {.ctx = l, .on_iter = on_iter, .on_eval = loop_on_eval};
    scv_segment_result res;
    for (;;) {
        int keep = spec.target_window > 1 ? spec.target_window - 1 : 0;
        if (keep > l->curve.n_history) keep = l->curve.n_history;
        spec.history = l->curve.history + l->curve.n_history - keep, spec.n_history = keep;
        if ((rc = progress_segment(&l->curve.prog, l->samples, B))) return scv_err_set(err, rc, "out of memory");
        l->ledger.seg_shrunk = 0; /* (this attempt's) */
        rc = l->d->train(l->d->ctx, &spec, &sink, &res, err);
        /* SCV_EIO: the job's files cannot be written (a full disk); SCV_EINVAL: the job refused
         * the loop_segment (its options): a retry cannot help */
        if (!rc || rc == SCV_EINTR || rc == SCV_EIO || rc == SCV_EINVAL) break;
        int64_t it;
        if (l->d->progress(l->d->ctx, &it, &l->samples, NULL) == SCV_OK) { /* redone from the checkpoint */
            /* the checkpoint moved since the last failure: those retries made progress, and
             * max_retries counts failures in a row without it */
            if (it > l->retry_it) l->retries = 0;
            l->retry_it = it;
            l->iteration = it;
            progress_rewind(&l->curve.prog, l->samples);
        }
        if (++l->retries > l->pol->max_retries) {
            if (err) {
                char m[SCV_ERR_LEN];
                snprintf(m, sizeof m, "%s", err->msg);
                scv_err_set(err, rc, "%s (the run's %d retries are spent)", m, l->pol->max_retries);
            }
            return rc;
        }
        loop_note(l, SCV_EV_RETRY, SCV_NOTE_RETRY, "%s: a worker died or the job failed; resuming from the last checkpoint (retry %d of %d)",
             err ? err->msg : "a segment failed", l->retries, l->pol->max_retries);
    }
    if (rc) return rc;
    if (l->sink_err.code) return scv_err_set(err, l->sink_err.code, "%.400s", l->sink_err.msg);
    hetero_annotate(l, K, B, &res);
    if ((rc = loop_record_step(l, phase, K, B, &res, out, err))) return rc;
    /* the job changed size in place (a preemption survived, its VM not back): it runs at the
     * last event's K from now on, the next segment's label and the re-plan's (the driver is
     * configured to it before the next segment: cfg_K stays as it was) */
    int K_now = res.n_preemptions > 0 ? res.preemptions[res.n_preemptions - 1].workers : K;
    if (!strcmp(phase, "train") && K_now >= 1 && K_now != K) l->K = K_now;
    loop_emit(l, (scv_run_event){.kind = SCV_EV_SEGMENT_END, .phase = phase, .workers = K, .batch = B, .vm = vm,
                            .segment = &res});
    for (int i = 0; i < res.n_stragglers; i++) {
        const scv_straggler_event *e = &res.stragglers[i];
        char by[96] = "";
        if (e->replaced) snprintf(by, sizeof by, " by %s, %.2f s idle", e->by_host[0] ? e->by_host : "a spare", e->idle_s);
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_STRAGGLER, "straggler: worker %d%s%s at iteration %lld, %.2f of the median's throughput: %s%s", e->worker,
             e->host[0] ? " on " : "", e->host, (long long)e->iteration, e->ratio, e->note, by);
    }
    for (int i = 0; i < res.n_preemptions; i++) {
        const scv_survive_event *e = &res.preemptions[i];
        loop_note(l, SCV_EV_NOTE, e->restored ? SCV_NOTE_PREEMPT_RESTORED : SCV_NOTE_PREEMPT_NOTICE,
                  "preemption: process %d %s at iteration %lld; training went on in place with K=%d "
             "(%.3f s idle)", e->process, e->restored ? "is back" : "had a notice", (long long)e->iteration, e->workers,
             e->idle_s);
    }
    return SCV_OK;
}
