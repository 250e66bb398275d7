/*
 * progress.c - see progress.h.
 */
#include "progress.h"
#include "../model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Crossings beyond this many times the horizon are reported as never. */
#define PROGRESS_FAR_HORIZONS 10

void progress_free(progress *p)
{
    free(p->seg);
    free(p->ev);
    memset(p, 0, sizeof *p);
}

int progress_segment(progress *p, double samples, int batch)
{
    if (p->nseg && p->seg[p->nseg - 1].s1 < samples) p->seg[p->nseg - 1].s1 = samples;
    if (p->nseg == p->seg_cap) {
        size_t cap = p->seg_cap ? 2 * p->seg_cap : 16;
        progress_seg *n = realloc(p->seg, cap * sizeof *n);
        if (!n) return SCV_ENOMEM;
        p->seg = n, p->seg_cap = cap;
    }
    p->seg[p->nseg++] = (progress_seg){.s0 = samples, .s1 = samples, .batch = batch};
    return SCV_OK;
}

void progress_advance(progress *p, double samples)
{
    if (p->nseg && samples > p->seg[p->nseg - 1].s1) p->seg[p->nseg - 1].s1 = samples;
}

int progress_eval_add(progress *p, double samples, double y, double loss_x, double loss)
{
    if (!isfinite(samples) || !isfinite(y)) return SCV_EINVAL;
    if (p->nev && samples < p->ev[p->nev - 1].samples) return SCV_EINVAL; /* out of order */
    if (p->nev == p->ev_cap) {
        size_t cap = p->ev_cap ? 2 * p->ev_cap : 32;
        progress_eval *n = realloc(p->ev, cap * sizeof *n);
        if (!n) return SCV_ENOMEM;
        p->ev = n, p->ev_cap = cap;
    }
    progress_advance(p, samples);
    p->ev[p->nev++] = (progress_eval){samples, y, loss_x, loss};
    return SCV_OK;
}

/* The run's own read applies (law.run_b, relative to b_ref) at batch B. */
static int run_read_at(scv_carry_law law, int b_ref, int B)
{
    return law.run_b > 0 && B == law.run_b && b_ref == law.run_b0 && law.run_rate > 0;
}

/* ... and up to samples x (law.run_until) */
static int run_read_upto(scv_carry_law law, int b_ref, int B, double x)
{
    return run_read_at(law, b_ref, B) && !(x > law.run_until);
}

int progress_batch_at(const progress *p, double samples)
{
    for (size_t i = 0; i < p->nseg; i++)
        if (samples > p->seg[i].s0 && samples <= p->seg[i].s1) return p->seg[i].batch;
    return 0;
}

/* x_ref = sum over segments of (samples in it before `samples`) * E(b_ref) / E(B_seg), a
 * segment at the batch of the run's own read at its rate */
double progress_ref_samples(const progress *p, double samples, int b_ref, scv_carry_law law)
{
    double x = 0, covered = 0;
    for (size_t i = 0; i < p->nseg; i++) {
        const progress_seg *s = &p->seg[i];
        double end = fmin(samples, s->s1);
        if (end <= s->s0) continue;
        double read = run_read_at(law, b_ref, s->batch) ? fmax(0, fmin(end, law.run_until) - s->s0) : 0;
        x += read * law.run_rate + (end - s->s0 > read ? scv_carry_samples(law, end - s->s0 - read, s->batch, b_ref) : 0);
        covered += end - s->s0;
    }
    /* samples before the first segment (a run resumed without its history) count at b_ref */
    if (samples > covered && !p->nseg) x += samples;
    return x;
}

int progress_level_helped(const progress *p, double samples, int b_ref, scv_carry_law law)
{
    return run_read_upto(law, b_ref, progress_batch_at(p, samples), samples) && law.run_level != 0 &&
           !isfinite(law.run_cross0);
}

double progress_crossing_samples(const progress *p, double samples, int b_ref, scv_carry_law law)
{
    double x = progress_ref_samples(p, samples, b_ref, law);
    if (run_read_upto(law, b_ref, progress_batch_at(p, samples), samples) && law.run_cross0 > x) x = law.run_cross0;
    return x;
}

