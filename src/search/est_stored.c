/*
 * est_stored.c - the target's estimators that read the stored runs of the job (LEARNT,
 * CARRIED, CARRIED_CURVE): a stored run's curve counted at the batches it trained at, where its
 * evaluations crossed the target under this run's rule (its curve's crossing, not where its
 * own rule fired), its samples by batch (their carry's error is the estimate's), the corpus's
 * reruns' spread as its band.
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


/* Where a learning curve crossed the target, read off evaluations ev whose smoothed rule
 * (window W) fired at evaluation i, in that run's own samples (scv_stoprule_crossing, on the
 * places of the values the rule held: the finite ones). A stored run evaluates more densely
 * while it searches or probes, so its rule fired closer to its curve than this run's will at
 * its training period (bench decide: LeNet's accuracy crossed in a probe evaluated every
 * 0.1 epochs, 0.15 epochs behind, where the period of 0.25 trails by 0.375). Never past the
 * evaluation that saw it (evaluations out of order after a retry's rewind). */
double loop_window_crossing(const loop *l, const scv_eval_sample *ev, size_t i, int W)
{
    double place[SCV_TARGET_WINDOW_MAX + 1];
    int n = 0;
    for (size_t k = i + 1; k-- > 0 && n <= W && n <= SCV_TARGET_WINDOW_MAX;)
        if (isfinite(loop_target_y(l, &ev[k]))) place[n++] = loop_target_x(l, &ev[k]);
    double x = scv_stoprule_crossing(place, n, W);
    return isfinite(x) ? fmin(x, ev[i].samples_seen) : ev[i].samples_seen;
}

/* The step of steps (n) a stored evaluation at `samples` fell in (n: past their end). */
static size_t step_of(const scv_run_step *steps, size_t n, double samples)
{
    double end = 0;
    size_t k = 0;
    while (k < n && samples > (end += (double)steps[k].iterations * steps[k].batch) + 0.5) k++;
    return k;
}

/* The learning curve of a stored run (this one resumed, or an earlier run of the job): its
 * steps' segments, and its evaluations as points of g (a search profile's are not curve
 * points); every evaluation, oldest first, in *ev (malloc'ed; the target rule sees them all). */
int loop_stored_curve(const loop *l, long long run, const scv_run_step *steps, size_t n_steps, progress *g,
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
    for (size_t i = 0; i < *n; i++) {
        size_t k = step_of(steps, n_steps, (*ev)[i].samples_seen);
        if (k == n_steps || strcmp(steps[k].phase, "search")) loop_progress_eval(l, g, &(*ev)[i]);
    }
    return SCV_OK;
}

/* A stored run's samples by batch up to `seen` samples (its crossing, or its end). */
static void stored_mix_of(const progress *g, double seen, scv_estimate_mix *m)
{
    *m = (scv_estimate_mix){0};
    for (size_t i = 0; i < g->nseg; i++) {
        double n = fmin(seen, g->seg[i].s1) - g->seg[i].s0;
        int k = 0;
        if (!(n > 0)) continue;
        while (k < m->n && m->batch[k] != g->seg[i].batch) k++;
        if (k == SCV_ESTIMATE_MIX_MAX) { /* more batches than kept: not known */
            m->n = 0;
            return;
        }
        if (k == m->n) m->batch[m->n++] = g->seg[i].batch;
        m->samples[k] += n;
    }
}

/* What one stored run says about this run's target: where its curve crossed it
 * (window_crossing, at the evaluation where this run's target rule fired on its evaluations
 * in order as the run saw them), in reference samples at its target's batch (as
 * scv_store_set_target counted its own: samples at other batches carried by the carry in
 * force), *at; else, with extrapolate, its learning curve fitted and extrapolated to this
 * target (pr). *x is NaN when its evaluations do not cross. A crossing at the batch where the
 * law reads a level off the target's batch's curve (the noise floor's b, a probe's), where
 * that curve's own crossing is not known (run_cross0: the floor's never, a probe's past the
 * horizon), is read at that batch (*at): the level helped it, and carried to the target's
 * batch it would stand for a crossing there that may never come (the MLP's first run crossed
 * 0.86 in its probe at B=256, never at B=64, and its second run read that as 0.71 epochs at
 * B=64, where runs from the start take 4 or never). An accuracy's firing at the stored run's
 * own target in a step that did not end reached is not its crossing: its confirmation on
 * the whole test set refused it. */
