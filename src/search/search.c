/*
 * search.c - the WARMUP and SEARCH states: train at the start configuration until the noise
 * estimate is stable, then profile the policy's configurations within the search budget (a
 * share of the predicted job time), skipping those whose predicted time to the target is out
 * of the race, or scale as Or et al.'s throughput rule does.
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

int loop_do_warmup(loop *l, scv_err *err)
{
    int K, B;
    loop_start_config(l->p, &K, &B);
    const scv_run_policy *pol = l->pol;
    scv_segment_spec spec = {.until_iterations = l->iteration + pol->warmup_max_iters,
                             .noise_window = pol->noise_window, .noise_tol = pol->noise_tol};
    int rc = loop_segment(l, "warmup", K, B, spec, NULL, err);
    /* a warm-up that shrank or grew (a preemption survived in place) or lost a worker is no
     * measurement of (K, B): it is measured again, at most twice more */
    for (int again = 0; again < 2 && !rc && !l->r->reached && !loop_spent(l) && !loop_measured(l, K, B); again++) {
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_WARMUP_REMEASURED, "warm-up: its segment is no measurement of K=%d, B=%d (the job changed size in it); "
             "measured again", K, B);
        spec.until_iterations = l->iteration + pol->warmup_max_iters;
        rc = loop_segment(l, "warmup", K, B, spec, NULL, err);
    }
    int need = pol->warmup_min_evals - (int)l->curve.prog.nev;
    if (rc || l->r->reached || need <= 0 || l->p->target_epochs > 0 || !(l->job.n_train > 0) || loop_spent(l)) return rc;
    /* the noise settled before the curve had its points: on, at the same configuration */
    double iters = ceil(need * loop_search_eval_every(l, K, B) * l->job.n_train / B) + 1;
    if (!(iters <= pol->warmup_max_iters)) return rc; /* not within the warm-up's bound */
    scv_segment_spec more = {.until_iterations = l->iteration + (int64_t)iters};
    return loop_segment(l, "warmup", K, B, more, NULL, err);
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
double loop_est_t_iter(const loop *l, int K, int B)
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
    scv_carry_law law = loop_carry_law(l);
    char note[sizeof ((scv_run_result *)0)->target_note];
    if (!scv_carry_law_known(law)) law.b_noise = INFINITY;
    target_est t = {NAN, law, 0, 0};
    scv_estimate e = loop_target_of(l, note, sizeof note);
    if (e.source != SCV_TARGET_NOMINAL) t.samples = e.epochs * l->job.n_train, t.b0 = e.batch;
    t.lag = e.lag_epochs * l->job.n_train;
    return t;
}

/* Predicted seconds to the target from the start at (K, B), NaN while the target is unknown. */
static double est_job_time(const loop *l, const target_est *t, int K, int B)
{
    if (!isfinite(t->samples)) return NAN;
    return (scv_carry_samples(t->law, t->samples, t->b0, B) + t->lag) / B * loop_est_t_iter(l, K, B);
}

/* The run's epochs are loop_spent (max_epochs): nothing more to train. */
int loop_spent(const loop *l)
{
    return l->r->epochs >= l->p->max_epochs - 1e-9;
}

/* SEARCH: profile the policy's configurations, within the search budget (a share of the
 * predicted job time), skipping those whose predicted time to target is out of the race. */
/* Or et al.'s batch rule: the global batch of K workers at the start's per-worker batch,
 * at most the space's largest B. */
int loop_scaled_batch(const scv_run_params *p, int K)
{
    int K0, B0;
    loop_start_config(p, &K0, &B0);
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
    for (size_t i = 0; i < p->n_workers && !rc && !l->r->reached && !loop_spent(l); i++) {
        int K = p->workers[i], B = loop_scaled_batch(p, K);
        if (!loop_measured(l, K, B)) {
            scv_segment_spec spec = {.until_iterations = l->iteration + pol->profile_max_iters,
                                     .time_rse = pol->profile_rse, .time_min_iters = pol->profile_min_iters};
            if ((rc = loop_segment(l, "search", K, B, spec, NULL, err))) break;
            l->r->n_profiled++;
        }
        double T = NAN;
        for (size_t q = 0; q < l->ncs; q++)
            if (l->cs[q].workers == K && l->cs[q].batch == B && l->cs[q].t_iter > 0) T = B / l->cs[q].t_iter;
        if (!isfinite(T)) continue; /* too few iterations to measure it */
        if (Kp) {
            double gain = (T - Tp) / ((double)(K - Kp) * Tp / Kp);
            loop_note(l, SCV_EV_NOTE, SCV_NOTE_THROUGHPUT_STEP, "throughput scaling: K=%d -> %d (B=%d -> %d): %.0f -> %.0f samples/s, %.2f of a "
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

int loop_do_search(loop *l, scv_err *err)
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
    for (size_t q = 0; q < n && !rc && !r->reached && !loop_spent(l); q++) {
        int K = cfg[q][0], B = cfg[q][1];
        if (B < K || loop_measured(l, K, B)) continue;
        double cost = pol->profile_min_iters * loop_est_t_iter(l, K, B) + loop_switch_idle(l);
        int needed = second_workers(l, K);
        if (isfinite(r->search_budget_s) && r->search_time_s + cost > r->search_budget_s) {
            if (needed) {
                loop_note(l, SCV_EV_NOTE, SCV_NOTE_SEARCH_BEYOND, "search: K=%d, B=%d profiled beyond the budget (about %.2f s, %.2f s spent of a "
                     "%.2f s budget): the plan needs iteration times at two worker counts at least, or every other "
                     "K's is extrapolated from one with its communication unknown", K, B, cost, r->search_time_s,
                     r->search_budget_s);
            } else {
                r->n_skipped_budget++;
                loop_note(l, SCV_EV_NOTE, SCV_NOTE_SEARCH_SKIPPED_BUDGET, "search: K=%d, B=%d skipped: profiling it (about %.2f s) would exceed the "
                     "budget (%.2f s spent of a %.2f s budget)", K, B, cost, r->search_time_s, r->search_budget_s);
                continue;
            }
        }
        te = target_now(l); /* the last profile added measurements and evaluations */
        double best = INFINITY, mine = est_job_time(l, &te, K, B);
        for (size_t i = 0; i < l->ncs; i++) best = fmin(best, est_job_time(l, &te, l->cs[i].workers, l->cs[i].batch));
        if (!needed && l->ncs >= 2 && mine > pol->search_rule_out * best) {
            r->n_skipped_ruled_out++;
            loop_note(l, SCV_EV_NOTE, SCV_NOTE_SEARCH_SKIPPED_SLOW, "search: K=%d, B=%d skipped: predicted %.1f s to the target, over %.1fx the best "
                 "measured (%.1f s)", K, B, mine, pol->search_rule_out, best);
            continue;
        }
        scv_segment_spec spec = {.until_iterations = l->iteration + pol->profile_max_iters,
                                 .time_rse = pol->profile_rse, .time_min_iters = pol->profile_min_iters};
        rc = loop_segment(l, "search", K, B, spec, NULL, err);
        r->n_profiled++;
    }
    free(cfg);
    return rc;
}