void progress_predict(const progress *p, scv_metric metric, double target, int b_ref, scv_carry_law law,
                      uint64_t seed, const scv_calib *cal, double n_train, const char *key, double horizon,
                      progress_pred *out)
{
    memset(out, 0, sizeof *out);
    out->b_ref = b_ref;
    out->law = law;
    out->n_evals = (int)p->nev;
    out->x_star = out->lo = out->hi = INFINITY;
    out->nearest = NAN;
    out->horizon = horizon;
    if (!scv_carry_law_known(law)) {
        snprintf(out->why, sizeof out->why, "no gradient-noise estimate yet");
        return;
    }
    double *x = malloc(sizeof(double) * (p->nev + 1)), *y = malloc(sizeof(double) * (p->nev + 1));
    if (!x || !y) {
        free(x), free(y);
        snprintf(out->why, sizeof out->why, "out of memory");
        return;
    }
    for (size_t i = 0; i < p->nev; i++) { /* (at the read's batch: moved onto b_ref's curve) */
        x[i] = progress_ref_samples(p, p->ev[i].samples, b_ref, law);
        double xs = p->ev[i].samples;
        y[i] = p->ev[i].y - (run_read_upto(law, b_ref, progress_batch_at(p, xs), xs) ? law.run_level : 0);
    }
    double last = p->nseg ? p->seg[p->nseg - 1].s1 : p->nev ? p->ev[p->nev - 1].samples : 0;
    out->x_now = progress_ref_samples(p, last, b_ref, law);
    scv_forecast f;
    scv_err e = {0};
    if (scv_calib_forecast(cal, NULL, metric, x, y, p->nev, n_train, key, target, horizon, seed, &f, &e)) {
        snprintf(out->why, sizeof out->why, "%.150s", e.msg);
    } else {
        out->ok = 1;
        /* a crossing past PROGRESS_FAR_HORIZONS times the horizon is no crossing (a nearly flat
         * tail's extrapolation), and says so */
        double far = horizon > 0 ? PROGRESS_FAR_HORIZONS * horizon : INFINITY;
        out->x_star = f.x_med > far ? INFINITY : f.x_med, out->lo = f.lo > far ? INFINITY : f.lo;
        out->hi = f.hi > far ? INFINITY : f.hi, out->p_reach = f.p_reach;
        /* not reached by the last evaluation: the band starts there at the earliest */
        double x_c = p->nev ? x[p->nev - 1] : 0;
        if (out->lo < x_c) out->lo = x_c;
        if (out->x_star < out->lo) out->x_star = out->lo;
        /* within reach: calibrated, by its probability within the horizon (the point, the raw
         * crossing inside the band, is not the median); else the point within the horizon */
        out->reachable = f.calibrated && horizon > 0 ? f.p_reach >= 0.5
                                                     : isfinite(f.x_med) && (!(horizon > 0) || f.x_med <= horizon);
        out->nearest = f.nearest, out->calibrated = f.calibrated, out->n_examples = f.n_examples;
        if (f.kind == SCV_CALIB_NONE)
            snprintf(out->curve, sizeof out->curve, "no rising fit");
        else if (f.kind == SCV_CALIB_PRIOR)
            snprintf(out->curve, sizeof out->curve, "the %zu nearest corpus curves of the job's model", f.n_members);
        else if (f.kind == SCV_CALIB_XPRIOR)
            snprintf(out->curve, sizeof out->curve, "%zu other networks' curves, nearest in shape", f.n_members);
        else
            snprintf(out->curve, sizeof out->curve, "%s, rmse %.4f",
                     f.kind == SCV_CALIB_TAIL ? "tail to the ideal" : scv_curve_form_name(f.fit.form), f.fit.rmse);
    }
    free(x), free(y);
}

void progress_rewind(progress *p, double samples)
{
    while (p->nev && p->ev[p->nev - 1].samples > samples) p->nev--;
    while (p->nseg && p->seg[p->nseg - 1].s0 > samples) p->nseg--;
    if (p->nseg && p->seg[p->nseg - 1].s1 > samples) p->seg[p->nseg - 1].s1 = samples;
}