static int stored_crossing(loop *l, const scv_stored_target *t, int extrapolate, double *x, int *at, progress_pred *pr,
                           scv_estimate_mix *mix)
{
    const scv_run_params *p = l->p;
    *x = NAN, *at = t->batch;
    if (mix) *mix = (scv_estimate_mix){0};
    memset(pr, 0, sizeof *pr);
    snprintf(pr->why, sizeof pr->why, "no evaluations stored");
    scv_run_step *steps;
    size_t n_steps, n_ev;
    scv_eval_sample *ev = NULL;
    progress g = {0};
    scv_err se = {0};
    int rs = scv_store_load_steps(p->store, t->run, &steps, &n_steps, &se);
    if (!loop_store_read(l, rs, &se)) return rs ? rs : SCV_EIO;
    int rc = loop_stored_curve(l, t->run, steps, n_steps, &g, &ev, &n_ev, NULL);
    /* the firings its confirmation refused (a subset's window stands above the whole set
     * where it first fires: an MLP's first run fired at 1.04 and 1.09 epochs, the whole set
     * read 0.853 and 0.854 for 0.86, and it reached at 2.67; its second run had read the
     * first firing as the crossing, 0.84 epochs) */
    int own = !rc && n_ev && loop_metric_of(p) == SCV_METRIC_ACCURACY && fabs(t->value - loop_target_value(p)) < 1e-12;
    char *refused = own ? calloc(n_ev, 1) : NULL;
    if (refused)
        for (size_t i = 0; i < n_ev; i++) {
            size_t k = step_of(steps, n_steps, ev[i].samples_seen);
            refused[i] = k < n_steps && !steps[k].reached;
        }
    free(steps);
    if (!rc) {
        scv_carry_law law = loop_stored_carry_law(l, t->run);
        scv_stoprule_spec rs = {.window = l->pol->target_window};
        if (loop_metric_of(p) == SCV_METRIC_LOSS) rs.target_loss = loop_target_value(p);
        else rs.target_accuracy = loop_target_value(p);
        scv_stoprule rule;
        scv_stoprule_init(&rule, &rs);
        double seen = g.nseg ? g.seg[g.nseg - 1].s1 : 0; /* (the crossing's, or the run's end) */
        for (size_t i = 0; i < n_ev && isnan(*x); i++)
            if (scv_stoprule_on_evaluation(&rule, loop_target_y(l, &ev[i])) == SCV_STOP_TARGET &&
                !(refused && refused[i])) {
                seen = loop_window_crossing(l, ev, i, rule.W);
                if (progress_level_helped(&g, seen, t->batch, law)) *at = (int)law.run_b;
                *x = progress_crossing_samples(&g, seen, *at, law);
            }
        if (mix) stored_mix_of(&g, seen, mix);
        if (isnan(*x) && extrapolate) {
            char key[64];
            progress_predict(&g, loop_metric_of(p), loop_target_value(p), t->batch, law, l->pol->seed, &l->in.calib, l->job.n_train,
                             scv_calib_key(l->job.model, l->job.dataset, key, sizeof key), loop_horizon(l), pr);
        }
    }
    free(refused);
    free(ev);
    progress_free(&g);
    return rc;
}

/* The stored targets of the job in this run's metric, read once (a run to a loss target
 * says nothing of an accuracy one's epochs, nor the reverse), of runs under this run's
 * recipe (scv_job_recipe: another learning rate, momentum, weight decay, rule or schedule
 * learns another curve; such runs are left out, and a note says how many), and the carry of
 * the newest stored run that probed another batch (loop_learn_stored_carry). */
static stored_est *stored_load(loop *l)
{
    stored_est *c = &l->in.stored;
    if (c->loaded) return c;
    c->loaded = 1, c->n = 0, c->far = -1, c->other_recipe = 0;
    scv_stored_target t[SCV_STORED_TARGETS_MAX];
    size_t n = 0;
    scv_err se = {0};
    loop_store_read(l, scv_store_targets(l->p->store, l->p->job_key, loop_metric_of(l->p), l->r->run_id, t,
                                         SCV_STORED_TARGETS_MAX, &n, &se), &se);
    scv_job_recipe(l->p->job_json, c->recipe, sizeof c->recipe);
    char json[8192], status[32], theirs[sizeof c->recipe] = "";
    for (size_t i = 0; i < n; i++) {
        if (loop_store_read(l, scv_store_run_get(l->p->store, t[i].run, json, sizeof json, status, sizeof status, &se), &se) &&
            scv_job_recipe(json, theirs, sizeof theirs) == SCV_OK && strcmp(theirs, c->recipe)) {
            c->other_recipe++;
            continue;
        }
        c->t[c->n++] = t[i];
    }
    if (c->other_recipe)
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_STORED_OTHER_RECIPE, "%d stored run%s of the job under another recipe left out (this run's: %.300s): "
                  "another learning rate or schedule learns another curve", c->other_recipe,
                  c->other_recipe == 1 ? "" : "s", c->recipe);
    loop_learn_stored_carry(l, c->t, c->n);
    loop_refresh_floor(l); /* (a stored run's noise floor, read just now, carries its samples) */
    return c;
}

/* A stored run's epochs stand for a new run's as a rerun's do: the corpus's reruns' spread
 * is the estimate's band (0-wide where it is not known but the run's samples by batch are:
 * their carry then makes it, scv_estimate_band_at); the note says what the band holds. */
static void stored_band(loop *l, scv_estimate *e, char *note, size_t cap)
{
    double lo, hi, ql, qh;
    size_t len = strlen(note), n = scv_estimate_rerun_band(e, &l->in.calib, loop_metric_of(l->p));
    e->carry = loop_carry_err(l);
    scv_band_ends(scv_estimate_band_at(e, e->batch), e->epochs, &lo, &hi);
    int carried = scv_estimate_mix_carried(&e->mix, e->batch) > 0 && scv_estimate_mix_err(&e->mix, &e->carry, e->batch,
                                                                                            &ql, &qh);
    char why[2][96] = {"", ""};
    if (n) snprintf(why[0], sizeof why[0], "the spread of %zu reruns of corpus jobs", n);
    if (carried)
        snprintf(why[1], sizeof why[1], "%s%.0f%% of its samples at other batches, carried", n ? ", and " : "",
                 100 * scv_estimate_mix_carried(&e->mix, e->batch));
    if (n || carried)
        snprintf(note + len, cap - len, " (%.0f%% band %.3g-%.3g: %s%s)", 100 * l->pol->band_coverage, lo, hi, why[0],
                 why[1]);
}

/* The lag of this run's smoothed rule behind a curve's crossing, in epochs. */
static double lag_epochs(const loop *l)
{
    return l->job.n_train > 0 ? loop_rule_lag(l) / l->job.n_train : 0;
}

/* LEARNT: a stored run to the same value that reached it. Its curve's crossing, counted by
 * this run's carry (a carry read from a probe counts the run's samples at its batches anew);
 * where its evaluations do not tell, its stored epochs (where its rule fired, by the carry
 * it had when it finished) less this run's lag, and no less than half of them. */
int loop_est_learnt(loop *l, scv_estimate *e, char *note, size_t cap)
{
    stored_est *c = stored_load(l);
    double target = loop_target_value(l->p), n_train = l->job.n_train, lag = lag_epochs(l);
    for (size_t i = 0; i < c->n; i++) { /* newest first */
        const scv_stored_target *t = &c->t[i];
        if (!(fabs(t->value - target) <= 1e-9 && isfinite(t->epochs))) continue;
        double x, fired = t->epochs;
        int at;
        progress_pred pr;
        e->source = SCV_TARGET_LEARNT, e->batch = t->batch, e->lag_epochs = lag, e->from_run = t->run;
        if (!stored_crossing(l, t, 0, &x, &at, &pr, &e->mix) && n_train > 0 && x > 0)
            e->epochs = x / n_train, e->batch = at;
        else e->epochs = fmax(fired - lag, 0.5 * fired);
        snprintf(note, cap, "learnt from stored run %lld of the job: %.3g epochs at B=%d, + %.2g the smoothed rule "
                 "trails", t->run, e->epochs, e->batch, lag);
        stored_band(l, e, note, cap);
        return 1;
    }
    snprintf(note, cap, "no stored run of the job reached %g", target);
    return 0;
}

/* CARRIED: the stored run of the nearest value whose evaluations crossed this one (a run to
 * a harder target passed this one on its way), read where they did under this run's rule.
 * The nearest whose evaluations did not cross is kept for CARRIED_CURVE. */
int loop_est_carried(loop *l, scv_estimate *e, char *note, size_t cap)
{
    stored_est *c = stored_load(l);
    double target = loop_target_value(l->p), n_train = l->job.n_train, best = INFINITY;
    const scv_stored_target *hit = NULL;
    c->far = -1;
    for (size_t i = 0; i < c->n && n_train > 0; i++) {
        const scv_stored_target *t = &c->t[i];
        double x, d = fabs(t->value - target);
        int at;
        progress_pred pr;
        scv_estimate_mix mix;
        if (d >= best || stored_crossing(l, t, 0, &x, &at, &pr, &mix)) continue;
        if (isnan(x)) {
            if (c->far < 0 || d < fabs(c->t[c->far].value - target)) c->far = (int)i;
            continue;
        }
        if (!(x > 0)) continue;
        best = d, hit = t;
        e->source = SCV_TARGET_CARRIED, e->epochs = x / n_train, e->batch = at, e->mix = mix;
        e->from_run = t->run;
        e->lag_epochs = lag_epochs(l);
    }
    if (!hit) {
        snprintf(note, cap, "no stored run's evaluations crossed %g", target);
        return 0;
    }
    char own[48] = "it did not reach its own";
    if (isfinite(hit->epochs)) snprintf(own, sizeof own, "it took %.3g to its own", hit->epochs);
    snprintf(note, cap, "stored run %lld (target %g) carried to %g through its evaluations: %.3g epochs at B=%d, + %.2g "
             "the smoothed rule trails (%s)", hit->run, hit->value, target, e->epochs, e->batch, e->lag_epochs, own);
    stored_band(l, e, note, cap);
    return 1;
}

/* CARRIED_CURVE: the nearest stored run whose evaluations did not cross this value (this
 * value's, of a run that did not reach it, first): its learning curve forecast to this
 * target, when it reaches it within the epoch bound. A stored curve's forecast out of reach
 * is not taken: it would be fixed for the run's life, where this run's own is re-read at
 * every evaluation. */
int loop_est_carried_curve(loop *l, scv_estimate *e, char *note, size_t cap)
{
    stored_est *c = stored_load(l);
    double target = loop_target_value(l->p), n_train = l->job.n_train, x;
    int at;
    if (c->far < 0) {
        snprintf(note, cap, "no stored run of the job to another value");
        return 0;
    }
    const scv_stored_target *far = &c->t[c->far];
    progress_pred pr;
    stored_crossing(l, far, 1, &x, &at, &pr, NULL);
    if (!(pr.ok && pr.reachable && n_train > 0)) { /* (the stored runs' last word: said once) */
        const char *why = !pr.ok ? pr.why : "does not reach it within the epoch bound";
        snprintf(note, cap, "stored run %lld (target %g) does not inform target %g: its evaluations never reached it "
                 "and its curve %s", far->run, far->value, target, why);
        loop_note(l, SCV_EV_NOTE, SCV_NOTE_STORED_UNINFORMED, "stored run %lld (target %g) does not inform target %g: "
                  "its evaluations never reached it and its curve %s", far->run, far->value, target, why);
        return 0;
    }
    e->source = SCV_TARGET_CARRIED_CURVE, e->batch = far->batch, e->epochs = pr.x_star / n_train;
    e->from_run = far->run;
    e->band = scv_band_of(pr.x_star, pr.lo, pr.hi), e->lag_epochs = lag_epochs(l);
    e->n_calib = pr.calibrated ? pr.n_examples : 0;
    snprintf(e->curve, sizeof e->curve, "%s", pr.curve);
    snprintf(note, cap, "stored run %lld (target %g) never reached %g: its curve (%.20s) extrapolated, %.3g epochs at "
             "B=%d (band %.3g-%.3g)", far->run, far->value, target, pr.curve, e->epochs, e->batch, pr.lo / n_train,
             pr.hi / n_train);
    return 1;
}
